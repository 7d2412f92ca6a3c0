//! The faults fencecheck can inject, as plain data: a closed set of names, what each needs from
//! the system under test, its default duration, and what it hits ([`Scope`]). Everything else
//! (targets, grudges, timing) is decided by the nemesis from these facts. It lives in the data
//! model because the history names faults (`start-<fault>` / `stop-<fault>`) and the checkers
//! must know which of them can make the lock service itself unavailable.

use crate::provider::Capabilities;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// One kind of fault. Its kebab-case name is what users write and what the history records
/// (`start-<name>` / `stop-<name>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// SIGSTOP the worker holding the lock (the GC pause of the literature), SIGCONT at the end.
    PauseHolder,
    /// SIGSTOP a random worker.
    PauseWorker,
    /// SIGKILL the holder; at the end the harness starts a fresh worker in its place.
    KillHolder,
    /// SIGKILL a random worker; restarted at the end.
    KillWorker,
    /// SIGSTOP a random lock-service node.
    PauseNode,
    /// SIGSTOP the current leader / master.
    PauseLeader,
    /// SIGKILL a random node; at the end restart the same container with its data.
    KillNode,
    /// SIGKILL the current leader / master; restarted at the end.
    KillLeader,
    /// Cut the leader off from every other node.
    IsolateLeader,
    /// Split the nodes into a minority and a majority.
    Halves,
    /// Every node sees a majority, no two nodes the same one.
    MajoritiesRing,
    /// Cut one worker off from the lock service (not from the resource).
    IsolateWorker,
    /// Cut the worker holding the lock off from the lock service (not from the resource): its
    /// session or lease runs out while it can still write.
    IsolateHolder,
    /// Cut the resource off from every worker and node.
    IsolateResource,
    /// Pause the master so that the sentinels promote a replica (Redis Sentinel only).
    Failover,
    /// One-way: the holder hears nothing from the lock service, while what it sends still
    /// arrives (its keep-alives reach the server; the answers never come back).
    DeafenHolder,
    /// One-way: the lock service hears nothing from the holder, while the holder still hears
    /// the service (its keep-alives are lost; it can still read that it holds).
    MuteHolder,
    /// One-way: a follower stops hearing the leader, while the leader still hears it.
    DeafenFollower,
    /// Just after a worker acquires the lock, the wall clocks of a drawn majority of the
    /// lock-service nodes jump forward (5 × ttl), and back at the heal (libfaketime; monotonic
    /// clocks untouched).
    ClockJump,
    /// One lock-service node's wall clock runs fast (3 × real time) for the fault's length, and
    /// is set back to the real time at the heal.
    ClockSkew,
    /// The holder's links to the lock service get slow: every chunk relayed either way waits
    /// ttl / 4 plus up to ttl / 8 more (a userspace proxy; the default test has none).
    SlowNetwork,
    /// The holder's links to the lock service lose: each chunk relayed breaks its connection
    /// with probability 0.2 (a reset, as a lost segment on a dying link ends up).
    LossyNetwork,
}

/// Every fault, in the order `--help` lists them.
pub const ALL_FAULTS: [FaultKind; 22] = [
    FaultKind::PauseHolder,
    FaultKind::PauseWorker,
    FaultKind::KillHolder,
    FaultKind::KillWorker,
    FaultKind::PauseNode,
    FaultKind::PauseLeader,
    FaultKind::KillNode,
    FaultKind::KillLeader,
    FaultKind::IsolateLeader,
    FaultKind::Halves,
    FaultKind::MajoritiesRing,
    FaultKind::IsolateWorker,
    FaultKind::IsolateHolder,
    FaultKind::IsolateResource,
    FaultKind::Failover,
    FaultKind::DeafenHolder,
    FaultKind::MuteHolder,
    FaultKind::DeafenFollower,
    FaultKind::ClockJump,
    FaultKind::ClockSkew,
    FaultKind::SlowNetwork,
    FaultKind::LossyNetwork,
];

impl FaultKind {
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::PauseHolder => "pause-holder",
            FaultKind::PauseWorker => "pause-worker",
            FaultKind::KillHolder => "kill-holder",
            FaultKind::KillWorker => "kill-worker",
            FaultKind::PauseNode => "pause-node",
            FaultKind::PauseLeader => "pause-leader",
            FaultKind::KillNode => "kill-node",
            FaultKind::KillLeader => "kill-leader",
            FaultKind::IsolateLeader => "isolate-leader",
            FaultKind::Halves => "halves",
            FaultKind::MajoritiesRing => "majorities-ring",
            FaultKind::IsolateWorker => "isolate-worker",
            FaultKind::IsolateHolder => "isolate-holder",
            FaultKind::IsolateResource => "isolate-resource",
            FaultKind::Failover => "failover",
            FaultKind::DeafenHolder => "deafen-holder",
            FaultKind::MuteHolder => "mute-holder",
            FaultKind::DeafenFollower => "deafen-follower",
            FaultKind::ClockJump => "clock-jump",
            FaultKind::ClockSkew => "clock-skew",
            FaultKind::SlowNetwork => "slow-network",
            FaultKind::LossyNetwork => "lossy-network",
        }
    }

    /// Partitions install iptables rules; two may not be active at once (their heal is a flush).
    pub fn is_partition(self) -> bool {
        matches!(
            self,
            FaultKind::IsolateLeader
                | FaultKind::Halves
                | FaultKind::MajoritiesRing
                | FaultKind::IsolateWorker
                | FaultKind::IsolateHolder
                | FaultKind::IsolateResource
                | FaultKind::DeafenHolder
                | FaultKind::MuteHolder
                | FaultKind::DeafenFollower
        )
    }

    /// Partitions that cut traffic in one direction only.
    pub fn is_one_way(self) -> bool {
        matches!(
            self,
            FaultKind::DeafenHolder | FaultKind::MuteHolder | FaultKind::DeafenFollower
        )
    }

    /// Faults on the wall clock (libfaketime), which only reach programs that read the time
    /// through libc.
    pub fn is_clock(self) -> bool {
        matches!(self, FaultKind::ClockJump | FaultKind::ClockSkew)
    }

    /// Faults on the links through the run's link proxy (started only for them).
    pub fn is_link(self) -> bool {
        matches!(self, FaultKind::SlowNetwork | FaultKind::LossyNetwork)
    }

    /// What the fault hits. `isolate-worker` counts as a fault on workers; a reader that knows
    /// its target did not hold the lock may treat it as cutting a trying client off the service.
    pub fn scope(self) -> Scope {
        match self {
            FaultKind::PauseHolder
            | FaultKind::PauseWorker
            | FaultKind::KillHolder
            | FaultKind::KillWorker
            | FaultKind::IsolateWorker
            | FaultKind::IsolateHolder
            | FaultKind::DeafenHolder
            | FaultKind::MuteHolder
            | FaultKind::SlowNetwork
            | FaultKind::LossyNetwork => Scope::Workers,
            FaultKind::IsolateResource => Scope::Resource,
            FaultKind::PauseNode
            | FaultKind::PauseLeader
            | FaultKind::KillNode
            | FaultKind::KillLeader
            | FaultKind::IsolateLeader
            | FaultKind::Halves
            | FaultKind::MajoritiesRing
            | FaultKind::Failover
            | FaultKind::DeafenFollower
            | FaultKind::ClockJump
            | FaultKind::ClockSkew => Scope::LockService,
        }
    }

    /// The duration used when a schedule gives none: a pause outlives the lease (2 x ttl), the
    /// other faults last long enough for an election or a failover to happen.
    pub fn default_duration(self, ttl: Duration) -> Duration {
        match self {
            FaultKind::PauseHolder | FaultKind::PauseWorker => ttl * 2,
            FaultKind::KillHolder | FaultKind::KillWorker => ttl,
            // The jump acts at its start (keys expire at once); the heal sets the clock back.
            FaultKind::ClockJump => ttl,
            _ => Duration::from_secs(10),
        }
    }

    /// Why this fault cannot run against a system with these capabilities, if it cannot.
    pub fn unsupported_because(self, caps: &Capabilities) -> Option<&'static str> {
        match self {
            FaultKind::PauseHolder
            | FaultKind::PauseWorker
            | FaultKind::KillHolder
            | FaultKind::KillWorker => None,
            _ if caps.in_process => Some(
                "it runs in this process, with no nodes, network, clocks or links to fault: only \
                 pause-holder, pause-worker, kill-holder and kill-worker apply",
            ),
            FaultKind::PauseLeader | FaultKind::KillLeader | FaultKind::IsolateLeader
                if !caps.leader =>
            {
                Some("it has no leader or master")
            }
            FaultKind::Halves | FaultKind::MajoritiesRing if !caps.quorum => {
                Some("its nodes do not form a quorum that a partition could split")
            }
            FaultKind::Failover if !caps.failover => {
                Some("it has no automatic failover (only redis-sentinel has)")
            }
            FaultKind::DeafenFollower if !(caps.leader && caps.quorum) => {
                Some("it has no leader whose followers replicate from it")
            }
            FaultKind::ClockJump | FaultKind::ClockSkew => caps.no_fake_clock,
            _ => None,
        }
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a fault hits, as far as a lock can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The lock service itself (its nodes, their links, its failover): while such a fault is
    /// active the lock may legitimately be unavailable.
    LockService,
    /// Lock clients (pausing, killing or isolating a worker): the service stays up, and a lock
    /// whose holder froze or died must become acquirable again.
    Workers,
    /// The protected resource: the lock is not involved.
    Resource,
}

/// The fault recorded when a node exited that no fault of the plan had stopped or killed
/// (`start-node-died`; `stop-node-died` only if someone starts it again): a fault nobody healed.
pub const NODE_DIED: &str = "node-died";

/// The fault recorded when a node's processes were frozen from outside the plan (`docker
/// pause`; `stop-node-frozen` at the thaw): a service stall nobody scheduled.
pub const NODE_FROZEN: &str = "node-frozen";

/// The scope of a fault as the history names it. An unplanned node death and any name this
/// build does not know count as faults of the lock service: judging liveness through them
/// would blame the lock for an outage it did not cause.
pub fn scope_of(name: &str) -> Scope {
    name.parse::<FaultKind>()
        .map_or(Scope::LockService, FaultKind::scope)
}

/// An unknown fault name; the message lists the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown fault {name:?}: expected one of {}", ALL_FAULTS.map(|f| f.name()).join(", "))]
pub struct UnknownFault {
    pub name: String,
}

impl FromStr for FaultKind {
    type Err = UnknownFault;
    fn from_str(s: &str) -> Result<Self, UnknownFault> {
        ALL_FAULTS
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownFault {
                name: s.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::Provider;

    #[test]
    fn names_round_trip() {
        for f in ALL_FAULTS {
            assert_eq!(f.name().parse::<FaultKind>().unwrap(), f);
            assert_eq!(serde_json::to_string(&f).unwrap(), format!("\"{f}\""));
        }
        let err = "pause-everything".parse::<FaultKind>().unwrap_err();
        assert!(err.to_string().contains("pause-holder"), "{err}");
    }

    #[test]
    fn failover_needs_sentinel_and_halves_a_quorum() {
        let etcd = Provider::Etcd.capabilities();
        assert!(FaultKind::Failover.unsupported_because(&etcd).is_some());
        assert!(FaultKind::Halves.unsupported_because(&etcd).is_none());
        let sentinel = Provider::RedisSentinel.capabilities();
        assert!(FaultKind::Failover.unsupported_because(&sentinel).is_none());
        let redlock = Provider::Redlock.capabilities();
        assert!(FaultKind::IsolateLeader
            .unsupported_because(&redlock)
            .is_some());
        assert!(FaultKind::IsolateWorker
            .unsupported_because(&redlock)
            .is_none());
        let memory = Provider::Memory.capabilities();
        assert!(FaultKind::KillWorker.unsupported_because(&memory).is_none());
        let why = FaultKind::IsolateWorker
            .unsupported_because(&memory)
            .unwrap();
        assert!(why.contains("pause-holder, pause-worker"), "{why}");
        let why = FaultKind::ClockJump.unsupported_because(&etcd).unwrap();
        assert!(why.contains("Go") && why.contains("libfaketime"), "{why}");
        assert!(FaultKind::ClockJump.unsupported_because(&redlock).is_none());
        assert!(FaultKind::DeafenFollower
            .unsupported_because(&redlock)
            .is_some());
    }

    #[test]
    fn only_faults_that_can_take_the_service_down_are_of_its_scope() {
        assert_eq!(scope_of("kill-holder"), Scope::Workers);
        assert_eq!(scope_of("pause-worker"), Scope::Workers);
        assert_eq!(scope_of("isolate-resource"), Scope::Resource);
        assert_eq!(scope_of("halves"), Scope::LockService);
        assert_eq!(scope_of(NODE_DIED), Scope::LockService);
        assert_eq!(scope_of(NODE_FROZEN), Scope::LockService);
        assert_eq!(scope_of("a-fault-from-a-newer-build"), Scope::LockService);
    }
}
