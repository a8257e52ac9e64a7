//! Every hint worded exactly as users read it (the suite, man pages and scripts rely on the
//! words); the exhaustive match makes a new hint fail to compile here until it is worded.

use super::*;

/// The variant's place in the table; one arm per variant, no wildcard.
fn variant(hint: &Hint) -> usize {
    match hint {
        Hint::Prose(_) => 0,
        Hint::OrTurnTlsOn(_) => 1,
        Hint::TurnTlsOn => 2,
        Hint::CheckAccessOrTurnTlsOn => 3,
        Hint::TurnTlsOff => 4,
        Hint::TurnTlsOffForSilentPeer => 5,
        Hint::TurnTlsOffOrCheckAccess => 6,
        Hint::CheckPortAndTls => 7,
        Hint::FixTlsHandshake => 8,
        Hint::TrustServerCertificate => 9,
        Hint::TrustIssuerOrPin => 10,
        Hint::PinSelfSigned => 11,
        Hint::PinOrServerCertificate => 12,
        Hint::GiveServerName { .. } => 13,
        Hint::ClientCertificateRefused => 14,
        Hint::GiveClientCertificate => 15,
        Hint::ReplaceClientCertificate => 16,
        Hint::ClientCertificateOrSuites => 17,
        Hint::ClientCertificateOrLimits => 18,
        Hint::ClientNeedsTrustedIssuer { .. } => 19,
        Hint::ClientMustPresentCertificate => 20,
        Hint::ClientMustTrustUs => 21,
        Hint::ClientMustUseTls => 22,
        Hint::CorrelateByControlId => 23,
        Hint::CorrelateInOrder => 24,
        Hint::SendAgainAfterTimeout => 25,
        Hint::SendOneMessage => 26,
        Hint::SpeakRelease1 => 27,
    }
}

/// How many arms `variant` has: a new variant needs an arm, a number and a case below.
const VARIANTS: usize = 28;

fn cases() -> Vec<(Hint, &'static str)> {
    vec![
        (
            Hint::Prose("check the peer's logs"),
            "check the peer's logs",
        ),
        (
            Hint::OrTurnTlsOn(Box::new(Hint::Prose("check the peer's logs"))),
            "check the peer's logs; if the port expects TLS, probe again with --tls",
        ),
        (
            Hint::TurnTlsOn,
            "the peer speaks TLS: probe again with --tls",
        ),
        (
            Hint::CheckAccessOrTurnTlsOn,
            "the peer accepted and closed at once: it may refuse this address, be at its connection limit, be shutting down, or expect TLS (try --tls)",
        ),
        (
            Hint::TurnTlsOff,
            "the peer does not speak TLS on this port: try without --tls",
        ),
        (
            Hint::TurnTlsOffForSilentPeer,
            "the peer accepted TCP but never answered the TLS ClientHello, as a plain (non-TLS) server does: try without --tls",
        ),
        (
            Hint::TurnTlsOffOrCheckAccess,
            "the peer may not speak TLS on this port (try without --tls), or refused this client (check its allowed addresses and whether it requires --cert and --key)",
        ),
        (
            Hint::CheckPortAndTls,
            "the peer does not speak MLLP here: check the host, the port and --tls",
        ),
        (
            Hint::FixTlsHandshake,
            "the TLS handshake failed (mllp probe with the same TLS flags says why): the peer must enable TLS 1.2 or 1.3 with a modern cipher suite; a peer that does not speak TLS on this port needs no --tls",
        ),
        (
            Hint::TrustServerCertificate,
            "the peer's certificate was not trusted (mllp probe with the same TLS flags says which check failed): pass --ca with the CA that issued it, or with the server's own certificate to trust exactly that one; for a name mismatch pass --server-name; an expired or not yet valid certificate needs a renewal by the peer or a clock check",
        ),
        (
            Hint::TrustIssuerOrPin,
            "pass --ca with the certificate of the CA that issued it, or with the server's own certificate to trust exactly that one",
        ),
        (
            Hint::PinSelfSigned,
            "pass --ca with this very certificate (the server's own certificate file) to trust exactly it, or have the peer use a CA-issued one",
        ),
        (
            Hint::PinOrServerCertificate,
            "if it is self-signed, pass --ca with this very certificate (the server's own certificate file) to trust exactly it; else the peer needs a certificate issued for a server, not a CA's",
        ),
        (
            Hint::GiveServerName {
                names: vec!["a.example".into(), "10.0.0.1".into()],
            },
            "connect by a name the certificate carries (a.example, 10.0.0.1), or pass --server-name with one of them",
        ),
        (
            Hint::GiveServerName { names: vec![] },
            "connect by a name the certificate carries, or pass --server-name with one of them",
        ),
        (
            Hint::ClientCertificateRefused,
            "the server refused our client certificate, or its absence: pass --cert and --key with a certificate issued by a CA the server trusts",
        ),
        (
            Hint::GiveClientCertificate,
            "pass --cert and --key with a client certificate issued by a CA the server trusts",
        ),
        (
            Hint::ReplaceClientCertificate,
            "pass --cert and --key with a certificate issued by a CA the server trusts, or have the server trust this certificate's issuer",
        ),
        (
            Hint::ClientCertificateOrSuites,
            "if the peer requires a client certificate, pass --cert and --key; otherwise check its logs for the TLS versions and suites it accepts",
        ),
        (
            Hint::ClientCertificateOrLimits,
            "the peer closed right after the handshake: if it requires a client certificate, pass --cert and --key; otherwise its logs say whether it refuses this address, is at its connection limit, or is shutting down",
        ),
        (
            Hint::ClientNeedsTrustedIssuer { ca_own: true },
            "the client needs a certificate issued by a CA in --client-ca, not a CA's own",
        ),
        (
            Hint::ClientNeedsTrustedIssuer { ca_own: false },
            "the client needs a certificate issued by a CA in --client-ca",
        ),
        (
            Hint::ClientMustPresentCertificate,
            "the client must present a certificate, or the listener accept none (--client-auth want)",
        ),
        (
            Hint::ClientMustTrustUs,
            "give the client the CA that issued --tls-cert, or the certificate itself",
        ),
        (
            Hint::ClientMustUseTls,
            "the client must connect with TLS (mllp send --tls)",
        ),
        (
            Hint::CorrelateByControlId,
            "the peer answered a message it had not been sent, so replies cannot be paired in order: use --correlate control-id",
        ),
        (
            Hint::CorrelateInOrder,
            "the peer's ACKs name other control IDs than the messages' MSH-10 (its MSA-2 does not echo them): pair replies in order with --correlate fifo, or fix the peer",
        ),
        (
            Hint::SendAgainAfterTimeout,
            "the run's --timeout ran out before this message's turn: send it again",
        ),
        (
            Hint::SendOneMessage,
            "add --send to exchange one test message: only an ACK shows the port speaks MLLP",
        ),
        (
            Hint::SpeakRelease1,
            "the peer answers with HL7 ACKs (MLLP Release 1), not Release 2 commit blocks: send without --mllp2",
        ),
    ]
}

#[test]
fn every_hint_is_worded_as_users_read_it() {
    let mut seen = [false; VARIANTS];
    for (hint, expected) in cases() {
        assert_eq!(words(&hint), expected, "{hint:?}");
        seen[variant(&hint)] = true;
    }
    let unworded: Vec<usize> = (0..VARIANTS).filter(|&i| !seen[i]).collect();
    assert!(unworded.is_empty(), "variants without a case: {unworded:?}");
}

#[test]
fn every_cause_has_its_hint_in_words_and_only_the_command_names_flags() {
    for cause in Cause::ALL {
        let text = for_cause(cause);
        assert!(!text.is_empty(), "{cause}");
        if let Hint::Prose(prose) = cause.hint() {
            assert!(!prose.contains("--"), "{cause}: {prose}");
        }
    }
    assert!(for_cause(Cause::UnsolicitedAck).ends_with("use --correlate control-id"));
}
