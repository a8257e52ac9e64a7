//! Engine tests: short runs against the embedded listener, driven through the public API, whose
//! reports must close their accounting.

use super::*;
use crate::client::LinkSettings;
use crate::client::{ClientEvent, State};
use crate::soak::{ChaosSpec, Sample, StoppedBy};

/// Every update of a run, then its outcome.
async fn drive(mut run: SoakRun, stop_after_first_sample: bool) -> (Vec<SoakUpdate>, SoakOutcome) {
    let mut updates = Vec::new();
    while let Some(update) = run.next_update().await {
        if stop_after_first_sample && matches!(update, SoakUpdate::Sample(_)) {
            run.stop();
        }
        updates.push(update);
    }
    (updates, run.finish().await.expect("the run reports"))
}

fn last_sample(updates: &[SoakUpdate]) -> &Sample {
    updates
        .iter()
        .rev()
        .find_map(|u| match u {
            SoakUpdate::Sample(s) => Some(&**s),
            _ => None,
        })
        .expect("a last sample at the end")
}

#[tokio::test]
async fn a_budgeted_run_settles_every_message_once_and_the_listener_committed_each() {
    let plan = SoakPlan {
        connections: 3,
        messages: Some(301),
        window: 8,
        seed: 7,
        sample_every: Some(Duration::from_millis(20)),
        per_message: true,
        ..SoakPlan::default()
    };
    let (updates, outcome) = drive(SoakRun::start(plan).await.unwrap(), false).await;
    let r = &outcome.report;
    assert!(r.accounting_ok, "{:?}", r.accounting);
    assert_eq!(r.generated, 301);
    assert_eq!(r.fates.accepted, 301, "{r:?}");
    assert_eq!(r.accounting.populations_sum, 301);
    let listener = r
        .accounting
        .listener
        .expect("the embedded listener's totals");
    assert_eq!((listener.committed, listener.foreign), (301, 0));
    assert_eq!(r.config["stopped_by"], "messages");
    assert_eq!(r.config["connections"], 3);
    assert_eq!(r.config["templates"][0], "built-in ADT^A01");
    assert!(!outcome.permanent && !outcome.transient);

    // The stream saw the same messages the report counts, each once.
    let settled: usize = updates
        .iter()
        .map(|u| match u {
            SoakUpdate::Settled { results, .. } => results.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(settled, 301);
    assert!(updates
        .iter()
        .any(|u| matches!(u, SoakUpdate::Stopping(StoppedBy::Messages))));
    for conn in 0..3 {
        let connected = updates.iter().any(|u| match u {
            SoakUpdate::Connection {
                conn: c,
                event: ClientEvent::StateChange(t),
            } => *c == conn && t.to == State::Connected,
            _ => false,
        });
        assert!(connected, "connection {conn} connected");
    }
    let last = last_sample(&updates);
    assert_eq!(last.totals.generated, 301);
    assert_eq!(last.totals.fates.accepted, 301);
    let per_conn: Vec<u64> = last.connections.iter().map(|c| c.generated).collect();
    assert_eq!(per_conn, [101, 100, 100]);
    assert_eq!(last.states().values().sum::<usize>(), 3);
    let seconds: u64 = r.per_second.iter().map(|s| s.accepted + s.failed).sum();
    assert_eq!(seconds, 301);
}

#[tokio::test]
async fn a_stopped_run_under_resets_still_accounts_for_every_message() {
    let plan = SoakPlan {
        connections: 2,
        chaos: Some("reset=0.02".parse::<ChaosSpec>().unwrap()),
        seed: 11,
        sample_every: Some(Duration::from_millis(50)),
        ..SoakPlan::default()
    };
    let (updates, outcome) = drive(SoakRun::start(plan).await.unwrap(), true).await;
    let r = &outcome.report;
    assert!(r.accounting_ok, "{:?}", r.accounting);
    assert_eq!(r.config["stopped_by"], "interrupt", "{r:?}");
    assert_eq!(r.fates.settled(), r.generated);
    assert!(updates
        .iter()
        .any(|u| matches!(u, SoakUpdate::Stopping(StoppedBy::Interrupt))));
    // Without `per_message`, results are counted but not sent.
    assert!(!updates
        .iter()
        .any(|u| matches!(u, SoakUpdate::Settled { .. })));
    assert_eq!(last_sample(&updates).totals.generated, r.generated);
}

#[tokio::test]
async fn a_plan_that_cannot_run_is_refused_before_anything_starts() {
    let refused = |plan: SoakPlan| async move {
        match SoakRun::start(plan).await {
            Err(SoakError::Plan(e)) => e,
            Err(e) => panic!("not a plan error: {e}"),
            Ok(_) => panic!("started"),
        }
    };
    let zero = SoakPlan {
        connections: 0,
        ..SoakPlan::default()
    };
    assert_eq!(refused(zero).await, PlanError::Connections);
    let nack_remote = SoakPlan {
        target: SoakTarget::Remote {
            host: "127.0.0.1".into(),
            port: 9,
            tls: None,
        },
        chaos: Some("nack=0.1".parse().unwrap()),
        ..SoakPlan::default()
    };
    let synthetic = refused(nack_remote.clone()).await;
    assert_eq!(synthetic, PlanError::Synthetic);
    assert!(synthetic.to_string().contains("allow_synthetic"));
    let e = refused(SoakPlan {
        allow_synthetic: true,
        ..nack_remote
    })
    .await;
    assert_eq!(e, PlanError::NackNeedsEmbedded);
    assert!(e
        .to_string()
        .starts_with("a nack fault needs the embedded listener"));
}

#[tokio::test]
async fn a_stop_after_the_budget_is_spent_cuts_the_wait_for_the_last_fates() {
    // A peer that reads everything and answers nothing: no message can settle by its ACK.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut stream, _)) = listener.accept().await {
            held.push(tokio::spawn(async move {
                let mut sink = tokio::io::sink();
                let _ = tokio::io::copy(&mut stream, &mut sink).await;
            }));
        }
    });
    let plan = SoakPlan {
        target: SoakTarget::Remote {
            host: "127.0.0.1".into(),
            port,
            tls: None,
        },
        allow_synthetic: true,
        messages: Some(5),
        link: LinkSettings {
            drain_timeout: Duration::from_millis(200),
            ..LinkSettings::default()
        },
        ..SoakPlan::default()
    };
    let mut run = SoakRun::start(plan).await.unwrap();
    let finished = tokio::time::timeout(Duration::from_secs(10), async move {
        while let Some(update) = run.next_update().await {
            if let SoakUpdate::Stopping(by) = update {
                assert_eq!(by, StoppedBy::Messages);
                run.stop();
            }
        }
        run.finish().await.unwrap()
    })
    .await
    .expect("the stop bounds the wait by the drain timeout, not the ACK timeout");
    let r = &finished.report;
    assert_eq!(r.config["stopped_by"], "messages");
    assert_eq!((r.generated, r.fates.unknown_fate), (5, 5), "{r:?}");
    assert!(r.accounting_ok, "{:?}", r.accounting);
    silent.abort();
}

#[tokio::test]
async fn link_settings_the_client_refuses_are_named_by_their_option() {
    let plan = SoakPlan {
        link: LinkSettings {
            ack_timeout: Duration::ZERO,
            ..LinkSettings::default()
        },
        ..SoakPlan::default()
    };
    match SoakRun::start(plan).await {
        Err(e @ SoakError::Client(_)) => {
            assert_eq!(e.to_string(), "--ack-timeout: must be greater than zero")
        }
        Err(e) => panic!("not a client options error: {e}"),
        Ok(_) => panic!("started"),
    }
}
