//! Answer-code rules against a reference: generated rules (code, ERR-3 or any), answers (code
//! and ERR-3 identifiers, one for each write) and resend budgets drive the real client over an
//! in-memory link on the paused clock; its fate, the number of writes and the answer kept must
//! be the reference's.

use super::harness::{msg, paused, rig, Rig};
use crate::ack::AckCode;
use crate::client::*;
use bytes::Bytes;
use proptest::prelude::*;
use std::sync::Arc;
use std::time::Duration;

const CODES: [&str; 3] = ["AA", "AE", "AR"];
const RULE_CODES: [&str; 4] = ["AE", "AR", "CE", "CR"];
const IDS: [&str; 3] = ["206", "207", "1"];

/// One answer: its code, and the ERR-3 identifiers of its ERR segments.
#[derive(Debug, Clone)]
struct Answer {
    code: usize,
    errs: Vec<usize>,
}

impl Answer {
    fn bytes(&self, cid: &str) -> Bytes {
        let mut text = format!(
            "MSH|^~\\&|C|D|A|B|20240101120000||ACK^A01|R{cid}|P|2.5\rMSA|{}|{cid}\r",
            CODES[self.code]
        );
        for e in &self.errs {
            text.push_str(&format!("ERR|||{}^Text^HL70357|E\r", IDS[*e]));
        }
        Bytes::from(text)
    }
}

/// The reference: each write gets the next answer (the last one again once they run out); a
/// negative answer a rule names (its code, and its ERR-3 when the rule has one) is written
/// again while rewrites remain; anything else ends the message with that answer. The final
/// code, the writes, and which answer was kept.
fn reference(
    rules: &[(usize, Option<usize>)],
    answers: &[Answer],
    max_resends: u32,
) -> (usize, u32, usize) {
    let mut write = 0u32;
    loop {
        let at = (write as usize).min(answers.len() - 1);
        let a = &answers[at];
        let named = rules.iter().any(|&(code, err3)| {
            RULE_CODES[code] == CODES[a.code] && err3.is_none_or(|e| a.errs.contains(&e))
        });
        let transient = CODES[a.code] != "AA" && named;
        if transient && write < max_resends {
            write += 1;
            continue;
        }
        return (a.code, write + 1, at);
    }
}

fn answer() -> impl Strategy<Value = Answer> {
    (0..CODES.len(), prop::collection::vec(0..IDS.len(), 0..3))
        .prop_map(|(code, errs)| Answer { code, errs })
}

fn rule() -> impl Strategy<Value = (usize, Option<usize>)> {
    (0..RULE_CODES.len(), prop::option::of(0..IDS.len()))
}

fn run(
    rules: &[(usize, Option<usize>)],
    answers: &[Answer],
    max_resends: u32,
) -> Result<(), TestCaseError> {
    let runtime = paused();
    runtime.block_on(async {
        let retry_on = rules
            .iter()
            .map(|&(code, err3)| RetryRule {
                code: AckCode::parse(RULE_CODES[code].as_bytes()).unwrap(),
                err3: err3.map(|e| IDS[e].to_string()),
            })
            .collect();
        let options = ClientOptions {
            retry_on,
            max_resends,
            retry_backoff: BackoffConfig {
                initial: Duration::from_millis(10),
                max: Duration::from_millis(40),
                ..BackoffConfig::default()
            },
            ..ClientOptions::default()
        };
        let Rig {
            client, mut peers, ..
        } = rig(vec![], options);
        let client = Arc::new(client);
        let handle = client.send(msg("M1", "")).await;
        let mut peer = peers.recv().await.expect("a connection");
        let script = answers.to_vec();
        let engine = tokio::spawn(async move {
            let mut writes = 0usize;
            while let Some(_frame) = peer.read().await {
                let a = &script[writes.min(script.len() - 1)];
                writes += 1;
                let mut framed = bytes::BytesMut::new();
                crate::framing::encode_frame(&a.bytes("M1"), &mut framed).unwrap();
                if !peer.write_raw(&framed).await {
                    break;
                }
            }
            writes
        });
        let fate = handle.await;
        client.destroy().await;
        let writes = engine.await.unwrap() as u32;
        let (code, want_writes, kept) = reference(rules, answers, max_resends);
        prop_assert_eq!(
            fate.ack_code().map(|c| c.as_str()),
            Some(CODES[code]),
            "{:?}",
            fate
        );
        prop_assert_eq!(writes, want_writes);
        let ack = fate.ack().map(|a| a.bytes().to_vec());
        prop_assert_eq!(ack, Some(answers[kept].bytes("M1").to_vec()));
        Ok(())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn retry_rules_match_the_reference(
        rules in prop::collection::vec(rule(), 0..3),
        answers in prop::collection::vec(answer(), 1..6),
        max_resends in 0u32..4,
    ) {
        run(&rules, &answers, max_resends)?;
    }
}
