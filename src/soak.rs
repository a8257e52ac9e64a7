//! The reusable pieces of a soak run: message templates with fresh control IDs, the rate pacer,
//! the listener-side ledger that proves nothing was lost, fault injection (a chaos policy for an
//! embedded listener, a TCP proxy for a real one), the mergeable report, the worker that
//! loads one connection, and the embedded listener whose ledger proves what was committed.

pub mod chaos;
pub mod embedded;
pub mod ledger;
pub mod pacer;
pub mod proxy;
pub mod report;
pub mod template;
pub mod update;
pub mod worker;

pub use chaos::{ChaosPolicy, ChaosSpec, Fault, FaultKind};
pub use embedded::{Embedded, EmbeddedError};
pub use ledger::{Claim, ControlIds, Ledger, LedgerSink};
pub use pacer::{Pacer, Schedule};
pub use report::{SoakReport, Tally, Thresholds};
pub use template::{Template, TemplateError};
pub use update::{Done, Update};
pub use worker::{Countdown, End, Worker};
