//! After connecting: the banner wait (a receiver should stay silent until spoken to) and the
//! one message with its ACK. Every read is bounded in time and size.

use super::handshake::session_verdict;
use super::record::{failure, healthy, PhaseLog};
use super::report::{ClientCertificate, Detail, PhaseName, Verdict};
use crate::cause::{Cause, Hint};
use crate::framing::{encode_frame, Decoded, FramingError, MllpCodec, Release, Tolerance};
use crate::hl7::{scan, scan_ack};
use crate::sniff::{recognise, PeerKind};
use crate::transport::{classify, BoxStream};
use bytes::BytesMut;
use std::io;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;
use tokio_util::codec::Decoder;

/// Largest ACK frame read.
const MAX_ACK: usize = 1024 * 1024;

/// After an ACK timeout, how long the probe listens once it has ended its side of the stream.
/// Servers that wait for a line end (HTTP) answer the end of input, and are recognised by it.
const LAST_LOOK: Duration = Duration::from_millis(500);

/// A read or write failed: a TLS error (our client certificate refused, above all) through the
/// TLS table, or a classified I/O error.
fn read_failure(err: &io::Error, run: &mut PhaseLog, during: &str) -> Verdict {
    if let Some(verdict) = session_verdict(err, run, during) {
        return verdict;
    }
    let cause = classify(err);
    failure(cause, format!("{during}: {err}"), cause.hint())
}

fn not_mllp(kind: PeerKind, first_byte: u8, during: &str) -> Verdict {
    failure(
        Cause::FramingFatal,
        format!("{during}: {kind} (first byte 0x{first_byte:02X})"),
        kind.hint(),
    )
}

/// Listens for `wait`: bytes say what the peer is; silence proves only that it is reachable
/// (an MLLP receiver is silent until spoken to, and so are HTTP and TLS servers).
pub(crate) async fn banner(
    stream: &mut BoxStream,
    wait: Duration,
    tls: bool,
    run: &mut PhaseLog,
) -> Result<Verdict, Verdict> {
    if wait.is_zero() {
        return Ok(healthy(
            "reachable: the peer accepted the connection (no banner wait, nothing exchanged)",
            Hint::SendOneMessage,
        ));
    }
    let silent = healthy(
        format!(
            "reachable: the peer accepted the connection and sent nothing for {}; an MLLP \
             receiver does that, and so does an HTTP or TLS server",
            crate::duration::Rounded(wait)
        ),
        Hint::SendOneMessage,
    );
    let started = Instant::now();
    let mut first = [0u8; 64];
    let during = "while waiting for a banner";
    match tokio::time::timeout(wait, stream.read(&mut first)).await {
        Err(_) => {
            run.pass(
                PhaseName::Banner,
                started,
                Some(Detail::Banner {
                    silent: true,
                    peer: None,
                }),
            );
            if run.presented_client_certificate() {
                run.client_certificate(ClientCertificate::Accepted, None);
            }
            Ok(silent)
        }
        Ok(Ok(0)) => {
            let detail = format!("{during}: the peer closed the connection at once");
            run.fail(PhaseName::Banner, started, None, &detail);
            let hint = if tls {
                Hint::ClientCertificateOrLimits
            } else {
                Hint::CheckAccessOrTurnTlsOn
            };
            Err(failure(Cause::PeerClosed, detail, hint))
        }
        Ok(Ok(n)) => {
            let seen = recognise(&first[..n]);
            let detail = Detail::Banner {
                silent: false,
                peer: seen,
            };
            match seen {
                Some(r) if r.kind != PeerKind::Mllp => {
                    let verdict = not_mllp(r.kind, r.first_byte, "unsolicited bytes");
                    run.fail(PhaseName::Banner, started, Some(detail), &verdict.detail);
                    Err(verdict)
                }
                _ => {
                    run.pass(PhaseName::Banner, started, Some(detail));
                    Ok(healthy(
                        "the peer sent an MLLP frame before being spoken to",
                        PeerKind::Mllp.hint(),
                    ))
                }
            }
        }
        Ok(Err(err)) => {
            let verdict = read_failure(&err, run, during);
            run.fail(PhaseName::Banner, started, None, &verdict.detail);
            Err(verdict)
        }
    }
}

/// Writes `payload` as one frame and waits for the ACK whose MSA-2 is its MSH-10 (the first
/// ACK when the message has no MSH-10). Frames that are not that ACK are counted and skipped.
pub(crate) async fn send_and_await_ack(
    stream: &mut BoxStream,
    payload: &[u8],
    limit: Duration,
    tls: bool,
    release: Release,
    run: &mut PhaseLog,
) -> Result<Verdict, Verdict> {
    let control_id = scan(payload)
        .msh
        .and_then(|m| m.control_id())
        .map(|id| String::from_utf8_lossy(id).into_owned())
        .unwrap_or_default();
    let frame = frame_message(payload, run)?;
    let started = Instant::now();
    let deadline = started + limit;
    send_frame(
        stream,
        &frame,
        payload.len(),
        &control_id,
        limit,
        started,
        run,
    )
    .await?;
    let mut awaited = Awaited {
        control_id,
        release,
        started,
        ignored: 0,
        unmatched: 0,
    };
    let mut codec = MllpCodec::new(Tolerance::ACK_READER, MAX_ACK);
    let mut buf = BytesMut::with_capacity(4096);
    let mut first_read = true;
    loop {
        if let Some(answer) = awaited.answer_in(&mut codec, &mut buf, run) {
            return answer;
        }
        let read = tokio::time::timeout_at(deadline, stream.read_buf(&mut buf)).await;
        let ignored = awaited.ignored;
        let verdict = read_verdict(
            read,
            stream,
            &mut buf,
            &mut first_read,
            ignored,
            limit,
            tls,
            run,
        );
        if let Some(verdict) = verdict.await {
            return Err(ack_failed(run, started, ignored, verdict));
        }
    }
}

/// The ACK awaited, and the frames seen so far that were not it.
struct Awaited {
    control_id: String,
    release: Release,
    started: Instant,
    /// Frames skipped: not an ACK, or an ACK for another message.
    ignored: usize,
    /// ACKs naming another control ID than ours.
    unmatched: u32,
}

impl Awaited {
    /// The answer among the frames read so far, if there is one (or a reason to stop looking).
    fn answer_in(
        &mut self,
        codec: &mut MllpCodec,
        buf: &mut BytesMut,
        run: &mut PhaseLog,
    ) -> Option<Result<Verdict, Verdict>> {
        let (started, control_id) = (self.started, &self.control_id);
        loop {
            let decoded = match codec.decode(buf) {
                Ok(Some(Decoded::Frame(frame))) => frame,
                Ok(Some(Decoded::LateWarning { .. })) => continue,
                Ok(None) => return None,
                Err(err) => {
                    let verdict = framing_failure(&err);
                    return Some(Err(ack_failed(run, started, self.ignored, verdict)));
                }
            };
            if let Some(answer) = super::release2::answer(self.release, &decoded.payload) {
                return Some(match answer {
                    Ok(verdict) => {
                        let code = verdict.ack_code.clone();
                        run.pass(
                            PhaseName::Ack,
                            started,
                            ack_detail(code, true, self.ignored),
                        );
                        Ok(verdict)
                    }
                    Err(v) => Err(ack_failed(run, started, self.ignored, v)),
                });
            }
            let Some(ack) = scan_ack(&decoded.payload) else {
                self.ignored += 1;
                continue;
            };
            let matches = !control_id.is_empty() && ack.control_id == control_id.as_bytes();
            if !matches && !control_id.is_empty() {
                self.unmatched += 1;
                if crate::client::ignores_control_ids(1, 0, self.unmatched) {
                    let verdict = other_control_id(ack.code, control_id);
                    return Some(Err(ack_failed(run, started, self.ignored, verdict)));
                }
                self.ignored += 1;
                continue;
            }
            let code: String = String::from_utf8_lossy(ack.code).chars().take(8).collect();
            let detail = ack_detail(Some(code.clone()), matches, self.ignored);
            run.pass(PhaseName::Ack, started, detail);
            if run.presented_client_certificate() {
                run.client_certificate(ClientCertificate::Accepted, None);
            }
            return Some(Ok(acknowledged(code)));
        }
    }
}

/// `payload` as one frame; a message holding VT or FS fails the send phase.
fn frame_message(payload: &[u8], run: &mut PhaseLog) -> Result<BytesMut, Verdict> {
    let mut frame = BytesMut::new();
    if let Err(err) = encode_frame(payload, &mut frame) {
        let detail = format!("the message cannot be framed: {err}");
        run.fail(PhaseName::Send, Instant::now(), None, &detail);
        return Err(failure(
            Cause::FramingFatal,
            detail,
            Hint::Prose("remove VT and FS bytes from the message"),
        ));
    }
    Ok(frame)
}

/// The send phase: `frame` written and flushed within `limit` from `started`.
async fn send_frame(
    stream: &mut BoxStream,
    frame: &[u8],
    bytes: usize,
    control_id: &str,
    limit: Duration,
    started: Instant,
    run: &mut PhaseLog,
) -> Result<(), Verdict> {
    let write = async {
        stream.write_all(frame).await?;
        stream.flush().await
    };
    let send_detail = Some(Detail::Send {
        bytes,
        control_id: control_id.to_owned(),
    });
    match tokio::time::timeout_at(started + limit, write).await {
        Ok(Ok(())) => {
            run.pass(PhaseName::Send, started, send_detail);
            Ok(())
        }
        Ok(Err(err)) => {
            let verdict = read_failure(&err, run, "while sending");
            run.fail(PhaseName::Send, started, send_detail, &verdict.detail);
            Err(verdict)
        }
        Err(_) => {
            let detail = format!(
                "the peer did not take the message within {}",
                humantime::format_duration(limit)
            );
            run.fail(PhaseName::Send, started, send_detail, &detail);
            run.unknown_fate = true;
            Err(failure(
                Cause::AckTimeout,
                detail,
                Hint::Prose("the peer stopped reading: check the peer process"),
            ))
        }
    }
}

/// What a read while waiting for the ACK says: `None` to decode what came and read on, or the
/// verdict that ends the wait.
#[allow(clippy::too_many_arguments)]
async fn read_verdict(
    read: Result<io::Result<usize>, tokio::time::error::Elapsed>,
    stream: &mut BoxStream,
    buf: &mut BytesMut,
    first_read: &mut bool,
    ignored: usize,
    limit: Duration,
    tls: bool,
    run: &mut PhaseLog,
) -> Option<Verdict> {
    Some(match read {
        Err(_) => match last_look(stream, buf, *first_read).await {
            Some(verdict) => verdict,
            None => failure(
                Cause::AckTimeout,
                format!(
                    "no ACK within {}{}",
                    humantime::format_duration(limit),
                    ignored_note(ignored)
                ),
                Cause::AckTimeout.hint(),
            ),
        },
        Ok(Ok(0)) => failure(
            Cause::PeerClosed,
            format!(
                "the peer closed the connection before answering{}",
                ignored_note(ignored)
            ),
            // Ending a plain connection after our bytes without a word is what a TLS
            // server does with bytes that are not a TLS handshake.
            maybe_tls(
                Hint::Prose(
                    "the peer took the message and hung up without an ACK: check the \
                     peer's logs",
                ),
                tls,
            ),
        ),
        Ok(Ok(_)) if *first_read => {
            *first_read = false;
            match recognise(buf) {
                Some(r) if r.kind != PeerKind::Mllp => not_mllp(r.kind, r.first_byte, "the answer"),
                _ => return None,
            }
        }
        Ok(Ok(_)) => return None,
        Ok(Err(err)) => {
            let mut verdict = read_failure(&err, run, "while waiting for the ACK");
            if verdict.cause == Some(Cause::ConnectionReset) {
                verdict.hint = maybe_tls(verdict.hint, tls);
            }
            verdict
        }
    })
}

/// No ACK came: end our side of the stream and listen a moment longer. A server that waits for
/// a line end before answering (HTTP) answers the end of input; what it says is recognised.
/// Only a peer that had sent nothing yet is looked at again.
async fn last_look(stream: &mut BoxStream, buf: &mut BytesMut, silent: bool) -> Option<Verdict> {
    if !silent || !buf.is_empty() {
        return None;
    }
    let look = async {
        stream.shutdown().await?;
        stream.read_buf(buf).await
    };
    match tokio::time::timeout(LAST_LOOK, look).await {
        Ok(Ok(n)) if n > 0 => match recognise(buf) {
            Some(r) if r.kind != PeerKind::Mllp => Some(not_mllp(
                r.kind,
                r.first_byte,
                "no ACK; when our side closed, the peer answered",
            )),
            _ => None,
        },
        _ => None,
    }
}

/// On a plain connection, `hint` and then: the port may expect TLS.
fn maybe_tls(hint: Hint, tls: bool) -> Hint {
    if tls {
        hint
    } else {
        Hint::OrTurnTlsOn(Box::new(hint))
    }
}

fn ack_detail(code: Option<String>, matches: bool, ignored: usize) -> Option<Detail> {
    Some(Detail::Ack {
        ack_code: code,
        control_id_matches: matches,
        ignored_frames: ignored,
    })
}

/// The ACK phase failed after the message went out: its fate is unknown.
fn ack_failed(run: &mut PhaseLog, started: Instant, ignored: usize, verdict: Verdict) -> Verdict {
    run.fail(
        PhaseName::Ack,
        started,
        ack_detail(None, false, ignored),
        &verdict.detail,
    );
    run.unknown_fate = true;
    verdict
}

fn ignored_note(ignored: usize) -> String {
    match ignored {
        0 => String::new(),
        n => format!(
            " ({n} other frame{} ignored)",
            if n == 1 { "" } else { "s" }
        ),
    }
}

/// The peer answered, but its MSA-2 names another message than ours: it does not echo MSH-10,
/// and no wait would bring an ACK that does.
fn other_control_id(code: &[u8], control_id: &str) -> Verdict {
    let code: String = String::from_utf8_lossy(code).chars().take(8).collect();
    failure(
        Cause::AckControlIdMismatch,
        format!(
            "the peer answered {code}, but its MSA-2 names another control ID than the \
             message's MSH-10 ({control_id})"
        ),
        Cause::AckControlIdMismatch.hint(),
    )
}

fn framing_failure(err: &FramingError) -> Verdict {
    failure(
        Cause::FramingFatal,
        format!("the answer is not valid MLLP: {err}"),
        Cause::FramingFatal.hint(),
    )
}

fn acknowledged(code: String) -> Verdict {
    let positive = crate::ack::AckCode::parse(code.as_bytes()).is_some_and(|c| c.is_positive());
    let mut verdict = if positive {
        healthy(
            format!("the peer acknowledged the message with {code}"),
            Hint::Prose("MLLP works end to end"),
        )
    } else {
        healthy(
            format!("the link works, but the peer refused the message with {code}"),
            Hint::Prose(
                "check the message against the receiver's rules (its MSA-3 or ERR says why)",
            ),
        )
    };
    verdict.ack_code = Some(code);
    verdict
}
