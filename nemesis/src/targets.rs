//! What a fault hits, decided at its start time: the holder or the leader as the topology
//! reports them, or a member drawn with the step's `pick` from the sorted names (so one seed hits
//! the same targets), and for partitions the grudge built from them.

use crate::clock::{ClockFaults, ClockSetting, LinkShaping};
use crate::control::{InFlight, Moments, Signal, Topology};
#[cfg(test)]
use crate::fault::FaultKind;
use crate::fault::{Aim, ClockMove, Mechanism, Shaping};
use crate::grudge::Grudge;
use crate::plan::Step;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The share of one CPU a starved target keeps: a few percent, slow but not stopped.
pub const STARVED_CPUS: f64 = 0.05;

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

/// A fault resolved to its targets and its action: by the plan's steps against the topology at
/// their start time, or by whoever strikes one fault at a time ([`crate::executor::OneStep`]).
#[derive(Debug, Clone)]
pub enum Resolved {
    /// Every target gets the signal (a stop freezes, a kill kills).
    Signal(Signal, Vec<String>),
    /// A two-way cut: each node drops what the grudge names, both ways.
    Partition(Grudge, Vec<String>),
    /// A grudge applied inbound only (one-way partitions).
    OneWay(Grudge, Vec<String>),
    /// Every target's clock gets the setting.
    Clock(ClockSetting, Vec<String>),
    /// Every target's links through the link proxy get the shaping.
    Links(LinkShaping, Vec<String>),
    /// Every target's work is hung.
    Hang(Vec<String>),
    /// Every target killed and its data directory emptied.
    KillEmpty(Vec<String>),
    /// Every target's container limited to this share of one CPU.
    Starve(f64, Vec<String>),
    NoTarget(&'static str),
}

/// A drawn majority (n / 2 + 1) of `names`, the same for one pick.
fn majority(names: Vec<String>, pick: u64) -> Vec<String> {
    let mut drawn = shuffled(names, pick);
    drawn.truncate(drawn.len() / 2 + 1);
    drawn.sort();
    drawn
}

/// Who a fault hits, chosen by its aim: the targets, and the other side of a cut (the nodes a
/// worker or the leader is cut from, the leader a follower stops hearing, the majority of
/// halves).
pub(crate) struct Aimed {
    pub targets: Vec<String>,
    pub others: Vec<String>,
}

impl Aimed {
    fn one(target: String, others: Vec<String>) -> Aimed {
        Aimed {
            targets: vec![target],
            others,
        }
    }
}

/// What `step` hits now ([`aim`]) and what it does to it ([`act`]).
pub(crate) async fn resolve<T: Topology>(topo: &T, step: &Step, clock: &ClockFaults) -> Resolved {
    match aim(topo, step).await {
        Ok(aimed) => act(step, clock, aimed),
        Err(why) => Resolved::NoTarget(why),
    }
}

/// The targets of `step` by its fault's aim: asks the topology for the holder, the leader or an
/// operation in flight, or draws from its members with the step's `pick`.
async fn aim<T: Topology>(topo: &T, step: &Step) -> Result<Aimed, &'static str> {
    let pick = step.pick;
    let one = |name: Option<String>, others: Vec<String>, why| {
        name.map(|n| Aimed::one(n, others)).ok_or(why)
    };
    let aim = step.fault.aim();
    match aim {
        Aim::Holder => one(
            topo.moments().await.holder,
            topo.nodes(),
            "no worker holds the lock",
        ),
        Aim::HolderElseAcquiring => {
            // The holder's renewals, or else an acquire whose grant will not be heard in time.
            let m = topo.moments().await;
            let acquiring = pick_in_flight(m.acquiring, pick).map(|a| a.worker);
            one(
                m.holder.or(acquiring),
                topo.nodes(),
                "no worker holds the lock or is acquiring it",
            )
        }
        Aim::AnyWorker => one(
            pick_one(topo.workers(), pick),
            topo.nodes(),
            "there are no workers",
        ),
        Aim::Acquiring | Aim::Releasing | Aim::Waiter => {
            let m = topo.moments().await;
            let caught = pick_in_flight(in_flight(&m, aim), pick).map(|c| c.worker);
            one(caught, topo.nodes(), nobody_in_flight(aim))
        }
        Aim::AnyNode => one(
            pick_one(topo.nodes(), pick),
            Vec::new(),
            "there are no nodes",
        ),
        Aim::Leader => one(
            topo.leader().await,
            topo.nodes(),
            "the system reports no leader",
        ),
        Aim::Follower => {
            let leader = topo.leader().await.ok_or("the system reports no leader")?;
            let followers: Vec<String> =
                topo.nodes().into_iter().filter(|n| *n != leader).collect();
            one(
                pick_one(followers, pick),
                vec![leader],
                "the leader has no followers",
            )
        }
        Aim::EveryNode => {
            let nodes = topo.nodes();
            if nodes.is_empty() {
                return Err("there are no nodes");
            }
            Ok(Aimed {
                targets: nodes,
                others: Vec::new(),
            })
        }
        Aim::MajorityWhileHeld => {
            // Kleppmann's case: the clocks jump while a client holds the lock, so that its key
            // expires early on a majority of the nodes that hold it.
            if topo.moments().await.holder.is_none() {
                return Err("no worker holds the lock");
            }
            let nodes = majority(topo.nodes(), pick);
            if nodes.is_empty() {
                return Err("there are no nodes");
            }
            Ok(Aimed {
                targets: nodes,
                others: Vec::new(),
            })
        }
        Aim::Resource => {
            let mut others = topo.workers();
            others.extend(topo.nodes());
            one(topo.resource(), others, "the resource is not a container")
        }
        Aim::Halves => {
            let mut nodes = shuffled(topo.nodes(), pick);
            let majority = nodes.split_off(nodes.len() / 2);
            Ok(Aimed {
                targets: nodes,
                others: majority,
            })
        }
        Aim::Ring => Ok(Aimed {
            targets: shuffled(topo.nodes(), pick),
            others: Vec::new(),
        }),
    }
}

/// What `step`'s fault does to the targets it aimed at, by its mechanism.
pub(crate) fn act(step: &Step, clock: &ClockFaults, aimed: Aimed) -> Resolved {
    let Aimed { targets, others } = aimed;
    let first = targets.first().cloned().unwrap_or_default();
    match step.fault.mechanism() {
        Mechanism::Freeze => Resolved::Signal(Signal::Stop, targets),
        Mechanism::Kill => Resolved::Signal(Signal::Kill, targets),
        Mechanism::KillEmpty => Resolved::KillEmpty(targets),
        Mechanism::Cut => {
            let grudge = match step.fault.aim() {
                Aim::Leader | Aim::AnyNode | Aim::Follower => Grudge::isolate(&first, &others),
                Aim::Resource => Grudge::isolate_resource(&first, &others),
                Aim::Halves => {
                    let nodes: Vec<String> = targets.iter().chain(&others).cloned().collect();
                    Grudge::halves(&nodes)
                }
                Aim::Ring | Aim::EveryNode | Aim::MajorityWhileHeld => {
                    Grudge::majorities_ring(&targets)
                }
                Aim::Holder
                | Aim::HolderElseAcquiring
                | Aim::AnyWorker
                | Aim::Acquiring
                | Aim::Releasing
                | Aim::Waiter => Grudge::isolate_worker(&first, &others),
            };
            Resolved::Partition(grudge, targets)
        }
        Mechanism::Deafen => Resolved::OneWay(Grudge::deafen(&first, &others), targets),
        Mechanism::Mute => Resolved::OneWay(Grudge::mute(&first, &others), targets),
        Mechanism::ServerClock(ClockMove::Jump) => Resolved::Clock(
            ClockSetting::Ahead {
                secs: clock.jump.as_secs_f64(),
            },
            targets,
        ),
        Mechanism::ServerClock(ClockMove::Skew) => {
            Resolved::Clock(ClockSetting::Fast { factor: clock.skew }, targets)
        }
        Mechanism::ClientClock(how) => {
            Resolved::Clock(client_clock(how, step.pick, clock), targets)
        }
        Mechanism::Link(Shaping::Slow) => Resolved::Links(clock.slow, targets),
        Mechanism::Link(Shaping::Lossy) => Resolved::Links(LinkShaping::lossy(), targets),
        Mechanism::Link(Shaping::HoldReplies) => Resolved::Links(clock.slow_reply, targets),
        Mechanism::Link(Shaping::CutReply) => Resolved::Links(LinkShaping::cut_reply(), targets),
        Mechanism::Hang => Resolved::Hang(targets),
        Mechanism::Starve => Resolved::Starve(STARVED_CPUS, targets),
    }
}

/// The workers an in-flight fault may strike now: acquiring (any acquire in flight),
/// releasing, or waiting (an acquire in flight while another worker holds the lock).
pub(crate) fn in_flight(m: &Moments, aim: Aim) -> Vec<InFlight> {
    match aim {
        Aim::Acquiring => m.acquiring.clone(),
        Aim::Releasing => m.releasing.clone(),
        Aim::Waiter => m.waiting(),
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
pub(crate) fn nobody_in_flight(aim: Aim) -> &'static str {
    match aim {
        Aim::Releasing => "no worker's release was in flight",
        Aim::Waiter => "no worker was waiting for a held lock",
        _ => "no worker's acquire was in flight",
    }
}

/// What an in-flight fault does to the worker it caught.
pub(crate) fn strike<T: Topology>(
    topo: &T,
    step: &Step,
    clock: &ClockFaults,
    worker: String,
) -> Resolved {
    act(step, clock, Aimed::one(worker, topo.nodes()))
}

/// A client clock fault's setting: its direction drawn with the step's `pick` (even: forward,
/// odd: backward).
fn client_clock(how: ClockMove, pick: u64, clock: &ClockFaults) -> ClockSetting {
    let forward = pick.is_multiple_of(2);
    match how {
        ClockMove::Skew if forward => ClockSetting::Fast { factor: clock.skew },
        ClockMove::Skew => ClockSetting::Fast {
            factor: 1.0 / clock.skew,
        },
        ClockMove::Jump => {
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
            cut_next_reply: false,
        },
        slow_reply: LinkShaping {
            delay_ms: 2000,
            jitter_ms: 0,
            loss: 0.0,
            replies_only: true,
            cut_next_reply: false,
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
