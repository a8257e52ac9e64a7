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
        let (int, term) = (&mut self.int, &mut self.term);
        let int = async {
            match int {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        let term = async {
            match term {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = int => {}
            () = term => {}
        }
    }
}
