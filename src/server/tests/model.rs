//! The receiver's answer table as a small reference model, checked against the real server over
//! in-memory pipes with generated traffic: inbound shape x MSH-15 x MSH-16 x sink outcome x
//! answer mode -> the ACK codes written (and whether a second, application ACK follows), the
//! MSA-2 of each, and whether the message was kept. Every ACK must also carry its required
//! fields.

use super::*;
use crate::ack::tests::fields::required_fields;
use proptest::prelude::*;
use AckCode::*;

/// How an inbound frame is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Single,
    NoMsh,
    EmptyControlId,
    /// MSH-2 declares a letter: nothing can be answered under it.
    UnusableDelimiters,
    /// BHS, two messages, BTS.
    Batch,
    /// A batch whose second message has an empty MSH-10.
    BatchWithEmptyId,
    /// Two messages in one frame, no envelope.
    Concatenated,
    /// A partial frame cut by the next VT: the remnant arrives flagged `MLLP_TRAILING_BYTES`.
    Damaged,
    /// MSH-9 `ACK`: never answered.
    InboundAck,
}

/// What the sink does with the message if it gets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Commit,
    Fail,
    Reject,
}

#[derive(Debug, Clone)]
struct Message {
    shape: Shape,
    msh15: &'static str,
    msh16: &'static str,
    outcome: Outcome,
    /// Field separator and MSH-2 of the header.
    delimiters: (u8, &'static str),
    /// MSH-11 and MSH-12 empty.
    no_version: bool,
}

#[derive(Debug, Clone)]
struct Case {
    ack: AckMode,
    batch_ack: bool,
    messages: Vec<Message>,
}

fn message() -> impl Strategy<Value = Message> {
    use Shape::*;
    let shape = prop_oneof![
        6 => Just(Single),
        1 => Just(NoMsh),
        1 => Just(EmptyControlId),
        1 => Just(UnusableDelimiters),
        1 => Just(Batch),
        1 => Just(BatchWithEmptyId),
        1 => Just(Concatenated),
        1 => Just(Damaged),
        1 => Just(InboundAck),
    ];
    let msh15 = prop::sample::select(vec!["", "\"\"", "NE", "AL", "ER", "SU", "XX"]);
    let msh16 = prop::sample::select(vec!["", "\"\"", "NE", "AL", "ER", "SU", "ZZ"]);
    let outcome = prop::sample::select(vec![Outcome::Commit, Outcome::Fail, Outcome::Reject]);
    let delimiters = prop::sample::select(vec![
        (b'|', "^~\\&"),
        (b'|', "^~\\&#"),
        (b'|', "^~"),
        (b'|', ""),
        (b'|', "^^\\&"),
        (b'!', "^~\\&"),
        (b'^', ""),
        (b'^', "~\\&"),
    ]);
    (shape, msh15, msh16, outcome, delimiters, any::<bool>()).prop_map(
        |(shape, msh15, msh16, outcome, delimiters, no_version)| Message {
            shape,
            msh15,
            msh16,
            outcome,
            delimiters,
            no_version,
        },
    )
}

fn case() -> impl Strategy<Value = Case> {
    let ack = prop_oneof![
        6 => Just(AckMode::Auto),
        1 => Just(AckMode::None),
        3 => prop::sample::select(vec![AA, AE, AR, CA, CE, CR]).prop_map(AckMode::Forced),
    ];
    let messages = proptest::collection::vec(message(), 1..7);
    (ack, any::<bool>(), messages).prop_map(|(ack, batch_ack, messages)| Case {
        ack,
        batch_ack,
        messages,
    })
}

impl Message {
    /// MSH-10 of the (first) header: `m<i>-ok|fail|reject` tells the scripted sink what to do.
    fn control_id(&self, i: usize) -> String {
        match self.shape {
            Shape::NoMsh | Shape::EmptyControlId => String::new(),
            _ => format!(
                "m{i}-{}",
                match self.outcome {
                    Outcome::Commit => "ok",
                    Outcome::Fail => "fail",
                    Outcome::Reject => "reject",
                }
            ),
        }
    }

    fn header(&self, id: &str, kind: &str) -> Vec<u8> {
        let (s, enc) = match self.shape {
            Shape::UnusableDelimiters => (b'|', "C~\\&"),
            _ => self.delimiters,
        };
        let s = char::from(s);
        let version = if self.no_version { "" } else { "P" };
        let number = if self.no_version { "" } else { "2.5" };
        format!(
            "MSH{s}{enc}{s}SND{s}SF{s}RCV{s}RF{s}20240101120000{s}{s}{kind}{s}{id}{s}{version}\
             {s}{number}{s}{s}{s}{}{s}{}\rPID{s}1\r",
            self.msh15, self.msh16
        )
        .into_bytes()
    }

    /// The frame's payload and the bytes written for it.
    fn wire(&self, i: usize) -> (Vec<u8>, Vec<u8>) {
        let id = self.control_id(i);
        let single = |id: &str| self.header(id, "ADT");
        let payload = match self.shape {
            Shape::NoMsh => b"PID|1||x\rOBX|1\r".to_vec(),
            Shape::Batch => [&b"BHS|^~\\&\r"[..], &single(&id), &single("b2"), b"BTS|2\r"].concat(),
            Shape::BatchWithEmptyId => {
                [&b"BHS|^~\\&\r"[..], &single(&id), &single(""), b"BTS|2\r"].concat()
            }
            Shape::Concatenated => [single(&id), single("c2")].concat(),
            Shape::InboundAck => [self.header(&id, "ACK"), b"MSA|AA|x\r".to_vec()].concat(),
            _ => single(&id),
        };
        let mut bytes = Vec::new();
        if self.shape == Shape::Damaged {
            bytes.extend_from_slice(b"\x0bMSH|^~\\&|partial");
        }
        bytes.extend(frame(&payload));
        (payload, bytes)
    }
}

/// Which column of the MSH-15 table answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Committed,
    Failed,
    Rejected,
}

/// The MSH-15 table: absent, empty, `""`, `NE` or unknown -> original; `AL`, `ER`, `SU`.
fn row(msh15: &str) -> [AckCode; 3] {
    match msh15 {
        "AL" => [CA, CE, CR],
        "ER" => [AA, CE, CR],
        "SU" => [CA, AE, AR],
        _ => [AA, AE, AR],
    }
}

/// MSH-16 asks for an application ACK for this outcome.
fn wants_application_ack(msh16: &str, positive: bool) -> bool {
    match msh16 {
        "AL" => true,
        "ER" => !positive,
        "SU" => positive,
        _ => false,
    }
}

/// The reference: the ACKs (MSA-1, MSA-2) written for message `i`, and whether it is kept.
fn expected(case: &Case, i: usize, m: &Message) -> (Vec<(AckCode, String)>, bool) {
    use Shape::*;
    let answering = case.ack != AckMode::None && m.shape != InboundAck;
    let is_batch = matches!(m.shape, Batch | BatchWithEmptyId);
    // Can this inbound be acknowledged truthfully at all?
    let sound = match m.shape {
        Single | InboundAck => true,
        Batch => case.batch_ack,
        _ => false,
    };
    let forced = match case.ack {
        AckMode::Forced(code) => Some(code),
        _ => None,
    };
    let forced_negative = forced.filter(|c| !c.is_positive());
    let reaches_sink = !answering || (sound && forced_negative.is_none());
    // Without an MSH-10 the scripted sink has nothing to go by and commits.
    let outcome = match m.shape {
        NoMsh | EmptyControlId => Outcome::Commit,
        _ => m.outcome,
    };
    let kept = reaches_sink && outcome == Outcome::Commit;
    if !answering {
        return (Vec::new(), kept);
    }
    let column = match (reaches_sink, forced_negative) {
        (true, _) => match outcome {
            Outcome::Commit => Column::Committed,
            Outcome::Fail => Column::Failed,
            Outcome::Reject => Column::Rejected,
        },
        (false, _) if !sound && is_batch && !case.batch_ack => Column::Rejected,
        (false, _) if !sound => Column::Failed,
        (false, Some(AR | CR)) => Column::Rejected,
        (false, _) => Column::Failed,
    };
    let index = column as usize;
    let first = match forced {
        Some(code) if !code.is_positive() => code,
        Some(code) if column == Column::Committed => code,
        // A forced positive code keeps its level and tells the truth.
        Some(code) if code.is_commit_level() => [CA, CE, CR][index],
        Some(_) => [AA, AE, AR][index],
        // No MSH: no MSH-15 either.
        None if m.shape == NoMsh => row("")[index],
        None => row(m.msh15)[index],
    };
    let msa2 = m.control_id(i);
    let mut acks = vec![(first, msa2.clone())];
    let application = first.application_level();
    let batch_answer = is_batch && case.batch_ack;
    if first.is_commit_level()
        && !batch_answer
        && m.shape != NoMsh
        && wants_application_ack(m.msh16, application.is_positive())
    {
        acks.push((application, msa2));
    }
    (acks, kept)
}

/// Run `case` through a real server; the ACKs (MSA-1, MSA-2) and the payloads the sink kept.
async fn run(case: &Case) -> Result<(Vec<(AckCode, String)>, Vec<Vec<u8>>), String> {
    let config = ServerConfig {
        ack: case.ack,
        batch_ack: case.batch_ack,
        ..ServerConfig::default()
    };
    let mut h = harness(config, ScriptedSink::default());
    let mut bytes = Vec::new();
    for (i, m) in case.messages.iter().enumerate() {
        bytes.extend(m.wire(i).1);
    }
    h.send(&bytes).await;
    h.client.shutdown().await.map_err(|e| e.to_string())?;
    let mut acks = Vec::new();
    loop {
        let next = h.decoder.decode(&mut h.buf).map_err(|e| e.to_string())?;
        if let Some(Decoded::Frame(f)) = next {
            let echoes = required_fields(&f.payload)?;
            let view = scan_ack(&f.payload).ok_or("an ACK without MSA")?;
            let code = AckCode::parse(view.code).ok_or("MSA-1 is not a code")?;
            let msa2 = String::from_utf8_lossy(&echoes[0]).into_owned();
            acks.push((code, msa2));
            continue;
        }
        if h.client
            .read_buf(&mut h.buf)
            .await
            .map_err(|e| e.to_string())?
            == 0
        {
            break;
        }
    }
    let kept = h.sink.committed.lock().unwrap().clone();
    Ok((acks, kept))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn the_server_answers_and_keeps_as_the_table_says(case in case()) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (acks, kept) = runtime.block_on(run(&case)).map_err(TestCaseError::fail)?;
        let mut want_acks = Vec::new();
        let mut want_kept = Vec::new();
        for (i, m) in case.messages.iter().enumerate() {
            let (answers, stored) = expected(&case, i, m);
            want_acks.extend(answers);
            if stored {
                want_kept.push(m.wire(i).0);
            }
        }
        prop_assert_eq!(acks, want_acks);
        prop_assert_eq!(kept, want_kept);
    }
}
