//! `soak --metrics`: a run's updates counted into the metrics recorder: outcomes, ACK codes,
//! link state changes, reconnects and errors, a latency histogram and the in-flight gauge.

use mllp::client::ClientEvent;
use mllp::soak::{Done, SoakUpdate};

/// Count one update.
pub fn record(update: &SoakUpdate) {
    match update {
        SoakUpdate::Settled { results, .. } => results.iter().for_each(settled),
        SoakUpdate::Connection { event, .. } => link(event),
        SoakUpdate::Sample(sample) => {
            metrics::gauge!("mllp_soak_in_flight").set(sample.in_flight as f64);
        }
        _ => {}
    }
}

fn settled(done: &Done) {
    metrics::counter!("mllp_soak_messages_total", "outcome" => done.population.as_str())
        .increment(1);
    if let Some(code) = done.code {
        metrics::counter!("mllp_soak_acks_total", "code" => code.as_str()).increment(1);
        metrics::histogram!("mllp_soak_latency_seconds").record(done.latency.as_secs_f64());
    }
}

fn link(event: &ClientEvent) {
    match event {
        ClientEvent::StateChange(t) => {
            metrics::counter!("mllp_soak_state_changes_total", "to" => t.to.as_str()).increment(1);
        }
        ClientEvent::Reconnecting { .. } => {
            metrics::counter!("mllp_soak_reconnects_total").increment(1);
        }
        ClientEvent::Error { cause, .. } => {
            metrics::counter!("mllp_soak_link_errors_total", "cause" => cause.as_str())
                .increment(1);
        }
        _ => {}
    }
}
