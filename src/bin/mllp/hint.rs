//! The one table that words the library's hints for people, with the flags that carry them out:
//! send, probe, soak, listen and relay all say a hint through [`words`].

use mllp::cause::{Cause, Hint};
use std::borrow::Cow;

/// The hint as one line, naming the flags that would help.
pub fn words(hint: &Hint) -> Cow<'static, str> {
    match hint {
        Hint::Prose(text) => Cow::Borrowed(text),
        Hint::OrTurnTlsOn(first) => format!(
            "{}; if the port expects TLS, probe again with --tls",
            words(first)
        )
        .into(),
        Hint::GiveServerName { names } => {
            let names = match names.join(", ") {
                none if none.is_empty() => none,
                some => format!(" ({some})"),
            };
            format!(
                "connect by a name the certificate carries{names}, or pass --server-name with \
                 one of them"
            )
            .into()
        }
        Hint::TurnTlsOn
        | Hint::CheckAccessOrTurnTlsOn
        | Hint::TurnTlsOff
        | Hint::TurnTlsOffForSilentPeer
        | Hint::TurnTlsOffOrCheckAccess
        | Hint::CheckPortAndTls
        | Hint::FixTlsHandshake => tls_on_or_off(hint).into(),
        Hint::TrustServerCertificate
        | Hint::TrustIssuerOrPin
        | Hint::PinSelfSigned
        | Hint::PinOrServerCertificate
        | Hint::ClientCertificateRefused
        | Hint::GiveClientCertificate
        | Hint::ReplaceClientCertificate
        | Hint::ClientCertificateOrSuites
        | Hint::ClientCertificateOrLimits => certificates(hint).into(),
        Hint::ClientNeedsTrustedIssuer { .. }
        | Hint::ClientMustPresentCertificate
        | Hint::ClientMustTrustUs
        | Hint::ClientMustUseTls
        | Hint::CorrelateByControlId
        | Hint::CorrelateInOrder
        | Hint::SendAgainAfterTimeout
        | Hint::SpeakRelease1
        | Hint::SendOneMessage => listener_or_replies(hint).into(),
    }
}

/// Turning TLS on or off, and the handshake.
fn tls_on_or_off(hint: &Hint) -> &'static str {
    match hint {
        Hint::TurnTlsOn => "the peer speaks TLS: probe again with --tls",
        Hint::CheckAccessOrTurnTlsOn => {
            "the peer accepted and closed at once: it may refuse this address, be at its \
             connection limit, be shutting down, or expect TLS (try --tls)"
        }
        Hint::TurnTlsOff => "the peer does not speak TLS on this port: try without --tls",
        Hint::TurnTlsOffForSilentPeer => {
            "the peer accepted TCP but never answered the TLS ClientHello, as a plain (non-TLS) \
             server does: try without --tls"
        }
        Hint::TurnTlsOffOrCheckAccess => {
            "the peer may not speak TLS on this port (try without --tls), or refused this client \
             (check its allowed addresses and whether it requires --cert and --key)"
        }
        Hint::CheckPortAndTls => {
            "the peer does not speak MLLP here: check the host, the port and --tls"
        }
        Hint::FixTlsHandshake => {
            "the TLS handshake failed (mllp probe with the same TLS flags says why): the peer \
             must enable TLS 1.2 or 1.3 with a modern cipher suite; a peer that does not speak \
             TLS on this port needs no --tls"
        }
        _ => unreachable!("routed by words"),
    }
}

/// Trusting the server, and our client certificate.
fn certificates(hint: &Hint) -> &'static str {
    match hint {
        Hint::TrustServerCertificate => {
            "the peer's certificate was not trusted (mllp probe with the same TLS flags says \
             which check failed): pass --ca with the CA that issued it, or with the server's own \
             certificate to trust exactly that one; for a name mismatch pass --server-name; an \
             expired or not yet valid certificate needs a renewal by the peer or a clock check"
        }
        Hint::TrustIssuerOrPin => {
            "pass --ca with the certificate of the CA that issued it, or with the server's own \
             certificate to trust exactly that one"
        }
        Hint::PinSelfSigned => {
            "pass --ca with this very certificate (the server's own certificate file) to trust \
             exactly it, or have the peer use a CA-issued one"
        }
        Hint::PinOrServerCertificate => {
            "if it is self-signed, pass --ca with this very certificate (the server's own \
             certificate file) to trust exactly it; else the peer needs a certificate issued for \
             a server, not a CA's"
        }
        Hint::ClientCertificateRefused => {
            "the server refused our client certificate, or its absence: pass --cert and --key \
             with a certificate issued by a CA the server trusts"
        }
        Hint::GiveClientCertificate => {
            "pass --cert and --key with a client certificate issued by a CA the server trusts"
        }
        Hint::ReplaceClientCertificate => {
            "pass --cert and --key with a certificate issued by a CA the server trusts, or have \
             the server trust this certificate's issuer"
        }
        Hint::ClientCertificateOrSuites => {
            "if the peer requires a client certificate, pass --cert and --key; otherwise check \
             its logs for the TLS versions and suites it accepts"
        }
        Hint::ClientCertificateOrLimits => {
            "the peer closed right after the handshake: if it requires a client certificate, \
             pass --cert and --key; otherwise its logs say whether it refuses this address, is \
             at its connection limit, or is shutting down"
        }
        _ => unreachable!("routed by words"),
    }
}

/// What the connecting client must do, and replies and runs.
fn listener_or_replies(hint: &Hint) -> &'static str {
    match hint {
        Hint::ClientNeedsTrustedIssuer { ca_own: true } => {
            "the client needs a certificate issued by a CA in --client-ca, not a CA's own"
        }
        Hint::ClientNeedsTrustedIssuer { ca_own: false } => {
            "the client needs a certificate issued by a CA in --client-ca"
        }
        Hint::ClientMustPresentCertificate => {
            "the client must present a certificate, or the listener accept none (--client-auth \
             want)"
        }
        Hint::ClientMustTrustUs => {
            "give the client the CA that issued --tls-cert, or the certificate itself"
        }
        Hint::ClientMustUseTls => "the client must connect with TLS (mllp send --tls)",
        Hint::CorrelateByControlId => {
            "the peer answered a message it had not been sent, so replies cannot be paired in \
             order: use --correlate control-id"
        }
        Hint::CorrelateInOrder => {
            "the peer's ACKs name other control IDs than the messages' MSH-10 (its MSA-2 does \
             not echo them): pair replies in order with --correlate fifo, or fix the peer"
        }
        Hint::SendAgainAfterTimeout => {
            "the run's --timeout ran out before this message's turn: send it again"
        }
        Hint::SpeakRelease1 => {
            "the peer answers with HL7 ACKs (MLLP Release 1), not Release 2 commit blocks: \
             send without --mllp2"
        }
        Hint::SendOneMessage => {
            "add --send to exchange one test message: only an ACK shows the port speaks MLLP"
        }
        _ => unreachable!("routed by words"),
    }
}

/// What an operator can do about `cause`, worded.
pub fn for_cause(cause: Cause) -> Cow<'static, str> {
    words(&cause.hint())
}

#[cfg(test)]
mod tests;
