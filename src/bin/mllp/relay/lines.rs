//! The relay's lines on stderr beside the server's: what the upstream and shadow links do,
//! the figures the status and `relay_stats` read, and the mirror with its worker, from the
//! start to the summary at the stop.

use super::args::RelayArgs;
use super::render;
use super::status;
use crate::diag::Diag;
use mllp::client::Client;
use mllp::relay::{self, Recorder};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The lines that say what the upstream and shadow links do, the figures the status and
/// `relay_stats` read, and the mirror with its worker.
pub struct Lines {
    pub gauges: Arc<relay::Gauges>,
    link_seen: Arc<Mutex<render::Link>>,
    upstream_events: JoinHandle<()>,
    stats_events: JoinHandle<()>,
    mirror: Option<Mirrored>,
}

/// The shadow as the relay runs and shows it.
struct Mirrored {
    to: String,
    shown: render::Shadow,
    worker: relay::Worker,
    tasks: [JoinHandle<()>; 2],
}

impl Lines {
    /// Start every line; each waits for the bound address, said first once the returned
    /// sender fires.
    pub fn start(
        args: &RelayArgs,
        diag: &Diag,
        client: &Client,
        shadow: Option<(String, Arc<Client>)>,
    ) -> (Lines, oneshot::Sender<()>) {
        let (listening, announced) = oneshot::channel();
        let (upstream_announced, mirror_announced) = {
            let (up, up_rx) = oneshot::channel();
            let (mirror, mirror_rx) = oneshot::channel();
            tokio::spawn(async move {
                let _ = announced.await;
                let _ = up.send(());
                let _ = mirror.send(());
            });
            (up_rx, mirror_rx)
        };
        let link_seen = Arc::new(Mutex::new(render::Link::default()));
        let gauges = Arc::new(relay::Gauges::default());
        let upstream_events = render::upstream(
            diag.clone(),
            client.subscribe(),
            args.upstream().to_string(),
            upstream_announced,
            Arc::clone(&link_seen),
        );
        let mirror = shadow.map(|(to, client)| {
            let seen = Arc::new(Mutex::new(render::Link::default()));
            let events = render::link_events(
                diag.clone(),
                client.subscribe(),
                ("mirror", to.clone()),
                mirror_announced,
                Arc::clone(&seen),
            );
            let (mirror, worker) = relay::Mirror::start(client, args.mirror.options());
            let diffs = super::mirror::diffs(diag.clone(), mirror.subscribe(), to.clone());
            let shown = render::Shadow { mirror, link: seen };
            Mirrored {
                to,
                shown,
                worker,
                tasks: [events, diffs],
            }
        });
        let shown = mirror.as_ref().map(|m| m.shown.clone());
        let stats_events = render::stats(
            diag.clone(),
            Arc::clone(&gauges),
            Arc::clone(&link_seen),
            shown,
        );
        let lines = Lines {
            gauges,
            link_seen,
            upstream_events,
            stats_events,
            mirror,
        };
        (lines, listening)
    }

    pub fn shown(&self) -> Option<render::Shadow> {
        self.mirror.as_ref().map(|m| m.shown.clone())
    }

    pub fn sources(&self, args: &RelayArgs) -> status::Sources {
        status::Sources {
            gauges: Arc::clone(&self.gauges),
            link: Arc::clone(&self.link_seen),
            downstream: Arc::default(),
            queue: args.queue.is_some(),
            mirror: self.shown(),
        }
    }

    /// The shadow answers while the upstream drains, and gets no longer than the upstream's
    /// drain took (`drained`): a shadow that is down or never reads must not hold the stop.
    /// Then every line ends; the shadow's address and counts for the summary.
    pub async fn finish(
        self,
        drained: Duration,
        recording: Option<Arc<Recorder>>,
    ) -> Option<(String, relay::Counts)> {
        let mirrored = match self.mirror {
            Some(Mirrored {
                to,
                shown,
                worker,
                tasks,
            }) => {
                worker.finish(drained).await;
                if let Some(recorder) = &recording {
                    recorder.mirrored_written().await;
                }
                tasks.into_iter().for_each(|t| t.abort());
                Some((to, shown.mirror.counts()))
            }
            None => None,
        };
        self.upstream_events.abort();
        self.stats_events.abort();
        mirrored
    }
}
