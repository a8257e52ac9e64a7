//! The routing against a model of its rule, driven by generated arrivals, hand-overs,
//! settlements and links ending: a message is handed to a link only once every earlier message
//! of its key has settled, messages of a key go in input order, one arriving while its key is
//! held goes to the holding link, any other to an open link with the least load, and every
//! message ends exactly once.

use super::*;
use crate::input::Message;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// A message of this key (none: no key) arrives.
    Arrive(Option<u8>),
    /// Link l is handed what it has room for.
    Hand(usize),
    /// The i-th (mod count) message out settles.
    Settle(usize),
    /// Link l ends: what it took settles unsent, and it takes no more.
    Close(usize),
}

fn op(links: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => proptest::option::weighted(0.9, 0u8..5).prop_map(Op::Arrive),
        2 => (0..links).prop_map(Op::Hand),
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

    fn load(&self, link: usize) -> usize {
        self.routes.out[link] + self.routes.ready[link].len()
    }

    fn arrive(&mut self, key: Option<u8>) -> Result<(), TestCaseError> {
        let n = self.keys.len();
        let holder = (0..n)
            .find(|&e| key.is_some() && self.keys[e] == key && self.state[e] != State::Done)
            .map(|e| self.link_of(e));
        let least = (0..self.open.len())
            .filter(|&l| self.open[l])
            .map(|l| self.load(l))
            .min();
        let hash = Model::hash(key);
        let link = self.routes.link_for(hash);
        match (holder, least) {
            (Some(h), _) => prop_assert_eq!(link, h, "message {} not sent to its key's link", n),
            (None, Some(least)) => {
                prop_assert!(self.open[link], "message {} to a closed link", n);
                prop_assert_eq!(
                    self.load(link),
                    least,
                    "message {} not to the least busy",
                    n
                );
            }
            (None, None) => {}
        }
        self.keys.push(key);
        self.state.push(State::Held);
        self.routes.route(Pending {
            message: message(n),
            seq: n as u64,
            key: hash,
            link,
        });
        Ok(())
    }

    /// The link message `e`, held or out, is routed to.
    fn link_of(&self, e: usize) -> usize {
        if let State::Out(l) = self.state[e] {
            return l;
        }
        let ready =
            (0..self.open.len()).find(|&l| self.routes.ready[l].iter().any(|p| p.seq == e as u64));
        ready.unwrap_or_else(|| {
            // Waiting behind its key: the link holding the key.
            let hash = Model::hash(self.keys[e]).unwrap();
            self.routes.gate.holder(hash).unwrap()
        })
    }

    fn hand(&mut self, link: usize) -> Result<(), TestCaseError> {
        while self.routes.has_room(link, MOST) {
            let Some(p) = self.routes.pop_ready(link) else {
                break;
            };
            let n = p.seq as usize;
            prop_assert_eq!(self.state[n], State::Held);
            for e in 0..n {
                if self.keys[n].is_some() && self.keys[e] == self.keys[n] {
                    prop_assert_eq!(self.state[e], State::Done, "{} out before {}", n, e);
                }
            }
            if self.open[link] {
                self.routes.handed(link);
                self.state[n] = State::Out(link);
            } else {
                // The router ends it unsent: its key is released.
                self.state[n] = State::Done;
                self.routes.released(p.key);
            }
        }
        Ok(())
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
                Op::Arrive(key) => model.arrive(key)?,
                Op::Hand(l) => model.hand(l % links)?,
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
            for l in 0..links {
                model.hand(l)?;
            }
            let out = model.out();
            let ready = model.routes.ready.iter().any(|r| !r.is_empty());
            if out.is_empty() && !ready {
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
