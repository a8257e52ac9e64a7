//! The reusable pieces of a soak run: message templates with fresh control IDs, the rate pacer,
//! the listener-side ledger that proves nothing was lost, fault injection (a chaos policy for an
//! embedded listener, a TCP proxy for a real one), and the mergeable report.

pub mod chaos;
pub mod ledger;
pub mod pacer;
pub mod proxy;
pub mod report;
pub mod template;

pub use chaos::{ChaosPolicy, ChaosSpec, Fault, FaultKind};
pub use ledger::{Claim, ControlIds, Ledger, LedgerSink};
pub use pacer::{Pacer, Schedule};
pub use report::{Report, Tally, Thresholds};
pub use template::{Template, TemplateError};
