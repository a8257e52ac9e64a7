//! The interruptions `send` listens for; what each one means (drain, then stop at once) is the
//! run's decision. A signal that cannot be installed simply never arrives.

use crate::exit::Exit;
use mllp::delivery::RunControls;
use std::sync::{Arc, OnceLock};
use tokio_util::sync::CancellationToken;

/// Cancelled once a signal has stopped the run (after the run itself was told): what waits
/// only to pace the input (a replay's recorded gaps) stops waiting, so the rest is read and
/// reported at once.
pub fn stopping() -> CancellationToken {
    static STOPPING: OnceLock<CancellationToken> = OnceLock::new();
    STOPPING.get_or_init(CancellationToken::new).clone()
}

/// Which signal stopped the run: each is named as what it was, and has its own exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    /// SIGINT, as Ctrl-C at a terminal sends it.
    CtrlC,
    /// SIGTERM, as a service manager or `kill` sends it.
    Sigterm,
}

impl StopSignal {
    /// How people know it: `Ctrl-C`, `SIGTERM`.
    pub fn name(self) -> &'static str {
        match self {
            StopSignal::CtrlC => "Ctrl-C",
            StopSignal::Sigterm => "SIGTERM",
        }
    }

    /// The signal's own name, for machine-readable output.
    pub fn signal(self) -> &'static str {
        match self {
            StopSignal::CtrlC => "SIGINT",
            StopSignal::Sigterm => "SIGTERM",
        }
    }

    /// How to stop at once, in the words of the signal that came.
    pub fn again(self) -> &'static str {
        match self {
            StopSignal::CtrlC => "Ctrl-C again to stop at once",
            StopSignal::Sigterm => "SIGTERM again to stop at once",
        }
    }

    /// `interrupted by Ctrl-C`, `stopped by SIGTERM`.
    pub fn interruption(self) -> String {
        match self {
            StopSignal::CtrlC => format!("interrupted by {}", self.name()),
            StopSignal::Sigterm => format!("stopped by {}", self.name()),
        }
    }

    /// 130 after Ctrl-C, 143 after SIGTERM (128 + the signal's number, by convention).
    pub fn exit(self) -> Exit {
        match self {
            StopSignal::CtrlC => Exit::Interrupted,
            StopSignal::Sigterm => Exit::Terminated,
        }
    }
}

/// SIGINT and SIGTERM, as one stream of interruptions.
pub struct Signals {
    int: Option<tokio::signal::unix::Signal>,
    term: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    pub fn install() -> Signals {
        use tokio::signal::unix::{signal, SignalKind};
        Signals {
            int: signal(SignalKind::interrupt()).ok(),
            term: signal(SignalKind::terminate()).ok(),
        }
    }

    /// The signals turned into a run's controls, on a task of their own: the first drains (and
    /// is kept, so the run's words and exit code name it), the second stops at once.
    pub fn drive(mut self, controls: RunControls) -> Arc<OnceLock<StopSignal>> {
        let stopped_by = Arc::new(OnceLock::new());
        tokio::spawn({
            let stopped_by = stopped_by.clone();
            async move {
                let _ = stopped_by.set(self.next().await);
                controls.stop();
                stopping().cancel();
                self.next().await;
                controls.destroy();
            }
        });
        stopped_by
    }

    /// The next signal, and which it was.
    pub async fn next(&mut self) -> StopSignal {
        tokio::select! {
            () = arrival(&mut self.int) => StopSignal::CtrlC,
            () = arrival(&mut self.term) => StopSignal::Sigterm,
        }
    }
}

/// The next delivery of one signal; never, when it could not be installed.
async fn arrival(signal: &mut Option<tokio::signal::unix::Signal>) {
    match signal {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}
