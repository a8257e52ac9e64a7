//! Failure causes, their class (transient or permanent), and the one table that maps OS errors to them.

mod hint;

pub use hint::Hint;
use serde::Serialize;
use std::fmt;
use std::io;

/// Whether trying again can help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Trying again may work.
    Transient,
    /// Every attempt meets the same failure.
    Permanent,
}

impl Class {
    /// Its name: `transient`, `permanent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Transient => "transient",
            Class::Permanent => "permanent",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every failure cause the tool reports. The names are public and stable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Cause {
    /// The host name does not resolve.
    DnsNotFound,
    /// Name resolution failed (the resolver, not the name).
    DnsFailed,
    /// The operating system refused the connection.
    PermissionDenied,
    /// Nothing listens on the port.
    ConnectionRefused,
    /// The peer reset the connection.
    ConnectionReset,
    /// No answer to the connect (or the TLS handshake) in time.
    ConnectTimeout,
    /// No route to the host or its network.
    HostUnreachable,
    /// The peer's certificate was not trusted.
    TlsVerify,
    /// The TLS handshake failed for another reason than trust.
    TlsHandshake,
    /// The server refused our client certificate, or its absence.
    TlsClientCert,
    /// The peer does not speak MLLP: its bytes cannot be framed.
    FramingFatal,
    /// The peer stopped answering on an open link.
    DeadPeer,
    /// A written message got no ACK in time.
    AckTimeout,
    /// The peer closed the connection.
    PeerClosed,
    /// Written before the link dropped, no ACK: it may have been committed.
    InFlightOrphan,
    /// Never written, failed when an in-order (FIFO) link dropped: safe to send again.
    FifoUnsafe,
    /// Committed by the peer (its commit ACK came), its application ACK never did.
    ConnectionLost,
    /// The run's time limit ran out before the message's fate was known.
    RunTimeout,
    /// The run was interrupted (an operator's signal) before the message was read or written.
    Interrupted,
    /// The peer answered a message it had not been sent.
    UnsolicitedAck,
    /// Any other network error.
    NetworkError,
    /// The receiver closed a connection idle too long.
    IdleTimeout,
    /// The receiver was at its connection cap.
    MaxConnections,
    /// A frame took longer than the receiver's frame timeout to arrive.
    FrameTimeout,
    /// The receiver was at its cap of connections from one address.
    PerPeerLimit,
    /// The receiver's memory for partly received frames was used up.
    BufferBudget,
    /// Closed while idle to make room for a new peer at the connection cap.
    EvictedIdle,
    /// A receiver expecting PROXY protocol got no valid PROXY header.
    ProxyHeader,
    /// A receiver expecting PROXY protocol got a connection from outside its trusted proxies.
    ProxyUntrusted,
    /// The receiver was shutting down.
    Shutdown,
    /// Every message written on a connection had a reply naming another control ID, and none
    /// matched: the peer does not echo MSH-10 in MSA-2.
    AckControlIdMismatch,
    /// A link speaking MLLP Release 2 had a Release 1 acknowledgement where a commit block was
    /// due: the peer speaks the other release.
    PeerNotMllp2,
}

impl Cause {
    /// Every cause, in the order of the enum.
    pub const ALL: [Cause; 32] = [
        Cause::DnsNotFound,
        Cause::DnsFailed,
        Cause::PermissionDenied,
        Cause::ConnectionRefused,
        Cause::ConnectionReset,
        Cause::ConnectTimeout,
        Cause::HostUnreachable,
        Cause::TlsVerify,
        Cause::TlsHandshake,
        Cause::TlsClientCert,
        Cause::FramingFatal,
        Cause::DeadPeer,
        Cause::AckTimeout,
        Cause::PeerClosed,
        Cause::InFlightOrphan,
        Cause::FifoUnsafe,
        Cause::ConnectionLost,
        Cause::RunTimeout,
        Cause::Interrupted,
        Cause::UnsolicitedAck,
        Cause::NetworkError,
        Cause::IdleTimeout,
        Cause::MaxConnections,
        Cause::FrameTimeout,
        Cause::PerPeerLimit,
        Cause::BufferBudget,
        Cause::EvictedIdle,
        Cause::ProxyHeader,
        Cause::ProxyUntrusted,
        Cause::Shutdown,
        Cause::AckControlIdMismatch,
        Cause::PeerNotMllp2,
    ];

    /// Its stable kebab-case name, as JSON and the text output give it.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::DnsNotFound => "dns-not-found",
            Cause::DnsFailed => "dns-failed",
            Cause::PermissionDenied => "permission-denied",
            Cause::ConnectionRefused => "connection-refused",
            Cause::ConnectionReset => "connection-reset",
            Cause::ConnectTimeout => "connect-timeout",
            Cause::HostUnreachable => "host-unreachable",
            Cause::TlsVerify => "tls-verify",
            Cause::TlsHandshake => "tls-handshake",
            Cause::TlsClientCert => "tls-client-cert",
            Cause::FramingFatal => "framing-fatal",
            Cause::DeadPeer => "dead-peer",
            Cause::AckTimeout => "ack-timeout",
            Cause::PeerClosed => "peer-closed",
            Cause::InFlightOrphan => "in-flight-orphan",
            Cause::FifoUnsafe => "fifo-unsafe",
            Cause::ConnectionLost => "connection-lost",
            Cause::RunTimeout => "run-timeout",
            Cause::Interrupted => "interrupted",
            Cause::UnsolicitedAck => "unsolicited-ack",
            Cause::NetworkError => "network-error",
            Cause::IdleTimeout => "idle-timeout",
            Cause::MaxConnections => "max-connections",
            Cause::FrameTimeout => "frame-timeout",
            Cause::PerPeerLimit => "per-peer-limit",
            Cause::BufferBudget => "buffer-budget",
            Cause::EvictedIdle => "evicted-idle",
            Cause::ProxyHeader => "proxy-header",
            Cause::ProxyUntrusted => "proxy-untrusted",
            Cause::Shutdown => "shutdown",
            Cause::AckControlIdMismatch => "ack-control-id-mismatch",
            Cause::PeerNotMllp2 => "peer-not-mllp2",
        }
    }

    /// Permanent causes meet the same failure on every attempt: retrying them is a storm,
    /// not resilience.
    pub fn class(self) -> Class {
        match self {
            Cause::TlsVerify
            | Cause::TlsHandshake
            | Cause::TlsClientCert
            | Cause::FramingFatal
            | Cause::UnsolicitedAck
            | Cause::AckControlIdMismatch
            | Cause::PeerNotMllp2
            | Cause::DnsNotFound
            | Cause::PermissionDenied
            | Cause::ProxyHeader
            | Cause::ProxyUntrusted => Class::Permanent,
            _ => Class::Transient,
        }
    }

    /// The cause with this name, if any.
    pub fn from_name(name: &str) -> Option<Cause> {
        Cause::ALL.iter().copied().find(|c| c.as_str() == name)
    }

    /// What an operator can do about this cause, in one line once the command words it.
    pub fn hint(self) -> Hint {
        match self {
            Cause::DnsNotFound => Hint::Prose("the host name does not resolve: check its spelling or use an IP address"),
            Cause::DnsFailed => Hint::Prose("name resolution failed: check the resolver, then try again"),
            Cause::PermissionDenied => Hint::Prose("the operating system refused the connection: check firewall rules and the port"),
            Cause::ConnectionRefused => Hint::Prose("nothing listens on that port: check the port and that the receiver is running"),
            Cause::ConnectionReset => Hint::Prose("the peer reset the connection: check the peer's logs, then try again"),
            Cause::ConnectTimeout => Hint::Prose("no answer within the connect timeout: check routing, firewalls, and whether TLS is expected"),
            Cause::HostUnreachable => Hint::Prose("the host or network is unreachable: check routing and VPNs"),
            Cause::TlsVerify => Hint::TrustServerCertificate,
            Cause::TlsHandshake => Hint::FixTlsHandshake,
            Cause::TlsClientCert => Hint::ClientCertificateRefused,
            Cause::FramingFatal => Hint::CheckPortAndTls,
            Cause::DeadPeer => Hint::Prose("the peer stopped answering: check the peer process"),
            Cause::AckTimeout => Hint::Prose("the peer accepted the message and never acknowledged it: check the peer's logs"),
            Cause::PeerClosed => Hint::Prose("the peer closed the connection: check the peer's logs"),
            Cause::InFlightOrphan => Hint::Prose("written before the link dropped, no ACK: it may have been committed"),
            Cause::FifoUnsafe => Hint::Prose("never written: safe to send again"),
            Cause::ConnectionLost => Hint::Prose("committed by the peer, its application ACK never came"),
            Cause::RunTimeout => Hint::SendAgainAfterTimeout,
            Cause::Interrupted => Hint::Prose("the run was interrupted before this message was sent: send it again"),
            Cause::UnsolicitedAck => Hint::CorrelateByControlId,
            Cause::NetworkError => Hint::Prose("a network error: try again later"),
            Cause::IdleTimeout => Hint::Prose("the connection was idle too long"),
            Cause::MaxConnections => Hint::Prose("the receiver had too many connections"),
            Cause::FrameTimeout => Hint::Prose("a frame took longer than the receiver's frame timeout to arrive"),
            Cause::PerPeerLimit => Hint::Prose("the receiver had too many connections from this address"),
            Cause::BufferBudget => Hint::Prose("the receiver's memory for partly received frames was used up"),
            Cause::EvictedIdle => Hint::Prose("the receiver closed this idle connection to admit another peer"),
            Cause::ProxyHeader => Hint::Prose("the receiver expects a PROXY protocol header first: connect through the load balancer (send-proxy or send-proxy-v2)"),
            Cause::ProxyUntrusted => Hint::Prose("the receiver takes PROXY headers only from its trusted proxy addresses: connect through the load balancer"),
            Cause::Shutdown => Hint::Prose("the receiver was shutting down"),
            Cause::AckControlIdMismatch => Hint::CorrelateInOrder,
            Cause::PeerNotMllp2 => Hint::SpeakRelease1,
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The one table from OS errors to causes. Anything it does not name is `network-error`.
pub(crate) fn classify_io(err: &io::Error) -> Cause {
    use io::ErrorKind as K;
    match err.kind() {
        K::ConnectionRefused => Cause::ConnectionRefused,
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe => Cause::ConnectionReset,
        K::TimedOut => Cause::ConnectTimeout,
        K::PermissionDenied => Cause::PermissionDenied,
        K::HostUnreachable | K::NetworkUnreachable | K::AddrNotAvailable => Cause::HostUnreachable,
        K::UnexpectedEof => Cause::PeerClosed,
        _ => Cause::NetworkError,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_permanent_set_is_exact() {
        for cause in Cause::ALL {
            assert_eq!(Cause::from_name(cause.as_str()), Some(cause));
            let json = serde_json::to_string(&cause).unwrap();
            assert_eq!(json, format!("\"{}\"", cause.as_str()));
        }
        let permanent: Vec<_> = Cause::ALL
            .iter()
            .filter(|c| c.class() == Class::Permanent)
            .map(|c| c.as_str())
            .collect();
        assert_eq!(
            permanent,
            [
                "dns-not-found",
                "permission-denied",
                "tls-verify",
                "tls-handshake",
                "tls-client-cert",
                "framing-fatal",
                "unsolicited-ack",
                "proxy-header",
                "proxy-untrusted",
                "ack-control-id-mismatch",
                "peer-not-mllp2"
            ]
        );
    }

    #[test]
    fn os_errors_map_through_the_table() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(classify_io(&refused), Cause::ConnectionRefused);
        // EHOSTUNREACH: std names the kind from the OS code, so no errno table is needed here.
        #[cfg(target_os = "linux")]
        assert_eq!(
            classify_io(&io::Error::from_raw_os_error(113)),
            Cause::HostUnreachable
        );
        assert_eq!(classify_io(&io::Error::other("odd")), Cause::NetworkError);
    }
}
