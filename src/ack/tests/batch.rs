//! Unit tests for batch ACKs: one answer per message inside the batch's own envelope.

use super::*;

#[test]
fn batch_acks_answer_each_message() {
    let batch = b"FHS|^~\\&|S|SF|R|RF|T||||F1\rBHS|^~\\&|S|SF|R|RF|T||||B1\rMSH|^~\\&|S||R||T||ADT^A01|M1|P|2.5\rPID|1\rMSH|^~\\&|S||R||T||ADT^A02|M2|P|2.5|||AL\rMSH|^~\\&|S||R||T||ACK|M3\rMSA|AA|X\rBTS|3\rFTS|1\r";
    let b = build_batch_ack(batch, Committed, false, &ctx()).unwrap();
    assert_eq!(b.acks.len(), 2);
    assert_eq!(b.code, AA);
    let parts = crate::hl7::split_batch(&b.payload);
    let ids: Vec<_> = parts
        .iter()
        .map(|p| scan_ack(p).unwrap().control_id)
        .collect();
    assert_eq!(ids, vec![&b"M1"[..], b"M2"]);
    let codes: Vec<_> = b.acks.iter().map(|a| a.code).collect();
    assert_eq!(codes, vec![AA, CA]);
    let text = String::from_utf8(b.payload.clone()).unwrap();
    assert!(text.starts_with("FHS|^~\\&|R|RF|S|SF|20240102030405||||ACK1.F|F1\rBHS|^~\\&|R|RF|S|SF|20240102030405||||ACK1.B|B1\rMSH|"));
    assert!(text.ends_with("BTS|2\rFTS|1\r"));
    assert_eq!(scan(&b.payload).shape, crate::hl7::Shape::Batch);

    let bhs_only = b"BHS|^~\\&\rMSH|^~\\&|||||||ADT^A01|M1\rMSH|^~\\&|||||||ADT^A01|\rBTS|2";
    let b = build_batch_ack(bhs_only, Committed, false, &ctx()).unwrap();
    assert_eq!(
        (b.code, b.reason),
        (AE, Some(NackReason::UncorrelatableInbound))
    );
    let text = String::from_utf8(b.payload).unwrap();
    assert!(text.starts_with("BHS|") && text.ends_with("BTS|2\r") && !text.contains("FHS"));

    let failed = build_batch_ack(bhs_only, CommitFailed, false, &ctx()).unwrap();
    assert!(failed.acks.iter().all(|a| a.code == AE));

    let empty = build_batch_ack(b"BHS|^~\\&\rBTS|0", Committed, false, &ctx()).unwrap();
    assert_eq!(empty.code, AE);
    assert_eq!(scan_ack(&empty.payload).unwrap().control_id, b"");

    let acks_only = b"BHS|^~\\&\rMSH|^~\\&|||||||ACK|A\rMSA|AA|1\rBTS|1";
    assert_eq!(build_batch_ack(acks_only, Committed, false, &ctx()), None);

    let single = build_batch_ack(&msg("", b"S1"), Committed, false, &ctx()).unwrap();
    assert_eq!(single.payload, ack(&msg("", b"S1"), Committed).payload);
}
