//! A `listen` child that can be killed (SIGKILL) and started again on the same port while a
//! sender keeps going.

use crate::support::listen_proc::ListenProc;

pub struct Receiver {
    server: Option<ListenProc>,
    args: Vec<String>,
    port: u16,
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

impl Receiver {
    pub async fn start(args: Vec<String>) -> Receiver {
        let a = args.clone();
        let server = tokio::task::spawn_blocking(move || ListenProc::start(&strs(&a)))
            .await
            .unwrap();
        Receiver {
            port: server.addr.port(),
            server: Some(server),
            args,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// SIGKILL, and wait until the process is gone.
    pub async fn kill(&mut self) {
        if let Some(mut old) = self.server.take() {
            tokio::task::spawn_blocking(move || {
                old.kill();
                drop(old);
            })
            .await
            .unwrap();
        }
    }

    /// The same listener again on the same port, once it listens.
    pub async fn start_again(&mut self) {
        let (port, args) = (self.port, self.args.clone());
        let new = tokio::task::spawn_blocking(move || ListenProc::start_at(port, &strs(&args)))
            .await
            .unwrap();
        self.server = Some(new);
    }

    /// SIGKILL, then the same listener again on the same port.
    pub async fn restart(&mut self) {
        self.kill().await;
        self.start_again().await;
    }
}
