//! `relay --mirror`: the shadow engine's flags (its address, TLS as the upstream's, its queue,
//! what is compared), and the mirror as the relay shows it: `mirror_diff` lines, its counts in
//! `relay_stats`, the live status and the summary at the stop.

use crate::diag::Diag;
use crate::global::heading;
use crate::netargs::TlsArgs;
use crate::values;
use clap::{Args, ValueEnum};
use mllp::relay::{Compare, Counts, Ignore, MirrorEvent, MirrorOptions, DEFAULT_QUEUE};
use mllp::target::Target;
use serde_json::json;
use std::path::PathBuf;
use tokio::sync::broadcast;

/// The shadow engine's flags.
#[derive(Debug, Args)]
#[command(next_help_heading = heading::MIRROR)]
pub struct MirrorArgs {
    /// Copy every message to a shadow engine [default port: 2575].
    ///
    /// The downstream peer hears only the upstream's answers, never delayed or changed by the
    /// shadow. The shadow's answer to each message is compared with the upstream's: each
    /// difference is a mirror_diff line (control ID, message type, the fields that differ),
    /// and the counts same, different, shadow-unanswered and shadow-skipped are in the status,
    /// relay_stats and the summary at the stop.
    #[arg(long, value_name = "HOST[:PORT]", value_parser = values::target())]
    pub mirror: Option<Target>,
    /// Most copies held for the shadow.
    ///
    /// Copies waiting for the shadow or for their comparison, at most. Beyond, or beyond half of --max-buffered, a copy is skipped and counted
    /// (shadow-skipped), never waited for.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_QUEUE, value_parser = values::at_least_one(), requires = "mirror")]
    pub mirror_queue: usize,
    /// What of the two answers is compared.
    ///
    /// answer: MSA-1 (the code), MSA-3 (the text) and every ERR segment. ack: the whole ACK
    /// but MSH-7 and MSH-10 (each engine's own time and control ID) and the --ignore paths.
    #[arg(long, value_name = "MODE", value_enum, default_value_t = CompareArg::Answer, hide_possible_values = true, requires = "mirror")]
    pub mirror_compare: CompareArg,
    /// A segment or field --mirror-compare ack leaves out (repeatable).
    ///
    /// ERR, MSH-3, ERR-3.2, ERR(2)-4, ERR-3(2): a whole segment, a field, a component, one
    /// occurrence of a segment, one repetition.
    #[arg(long, value_name = "PATH", value_parser = ignore_path, requires = "mirror")]
    pub ignore: Vec<Ignore>,
    /// Speak TLS to the shadow (as --tls to the upstream).
    #[arg(long, requires = "mirror")]
    pub mirror_tls: bool,
    /// Extra CA certificate(s) for the shadow, PEM; implies --mirror-tls.
    #[arg(long, value_name = "FILE", requires = "mirror")]
    pub mirror_ca: Option<PathBuf>,
    /// Client certificate chain (PEM) for the shadow; needs --mirror-key.
    #[arg(long, value_name = "FILE", requires_all = ["mirror", "mirror_key"])]
    pub mirror_cert: Option<PathBuf>,
    /// Client private key (PEM) for the shadow; needs --mirror-cert.
    #[arg(long, value_name = "FILE", requires_all = ["mirror", "mirror_cert"])]
    pub mirror_key: Option<PathBuf>,
    /// Name for SNI and the shadow's certificate (default: its host).
    #[arg(long, value_name = "NAME", requires = "mirror")]
    pub mirror_server_name: Option<String>,
    /// Accept any certificate from the shadow (warns on every connect).
    #[arg(long, requires = "mirror")]
    pub mirror_insecure: bool,
}

/// `--mirror-compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareArg {
    /// MSA-1 (the code), MSA-3 (the text) and every ERR segment.
    Answer,
    /// The whole ACK but MSH-7, MSH-10 and the --ignore paths.
    Ack,
}

impl MirrorArgs {
    /// The shadow's TLS flags as the upstream's.
    pub fn tls(&self) -> TlsArgs {
        TlsArgs {
            tls: self.mirror_tls,
            ca: self.mirror_ca.clone(),
            cert: self.mirror_cert.clone(),
            key: self.mirror_key.clone(),
            server_name: self.mirror_server_name.clone(),
            insecure: self.mirror_insecure,
        }
    }

    /// The library's options.
    pub fn options(&self) -> MirrorOptions {
        MirrorOptions {
            queue: self.mirror_queue,
            compare: match self.mirror_compare {
                CompareArg::Answer => Compare::Answer,
                CompareArg::Ack => Compare::Ack {
                    ignore: self.ignore.clone(),
                },
            },
        }
    }

    /// `--ignore` without `--mirror-compare ack` compares nothing less: said, not silently
    /// dropped.
    pub fn check(&self) -> Result<(), String> {
        if !self.ignore.is_empty() && self.mirror_compare != CompareArg::Ack {
            return Err("--ignore needs --mirror-compare ack: the default comparison reads MSA-1, MSA-3 and ERR only".into());
        }
        Ok(())
    }
}

/// A mirror that is the relay's own listener (`listen`: host, port) loops every copy back into
/// the relay; one that is an upstream (`to`) delivers every message to it twice. Both refused,
/// by resolved address.
pub fn not_a_loop(mirror: &Target, listen: (&str, u16), to: &[Target]) -> Result<(), String> {
    use std::net::ToSocketAddrs;
    let resolve = |host: &str, port: u16| -> Vec<std::net::SocketAddr> {
        (host, port)
            .to_socket_addrs()
            .map(|a| a.collect())
            .unwrap_or_default()
    };
    let shadow = resolve(&mirror.host, mirror.port_or_default());
    let meets = |other: &[std::net::SocketAddr]| {
        shadow
            .iter()
            .any(|s| other.iter().any(|o| mllp::relay::same_listener(*s, *o)))
    };
    if listen.1 != 0 && meets(&resolve(listen.0, listen.1)) {
        return Err(format!(
            "--mirror {mirror} is the relay's own --listen address: every copy would come back into the relay; give the shadow engine's address"
        ));
    }
    if to
        .iter()
        .any(|to| meets(&resolve(&to.host, to.port_or_default())))
    {
        return Err(format!(
            "--mirror {mirror} is the --to address: the upstream would get every message twice; give the shadow engine's address"
        ));
    }
    Ok(())
}

/// `--ignore`: a segment's name or a field path.
fn ignore_path(text: &str) -> Result<Ignore, String> {
    text.parse()
        .map_err(|e| format!("{e}; give a segment (ERR) or a field path (MSH-3, ERR-3.2)"))
}

/// The counts as `relay_stats` and the summary carry them.
pub fn counts_json(c: &Counts) -> serde_json::Value {
    json!({
        "same": c.same,
        "different": c.different,
        "shadow_unanswered": c.shadow_unanswered,
        "shadow_skipped": c.shadow_skipped,
        "queued": c.queued,
    })
}

/// The counts in words, for the status and the summary.
pub fn counts_words(c: &Counts) -> String {
    format!(
        "{} same, {} different, {} shadow-unanswered, {} shadow-skipped",
        c.same, c.different, c.shadow_unanswered, c.shadow_skipped
    )
}

/// One line for each difference, until the mirror is gone; events a slow writer missed are
/// counted in a line of their own.
pub fn diffs(
    diag: Diag,
    mut events: broadcast::Receiver<MirrorEvent>,
    to: String,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let event = match events.recv().await {
                Ok(event) => event,
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    diag.event(
                        "mirror_diff_missed",
                        || format!("mirror {to}: {missed} differences not shown (the log fell behind); the counts have them"),
                        json!({"mirror": to, "missed": missed}),
                    );
                    continue;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            };
            if diag.quiet {
                continue;
            }
            let MirrorEvent::Diff {
                control_id,
                message_type,
                paths,
            } = &event
            else {
                continue;
            };
            // Shown as the message line shows them: raw, control characters replaced, so a
            // planted ESC or line feed cannot colour the terminal or forge a line.
            let shown = |field: &[u8]| {
                let mut text = String::new();
                if !field.is_empty() {
                    crate::listen::render::push_header_text(&mut text, field);
                }
                text
            };
            let (control_id, message_type) = (shown(control_id), shown(message_type));
            diag.event(
                "mirror_diff",
                || {
                    format!(
                        "mirror {to}: {message_type} {control_id}: answers differ in {}",
                        paths.join(", ")
                    )
                },
                json!({"mirror": to, "control_id": control_id, "message_type": message_type, "paths": paths}),
            );
        }
    })
}

/// The summary at the stop.
pub fn summary(diag: &Diag, to: &str, counts: &Counts) {
    let mut fields = counts_json(counts);
    fields["mirror"] = json!(to);
    diag.event(
        "mirror_summary",
        || format!("mirror {to}: {}", counts_words(counts)),
        fields,
    );
}
