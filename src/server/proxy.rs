//! The PROXY protocol (v1 text and v2 binary, as HAProxy sends it) in front of each connection:
//! behind a load balancer every socket's address is the balancer's, and the header says whose
//! connection it really is. It is taken only from the trusted addresses (`from`); anything else,
//! or a connection without a valid header, is closed. Parsing is the `ppp` crate's; this module
//! reads exactly the header's bytes and no more (what follows is MLLP, or a TLS handshake).

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// The v2 signature.
const V2_SIGNATURE: &[u8; 12] = b"\r\n\r\n\0\r\nQUIT\n";
/// The longest v1 line, CRLF included.
const V1_MAX: usize = 107;
/// A v2 header's address block, at most (larger ones carry TLVs we do not read: refused).
const V2_MAX_BODY: usize = 4096;

/// Expect a PROXY header on every connection, from these senders only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyProtocol {
    /// The addresses a PROXY header is taken from; others are refused.
    pub from: Vec<Cidr>,
    /// The whole header must arrive within this long.
    pub timeout: Duration,
}

impl Default for ProxyProtocol {
    /// Loopback only (IPv4 and IPv6), 5 s.
    fn default() -> Self {
        ProxyProtocol {
            from: vec![
                "127.0.0.0/8".parse().expect("valid"),
                "::1/128".parse().expect("valid"),
            ],
            timeout: Duration::from_secs(5),
        }
    }
}

/// An address block: `10.0.0.0/8`, `2001:db8::/32`, or one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    net: IpAddr,
    prefix: u8,
}

/// Not an address block.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an address block (expected ADDRESS/PREFIX, e.g. 10.0.0.0/8, or one address)")]
pub struct CidrError(pub String);

impl FromStr for Cidr {
    type Err = CidrError;
    fn from_str(s: &str) -> Result<Cidr, CidrError> {
        let bad = || CidrError(s.to_string());
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p.parse::<u8>().map_err(|_| bad())?)),
            None => (s, None),
        };
        let net: IpAddr = addr.parse().map_err(|_| bad())?;
        let max = if net.is_ipv4() { 32 } else { 128 };
        let prefix = prefix.unwrap_or(max);
        if prefix > max {
            return Err(bad());
        }
        Ok(Cidr { net, prefix })
    }
}

impl Cidr {
    /// Whether `ip` is in the block (an IPv4-mapped IPv6 address counts as IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        fn masked(bits: u128, prefix: u8, width: u8) -> u128 {
            if prefix == 0 {
                0
            } else {
                bits >> (width - prefix)
            }
        }
        match (self.net, ip.to_canonical()) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                masked(u32::from(n).into(), self.prefix, 32)
                    == masked(u32::from(a).into(), self.prefix, 32)
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                masked(n.into(), self.prefix, 128) == masked(a.into(), self.prefix, 128)
            }
            _ => false,
        }
    }
}

/// What a valid header said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Header {
    /// A proxied connection from this client.
    Proxied(SocketAddr),
    /// The proxy's own connection (v2 LOCAL, v1 UNKNOWN): its health check.
    Local,
}

/// Why a connection was closed before its first MLLP byte.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ProxyError {
    #[error("not from a trusted proxy address")]
    /// The connection came from an address not in the trusted list.
    Untrusted,
    #[error("no PROXY header within {0:?}")]
    /// The header did not arrive within this long.
    Timeout(Duration),
    #[error("closed before the PROXY header was complete")]
    /// The peer closed before the header was complete.
    Closed,
    #[error("not a valid PROXY header: {0}")]
    /// The header was malformed, as described.
    Invalid(String),
}

impl ProxyProtocol {
    /// Whether `peer` may send headers.
    pub fn trusts(&self, peer: IpAddr) -> bool {
        self.from.iter().any(|c| c.contains(peer))
    }

    /// Read the header of a connection from `peer`, within the timeout.
    pub(crate) async fn read(
        &self,
        tcp: &mut TcpStream,
        peer: SocketAddr,
    ) -> Result<Header, ProxyError> {
        if !self.trusts(peer.ip()) {
            return Err(ProxyError::Untrusted);
        }
        match tokio::time::timeout(self.timeout, read_header(tcp)).await {
            Ok(header) => header,
            Err(_) => Err(ProxyError::Timeout(self.timeout)),
        }
    }
}

/// Read exactly one header from `io` and parse it.
pub(crate) async fn read_header<R: AsyncReadExt + Unpin>(io: &mut R) -> Result<Header, ProxyError> {
    let closed = |_| ProxyError::Closed;
    let mut head = [0u8; 16];
    io.read_exact(&mut head[..6]).await.map_err(closed)?;
    if &head[..6] == b"PROXY " {
        let mut line = head[..6].to_vec();
        while !line.ends_with(b"\r\n") {
            if line.len() >= V1_MAX {
                return Err(ProxyError::Invalid(
                    "a v1 line longer than 107 bytes".into(),
                ));
            }
            let mut byte = [0u8; 1];
            io.read_exact(&mut byte).await.map_err(closed)?;
            line.push(byte[0]);
        }
        return parse_v1(&line);
    }
    if head[..6] != V2_SIGNATURE[..6] {
        return Err(ProxyError::Invalid("no PROXY signature".into()));
    }
    io.read_exact(&mut head[6..]).await.map_err(closed)?;
    if &head[..12] != V2_SIGNATURE {
        return Err(ProxyError::Invalid("no PROXY signature".into()));
    }
    let body = u16::from_be_bytes([head[14], head[15]]) as usize;
    if body > V2_MAX_BODY {
        return Err(ProxyError::Invalid(format!("a v2 header of {body} bytes")));
    }
    let mut whole = head.to_vec();
    whole.resize(16 + body, 0);
    io.read_exact(&mut whole[16..]).await.map_err(closed)?;
    parse_v2(&whole)
}

fn parse_v1(line: &[u8]) -> Result<Header, ProxyError> {
    use ppp::v1::{Addresses, Header as V1};
    let header = V1::try_from(line).map_err(|e| ProxyError::Invalid(e.to_string()))?;
    Ok(match header.addresses {
        Addresses::Tcp4(a) => {
            Header::Proxied(SocketAddr::new(a.source_address.into(), a.source_port))
        }
        Addresses::Tcp6(a) => {
            Header::Proxied(SocketAddr::new(a.source_address.into(), a.source_port))
        }
        Addresses::Unknown => Header::Local,
    })
}

fn parse_v2(bytes: &[u8]) -> Result<Header, ProxyError> {
    use ppp::v2::{Addresses, Command, Header as V2};
    let header = V2::try_from(bytes).map_err(|e| ProxyError::Invalid(e.to_string()))?;
    if header.command == Command::Local {
        return Ok(Header::Local);
    }
    match header.addresses {
        Addresses::IPv4(a) => Ok(Header::Proxied(SocketAddr::new(
            a.source_address.into(),
            a.source_port,
        ))),
        Addresses::IPv6(a) => Ok(Header::Proxied(SocketAddr::new(
            a.source_address.into(),
            a.source_port,
        ))),
        Addresses::Unspecified | Addresses::Unix(_) => Err(ProxyError::Invalid(
            "a proxied connection with no TCP source address".into(),
        )),
    }
}

#[cfg(test)]
mod tests;
