//! The interruptions `send` listens for; what each one means (drain, then stop at once) is the
//! run's decision. A signal that cannot be installed simply never arrives.

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

    pub async fn next(&mut self) {
        tokio::select! {
            () = arrival(&mut self.int) => {}
            () = arrival(&mut self.term) => {}
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
