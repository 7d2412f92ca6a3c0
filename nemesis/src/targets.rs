//! What a fault hits, decided at its start time: the holder or the leader as the topology
//! reports them, or a member drawn with the step's `pick` from the sorted names (so one seed hits
//! the same targets), and for partitions the grudge built from them.

use crate::clock::{ClockFaults, ClockSetting, LinkShaping};
use crate::control::{InFlight, Moments, Signal, Topology};
use crate::fault::FaultKind;
use crate::grudge::Grudge;
use crate::plan::Step;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn pick_one(mut names: Vec<String>, pick: u64) -> Option<String> {
    names.sort();
    let n = names.len() as u64;
    (n > 0).then(|| names.swap_remove((pick % n) as usize))
}

fn shuffled(mut names: Vec<String>, pick: u64) -> Vec<String> {
    names.sort();
    names.shuffle(&mut ChaCha8Rng::seed_from_u64(pick));
    names
}

/// A fault resolved against the topology at its start time.
pub(crate) enum Resolved {
    Signal(Signal, Vec<String>),
    Partition(Grudge, Vec<String>),
    /// A grudge applied inbound only (one-way partitions).
    OneWay(Grudge, Vec<String>),
    /// Every target's clock gets the setting.
    Clock(ClockSetting, Vec<String>),
    /// Every target's links through the link proxy get the shaping.
    Links(LinkShaping, Vec<String>),
    NoTarget(&'static str),
}

/// A drawn majority (n / 2 + 1) of `names`, the same for one pick.
fn majority(names: Vec<String>, pick: u64) -> Vec<String> {
    let mut drawn = shuffled(names, pick);
    drawn.truncate(drawn.len() / 2 + 1);
    drawn.sort();
    drawn
}

/// What `step` hits now: asks the topology for the holder / leader, or draws from its members
/// with the step's `pick`.
pub(crate) async fn resolve<T: Topology>(topo: &T, step: &Step, clock: &ClockFaults) -> Resolved {
    let one = |name: Option<String>, why| match name {
        Some(n) => Ok(n),
        None => Err(Resolved::NoTarget(why)),
    };
    let r = match step.fault {
        FaultKind::PauseHolder
        | FaultKind::KillHolder
        | FaultKind::IsolateHolder
        | FaultKind::DeafenHolder
        | FaultKind::MuteHolder
        | FaultKind::SlowNetwork
        | FaultKind::LossyNetwork => one(topo.moments().await.holder, "no worker holds the lock"),
        FaultKind::SlowReply => {
            // The holder's renewals, or else an acquire whose grant will not be heard in time.
            let m = topo.moments().await;
            let acquiring = pick_in_flight(m.acquiring, step.pick).map(|a| a.worker);
            let target = m.holder.or(acquiring);
            return match target {
                Some(t) => Resolved::Links(clock.slow_reply, vec![t]),
                None => Resolved::NoTarget("no worker holds the lock or is acquiring it"),
            };
        }
        FaultKind::ClientClockJump | FaultKind::ClientClockSkew => {
            let Some(holder) = topo.moments().await.holder else {
                return Resolved::NoTarget("no worker holds the lock");
            };
            return Resolved::Clock(client_clock(step, clock), vec![holder]);
        }
        FaultKind::PauseAcquiring
        | FaultKind::KillAcquiring
        | FaultKind::PauseReleasing
        | FaultKind::IsolateReleasing
        | FaultKind::PauseWaiter => {
            let m = topo.moments().await;
            return match pick_in_flight(in_flight(&m, step.fault), step.pick) {
                Some(caught) => strike(topo, step.fault, caught.worker),
                None => Resolved::NoTarget(nobody_in_flight(step.fault)),
            };
        }
        FaultKind::StallService => {
            let nodes = topo.nodes();
            if nodes.is_empty() {
                return Resolved::NoTarget("there are no nodes");
            }
            return Resolved::Signal(Signal::Stop, nodes);
        }
        FaultKind::DeafenFollower => {
            let Some(leader) = topo.leader().await else {
                return Resolved::NoTarget("the system reports no leader");
            };
            let followers: Vec<String> =
                topo.nodes().into_iter().filter(|n| *n != leader).collect();
            return match pick_one(followers, step.pick) {
                Some(f) => Resolved::OneWay(Grudge::deafen(&f, &[leader]), vec![f]),
                None => Resolved::NoTarget("the leader has no followers"),
            };
        }
        FaultKind::ClockJump => {
            // Kleppmann's case: the clocks jump while a client holds the lock, so that its key
            // expires early on a majority of the nodes that hold it.
            if topo.moments().await.holder.is_none() {
                return Resolved::NoTarget("no worker holds the lock");
            }
            let nodes = majority(topo.nodes(), step.pick);
            if nodes.is_empty() {
                return Resolved::NoTarget("there are no nodes");
            }
            let secs = clock.jump.as_secs_f64();
            return Resolved::Clock(ClockSetting::Ahead { secs }, nodes);
        }
        FaultKind::ClockSkew => {
            let factor = clock.skew;
            return match pick_one(topo.nodes(), step.pick) {
                Some(n) => Resolved::Clock(ClockSetting::Fast { factor }, vec![n]),
                None => Resolved::NoTarget("there are no nodes"),
            };
        }
        FaultKind::PauseWorker | FaultKind::KillWorker | FaultKind::IsolateWorker => {
            one(pick_one(topo.workers(), step.pick), "there are no workers")
        }
        FaultKind::PauseNode | FaultKind::KillNode => {
            one(pick_one(topo.nodes(), step.pick), "there are no nodes")
        }
        FaultKind::PauseLeader
        | FaultKind::KillLeader
        | FaultKind::IsolateLeader
        | FaultKind::StallLeader
        | FaultKind::Failover => one(topo.leader().await, "the system reports no leader"),
        FaultKind::IsolateResource => one(topo.resource(), "the resource is not a container"),
        FaultKind::Halves | FaultKind::MajoritiesRing => Ok(String::new()),
    };
    let target = match r {
        Ok(t) => t,
        Err(no) => return no,
    };
    match step.fault {
        FaultKind::PauseHolder
        | FaultKind::PauseWorker
        | FaultKind::PauseNode
        | FaultKind::PauseLeader
        | FaultKind::StallLeader
        | FaultKind::Failover => Resolved::Signal(Signal::Stop, vec![target]),
        FaultKind::KillHolder
        | FaultKind::KillWorker
        | FaultKind::KillNode
        | FaultKind::KillLeader => Resolved::Signal(Signal::Kill, vec![target]),
        FaultKind::IsolateLeader => {
            Resolved::Partition(Grudge::isolate(&target, &topo.nodes()), vec![target])
        }
        FaultKind::IsolateWorker | FaultKind::IsolateHolder => {
            Resolved::Partition(Grudge::isolate_worker(&target, &topo.nodes()), vec![target])
        }
        FaultKind::DeafenHolder => {
            Resolved::OneWay(Grudge::deafen(&target, &topo.nodes()), vec![target])
        }
        FaultKind::MuteHolder => {
            Resolved::OneWay(Grudge::mute(&target, &topo.nodes()), vec![target])
        }
        FaultKind::SlowNetwork => Resolved::Links(clock.slow, vec![target]),
        FaultKind::LossyNetwork => Resolved::Links(LinkShaping::lossy(), vec![target]),
        // resolved above
        FaultKind::DeafenFollower
        | FaultKind::ClockJump
        | FaultKind::ClockSkew
        | FaultKind::SlowReply
        | FaultKind::ClientClockJump
        | FaultKind::ClientClockSkew
        | FaultKind::PauseAcquiring
        | FaultKind::KillAcquiring
        | FaultKind::PauseReleasing
        | FaultKind::IsolateReleasing
        | FaultKind::PauseWaiter
        | FaultKind::StallService => Resolved::NoTarget("resolved before the target match"),
        FaultKind::IsolateResource => {
            let mut others = topo.workers();
            others.extend(topo.nodes());
            Resolved::Partition(Grudge::isolate_resource(&target, &others), vec![target])
        }
        FaultKind::Halves => {
            let nodes = shuffled(topo.nodes(), step.pick);
            let minority = nodes[..nodes.len() / 2].to_vec();
            Resolved::Partition(Grudge::halves(&nodes), minority)
        }
        FaultKind::MajoritiesRing => {
            let nodes = shuffled(topo.nodes(), step.pick);
            Resolved::Partition(Grudge::majorities_ring(&nodes), nodes)
        }
    }
}

/// The workers an in-flight fault may strike now: acquiring (any acquire in flight),
/// releasing, or waiting (an acquire in flight while another worker holds the lock).
pub(crate) fn in_flight(m: &Moments, fault: FaultKind) -> Vec<InFlight> {
    match fault {
        FaultKind::PauseAcquiring | FaultKind::KillAcquiring => m.acquiring.clone(),
        FaultKind::PauseReleasing | FaultKind::IsolateReleasing => m.releasing.clone(),
        FaultKind::PauseWaiter => m.waiting(),
        _ => Vec::new(),
    }
}

/// One of `caught`, drawn with `pick` from them sorted by worker name.
pub(crate) fn pick_in_flight(mut caught: Vec<InFlight>, pick: u64) -> Option<InFlight> {
    caught.sort_by(|a, b| a.worker.cmp(&b.worker));
    let n = caught.len() as u64;
    (n > 0).then(|| caught.swap_remove((pick % n) as usize))
}

/// Why an in-flight fault found no target.
pub(crate) fn nobody_in_flight(fault: FaultKind) -> &'static str {
    match fault {
        FaultKind::PauseReleasing | FaultKind::IsolateReleasing => {
            "no worker's release was in flight"
        }
        FaultKind::PauseWaiter => "no worker was waiting for a held lock",
        _ => "no worker's acquire was in flight",
    }
}

/// What an in-flight fault does to the worker it caught.
pub(crate) fn strike<T: Topology>(topo: &T, fault: FaultKind, worker: String) -> Resolved {
    match fault {
        FaultKind::KillAcquiring => Resolved::Signal(Signal::Kill, vec![worker]),
        FaultKind::IsolateReleasing => {
            Resolved::Partition(Grudge::isolate_worker(&worker, &topo.nodes()), vec![worker])
        }
        _ => Resolved::Signal(Signal::Stop, vec![worker]),
    }
}

/// A client clock fault's setting: its direction drawn with the step's `pick` (even: forward,
/// odd: backward).
fn client_clock(step: &Step, clock: &ClockFaults) -> ClockSetting {
    let forward = step.pick.is_multiple_of(2);
    match step.fault {
        FaultKind::ClientClockSkew if forward => ClockSetting::Fast { factor: clock.skew },
        FaultKind::ClientClockSkew => ClockSetting::Fast {
            factor: 1.0 / clock.skew,
        },
        _ => {
            let secs = clock.jump.as_secs_f64();
            ClockSetting::Ahead {
                secs: if forward { secs } else { -secs },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::StaticTopology;
    use std::time::Duration;

    fn step(fault: FaultKind, pick: u64) -> Step {
        Step {
            at: Duration::ZERO,
            fault,
            duration: Duration::from_secs(1),
            pick,
        }
    }

    const CF: ClockFaults = ClockFaults {
        jump: Duration::from_secs(10),
        skew: 3.0,
        slow: LinkShaping {
            delay_ms: 500,
            jitter_ms: 250,
            loss: 0.0,
            replies_only: false,
        },
        slow_reply: LinkShaping {
            delay_ms: 2000,
            jitter_ms: 0,
            loss: 0.0,
            replies_only: true,
        },
    };

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(f)
    }

    #[test]
    fn halves_of_five_put_two_drawn_nodes_in_the_minority_the_same_way_for_one_pick() {
        let topo = StaticTopology::new(2, 5);
        let minority = |pick| match block_on(resolve(&topo, &step(FaultKind::Halves, pick), &CF)) {
            Resolved::Partition(g, minority) => {
                assert!(
                    !g.drops(&minority[0], &minority[1]),
                    "the minority sees itself"
                );
                minority
            }
            _ => panic!("halves is a partition"),
        };
        assert_eq!(minority(7).len(), 2);
        assert_eq!(minority(7), minority(7));
        let distinct: std::collections::BTreeSet<_> = (0..20).map(minority).collect();
        assert!(
            distinct.len() > 1,
            "different picks choose different minorities"
        );
    }

    #[test]
    fn one_way_and_clock_faults_hit_the_right_nodes() {
        let topo = StaticTopology::new(3, 5);
        match block_on(resolve(&topo, &step(FaultKind::DeafenFollower, 3), &CF)) {
            Resolved::OneWay(g, t) => {
                assert_ne!(t[0], "n1", "a follower, not the leader");
                assert!(g.drops(&t[0], "n1") && !g.drops("n1", &t[0]));
            }
            _ => panic!("deafen-follower is one-way"),
        }
        match block_on(resolve(&topo, &step(FaultKind::MuteHolder, 0), &CF)) {
            Resolved::OneWay(g, t) => {
                assert_eq!(t, ["worker-1"]);
                assert!(g.drops("n3", "worker-1") && !g.drops("worker-1", "n3"));
            }
            _ => panic!("mute-holder is one-way"),
        }
        match block_on(resolve(&topo, &step(FaultKind::ClockJump, 9), &CF)) {
            Resolved::Clock(ClockSetting::Ahead { secs }, nodes) => {
                assert_eq!(secs, 10.0);
                assert_eq!(nodes.len(), 3, "a majority of five");
            }
            _ => panic!("clock-jump moves clocks"),
        }
        match block_on(resolve(&topo, &step(FaultKind::ClockSkew, 9), &CF)) {
            Resolved::Clock(ClockSetting::Fast { factor }, nodes) => {
                assert_eq!((factor, nodes.len()), (3.0, 1));
            }
            _ => panic!("clock-skew makes a clock fast"),
        }
    }

    #[test]
    fn holder_and_leader_faults_follow_the_topology() {
        let topo = StaticTopology::new(3, 3);
        *topo.leader.lock().expect("leader") = Some("n3".into());
        match block_on(resolve(&topo, &step(FaultKind::IsolateLeader, 0), &CF)) {
            Resolved::Partition(g, t) => {
                assert_eq!(t, ["n3"]);
                assert!(g.drops("n3", "n1") && g.drops("n1", "n3") && !g.drops("n1", "n2"));
            }
            _ => panic!("isolate-leader is a partition"),
        }
        *topo.leader.lock().expect("leader") = None;
        assert!(matches!(
            block_on(resolve(&topo, &step(FaultKind::Failover, 0), &CF)),
            Resolved::NoTarget(_)
        ));
        assert!(matches!(
            block_on(resolve(&topo, &step(FaultKind::PauseHolder, 0), &CF)),
            Resolved::Signal(Signal::Stop, t) if t == ["worker-1"]
        ));
    }
}
