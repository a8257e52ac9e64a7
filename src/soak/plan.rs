//! What a soak run is asked to do ([`SoakPlan`]): where the load goes, how much and how fast, the
//! link's timeouts and reconnect policy, chaos and thresholds; checked before anything starts,
//! and written into the report as its `config`.

use super::{ChaosSpec, FaultKind, Template, Thresholds};
use crate::client::HostList;
use crate::client::{ClientOptions, Correlation, LinkSettings, OnBackpressure, Window};
use crate::resolve::{Resolver, SystemResolver};
use crate::tls::{ClientTlsOptions, TlsConfigError};
use crate::transport::Connector;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Where the load goes.
#[derive(Debug, Clone)]
pub enum SoakTarget {
    /// A listener in this process on 127.0.0.1, whose ledger proves every commit; with
    /// `out_dir`, each message is committed as an fsynced file there.
    Embedded {
        /// Where each committed message is written as a file; `None`: only the ledger records
        /// each commit.
        out_dir: Option<PathBuf>,
    },
    /// A real peer; with chaos, reached through a fault-injecting proxy on loopback. TLS, when
    /// given, is verified against `host`.
    Remote {
        /// Name or address literal of the peer.
        host: String,
        /// Its TCP port.
        port: u16,
        /// TLS settings; `None`: plain TCP.
        tls: Option<ClientTlsOptions>,
    },
}

/// A soak run, before it starts. `SoakPlan::default()` is one connection to the embedded
/// listener with the built-in synthetic message, unpaced, until stopped.
#[derive(Debug, Clone)]
pub struct SoakPlan {
    /// The embedded listener or a real peer.
    pub target: SoakTarget,
    /// Connections, one client each (1 to 999).
    pub connections: usize,
    /// Total messages per second over all connections; `None`: as fast as the window allows.
    pub rate: Option<f64>,
    /// Stop generating after this long.
    pub duration: Option<Duration>,
    /// Stop after this many messages in total.
    pub messages: Option<u64>,
    /// Climb linearly to `rate` over this long; without a rate, start the connections one by
    /// one over this long.
    pub ramp_up: Option<Duration>,
    /// Messages in flight per connection, at most.
    pub window: usize,
    /// The messages sent, in turn; each is given a unique MSH-10 and a fresh MSH-7.
    pub templates: Vec<Template>,
    /// Let the built-in synthetic message go to a remote peer. Off, such a plan is refused:
    /// fake patients must not reach a production engine by accident.
    pub allow_synthetic: bool,
    /// Faults to inject: by the embedded listener, or by a proxy in front of a remote peer.
    pub chaos: Option<ChaosSpec>,
    /// Seeds the fault dice, the reconnect jitter and the run's control IDs (random by default).
    pub seed: u64,
    /// Each connection's timeouts, keepalive and reconnect policy.
    pub link: LinkSettings,
    /// How a remote host's name is resolved.
    pub resolver: Arc<dyn Resolver>,
    /// Judged on the report at the end.
    pub thresholds: Thresholds,
    /// How often a [`Sample`](super::Sample) is sent while the run goes; `None`: only the
    /// last, at the end.
    pub sample_every: Option<Duration>,
    /// Also send each settled message's result ([`SoakUpdate::Settled`](super::SoakUpdate)).
    pub per_message: bool,
    /// Further hosts after a remote target's, in order: the connections move between them as
    /// one link over failover hosts does ([`HostList`]). Empty: the target alone.
    pub backups: Backups,
}

/// Failover hosts after the remote target's.
#[derive(Debug, Clone, Default)]
pub struct Backups {
    /// Name (or address literal) and port of each, in order.
    pub hosts: Vec<(String, u16)>,
    /// Move on after this many failed connects in a row to one host.
    pub failover_after: Option<u32>,
    /// Back to the target's host at the first connect this long after leaving it.
    pub failback_after: Option<Duration>,
}

impl Default for SoakPlan {
    fn default() -> Self {
        SoakPlan {
            target: SoakTarget::Embedded { out_dir: None },
            connections: 1,
            rate: None,
            duration: None,
            messages: None,
            ramp_up: None,
            window: 64,
            templates: vec![Template::builtin()],
            allow_synthetic: false,
            chaos: None,
            seed: rand::random(),
            link: LinkSettings::default(),
            resolver: Arc::new(SystemResolver),
            thresholds: Thresholds::default(),
            sample_every: None,
            per_message: false,
            backups: Backups::default(),
        }
    }
}

/// A plan that cannot run. The message names the option as the command line spells it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// [`SoakPlan::connections`] is 0 or over 999.
    #[error("connections must be from 1 to {}", super::ledger::MAX_CONNECTIONS)]
    Connections,
    /// [`SoakPlan::messages`] is `Some(0)`.
    #[error("messages must be at least 1")]
    Messages,
    /// [`SoakPlan::window`] is 0.
    #[error("window must be at least 1")]
    Window,
    /// [`SoakPlan::templates`] is empty.
    #[error("templates: at least one message is needed")]
    NoTemplate,
    /// The built-in synthetic message would go to a remote peer without
    /// [`SoakPlan::allow_synthetic`].
    #[error(
        "against a real host the built-in synthetic message needs allow_synthetic (fake \
         patients must not reach a production engine by accident), or a template"
    )]
    Synthetic,
    /// A `nack` fault against a remote peer: the proxy in front of it forwards bytes and cannot
    /// forge the peer's ACKs.
    #[error(
        "a nack fault needs the embedded listener: the proxy in front of a real host forwards \
         bytes and cannot forge the peer's ACKs"
    )]
    NackNeedsEmbedded,
    /// [`SoakPlan::backups`] without a remote target, or with chaos (the proxy stands in front
    /// of one host).
    #[error("failover hosts need a remote target and no chaos")]
    Backups,
}

impl SoakPlan {
    /// Check the plan; the first problem found is returned.
    pub fn validate(&self) -> Result<(), PlanError> {
        if self.connections == 0 || self.connections > super::ledger::MAX_CONNECTIONS {
            return Err(PlanError::Connections);
        }
        if self.messages == Some(0) {
            return Err(PlanError::Messages);
        }
        if self.window == 0 {
            return Err(PlanError::Window);
        }
        if self.templates.is_empty() {
            return Err(PlanError::NoTemplate);
        }
        let remote = matches!(self.target, SoakTarget::Remote { .. });
        if remote && !self.allow_synthetic && self.templates.iter().any(Template::is_builtin) {
            return Err(PlanError::Synthetic);
        }
        if !self.backups.hosts.is_empty() && (!remote || self.chaos.is_some()) {
            return Err(PlanError::Backups);
        }
        if let (Some(chaos), true) = (&self.chaos, remote) {
            if chaos.get(FaultKind::Nack).is_some() {
                return Err(PlanError::NackNeedsEmbedded);
            }
        }
        Ok(())
    }

    /// The plan as the report's `config` records it (`stopped_by` is added at the end).
    pub fn config(&self) -> serde_json::Value {
        let (target, tls) = match &self.target {
            SoakTarget::Embedded { .. } => ("embedded".to_string(), false),
            SoakTarget::Remote { host, port, tls } => {
                let target = crate::target::Target {
                    host: host.clone(),
                    port: Some(*port),
                };
                (target.to_string(), tls.is_some())
            }
        };
        let backups: Vec<String> = (self.backups.hosts.iter())
            .map(|(host, port)| {
                crate::target::Target {
                    host: host.clone(),
                    port: Some(*port),
                }
                .to_string()
            })
            .collect();
        let mut config = serde_json::json!({
            "target": target,
            "connections": self.connections,
            "rate": self.rate,
            "duration_s": self.duration.map(|d| d.as_secs_f64()),
            "messages": self.messages,
            "ramp_up_s": self.ramp_up.map(|d| d.as_secs_f64()),
            "window": self.window,
            "templates": self.templates.iter().map(Template::name).collect::<Vec<_>>(),
            "correlation": "control-id",
            "tls": tls,
            "chaos": self.chaos,
            // A string: JSON readers that hold numbers as doubles (jq) would round a u64.
            "seed": self.seed.to_string(),
            "ack_timeout_s": self.link.ack_timeout.as_secs_f64(),
            "drain_timeout_s": self.link.drain_timeout.as_secs_f64(),
        });
        if !backups.is_empty() {
            config["failover_hosts"] = backups.into();
        }
        config
    }

    /// Connection `index`'s client options: control-ID correlation, the plan's window, and a
    /// backoff whose jitter is seeded per connection.
    pub(super) fn client_options(&self, index: usize) -> ClientOptions {
        ClientOptions {
            reconnect: self
                .link
                .reconnect_seeded(self.seed.wrapping_add(index as u64)),
            correlation: Correlation::ControlId,
            window: Window {
                count: Some(self.window),
                bytes: None,
            },
            on_backpressure: OnBackpressure::Reject,
            ..self.link.client_options()
        }
    }

    /// The connector for `host:port` (the embedded listener, the proxy, or the peer); TLS is
    /// verified against `tls_host`, the real peer's name.
    pub(super) fn connector(
        &self,
        host: &str,
        port: u16,
        tls_host: &str,
    ) -> Result<Arc<dyn Connector>, TlsConfigError> {
        let tls = match &self.target {
            SoakTarget::Remote { tls: Some(tls), .. } => Some(tls.build(tls_host)?),
            _ => None,
        };
        let connector = self.link.connector(host, port, tls, self.resolver.clone());
        Ok(Arc::new(connector))
    }

    /// The connector to a remote target and its backups, behind one host list (`None` when
    /// there are no backups: use [`SoakPlan::connector`]).
    pub(super) fn failover_connector(
        &self,
        host: &str,
        port: u16,
    ) -> Result<Option<Arc<HostList>>, TlsConfigError> {
        if self.backups.hosts.is_empty() {
            return Ok(None);
        }
        let mut connectors = Vec::with_capacity(1 + self.backups.hosts.len());
        for (host, port) in std::iter::once(&(host.to_string(), port)).chain(&self.backups.hosts) {
            let tls = match &self.target {
                SoakTarget::Remote { tls: Some(tls), .. } => Some(tls.build(host)?),
                _ => None,
            };
            let resolver = self.resolver.clone();
            connectors.push(self.link.connector(host, *port, tls, resolver));
        }
        let Some(mut list) = HostList::new(connectors) else {
            return Ok(None);
        };
        if let Some(n) = self.backups.failover_after {
            list = list.with_failover_after(n);
        }
        if let Some(d) = self.backups.failback_after {
            list = list.with_failback_after(d);
        }
        Ok(Some(Arc::new(list)))
    }

    /// How long a connection's settle wait may see no fate at all: the client's own bounds.
    pub(super) fn settle_quiet(&self) -> Duration {
        self.link.ack_timeout + self.link.give_up_after + self.link.connect_timeout
    }
}
