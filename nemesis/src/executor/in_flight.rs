//! The faults that strike a worker in the middle of one operation (`pause-acquiring`,
//! `kill-acquiring`, `pause-releasing`, `isolate-releasing`, `pause-waiter`): found in the live
//! history by polling the topology's [`crate::Moments`], often, because a release lasts a few
//! milliseconds. An acquire is struck after a delay drawn within that worker's recent acquire
//! latency, counted from its invoke, so the fault lands between the server's grant and the
//! client's receipt of it as often as the timing allows; the history's start line records the
//! delay, the latency it was drawn from and the invoke it struck.

use super::Nemesis;
use crate::control::{NodeControl, Topology};
use crate::fault::{Aim, FaultKind, Mechanism};
use crate::plan::Step;
use crate::targets::{in_flight, nobody_in_flight, pick_in_flight, strike, Resolved};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;
use std::time::Duration;

/// How often an in-flight fault looks at the live history for its moment.
const IN_FLIGHT_POLL: Duration = Duration::from_millis(5);

/// How long after a pause of an operation in flight the live history is asked whether that
/// operation was still open: a reply the worker sent just before it froze reaches the history
/// within this (on a loaded machine too), one it had not sent comes only after the thaw.
pub(super) const SETTLE: Duration = Duration::from_millis(100);

/// The delay after an acquire's invoke at which it is struck: drawn in `[0, latency]` from the
/// step's pick and the invoke's index (one seed, one history: the same delays); no latency
/// known yet (the worker's first acquire) strikes at once.
pub(crate) fn acquire_delay(pick: u64, index: u64, latency: Option<Duration>) -> Duration {
    let Some(latency) = latency else {
        return Duration::ZERO;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(pick ^ index.rotate_left(32));
    Duration::from_micros(rng.random_range(0..=latency.as_micros() as u64))
}

impl<C: NodeControl, T: Topology> Nemesis<'_, C, T> {
    /// Where a pause of an operation in flight landed, for its start line: `in-flight` when
    /// the operation it struck (`invoke_index` in `value`) was still open [`SETTLE`] after the
    /// freeze (its completion will follow the start line), `after-completion` when its reply
    /// had reached the history first. `None` for every other fault (a kill's completion is the
    /// death it causes; a cut does not stop a reply already sent).
    pub(super) async fn landed(
        &self,
        fault: FaultKind,
        value: &[(&str, serde_json::Value)],
    ) -> Option<&'static str> {
        if !(fault.is_in_flight() && fault.mechanism() == Mechanism::Freeze) {
            return None;
        }
        let index = value
            .iter()
            .find(|(k, _)| *k == "invoke_index")?
            .1
            .as_u64()?;
        tokio::time::sleep(SETTLE).await;
        let m = self.topology.moments().await;
        // A waiter whose holder let go meanwhile is still acquiring: still in flight.
        let open = match fault.aim() {
            Aim::Releasing => &m.releasing,
            _ => &m.acquiring,
        };
        Some(if open.iter().any(|c| c.index == index) {
            "in-flight"
        } else {
            "after-completion"
        })
    }

    /// Waits (until `deadline`) for a worker caught at the fault's moment, and for an acquire
    /// its drawn delay; the operation must still be in flight when the fault strikes. Returns
    /// what to do and what the start line records about the moment.
    pub(super) async fn resolve_in_flight(
        &self,
        step: &Step,
        deadline: tokio::time::Instant,
    ) -> (Resolved, Vec<(&'static str, serde_json::Value)>) {
        let aim = step.fault.aim();
        // A process fault strikes between the grant and its receipt; a cut of the reply must be
        // in place before the reply passes the proxy, so it goes in at once.
        let delayed = aim == Aim::Acquiring && !step.fault.is_link();
        // Operations already tried and found over by the time their delay had passed.
        let mut missed: BTreeSet<u64> = BTreeSet::new();
        loop {
            let moments = self.topology.moments().await;
            let fresh: Vec<_> = in_flight(&moments, aim)
                .into_iter()
                .filter(|c| !missed.contains(&c.index))
                .collect();
            if let Some(caught) = pick_in_flight(fresh, step.pick) {
                let delay = if delayed {
                    acquire_delay(step.pick, caught.index, caught.acquire_latency)
                } else {
                    Duration::ZERO
                };
                let strike_at = caught.invoked_ns + delay.as_nanos() as u64;
                let wait = strike_at.saturating_sub(self.clock.now());
                if wait > 0 {
                    tokio::time::sleep(Duration::from_nanos(wait)).await;
                }
                let now = self.topology.moments().await;
                let still = in_flight(&now, aim)
                    .into_iter()
                    .any(|c| c.index == caught.index);
                if still {
                    let mut how = vec![("invoke_index", caught.index.into())];
                    if delayed {
                        how.push(("delay_ms", millis(delay)));
                        let latency = caught.acquire_latency.map(millis);
                        how.push(("acquire_latency_ms", latency.into()));
                    }
                    if aim == Aim::Waiter {
                        how.push(("holder", now.holder.clone().into()));
                    }
                    let struck = strike(self.topology, step, &self.clock_faults, caught.worker);
                    return (struck, how);
                }
                missed.insert(caught.index);
                continue;
            }
            if tokio::time::Instant::now() >= deadline {
                return (Resolved::NoTarget(nobody_in_flight(aim)), Vec::new());
            }
            tokio::time::sleep(IN_FLIGHT_POLL).await;
        }
    }
}

/// A duration as milliseconds with three decimals, as the history records delays.
fn millis(d: Duration) -> serde_json::Value {
    (d.as_micros() as f64 / 1000.0).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_acquire_is_struck_within_its_worker_s_recent_latency_and_the_same_way_for_one_seed() {
        let latency = Some(Duration::from_millis(40));
        for index in 0..200 {
            let d = acquire_delay(7, index, latency);
            assert!(d <= Duration::from_millis(40), "{d:?}");
            assert_eq!(d, acquire_delay(7, index, latency));
        }
        let spread: BTreeSet<_> = (0..50).map(|i| acquire_delay(7, i, latency)).collect();
        assert!(spread.len() > 10, "delays are drawn, not fixed");
        assert_eq!(
            acquire_delay(7, 3, None),
            Duration::ZERO,
            "first acquire: at once"
        );
    }
}
