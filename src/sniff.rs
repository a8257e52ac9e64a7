//! Recognising what kind of server sent the first bytes on a connection that should carry MLLP
//! (HTTP, SSH, SMTP, TLS on a plain link), for `probe` and the client core alike.
//!
//! Pure byte inspection: the result names the kind of peer and at most the first byte, never a
//! run of what the peer sent.

use crate::cause::Hint;
use serde::Serialize;
use std::fmt;

/// What the first bytes from a peer look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum PeerKind {
    /// An MLLP frame start (VT).
    Mllp,
    /// `HTTP/` (a reply) or an HTTP request line.
    Http,
    /// A TLS record (handshake or alert, `0x16`/`0x15` then `0x03`): a TLS server.
    Tls,
    /// `SSH-`: an SSH server banner.
    Ssh,
    /// `220 ` or `220-`: an SMTP (or FTP) greeting.
    Smtp,
    /// Anything else.
    Unknown,
}

/// The recognition of a peer's first bytes, with the first byte for the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Recognised {
    /// What the bytes look like.
    pub kind: PeerKind,
    /// The first byte, for the record (never more of what the peer sent).
    pub first_byte: u8,
    /// How many bytes were looked at.
    pub bytes: usize,
}

impl PeerKind {
    /// How the verdict describes this peer.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            PeerKind::Mllp => "the peer sent an MLLP frame unprompted",
            PeerKind::Http => "an HTTP server answers on this port",
            PeerKind::Tls => "a TLS server answers on this port",
            PeerKind::Ssh => "an SSH server answers on this port",
            PeerKind::Smtp => "an SMTP (or FTP) server answers on this port",
            PeerKind::Unknown => "the peer answered with bytes that are not MLLP",
        }
    }

    /// What to do about it.
    pub(crate) fn hint(self) -> Hint {
        match self {
            PeerKind::Tls => Hint::TurnTlsOn,
            PeerKind::Mllp => Hint::Prose(
                "an MLLP receiver should wait for the sender: check the peer's configuration",
            ),
            _ => Hint::Prose("this is not an MLLP receiver: check the host and the port"),
        }
    }
}

impl PeerKind {
    /// Its short name, as a fate's `cause_detail` gives it: `http`, `ssh`, `smtp`, `tls`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PeerKind::Mllp => "mllp",
            PeerKind::Http => "http",
            PeerKind::Tls => "tls",
            PeerKind::Ssh => "ssh",
            PeerKind::Smtp => "smtp",
            PeerKind::Unknown => "unknown",
        }
    }

    /// A peer recognised as something other than an MLLP receiver.
    pub(crate) fn is_foreign(self) -> bool {
        !matches!(self, PeerKind::Mllp | PeerKind::Unknown)
    }
}

impl fmt::Display for PeerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

const HTTP_METHODS: [&[u8]; 9] = [
    b"GET ",
    b"POST ",
    b"PUT ",
    b"HEAD ",
    b"DELETE ",
    b"OPTIONS ",
    b"PATCH ",
    b"CONNECT ",
    b"TRACE ",
];

/// Recognises a peer from the first bytes it sent; `None` for no bytes. Leading whitespace is
/// skipped only for the text protocols (some MLLP peers send a stray CR/LF before a frame).
pub(crate) fn recognise(bytes: &[u8]) -> Option<Recognised> {
    let first_byte = *bytes.first()?;
    let text = bytes.trim_ascii_start();
    let kind = if matches!(bytes, [0x15 | 0x16, 0x03, ..]) {
        PeerKind::Tls
    } else if text.first() == Some(&crate::framing::VT) {
        PeerKind::Mllp
    } else if text.starts_with(b"HTTP/")
        || HTTP_METHODS.iter().any(|m| text.starts_with(m))
        || is_html(text)
    {
        PeerKind::Http
    } else if text.starts_with(b"SSH-") {
        PeerKind::Ssh
    } else if text.starts_with(b"220 ") || text.starts_with(b"220-") {
        PeerKind::Smtp
    } else {
        PeerKind::Unknown
    };
    Some(Recognised {
        kind,
        first_byte,
        bytes: bytes.len(),
    })
}

/// An HTML page without a status line: how HTTP/0.9-style servers (Python's `http.server`
/// among them) answer a request line they cannot read.
fn is_html(text: &[u8]) -> bool {
    [&b"<!doctype html"[..], b"<html"]
        .iter()
        .any(|start| text.len() >= start.len() && text[..start.len()].eq_ignore_ascii_case(start))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(bytes: &[u8]) -> Option<PeerKind> {
        recognise(bytes).map(|r| r.kind)
    }

    #[test]
    fn known_servers_are_recognised_from_their_first_bytes() {
        assert_eq!(kind(b"HTTP/1.1 400 Bad Request\r\n"), Some(PeerKind::Http));
        assert_eq!(kind(b"HTTP/"), Some(PeerKind::Http));
        assert_eq!(kind(b"GET / HTTP/1.1\r\n"), Some(PeerKind::Http));
        assert_eq!(kind(b"<!DOCTYPE HTML>\n<html"), Some(PeerKind::Http));
        assert_eq!(kind(b"<html><head>"), Some(PeerKind::Http));
        assert_eq!(
            kind(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x32]),
            Some(PeerKind::Tls)
        );
        assert_eq!(kind(&[0x16, 0x03, 0x01, 0x00]), Some(PeerKind::Tls));
        assert_eq!(kind(b"SSH-2.0-OpenSSH_9.6\r\n"), Some(PeerKind::Ssh));
        assert_eq!(kind(b"220 mail.example ESMTP\r\n"), Some(PeerKind::Smtp));
        assert_eq!(kind(b"220-welcome\r\n"), Some(PeerKind::Smtp));
        assert_eq!(kind(b"\x0bMSH|^~\\&|\x1c\r"), Some(PeerKind::Mllp));
        assert_eq!(kind(b"\r\n\x0bMSH"), Some(PeerKind::Mllp));
    }

    #[test]
    fn near_misses_and_short_reads_are_not_guessed() {
        assert_eq!(kind(b""), None);
        assert_eq!(kind(&[0x16]), Some(PeerKind::Unknown));
        assert_eq!(kind(&[0x16, 0x02]), Some(PeerKind::Unknown));
        assert_eq!(kind(b"HTTP"), Some(PeerKind::Unknown));
        assert_eq!(kind(b"SSH"), Some(PeerKind::Unknown));
        assert_eq!(kind(b"2200"), Some(PeerKind::Unknown));
        assert_eq!(kind(b"MSH|^~\\&|"), Some(PeerKind::Unknown));
        assert_eq!(kind(&[0x00, 0xff]), Some(PeerKind::Unknown));
    }

    #[test]
    fn the_record_keeps_one_byte_and_the_length_only() {
        let seen = recognise(b"SSH-2.0-secret-version").unwrap();
        assert_eq!(seen.first_byte, b'S');
        assert_eq!(seen.bytes, 22);
        let debug = format!("{seen:?}");
        assert!(!debug.contains("secret"), "{debug}");
        assert_eq!(PeerKind::Tls.hint(), Hint::TurnTlsOn);
    }
}
