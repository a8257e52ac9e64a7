//! Load and endurance runs: a [`SoakPlan`] in, a stream of [`SoakUpdate`]s while it goes, and a
//! [`SoakReport`] at the end whose accounting proves every message ended in exactly one fate.
//!
//! [`SoakRun::start`] starts the peer (the embedded listener, whose ledger checks every commit,
//! or a real one, optionally behind the chaos proxy), one client per connection and the monitor.
//! Generating stops at the first of the plan's duration, its message budget or
//! [`SoakRun::stop`]; what was generated then settles within the drain timeout, and
//! [`SoakRun::finish`] returns the [`SoakOutcome`]: the report with its accounting checked and
//! thresholds judged.
//!
//! ```
//! use mllp::soak::{SoakPlan, SoakRun, SoakUpdate};
//! use std::time::Duration;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mllp::soak::SoakError> {
//! let plan = SoakPlan {
//!     connections: 2,
//!     messages: Some(100),
//!     sample_every: Some(Duration::from_millis(500)),
//!     ..SoakPlan::default() // the embedded listener and the built-in synthetic message
//! };
//! let mut run = SoakRun::start(plan).await?;
//! while let Some(update) = run.next_update().await {
//!     if let SoakUpdate::Sample(sample) = update {
//!         println!("{:.1}s: {} generated", sample.elapsed.as_secs_f64(), sample.totals.generated);
//!     }
//! }
//! let outcome = run.finish().await?;
//! assert!(outcome.report.accounting_ok);
//! assert_eq!(outcome.report.fates.accepted, 100);
//! # Ok(())
//! # }
//! ```
//!
//! The pieces: message templates with fresh control IDs ([`Template`]), the rate pacer
//! ([`crate::pace`], shared with `send`), the listener-side ledger, fault injection ([`ChaosPolicy`]
//! for the embedded listener, a chaos proxy for a real one), the worker that loads one
//! connection, and the mergeable report ([`SoakReport`]) with its CI [`Thresholds`].

pub(crate) mod chaos;
pub(crate) mod embedded;
mod engine;
mod ledger;
mod monitor;
mod plan;
mod progress;
mod proxy;
pub(crate) mod report;
pub(crate) mod template;
pub(crate) mod thresholds;
mod update;
mod worker;

pub use chaos::{ChaosError, ChaosPolicy, ChaosSpec, Fault, FaultKind};
pub use embedded::{Embedded, EmbeddedError};
pub use engine::{SoakError, SoakOutcome, SoakRun};
pub(crate) use ledger::LedgerSink;
pub use ledger::{Claim, ControlIds, Ledger, LedgerTotals, MAX_CONNECTIONS};
pub use plan::{Backups, PlanError, SoakPlan, SoakTarget};
pub use progress::{ConnSample, RecentLatency, Sample, SoakUpdate, StoppedBy};
pub use report::{Accounting, ByteCounts, LatencyMs, ReportError, Second, SoakReport, SoakTotals};
pub use template::{Template, TemplateError};
pub use thresholds::{Judgement, Thresholds};
pub use update::Done;
pub(crate) use update::WorkerNote;
