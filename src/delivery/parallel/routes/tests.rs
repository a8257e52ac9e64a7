//! The routing against a model of its rule, driven by generated arrivals, hand-overs,
//! settlements and links ending: a message is handed to a link only once every earlier message
//! of its key has settled, messages of a key go in input order, the earliest free message goes
//! first, to an open link with the fewest out and room (room within [`KEYED_AHEAD`] while
//! messages wait on their keys), nothing free is left behind while a link has room, and every
//! message ends exactly once.

use super::*;
use crate::input::Message;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// A message of this key (none: no key) arrives.
    Arrive(Option<u8>),
    /// The links are handed what they have room for.
    Hand,
    /// The i-th (mod count) message out settles.
    Settle(usize),
    /// Link l ends: what it took settles unsent, and it takes no more.
    Close(usize),
}

fn op(links: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => proptest::option::weighted(0.9, 0u8..5).prop_map(Op::Arrive),
        2 => Just(Op::Hand),
        3 => any::<usize>().prop_map(Op::Settle),
        1 => (0..links).prop_map(Op::Close),
    ]
}

/// What the model knows of each message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Held,
    Out(usize),
    Done,
}

struct Model {
    keys: Vec<Option<u8>>,
    state: Vec<State>,
    open: Vec<bool>,
    routes: Routes,
}

const MOST: usize = 3;

impl Model {
    fn hash(key: Option<u8>) -> Option<u64> {
        key.map(|k| 1000 + u64::from(k))
    }

    /// Whether message `e`, not yet handed over, is free: every earlier one of its key done.
    fn free(&self, e: usize) -> bool {
        self.state[e] == State::Held
            && (0..e).all(|d| {
                self.keys[e].is_none()
                    || self.keys[d] != self.keys[e]
                    || self.state[d] == State::Done
            })
    }

    fn arrive(&mut self, key: Option<u8>) {
        let n = self.keys.len();
        let hash = Model::hash(key);
        let link = self.routes.link_for(hash);
        self.keys.push(key);
        self.state.push(State::Held);
        self.routes.route(Pending {
            message: message(n),
            seq: n as u64,
            key: hash,
            link,
        });
    }

    /// The router's hand-over: every message the routing gives, handed to its link, or ended
    /// unsent when that link takes no more.
    fn hand(&mut self) -> Result<(), TestCaseError> {
        loop {
            let n = self.keys.len();
            let free: Vec<usize> = (0..n).filter(|&e| self.free(e)).collect();
            let waiting = (0..n).any(|e| self.state[e] == State::Held && !self.free(e));
            let room = if waiting { MOST.min(KEYED_AHEAD) } else { MOST };
            let out = self.routes.out.clone();
            let open: Vec<usize> = (0..self.open.len()).filter(|&l| self.open[l]).collect();
            let Some(p) = self.routes.next_out(MOST) else {
                // Nothing free, or no open link with room.
                prop_assert!(
                    free.is_empty() || (!open.is_empty() && open.iter().all(|&l| out[l] >= room)),
                    "free {:?} left with room",
                    free
                );
                return Ok(());
            };
            let (e, link) = (p.seq as usize, p.link);
            prop_assert_eq!(Some(&e), free.first(), "not the earliest free message");
            if !open.is_empty() {
                prop_assert!(self.open[link], "message {} to a closed link", e);
                prop_assert!(out[link] < room, "message {} beyond the link's room", e);
                let least = open.iter().map(|&l| out[l]).min();
                prop_assert_eq!(
                    Some(out[link]),
                    least,
                    "message {} not to the least busy",
                    e
                );
            }
            if self.open[link] {
                self.routes.handed(link);
                self.state[e] = State::Out(link);
            } else {
                // The router ends it unsent: its key is released.
                self.state[e] = State::Done;
                self.routes.released(p.key);
            }
        }
    }

    fn settle(&mut self, n: usize) {
        let State::Out(link) = self.state[n] else {
            return;
        };
        self.state[n] = State::Done;
        self.routes.returned(link, 1);
        self.routes.released(Model::hash(self.keys[n]));
    }

    fn out(&self) -> Vec<usize> {
        (0..self.state.len())
            .filter(|&n| matches!(self.state[n], State::Out(_)))
            .collect()
    }
}

fn message(n: usize) -> Message {
    Message {
        source: "in".into(),
        index: n as u64,
        line: 1,
        offset: 0,
        payload: bytes::Bytes::from_static(b"MSH|"),
        original_control_id: None,
    }
}

proptest! {
    #[test]
    fn the_routing_keeps_the_per_key_rule_and_balances_the_rest(
        links in 1usize..5,
        ops in (1usize..5).prop_flat_map(|l| proptest::collection::vec(op(l), 0..200)),
    ) {
        let mut model = Model {
            keys: Vec::new(),
            state: Vec::new(),
            open: vec![true; links],
            routes: Routes::new(links),
        };
        for op in ops {
            match op {
                Op::Arrive(key) => model.arrive(key),
                Op::Hand => model.hand()?,
                Op::Settle(i) => {
                    let out = model.out();
                    if !out.is_empty() {
                        model.settle(out[i % out.len()]);
                    }
                }
                Op::Close(l) => {
                    let l = l % links;
                    model.open[l] = false;
                    model.routes.close(l);
                    for n in model.out() {
                        if model.state[n] == State::Out(l) {
                            model.settle(n);
                        }
                    }
                }
            }
        }
        // Everything settles in the end: every message ends exactly once, nothing is left.
        loop {
            model.hand()?;
            let out = model.out();
            if out.is_empty() && !(0..model.keys.len()).any(|e| model.free(e)) {
                break;
            }
            for n in out {
                model.settle(n);
            }
        }
        prop_assert!(model.state.iter().all(|s| *s == State::Done), "{:?}", model.state);
        prop_assert!(model.routes.drain().is_empty());
        prop_assert!(model.routes.out.iter().all(|&o| o == 0));
    }
}
