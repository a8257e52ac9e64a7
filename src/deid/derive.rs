//! Every replacement comes from an HMAC-SHA256 of the original under the key, each kind of
//! replacement in a domain of its own, so that no two kinds can be told apart by comparing them.

use super::key::Key;
use sha2::block_api::compress256;

/// SHA-256's initial state.
const IV: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

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

/// HMAC-SHA256 under the key with its two padded key blocks hashed once: each digest starts
/// from copies of those two states, so a short value costs two compressions and nothing else.
#[derive(Clone)]
pub(super) struct Deriver {
    inner: [u32; 8],
    outer: [u32; 8],
}

impl Deriver {
    pub(super) fn new(key: &Key) -> Deriver {
        // A 32-byte key is shorter than SHA-256's block: it is used as it is, padded with zeros.
        let padded = |pad: u8| {
            let mut block = [pad; 64];
            for (b, k) in block.iter_mut().zip(key.bytes()) {
                *b ^= k;
            }
            let mut state = IV;
            compress256(&mut state, &[block]);
            state
        };
        Deriver {
            inner: padded(0x36),
            outer: padded(0x5c),
        }
    }

    /// The digest of `value` in `domain`, with `round` (0 for the first try) telling apart the
    /// tries that must give something other than the original.
    pub(super) fn digest(&self, domain: Domain, round: u8, value: &[u8]) -> [u8; 32] {
        let mut state = self.inner;
        finish(&mut state, 64, &[domain as u8, round], value);
        let mut inner = [0u8; 32];
        for (out, word) in inner.chunks_exact_mut(4).zip(state) {
            out.copy_from_slice(&word.to_be_bytes());
        }
        let mut state = self.outer;
        finish(&mut state, 64, &inner, &[]);
        let mut digest = [0u8; 32];
        for (out, word) in digest.chunks_exact_mut(4).zip(state) {
            out.copy_from_slice(&word.to_be_bytes());
        }
        digest
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

/// Hash `head` then `tail` into `state`, which has taken `done` bytes already (whole blocks),
/// and pad: SHA-256's last blocks, written out on the stack.
fn finish(state: &mut [u32; 8], done: u64, head: &[u8], tail: &[u8]) {
    let mut block = [0u8; 64];
    let mut filled = 0;
    for part in [head, tail] {
        let mut part = part;
        while !part.is_empty() {
            let take = part.len().min(64 - filled);
            block[filled..filled + take].copy_from_slice(&part[..take]);
            filled += take;
            part = &part[take..];
            if filled == 64 {
                compress256(state, &[block]);
                filled = 0;
            }
        }
    }
    let bits = (done + (head.len() + tail.len()) as u64) * 8;
    block[filled] = 0x80;
    block[filled + 1..].fill(0);
    if filled >= 56 {
        compress256(state, &[block]);
        block = [0u8; 64];
    }
    block[56..].copy_from_slice(&bits.to_be_bytes());
    compress256(state, &[block]);
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
    use hmac::{KeyInit, Mac};
    use proptest::prelude::*;

    proptest! {
        /// As the `hmac` crate's HMAC-SHA256 of the domain byte, the round and the value, for
        /// every length across the block and padding boundaries.
        #[test]
        fn is_hmac_sha256(
            key in any::<[u8; 32]>(),
            round in any::<u8>(),
            value in prop::collection::vec(any::<u8>(), 0..200),
        ) {
            let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
            mac.update(&[Domain::Name as u8, round]);
            mac.update(&value);
            let want: [u8; 32] = mac.finalize().into_bytes().into();
            let d = Deriver::new(&Key::from_bytes(key));
            prop_assert_eq!(d.digest(Domain::Name, round, &value), want);
        }
    }

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
