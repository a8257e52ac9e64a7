//! Connecting to several addresses Happy-Eyeballs style (RFC 8305): families interleaved, the
//! next attempt started after a stagger delay or as soon as the previous one fails, first
//! success wins and the rest are abandoned.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::task::JoinSet;
use tokio::time::Instant;

/// RFC 8305's recommended delay before starting the next attempt.
pub(crate) const DEFAULT_STAGGER: Duration = Duration::from_millis(250);

/// One connection attempt and how it ended.
#[derive(Debug)]
pub(crate) struct Attempt {
    /// The address tried.
    pub addr: SocketAddr,
    /// `None` for the attempt that won, or one abandoned when another won.
    pub error: Option<io::Error>,
}

/// Alternates address families, keeping the resolver's order within each family and starting
/// with the family of the first address.
pub(crate) fn interleave(addrs: &[SocketAddr]) -> Vec<SocketAddr> {
    let Some(first) = addrs.first() else {
        return Vec::new();
    };
    let (mut same, mut other): (Vec<SocketAddr>, Vec<SocketAddr>) = addrs
        .iter()
        .copied()
        .partition(|a| a.is_ipv4() == first.is_ipv4());
    same.reverse();
    other.reverse();
    let mut out = Vec::with_capacity(addrs.len());
    while !same.is_empty() || !other.is_empty() {
        out.extend(same.pop());
        out.extend(other.pop());
    }
    out
}

/// Races connection attempts over `addrs` (already in the order to try). Returns the winner and
/// every attempt that failed before it, or every failure when none succeeded. Unbounded in time:
/// the caller wraps it in its connect timeout.
pub(crate) async fn race<S, F, Fut>(
    addrs: &[SocketAddr],
    stagger: Duration,
    connect: F,
) -> Result<(S, SocketAddr, Vec<Attempt>), Vec<Attempt>>
where
    S: Send + 'static,
    F: Fn(SocketAddr) -> Fut,
    Fut: Future<Output = io::Result<S>> + Send + 'static,
{
    let mut running = JoinSet::new();
    let mut failed = Vec::new();
    let mut next = 0usize;
    let mut deadline = Instant::now();
    loop {
        if next < addrs.len() && (running.is_empty() || Instant::now() >= deadline) {
            let addr = addrs[next];
            let attempt = connect(addr);
            running.spawn(async move { (addr, attempt.await) });
            next += 1;
            deadline = Instant::now() + stagger;
            continue;
        }
        if running.is_empty() {
            return Err(failed);
        }
        let more_to_start = next < addrs.len();
        tokio::select! {
            joined = running.join_next() => match joined {
                Some(Ok((addr, Ok(stream)))) => {
                    running.abort_all();
                    return Ok((stream, addr, failed));
                }
                Some(Ok((addr, Err(error)))) => {
                    failed.push(Attempt { addr, error: Some(error) });
                    // A failure starts the next attempt at once.
                    deadline = Instant::now();
                }
                // A panicked attempt task: count nothing, move on.
                Some(Err(_)) | None => deadline = Instant::now(),
            },
            _ = tokio::time::sleep_until(deadline), if more_to_start => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn families_alternate_from_the_first() {
        let input = [
            addr("[::1]:1"),
            addr("[::2]:1"),
            addr("[::3]:1"),
            addr("10.0.0.1:1"),
            addr("10.0.0.2:1"),
        ];
        let order: Vec<String> = interleave(&input).iter().map(|a| a.to_string()).collect();
        assert_eq!(
            order,
            ["[::1]:1", "10.0.0.1:1", "[::2]:1", "10.0.0.2:1", "[::3]:1"]
        );
        assert!(interleave(&[]).is_empty());
    }

    /// A fake network: each address answers after a delay with success or refusal; starts
    /// are recorded with their (paused-clock) time.
    fn fake(
        plan: Vec<(SocketAddr, u64, bool)>,
        started: Arc<Mutex<Vec<(SocketAddr, u128)>>>,
        t0: Instant,
    ) -> impl Fn(SocketAddr) -> std::pin::Pin<Box<dyn Future<Output = io::Result<SocketAddr>> + Send>>
    {
        move |a| {
            let (_, delay, ok) = *plan.iter().find(|(p, _, _)| *p == a).unwrap();
            started.lock().unwrap().push((a, t0.elapsed().as_millis()));
            Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(delay)).await;
                if ok {
                    Ok(a)
                } else {
                    Err(io::Error::from(io::ErrorKind::ConnectionRefused))
                }
            })
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_first_address_is_overtaken_after_the_stagger() {
        let (a, b) = (addr("[::1]:1"), addr("127.0.0.1:1"));
        let started = Arc::new(Mutex::new(Vec::new()));
        let t0 = Instant::now();
        let connect = fake(vec![(a, 10_000, true), (b, 10, true)], started.clone(), t0);
        let (won, at, failed) = race(&[a, b], DEFAULT_STAGGER, connect).await.unwrap();
        assert_eq!((won, at), (b, b));
        assert!(failed.is_empty());
        assert_eq!(*started.lock().unwrap(), vec![(a, 0), (b, 250)]);
        assert_eq!(t0.elapsed(), Duration::from_millis(260));
    }

    #[tokio::test(start_paused = true)]
    async fn a_failure_starts_the_next_attempt_at_once() {
        let (a, b, c) = (addr("10.0.0.1:1"), addr("10.0.0.2:1"), addr("10.0.0.3:1"));
        let started = Arc::new(Mutex::new(Vec::new()));
        let t0 = Instant::now();
        let plan = vec![(a, 5, false), (b, 5, false), (c, 5, false)];
        let failures = race(&[a, b, c], DEFAULT_STAGGER, fake(plan, started.clone(), t0))
            .await
            .unwrap_err();
        let failed: Vec<_> = failures.iter().map(|f| f.addr).collect();
        assert_eq!(failed, [a, b, c]);
        assert!(failures.iter().all(|f| f.error.is_some()));
        assert_eq!(*started.lock().unwrap(), vec![(a, 0), (b, 5), (c, 10)]);

        let started = Arc::new(Mutex::new(Vec::new()));
        let plan = vec![(a, 5, false), (b, 5, true)];
        let (_, at, failed) = race(
            &[a, b],
            DEFAULT_STAGGER,
            fake(plan, started, Instant::now()),
        )
        .await
        .unwrap();
        assert_eq!(at, b);
        assert_eq!(failed.len(), 1);
        assert!(race(&[], DEFAULT_STAGGER, |_| async { Ok(()) })
            .await
            .unwrap_err()
            .is_empty());
    }
}
