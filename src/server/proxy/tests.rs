use super::*;
use ppp::v2::{Builder, Command, Protocol, Version};
use proptest::prelude::*;

fn v2(command: Command, source: SocketAddr) -> Vec<u8> {
    let dest: SocketAddr = "127.0.0.1:2575".parse().unwrap();
    Builder::with_addresses(Version::Two | command, Protocol::Stream, (source, dest))
        .build()
        .unwrap()
}

async fn parse_then_rest(bytes: &[u8]) -> (Result<Header, ProxyError>, Vec<u8>) {
    let mut reader = bytes;
    let header = read_header(&mut reader).await;
    (header, reader.to_vec())
}

#[tokio::test]
async fn a_v1_header_gives_the_client_and_leaves_the_mllp_bytes() {
    let wire = b"PROXY TCP4 127.0.0.2 127.0.0.1 40000 2575\r\n\x0bMSH|";
    let (header, rest) = parse_then_rest(wire).await;
    assert_eq!(
        header,
        Ok(Header::Proxied("127.0.0.2:40000".parse().unwrap()))
    );
    assert_eq!(rest, b"\x0bMSH|");
    let wire = b"PROXY TCP6 ::2 ::1 40000 2575\r\n";
    let (header, _) = parse_then_rest(wire).await;
    assert_eq!(header, Ok(Header::Proxied("[::2]:40000".parse().unwrap())));
    let (header, _) = parse_then_rest(b"PROXY UNKNOWN\r\n").await;
    assert_eq!(header, Ok(Header::Local));
}

#[tokio::test]
async fn a_v2_header_gives_the_client_and_local_is_the_proxys_own_check() {
    let client: SocketAddr = "10.1.2.3:5555".parse().unwrap();
    let mut wire = v2(Command::Proxy, client);
    wire.extend_from_slice(b"\x0bMSH|");
    let (header, rest) = parse_then_rest(&wire).await;
    assert_eq!(header, Ok(Header::Proxied(client)));
    assert_eq!(rest, b"\x0bMSH|");
    let (header, _) = parse_then_rest(&v2(Command::Local, client)).await;
    assert_eq!(header, Ok(Header::Local));
}

#[tokio::test]
async fn anything_else_is_refused() {
    for wire in [
        &b"\x0bMSH|^~\\&|"[..],
        b"PROXY TCP4 nonsense\r\n",
        b"PROXY TCP4 127.0.0.2 127.0.0.1 40000 2575 and much more text than a header may hold at all, ever\r\n",
        b"GET / HTTP/1.1\r\n",
    ] {
        let (header, _) = parse_then_rest(wire).await;
        assert!(matches!(header, Err(ProxyError::Invalid(_))), "{wire:?}: {header:?}");
    }
    let (header, _) = parse_then_rest(b"PROXY TCP4 127.0.0.2").await;
    assert_eq!(header, Err(ProxyError::Closed));
    let mut truncated = v2(Command::Proxy, "10.0.0.1:1".parse().unwrap());
    truncated.pop();
    assert_eq!(parse_then_rest(&truncated).await.0, Err(ProxyError::Closed));
}

#[test]
fn address_blocks_parse_and_contain() {
    let block: Cidr = "10.0.0.0/8".parse().unwrap();
    assert!(block.contains("10.200.3.4".parse().unwrap()));
    assert!(block.contains("::ffff:10.0.0.1".parse().unwrap()));
    assert!(!block.contains("11.0.0.1".parse().unwrap()));
    let one: Cidr = "::1".parse().unwrap();
    assert!(one.contains("::1".parse().unwrap()));
    assert!(!one.contains("::2".parse().unwrap()));
    for bad in ["10.0.0.0/33", "nonsense", "10.0.0.0/", "::/129"] {
        assert!(bad.parse::<Cidr>().is_err(), "{bad}");
    }
    let default = ProxyProtocol::default();
    assert!(default.trusts("127.0.0.2".parse().unwrap()));
    assert!(!default.trusts("192.168.1.1".parse().unwrap()));
}

proptest! {
    /// Against the plain definition: the first `prefix` bits are equal.
    #[test]
    fn an_ipv4_block_holds_exactly_the_addresses_sharing_its_prefix(
        net in any::<u32>(), ip in any::<u32>(), prefix in 0u8..=32
    ) {
        let block: Cidr = format!("{}/{prefix}", std::net::Ipv4Addr::from(net)).parse().unwrap();
        let same = (0..prefix).all(|i| (net >> (31 - i)) & 1 == (ip >> (31 - i)) & 1);
        prop_assert_eq!(block.contains(std::net::Ipv4Addr::from(ip).into()), same);
    }
}
