//! Every `nack` names one of the three public reasons; `detail` says what the reason alone does not.

use super::*;
use crate::ack::AckCode;

/// Send each control ID in turn, then end the stream: the ACK codes, each nack's
/// (reason, detail) and the server's nacks by reason.
async fn nacks(
    config: ServerConfig,
    ids: &[&str],
) -> (
    Vec<String>,
    Vec<(&'static str, Option<&'static str>)>,
    Vec<(&'static str, u64)>,
) {
    let mut h = harness(config, ScriptedSink::default());
    let mut codes = Vec::new();
    for id in ids {
        h.send(&frame(&msg(id, ""))).await;
        codes.push(h.ack().await.expect("an ACK").0);
    }
    h.client.shutdown().await.unwrap();
    let whys = h
        .events_until_close()
        .await
        .into_iter()
        .filter_map(|e| match e {
            ServerEvent::Nack { why, .. } => Some((why.as_str(), why.detail())),
            _ => None,
        })
        .collect();
    let stats = h.task.await.unwrap();
    (codes, whys, stats.nacks_by_reason.into_iter().collect())
}

#[tokio::test]
async fn a_failed_commit_is_handler_rejected_with_detail_commit_failed() {
    let (codes, whys, by_reason) =
        nacks(ServerConfig::default(), &["a-fail", "b-reject", "c"]).await;
    assert_eq!(codes, ["AE", "AR", "AA"]);
    assert_eq!(
        whys,
        [
            ("handler-rejected", Some("commit-failed")),
            ("handler-rejected", None)
        ]
    );
    assert_eq!(by_reason, [("handler-rejected", 2)]);
}

#[tokio::test]
async fn a_forced_negative_code_is_reported_forced_not_as_a_commit_failure() {
    for forced in [AckCode::AE, AckCode::AR] {
        let config = ServerConfig {
            ack: AckMode::Forced(forced),
            ..ServerConfig::default()
        };
        let (codes, whys, by_reason) = nacks(config, &["ok", "x-fail"]).await;
        // A forced negative code is written as is, and nothing reaches the sink.
        assert_eq!(codes, [forced.as_str(); 2], "forced {forced}");
        assert_eq!(
            whys,
            [
                ("handler-rejected", Some("forced")),
                ("handler-rejected", Some("forced"))
            ],
            "forced {forced}"
        );
        assert_eq!(by_reason, [("handler-rejected", 2)]);
    }
}
