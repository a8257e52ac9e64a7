//! Every replacement comes from an HMAC-SHA256 of the original under the key, each kind of
//! replacement in a domain of its own, so that no two kinds can be told apart by comparing them.

use super::key::Key;
use hmac::{KeyInit, Mac};

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// What a digest is for; its byte opens the HMAC's input.
#[derive(Debug, Clone, Copy)]
#[repr(u8)]
pub(super) enum Domain {
    /// A value of the same shape.
    Shape = 1,
    /// A name from the list.
    Name = 2,
    /// A patient's date offset.
    DateOffset = 3,
    /// More bytes for a long value: the input is the first digest and a counter.
    More = 4,
}

/// The keyed HMAC, computed once: each digest starts from a copy of it.
#[derive(Clone)]
pub(super) struct Deriver {
    keyed: HmacSha256,
}

impl Deriver {
    pub(super) fn new(key: &Key) -> Deriver {
        let keyed = match HmacSha256::new_from_slice(key.bytes()) {
            Ok(mac) => mac,
            // HMAC takes a key of any length.
            Err(_) => unreachable!("HMAC-SHA256 refused a 32-byte key"),
        };
        Deriver { keyed }
    }

    /// The digest of `value` in `domain`, with `round` (0 for the first try) telling apart the
    /// tries that must give something other than the original.
    pub(super) fn digest(&self, domain: Domain, round: u8, value: &[u8]) -> [u8; 32] {
        let mut mac = self.keyed.clone();
        mac.update(&[domain as u8, round]);
        mac.update(value);
        mac.finalize().into_bytes().into()
    }

    /// Bytes without end from one digest: the digest itself, then the digests of it and a
    /// counter.
    pub(super) fn stream(&self, first: [u8; 32]) -> Stream<'_> {
        Stream {
            deriver: self,
            seed: first,
            block: first,
            at: 0,
            counter: 0,
        }
    }
}

/// See [`Deriver::stream`].
pub(super) struct Stream<'d> {
    deriver: &'d Deriver,
    seed: [u8; 32],
    block: [u8; 32],
    at: usize,
    counter: u32,
}

impl Stream<'_> {
    pub(super) fn next_byte(&mut self) -> u8 {
        if self.at == self.block.len() {
            self.counter += 1;
            let mut input = [0u8; 36];
            input[..32].copy_from_slice(&self.seed);
            input[32..].copy_from_slice(&self.counter.to_le_bytes());
            self.block = self.deriver.digest(Domain::More, 0, &input);
            self.at = 0;
        }
        let b = self.block[self.at];
        self.at += 1;
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_key_and_value_give_the_same_digest_and_nothing_else_does() {
        let a = Deriver::new(&Key::from_bytes([1; 32]));
        let b = Deriver::new(&Key::from_bytes([2; 32]));
        let d = a.digest(Domain::Shape, 0, b"DOE");
        assert_eq!(d, a.clone().digest(Domain::Shape, 0, b"DOE"));
        assert_ne!(d, b.digest(Domain::Shape, 0, b"DOE"));
        assert_ne!(d, a.digest(Domain::Name, 0, b"DOE"));
        assert_ne!(d, a.digest(Domain::Shape, 1, b"DOE"));
        assert_ne!(d, a.digest(Domain::Shape, 0, b"DOF"));
        let mut s = a.stream(d);
        let long: Vec<u8> = (0..100).map(|_| s.next_byte()).collect();
        assert_eq!(&long[..32], &d);
        assert_ne!(&long[32..64], &d);
    }
}
