//! Soak report tests: histogram encoding, merging, accounting and thresholds.

use super::*;
use crate::soak::Thresholds;

/// A run's data, as the soak loop would tally it: `(latency_ms, accepted?)` per message.
fn run(data: &[(u64, bool)], elapsed_s: u64) -> SoakTotals {
    let mut t = SoakTotals {
        elapsed: Duration::from_secs(elapsed_s),
        ..Default::default()
    };
    for (i, &(ms, ok)) in data.iter().enumerate() {
        t.generated += 1;
        let second = i % 3;
        if ok {
            t.fates.accepted += 1;
            *t.fates.by_code.entry("AA".into()).or_default() += 1;
            record(&mut t.latency, Duration::from_millis(ms));
            t.second(second).accepted += 1;
        } else {
            t.fates.unknown_fate += 1;
            *t.outcomes_by_cause.entry("ack-timeout".into()).or_default() += 1;
            *t.warnings_by_code
                .entry("MLLP_ACK_AFTER_TIMEOUT".into())
                .or_default() += 1;
            t.second(second).failed += 1;
        }
        t.second(second).sent += 1;
        t.bytes_sent += 100;
    }
    t
}

#[test]
fn histogram_round_trips_through_v2_base64() {
    let t = run(&[(1, true), (5, true), (250, true), (3_000, true)], 1);
    let decoded = decode_histogram(&encode_histogram(&t.latency)).unwrap();
    assert_eq!(decoded, t.latency);
    assert!(decode_histogram("not base64!").is_err());
    assert!(decode_histogram("AAAA").is_err());
}

#[test]
fn merging_two_reports_equals_the_report_of_both_runs_data() {
    let a: Vec<(u64, bool)> = (1..400).map(|i| (i % 97 + 1, i % 13 != 0)).collect();
    let b: Vec<(u64, bool)> = (1..300).map(|i| (i * 7 % 1000 + 1, i % 11 != 0)).collect();
    let ra = SoakReport::new(
        serde_json::json!({"a":1}),
        &run(&a, 4),
        Accounting::default(),
    );
    let rb = SoakReport::new(
        serde_json::json!({"b":1}),
        &run(&b, 3),
        Accounting::default(),
    );
    // Through JSON, as `--merge` reads files.
    let ra: SoakReport = serde_json::from_str(&serde_json::to_string(&ra).unwrap()).unwrap();
    let rb: SoakReport = serde_json::from_str(&serde_json::to_string(&rb).unwrap()).unwrap();
    let merged = SoakReport::merge(&[ra, rb]).unwrap();

    let mut both = run(&a, 4);
    let mut second = run(&b, 3);
    second.elapsed = Duration::from_secs(3);
    both.merge(&second);
    let direct = SoakReport::new(merged.config.clone(), &both, Accounting::default());
    assert_eq!(merged.runs, 2);
    let mut merged_one = merged.clone();
    merged_one.runs = 1;
    assert_eq!(merged_one, direct);
    assert_eq!(merged.generated, 400 + 300 - 2);
    let not_accepted = merged.generated - merged.fates.accepted;
    assert_eq!(
        merged.warnings_by_code["MLLP_ACK_AFTER_TIMEOUT"],
        not_accepted
    );
    assert!(merged.accounting_ok);
    assert_eq!(merged.elapsed_s, 4.0);
}

#[test]
fn accounting_fails_when_populations_do_not_add_up_and_merge_keeps_it() {
    let mut t = run(&[(1, true), (2, true)], 1);
    t.generated += 1;
    let r = SoakReport::new(serde_json::Value::Null, &t, Accounting::default());
    assert!(!r.accounting_ok);
    assert_eq!(r.accounting.problems.len(), 1);
    let good = SoakReport::new(
        serde_json::Value::Null,
        &run(&[(1, true)], 1),
        Accounting::default(),
    );
    let merged = SoakReport::merge(&[good, r]).unwrap();
    assert!(!merged.accounting_ok);
    assert!(merged
        .accounting
        .problems
        .iter()
        .any(|p| p.starts_with("report 2:")));
}

#[test]
fn thresholds_name_what_was_missed() {
    let data: Vec<(u64, bool)> = (0..100)
        .map(|i| (if i < 95 { 2 } else { 500 }, i != 0))
        .collect();
    let r = SoakReport::new(
        serde_json::Value::Null,
        &run(&data, 10),
        Accounting::default(),
    );
    let all = Thresholds {
        max_p99: Some(Duration::from_millis(100)),
        max_error_rate: Some(0.001),
        min_throughput: Some(50.0),
    };
    let verdicts = all.evaluate(&r);
    let missed: Vec<&str> = verdicts
        .iter()
        .filter(|v| !v.ok)
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(missed, ["max-p99", "max-error-rate", "min-throughput"]);
    let lenient = Thresholds {
        max_p99: Some(Duration::from_secs(1)),
        max_error_rate: Some(0.05),
        min_throughput: Some(5.0),
    };
    assert!(lenient.evaluate(&r).iter().all(|v| v.ok));
    assert!(Thresholds::default().evaluate(&r).is_empty());
}

#[test]
fn a_report_reads_back_from_its_file_and_other_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let written = SoakReport::new(
        serde_json::Value::Null,
        &run(&[(3, true), (5, false)], 1),
        Accounting::default(),
    );
    let path = dir.path().join("a.json");
    std::fs::write(&path, serde_json::to_string_pretty(&written).unwrap()).unwrap();
    assert_eq!(SoakReport::read(&path).unwrap(), written);

    let missing = dir.path().join("missing.json");
    let e = SoakReport::read(&missing).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("reading {}: ", missing.display())),
        "{e}"
    );
    let other = dir.path().join("other.json");
    std::fs::write(&other, "{\"outcome\": \"accepted\"}").unwrap();
    let e = SoakReport::read(&other).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{} is not a soak report: ", other.display())),
        "{e}"
    );
}
