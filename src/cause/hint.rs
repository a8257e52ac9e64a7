//! What would help after a failure, as data: the library names the remedy (turn TLS on, trust
//! this CA, give the server name, pair replies in order), the command words it with its options.

/// A step an operator can take. Advice that needs no option stays prose ([`Hint::Prose`]); every
/// other variant names what would help and carries the values it needs (certificate names),
/// never payload. Deliberately exhaustive: whoever words hints must word every one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hint {
    /// Advice that names no option.
    Prose(&'static str),
    /// Another hint, then: if the port expects TLS, probe again with TLS on.
    OrTurnTlsOn(Box<Hint>),

    // Turning TLS on or off.
    /// The peer speaks TLS: probe again with TLS on.
    TurnTlsOn,
    /// The peer accepted and closed at once: it refuses this address, is full, is shutting
    /// down, or expects TLS.
    CheckAccessOrTurnTlsOn,
    /// The peer does not speak TLS on this port: try without TLS.
    TurnTlsOff,
    /// The peer accepted TCP and never answered the ClientHello, as a plain server does.
    TurnTlsOffForSilentPeer,
    /// The peer hung up during the handshake: no TLS on this port, or it refused this client.
    TurnTlsOffOrCheckAccess,
    /// The peer does not speak MLLP here: check the host, the port and whether TLS is on.
    CheckPortAndTls,
    /// The handshake failed: the peer needs TLS 1.2 or 1.3 with a modern suite, or no TLS.
    FixTlsHandshake,

    // Trusting the server.
    /// The server's certificate was not trusted: the general remedies for each check.
    TrustServerCertificate,
    /// Trust the CA that issued the server's certificate, or pin that certificate.
    TrustIssuerOrPin,
    /// The server's certificate is self-signed: pin it, or have the peer use a CA-issued one.
    PinSelfSigned,
    /// The server presented a CA certificate: pin it if self-signed, else it needs a server's.
    PinOrServerCertificate,
    /// The server's certificate is for other names: connect by one, or give it as the server
    /// name.
    GiveServerName {
        /// The names the certificate carries, when it was at hand.
        names: Vec<String>,
    },

    // Our client certificate.
    /// The server refused our client certificate, or its absence.
    ClientCertificateRefused,
    /// Present a client certificate issued by a CA the server trusts.
    GiveClientCertificate,
    /// Present another client certificate, or have the server trust this one's issuer.
    ReplaceClientCertificate,
    /// The handshake was refused: a client certificate if the peer requires one, else its
    /// versions and suites.
    ClientCertificateOrSuites,
    /// The peer closed right after the handshake: a client certificate if it requires one,
    /// else its logs.
    ClientCertificateOrLimits,

    // The listener's side: what the connecting client must do.
    /// The client's certificate must be issued by a CA the listener trusts; `ca_own`: it is a
    /// CA's own certificate.
    ClientNeedsTrustedIssuer {
        /// The client presented a CA (most likely self-signed) certificate.
        ca_own: bool,
    },
    /// The client must present a certificate, or the listener accept none.
    ClientMustPresentCertificate,
    /// The client must trust the listener's certificate or the CA that issued it.
    ClientMustTrustUs,
    /// The client must connect with TLS.
    ClientMustUseTls,

    // Replies and runs.
    /// Replies cannot be paired in order: pair them by control ID.
    CorrelateByControlId,
    /// The peer does not echo MSH-10: pair replies in order, or fix the peer.
    CorrelateInOrder,
    /// The run's time limit ran out before this message's turn: send it again.
    SendAgainAfterTimeout,
    /// Silence proves only reachability: exchange one test message.
    SendOneMessage,
    /// The peer answers as MLLP Release 1 does: speak Release 1 to it.
    SpeakRelease1,
}
