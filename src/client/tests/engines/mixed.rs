//! Generated mixes of engine habits, in both correlations: what holds whatever the receiver
//! does, checked against the receiver's own record of what it read.

use super::*;
use proptest::prelude::*;

fn engine() -> impl Strategy<Value = Engine> {
    let repeats = prop_oneof![
        2 => Just(Repeats::Never),
        1 => Just(Repeats::OnLink),
        1 => Just(Repeats::Late),
    ];
    (
        any::<bool>(),
        prop::option::of(1u32..=9),
        prop::option::weighted(0.3, 1usize..=30),
        repeats,
        prop::option::weighted(0.15, 2usize..=4),
    )
        .prop_map(
            |(one_per_read, close_after, close_on, repeats, http_from)| Engine {
                one_per_read,
                close_after,
                close_on,
                repeats,
                http_from,
                msa2: Msa2::Echo,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever the receiver's habits and the window, while reconnects succeed: every message
    /// gets exactly one fate; one is never-delivered only if the receiver never read it (by its
    /// own record), and only once an HTTP server took its place; the receiver sees each
    /// message first in input order; FIFO has it read at most once unless asked for at least
    /// once; and by control ID every message is accepted but a poison one, which ends
    /// unknown-fate as such. None is accepted that the receiver did not answer (a late reply
    /// of a message settled on an earlier connection credits no other).
    #[test]
    fn every_engine_habit_gets_every_message_through(
        engine in engine(),
        fifo in any::<bool>(),
        at_least_once in any::<bool>(),
        pipeline in any::<bool>(),
        window in prop_oneof![Just(1000usize), 1usize..=8],
        n in 1usize..=30,
    ) {
        let rt = paused();
        let correlation = if fifo { Correlation::Fifo } else { Correlation::ControlId };
        let mut options = options(correlation, pipeline);
        options.window.count = Some(window);
        options.at_least_once = at_least_once;
        let ran = rt.block_on(run(engine, options, n));
        prop_assert_eq!(ran.fates.len(), n);
        let seen = ran.seen.lock().unwrap().clone();
        let answered = ran.answered.lock().unwrap().clone();
        for (i, fate) in ran.fates.iter().enumerate() {
            let said = answered.contains(&id(i + 1));
            prop_assert!(fate.population() != Accepted || said, "{}: {}", i + 1, fate);
            let read = seen.contains(&id(i + 1));
            prop_assert!(fate.population() != NeverDelivered || !read, "{}: {}", i + 1, fate);
            let http = engine.http_from.is_some();
            prop_assert!(fate.population() != NeverDelivered || http, "{}: {}", i + 1, fate);
        }
        if fifo && !at_least_once {
            prop_assert!(read_once(&ran.seen), "{:?}", seen);
        }
        if !fifo && engine.http_from.is_none() {
            for (i, fate) in ran.fates.iter().enumerate() {
                if engine.close_on == Some(i + 1) {
                    prop_assert_eq!(fate.cause(), Some("poison"), "{}", fate);
                } else {
                    prop_assert_eq!(fate.population(), Accepted, "{}: {}", i + 1, fate);
                }
            }
        }
        prop_assert!(first_writes_in_order(&ran.seen));
    }
}
