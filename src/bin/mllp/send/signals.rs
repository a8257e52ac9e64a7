//! The interruptions `send` listens for; what each one means (drain, then stop at once) is the
//! run's decision. A signal that cannot be installed simply never arrives.

use tokio::sync::mpsc;

/// SIGINT and SIGTERM, as one stream of interruptions. A task of their own waits for them, so
/// waiting here is a channel receive: cheap to poll in a loop that turns once per message.
pub struct Signals {
    arrivals: mpsc::UnboundedReceiver<()>,
}

impl Signals {
    /// Needs a tokio runtime.
    pub fn install() -> Signals {
        use tokio::signal::unix::{signal, SignalKind};
        let mut int = signal(SignalKind::interrupt()).ok();
        let mut term = signal(SignalKind::terminate()).ok();
        let (tx, arrivals) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = arrival(&mut int) => {}
                    () = arrival(&mut term) => {}
                    () = tx.closed() => return,
                }
                if tx.send(()).is_err() {
                    return;
                }
            }
        });
        Signals { arrivals }
    }

    pub async fn next(&mut self) {
        if self.arrivals.recv().await.is_none() {
            std::future::pending().await
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
