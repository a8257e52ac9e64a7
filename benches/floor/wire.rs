//! The floor the end-to-end benchmarks measure against: a minimal MLLP sender and receiver on
//! blocking `std::net` sockets, one thread each, run as separate processes. Same framing
//! (VT payload FS CR) and the same checks as the real tools: the receiver answers every frame
//! with an AA naming its MSH-10; the sender requires each ACK in order to be AA naming the MSH-10
//! it sent. Nothing else: no parsing beyond those fields, no storage, no events.
//!
//! Receiver: `recv [--port P]` prints its port on stdout, then serves connections one after
//! another until killed. Sender: `send --port P --window W FILE` sends the messages of FILE
//! (segments ending in CR, each message starting with an `MSH|` segment), at most W unacknowledged,
//! and prints one JSON line: messages, elapsed_s (connect to last ACK), p50_us, p99_us.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Instant;

const VT: u8 = 0x0b;
const FS: u8 = 0x1c;
const CR: u8 = 0x0d;

const ACK_HEAD: &[u8] = b"\x0bMSH|^~\\&|FLOOR|FLOOR|SENDER|FAC|20240101120000||ACK^A01|";

/// MSH-10 of a payload (the tenth `|`-separated field of the first segment): one pass over the
/// bytes up to it, as the C floor does.
pub fn control_id(payload: &[u8]) -> &[u8] {
    let (mut field, mut start) = (0, 0);
    for (i, &b) in payload.iter().enumerate() {
        match b {
            CR => break,
            b'|' if field == 9 => return &payload[start..i],
            b'|' => {
                field += 1;
                start = i + 1;
            }
            _ => {}
        }
    }
    match field {
        9 => {
            let end = memchr::memchr(CR, &payload[start..]).map_or(payload.len(), |e| start + e);
            &payload[start..end]
        }
        _ => &[],
    }
}

/// MSA-1 and MSA-2 of an ACK frame (VT and the bytes before the FS); empty when there is no MSA.
pub fn msa(frame: &[u8]) -> (&[u8], &[u8]) {
    // The searcher is built once: `memmem::find` would build one per ACK.
    static MSA: std::sync::OnceLock<memchr::memmem::Finder<'static>> = std::sync::OnceLock::new();
    let finder = MSA.get_or_init(|| memchr::memmem::Finder::new(b"\rMSA|"));
    let Some(at) = finder.find(frame) else {
        return (b"", b"");
    };
    let segment = frame[at + 5..]
        .split(|b| *b == CR)
        .next()
        .unwrap_or_default();
    let mut fields = segment.split(|b| *b == b'|');
    let code = fields.next().unwrap_or_default();
    (code, fields.next().unwrap_or_default())
}

/// The messages of a file: each starts at an `MSH|` at the start of the file or after a CR or
/// LF, and runs to the next; line feeds between messages are dropped.
pub fn split_messages(text: &[u8]) -> Vec<&[u8]> {
    let mut starts: Vec<usize> = memchr::memmem::find_iter(text, b"MSH|")
        .filter(|&at| at == 0 || matches!(text[at - 1], CR | b'\n'))
        .collect();
    starts.push(text.len());
    starts
        .windows(2)
        .map(|w| {
            let mut m = &text[w[0]..w[1]];
            while let [rest @ .., b'\n'] = m {
                m = rest;
            }
            m
        })
        .collect()
}

/// Whole frames at the start of `buf`: (start of payload, end of payload) pairs and the bytes
/// they took. Bytes before a VT (a peer's stray line feeds) are skipped.
fn frames(buf: &[u8], out: &mut Vec<(usize, usize)>) -> usize {
    let mut used = 0;
    while let Some(end) = memchr::memchr(FS, &buf[used..]) {
        let end = used + end;
        if end + 1 >= buf.len() {
            break;
        }
        let start = memchr::memchr(VT, &buf[used..end]).map_or(end, |v| used + v + 1);
        out.push((start, end));
        // FS is followed by CR; tolerate a peer that leaves it out.
        used = end + 1 + usize::from(buf[end + 1] == CR);
    }
    used
}

pub fn recv_main(mut args: impl Iterator<Item = String>) -> Result<(), String> {
    let mut port = 0u16;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => port = parse(args.next(), "--port")?,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let listener = TcpListener::bind(("127.0.0.1", port)).map_err(|e| format!("bind: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "{port}").and_then(|_| stdout.flush());
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let _ = serve(conn);
    }
    Ok(())
}

/// Answers the frames of each read with their ACKs in one write.
fn serve(mut tcp: TcpStream) -> std::io::Result<()> {
    tcp.set_nodelay(true)?;
    // As large as the C floor's: a read takes whatever the socket holds.
    let mut buf = vec![0u8; 1 << 20];
    let mut have = 0;
    let mut out = Vec::with_capacity(2 << 20);
    let mut found = Vec::new();
    loop {
        if have == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = tcp.read(&mut buf[have..])?;
        if n == 0 {
            return Ok(());
        }
        have += n;
        found.clear();
        let used = frames(&buf[..have], &mut found);
        for &(start, end) in &found {
            let id = control_id(&buf[start..end]);
            out.extend_from_slice(ACK_HEAD);
            out.extend_from_slice(id);
            out.extend_from_slice(b"|P|2.5\rMSA|AA|");
            out.extend_from_slice(id);
            out.extend_from_slice(&[CR, FS, CR]);
        }
        buf.copy_within(used..have, 0);
        have -= used;
        if !out.is_empty() {
            tcp.write_all(&out)?;
            out.clear();
        }
    }
}

pub fn send_main(mut args: impl Iterator<Item = String>) -> Result<(), String> {
    let (mut port, mut window, mut file) = (None, 1usize, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => port = Some(parse::<u16>(args.next(), "--port")?),
            "--window" => window = parse(args.next(), "--window")?,
            _ if file.is_none() && !arg.starts_with("--") => file = Some(arg),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let port = port.ok_or("--port is required")?;
    let file = file.ok_or("a message file is required")?;
    let text = std::fs::read(&file).map_err(|e| format!("{file}: {e}"))?;
    let messages = split_messages(&text);
    // All frames back to back, so a window's worth goes out as one slice in one write.
    let mut wire = Vec::with_capacity(text.len() + 3 * messages.len());
    let mut bounds = Vec::with_capacity(messages.len() + 1);
    for m in &messages {
        bounds.push(wire.len());
        wire.push(VT);
        wire.extend_from_slice(m);
        wire.extend_from_slice(&[FS, CR]);
    }
    bounds.push(wire.len());
    let ids: Vec<&[u8]> = messages.iter().map(|m| control_id(m)).collect();
    let count = messages.len();
    let window = window.max(1);

    let started = Instant::now();
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
    tcp.set_nodelay(true).map_err(|e| e.to_string())?;
    let mut sent_at = vec![started; window];
    let mut latencies_ns: Vec<u64> = Vec::with_capacity(count);
    let mut buf = vec![0u8; 1 << 20];
    let mut have = 0;
    let mut found = Vec::new();
    let (mut sent, mut acked) = (0, 0);
    while acked < count {
        let upto = (acked + window).min(count);
        if sent < upto {
            tcp.write_all(&wire[bounds[sent]..bounds[upto]])
                .map_err(|e| format!("write after {acked} ACKs: {e}"))?;
            let now = Instant::now();
            for i in sent..upto {
                sent_at[i % window] = now;
            }
            sent = upto;
        }
        if have == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = tcp
            .read(&mut buf[have..])
            .map_err(|e| format!("read after {acked} ACKs: {e}"))?;
        if n == 0 {
            return Err(format!("the receiver closed after {acked} of {count} ACKs"));
        }
        let now = Instant::now();
        have += n;
        found.clear();
        let used = frames(&buf[..have], &mut found);
        for &(start, end) in &found {
            if acked == sent {
                return Err(format!("an ACK arrived for no message after {acked} ACKs"));
            }
            let (code, id) = msa(&buf[start..end]);
            if code != b"AA" || id != ids[acked] {
                return Err(format!(
                    "ACK {} is {} naming {:?}, not AA naming {:?}",
                    acked + 1,
                    String::from_utf8_lossy(code),
                    String::from_utf8_lossy(id),
                    String::from_utf8_lossy(ids[acked])
                ));
            }
            latencies_ns.push((now - sent_at[acked % window]).as_nanos() as u64);
            acked += 1;
        }
        buf.copy_within(used..have, 0);
        have -= used;
    }
    let elapsed = started.elapsed().as_secs_f64();
    drop(tcp);
    latencies_ns.sort_unstable();
    let pct = |p: f64| {
        latencies_ns
            .get(((count as f64 * p).ceil() as usize).saturating_sub(1))
            .map_or(0.0, |ns| *ns as f64 / 1e3)
    };
    println!(
        "{{\"messages\":{count},\"elapsed_s\":{elapsed:.6},\"p50_us\":{:.1},\"p99_us\":{:.1}}}",
        pct(0.50),
        pct(0.99)
    );
    Ok(())
}

fn parse<T: std::str::FromStr>(value: Option<String>, flag: &str) -> Result<T, String> {
    value
        .as_deref()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("{flag} needs a number"))
}
