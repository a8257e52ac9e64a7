//! The two sides paired by key. One side is indexed: its messages go to a temporary file, and
//! memory holds each one's key, place and label. The other side is then read once; each of
//! its messages is paired with the next unpaired message of the same key (so keys used more
//! than once pair in order), compared, and let go.

use super::compare::{Comparer, Difference};
use super::key::{Key, KeyPaths};
use super::spill::Spill;
use crate::hl7::{Filters, Message};
use crate::input::{InputError, Message as InputMessage};
use std::collections::hash_map::{DefaultHasher, Entry as MapEntry};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// One of the two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The first side given.
    A,
    /// The second.
    B,
}

/// What pairing found, as it finds it.
#[derive(Debug)]
pub enum Event<'a> {
    /// A pair whose messages differ.
    Different {
        /// The pair's key.
        key: &'a Key,
        /// Side A's message (`a.hl7#3`).
        a: &'a str,
        /// Side B's.
        b: &'a str,
        /// Where they differ, with both values.
        differences: &'a [Difference],
    },
    /// A message the other side has no partner for.
    Only {
        /// Its side.
        side: Side,
        /// Its key.
        key: &'a Key,
        /// The message.
        label: &'a str,
    },
    /// A key seen a second time on one side (said once per key and side).
    Twice {
        /// The side.
        side: Side,
        /// The key.
        key: &'a Key,
        /// The message that has it the second time.
        label: &'a str,
    },
}

/// The counts of a whole pairing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// Pairs whose messages are the same.
    pub same: u64,
    /// Pairs whose messages differ.
    pub different: u64,
    /// Messages of A without a partner in B.
    pub only_in_a: u64,
    /// Messages of B without a partner in A.
    pub only_in_b: u64,
    /// Keys A has more than once.
    pub keys_twice_in_a: u64,
    /// Keys B has more than once.
    pub keys_twice_in_b: u64,
    /// Messages of A the filters left out.
    pub filtered_out_a: u64,
    /// Messages of B the filters left out.
    pub filtered_out_b: u64,
}

impl Summary {
    /// Every message of each side has a partner on the other, and every pair is the same.
    pub fn is_same(&self) -> bool {
        self.different == 0 && self.only_in_a == 0 && self.only_in_b == 0
    }

    fn only(&mut self, side: Side) {
        match side {
            Side::A => self.only_in_a += 1,
            Side::B => self.only_in_b += 1,
        }
    }

    fn twice(&mut self, side: Side) {
        match side {
            Side::A => self.keys_twice_in_a += 1,
            Side::B => self.keys_twice_in_b += 1,
        }
    }

    fn filtered(&mut self, side: Side) {
        match side {
            Side::A => self.filtered_out_a += 1,
            Side::B => self.filtered_out_b += 1,
        }
    }
}

/// A side could not be read, or the temporary file failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PairingError {
    /// An input of a side.
    #[error("side {side:?}: {error}")]
    Input {
        /// Which side.
        side: Side,
        /// What went wrong.
        error: InputError,
    },
    /// The temporary file that holds the indexed side.
    #[error("the temporary file holding the indexed side: {0}")]
    Spill(std::io::Error),
}

/// Where none.
const NONE: u32 = u32::MAX;

/// One message of the indexed side.
struct Held {
    at: u64,
    len: u32,
    source: u32,
    index: u64,
    /// The next message of the same key.
    next: u32,
    paired: bool,
}

/// One key of the indexed side.
struct Slot {
    /// The key's first message.
    first: u32,
    /// The first message of the key not yet paired.
    next_unpaired: u32,
    /// The last message of the key, where the next one is chained.
    last: u32,
    /// Messages of the indexed side with this key.
    indexed: u32,
    /// Messages of the streamed side seen with this key.
    streamed: u32,
}

/// How two sides are paired and compared.
#[derive(Debug, Clone)]
pub struct Pairing {
    /// What pairs messages.
    pub keys: KeyPaths,
    /// How a pair is compared.
    pub comparer: Comparer,
    /// Which messages take part (the rest counted).
    pub filters: Filters,
}

/// The indexed side, once read.
struct Index {
    side: Side,
    spill: Spill,
    held: Vec<Held>,
    keys: HashMap<Key, Slot>,
    sources: Vec<Arc<str>>,
}

impl Index {
    fn label(&self, h: &Held) -> String {
        format!("{}#{}", self.sources[h.source as usize], h.index)
    }
}

impl std::borrow::Borrow<[u8]> for Key {
    fn borrow(&self) -> &[u8] {
        &self.0
    }
}

/// The counts and the listener together, so a finding is never counted without being told.
struct Findings<T> {
    summary: Summary,
    tell: T,
}

impl<T: FnMut(&Event<'_>) -> bool> Findings<T> {
    /// A message without a partner; `false` when told to stop.
    fn only(&mut self, side: Side, key: &Key, label: &str) -> bool {
        self.summary.only(side);
        (self.tell)(&Event::Only { side, key, label })
    }

    /// A key seen a second time on one side; `false` when told to stop.
    fn twice(&mut self, side: Side, key: &Key, label: &str) -> bool {
        self.summary.twice(side);
        (self.tell)(&Event::Twice { side, key, label })
    }

    /// A pair whose messages differ; `false` when told to stop.
    fn different(&mut self, key: &Key, (a, b): (&str, &str), differences: &[Difference]) -> bool {
        self.summary.different += 1;
        (self.tell)(&Event::Different {
            key,
            a,
            b,
            differences,
        })
    }
}

/// The streamed side's buffers, kept from one message to the next.
#[derive(Default)]
struct Scratch {
    key: Vec<u8>,
    held_bytes: Vec<u8>,
    differences: Vec<Difference>,
    /// Keys the indexed side lacks, by hash, with how often each was seen.
    extra: HashMap<u64, u32>,
}

impl Side {
    /// `this` side's value and the `other`'s, as (A's, B's).
    fn a_b<T>(self, this: T, other: T) -> (T, T) {
        match self {
            Side::A => (this, other),
            Side::B => (other, this),
        }
    }
}

impl Index {
    /// Tell what the indexed side has left unpaired, in its order.
    fn tell_left<T: FnMut(&Event<'_>) -> bool>(mut self, found: &mut Findings<T>) {
        let mut left: Vec<(u32, Key)> = Vec::new();
        for (key, slot) in self.keys.drain() {
            let mut at = slot.first;
            while at != NONE {
                let held = &self.held[at as usize];
                if !held.paired {
                    left.push((at, key.clone()));
                }
                at = held.next;
            }
        }
        left.sort_unstable_by_key(|(at, _)| *at);
        for (at, key) in &left {
            let label = self.label(&self.held[*at as usize]);
            if !found.only(self.side, key, &label) {
                break;
            }
        }
    }
}

impl Pairing {
    /// Pair `indexed` (the side held as keys: give the smaller) with `streamed`, telling each
    /// finding to `tell` as it is found (`false` from it stops the run early), and the counts.
    pub fn run<I, S>(
        &self,
        indexed: (Side, I),
        (side, streamed): (Side, S),
        tell: impl FnMut(&Event<'_>) -> bool,
    ) -> Result<Summary, PairingError>
    where
        I: IntoIterator<Item = Result<InputMessage, InputError>>,
        S: IntoIterator<Item = Result<InputMessage, InputError>>,
    {
        let mut found = Findings {
            summary: Summary::default(),
            tell,
        };
        let Some(mut index) = self.index(indexed, &mut found)? else {
            return Ok(found.summary);
        };
        let mut scratch = Scratch::default();
        for message in streamed {
            let message = message.map_err(|error| PairingError::Input { side, error })?;
            if !self.pair(&mut index, side, &message, &mut scratch, &mut found)? {
                return Ok(found.summary);
            }
        }
        index.tell_left(&mut found);
        Ok(found.summary)
    }

    /// Pair one message of the streamed side and tell what that found; `false` when told to
    /// stop.
    fn pair<T: FnMut(&Event<'_>) -> bool>(
        &self,
        index: &mut Index,
        side: Side,
        message: &InputMessage,
        s: &mut Scratch,
        found: &mut Findings<T>,
    ) -> Result<bool, PairingError> {
        let Some(view) = self.admit(&message.payload, side, &mut found.summary) else {
            return Ok(true);
        };
        self.keys.key_of(&view, &mut s.key);
        let label = message.label();
        let key = Key(s.key.as_slice().into());
        let Some(slot) = index.keys.get_mut(s.key.as_slice()) else {
            // A key the indexed side lacks; its repeats known by a hash alone.
            let seen = s.extra.entry(hash(&s.key)).or_default();
            *seen += 1;
            if *seen == 2 && !found.twice(side, &key, &label) {
                found.summary.only(side);
                return Ok(false);
            }
            return Ok(found.only(side, &key, &label));
        };
        slot.streamed += 1;
        let twice = slot.streamed == 2;
        let partner = slot.next_unpaired;
        if partner != NONE {
            slot.next_unpaired = index.held[partner as usize].next;
        }
        if twice && !found.twice(side, &key, &label) {
            return Ok(false);
        }
        if partner == NONE {
            return Ok(found.only(side, &key, &label));
        }
        let held = &mut index.held[partner as usize];
        held.paired = true;
        index
            .spill
            .get(held.at, held.len as usize, &mut s.held_bytes)
            .map_err(PairingError::Spill)?;
        s.differences.clear();
        let (a, b) = side.a_b(&message.payload[..], s.held_bytes.as_slice());
        self.comparer.compare(a, b, &mut s.differences);
        if s.differences.is_empty() {
            found.summary.same += 1;
            return Ok(true);
        }
        let other = index.label(&index.held[partner as usize]);
        let labels = side.a_b(label.as_str(), other.as_str());
        Ok(found.different(&key, labels, &s.differences))
    }

    /// The message, when the filters let it take part.
    fn admit<'m>(
        &self,
        payload: &'m [u8],
        side: Side,
        summary: &mut Summary,
    ) -> Option<Message<'m>> {
        if !self.filters.admits(payload) {
            summary.filtered(side);
            return None;
        }
        Some(Message::new(payload))
    }

    /// Read the indexed side whole into the spill and the keys; `None` when told to stop.
    fn index<I>(
        &self,
        (side, messages): (Side, I),
        found: &mut Findings<impl FnMut(&Event<'_>) -> bool>,
    ) -> Result<Option<Index>, PairingError>
    where
        I: IntoIterator<Item = Result<InputMessage, InputError>>,
    {
        let mut index = Index {
            side,
            spill: Spill::new().map_err(PairingError::Spill)?,
            held: Vec::new(),
            keys: HashMap::new(),
            sources: Vec::new(),
        };
        let mut key = Vec::new();
        for message in messages {
            let message = message.map_err(|error| PairingError::Input { side, error })?;
            let Some(view) = self.admit(&message.payload, side, &mut found.summary) else {
                continue;
            };
            self.keys.key_of(&view, &mut key);
            if index.sources.last() != Some(&message.source) {
                index.sources.push(message.source.clone());
            }
            let at = index
                .spill
                .put(&message.payload)
                .map_err(PairingError::Spill)?;
            let this = index.held.len() as u32;
            index.held.push(Held {
                at,
                len: message.payload.len() as u32,
                source: (index.sources.len() - 1) as u32,
                index: message.index,
                next: NONE,
                paired: false,
            });
            match index.keys.entry(Key(key.as_slice().into())) {
                MapEntry::Vacant(v) => {
                    v.insert(Slot {
                        first: this,
                        next_unpaired: this,
                        last: this,
                        indexed: 1,
                        streamed: 0,
                    });
                }
                MapEntry::Occupied(mut o) => {
                    let slot = o.get_mut();
                    index.held[slot.last as usize].next = this;
                    slot.last = this;
                    slot.indexed += 1;
                    if slot.indexed == 2 && !found.twice(side, o.key(), &message.label()) {
                        return Ok(None);
                    }
                }
            }
        }
        index.spill.finish().map_err(PairingError::Spill)?;
        Ok(Some(index))
    }
}

fn hash(key: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    key.hash(&mut h);
    h.finish()
}
