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
    /// SIGSTOP a worker whose acquire is in flight, after a delay drawn within its recent
    /// acquire latency: as often as timing allows, between the server's grant and the client's
    /// receipt of it.
    PauseAcquiring,
    /// SIGKILL a worker whose acquire is in flight (the same delay); restarted at the end.
    KillAcquiring,
    /// SIGSTOP a worker whose release is in flight.
    PauseReleasing,
    /// Cut a worker whose release is in flight off from the lock service (not the resource).
    IsolateReleasing,
    /// SIGSTOP a worker blocked in acquire while another worker holds the lock, for 2 x ttl:
    /// its place in the queue (a session, a waiting key) outlives it or not.
    PauseWaiter,
    /// Every node of the lock service frozen (SIGSTOP) for a drawn length between ttl / 4 and
    /// 3 ttl / 4: a lock whose holder keeps its lease alive correctly survives it.
    StallService,
    /// The leader / master alone frozen for the same drawn length.
    StallLeader,
    /// The service's replies to the holder (or to an acquiring worker) held back past the
    /// client's operation timeout by the link proxy, while its requests pass at once: the
    /// request lands, the client hears nothing in time.
    SlowReply,
    /// The wall clock of the holder's lock client (the adapter, or the worker running
    /// fencecheck's own recipe) jumps 5 x ttl, forward or backward as drawn (libfaketime;
    /// monotonic clocks untouched).
    ClientClockJump,
    /// The wall clock of the holder's lock client runs 3 x as fast, or at a third of the speed,
    /// as drawn, for the fault's length.
    ClientClockSkew,
}

/// Every fault, in the order `--help` lists them.
pub const ALL_FAULTS: [FaultKind; 32] = [
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
    FaultKind::PauseAcquiring,
    FaultKind::KillAcquiring,
    FaultKind::PauseReleasing,
    FaultKind::IsolateReleasing,
    FaultKind::PauseWaiter,
    FaultKind::StallService,
    FaultKind::StallLeader,
    FaultKind::SlowReply,
    FaultKind::ClientClockJump,
    FaultKind::ClientClockSkew,
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
            FaultKind::PauseAcquiring => "pause-acquiring",
            FaultKind::KillAcquiring => "kill-acquiring",
            FaultKind::PauseReleasing => "pause-releasing",
            FaultKind::IsolateReleasing => "isolate-releasing",
            FaultKind::PauseWaiter => "pause-waiter",
            FaultKind::StallService => "stall-service",
            FaultKind::StallLeader => "stall-leader",
            FaultKind::SlowReply => "slow-reply",
            FaultKind::ClientClockJump => "client-clock-jump",
            FaultKind::ClientClockSkew => "client-clock-skew",
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
                | FaultKind::IsolateReleasing
        )
    }

    /// Partitions that cut traffic in one direction only.
    pub fn is_one_way(self) -> bool {
        matches!(
            self,
            FaultKind::DeafenHolder | FaultKind::MuteHolder | FaultKind::DeafenFollower
        )
    }

    /// Faults on the lock service's wall clocks (libfaketime), which only reach servers that
    /// read the time through libc.
    pub fn is_clock(self) -> bool {
        matches!(self, FaultKind::ClockJump | FaultKind::ClockSkew)
    }

    /// Faults on a lock client's wall clock (libfaketime in the worker's container), which only
    /// reach clients that read the time through libc.
    pub fn is_client_clock(self) -> bool {
        matches!(
            self,
            FaultKind::ClientClockJump | FaultKind::ClientClockSkew
        )
    }

    /// Faults on the links through the run's link proxy (started only for them).
    pub fn is_link(self) -> bool {
        matches!(
            self,
            FaultKind::SlowNetwork | FaultKind::LossyNetwork | FaultKind::SlowReply
        )
    }

    /// Faults that strike a worker in the middle of one operation of the lock protocol (an
    /// acquire or a release in flight), found in the live history at fault time.
    pub fn is_in_flight(self) -> bool {
        matches!(
            self,
            FaultKind::PauseAcquiring
                | FaultKind::KillAcquiring
                | FaultKind::PauseReleasing
                | FaultKind::IsolateReleasing
                | FaultKind::PauseWaiter
        )
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
            | FaultKind::LossyNetwork
            | FaultKind::PauseAcquiring
            | FaultKind::KillAcquiring
            | FaultKind::PauseReleasing
            | FaultKind::IsolateReleasing
            | FaultKind::PauseWaiter
            | FaultKind::SlowReply
            | FaultKind::ClientClockJump
            | FaultKind::ClientClockSkew => Scope::Workers,
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
            | FaultKind::ClockSkew
            | FaultKind::StallService
            | FaultKind::StallLeader => Scope::LockService,
        }
    }

    /// The duration used when a schedule gives none: a pause outlives the lease (2 x ttl), the
    /// other faults last long enough for an election or a failover to happen. A stall's length
    /// is drawn ([`FaultKind::length_range`]); this is the middle of its range.
    pub fn default_duration(self, ttl: Duration) -> Duration {
        match self {
            FaultKind::PauseHolder
            | FaultKind::PauseWorker
            | FaultKind::PauseAcquiring
            | FaultKind::PauseReleasing
            | FaultKind::PauseWaiter
            | FaultKind::IsolateReleasing
            | FaultKind::SlowReply => ttl * 2,
            FaultKind::KillHolder | FaultKind::KillWorker | FaultKind::KillAcquiring => ttl,
            // The jump acts at its start (keys expire at once); the heal sets the clock back.
            FaultKind::ClockJump | FaultKind::ClientClockJump => ttl,
            FaultKind::StallService | FaultKind::StallLeader => ttl / 2,
            _ => Duration::from_secs(10),
        }
    }

    /// The range a length is drawn from when a schedule gives none: a stall of the service
    /// is shorter than the lease, between ttl / 4 and 3 ttl / 4, so that a lock which keeps
    /// its lease alive correctly survives it while one that lets it lapse does not. Every other
    /// fault has its one default length.
    pub fn length_range(self, ttl: Duration) -> (Duration, Duration) {
        match self {
            FaultKind::StallService | FaultKind::StallLeader => (ttl / 4, ttl * 3 / 4),
            other => {
                let d = other.default_duration(ttl);
                (d, d)
            }
        }
    }

    /// A length drawn from [`FaultKind::length_range`] by `draw` (a seeded random number), to
    /// the millisecond.
    pub fn drawn_length(self, ttl: Duration, draw: u64) -> Duration {
        let (lo, hi) = self.length_range(ttl);
        let span = (hi.saturating_sub(lo)).as_millis() as u64;
        if span == 0 {
            return lo;
        }
        lo + Duration::from_millis(draw % (span + 1))
    }

    /// Why this fault cannot run against a system with these capabilities, if it cannot.
    pub fn unsupported_because(self, caps: &Capabilities) -> Option<&'static str> {
        match self {
            FaultKind::PauseHolder
            | FaultKind::PauseWorker
            | FaultKind::KillHolder
            | FaultKind::KillWorker
            | FaultKind::PauseAcquiring
            | FaultKind::KillAcquiring
            | FaultKind::PauseReleasing
            | FaultKind::PauseWaiter => None,
            _ if caps.in_process => Some(
                "it runs in this process, with no nodes, network, clocks or links to fault: only \
                 the worker faults pause-holder, pause-worker, kill-holder, kill-worker, \
                 pause-acquiring, kill-acquiring, pause-releasing and pause-waiter apply",
            ),
            FaultKind::PauseLeader
            | FaultKind::KillLeader
            | FaultKind::IsolateLeader
            | FaultKind::StallLeader
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
            // Sentinel hands clients the master's own address, past the link proxy: only the
            // sentinels' replies would be held back, not the lock's.
            FaultKind::SlowReply if caps.provider == crate::provider::Provider::RedisSentinel => {
                Some(
                    "its clients reach the master at the address the sentinels give them, past \
                     the link proxy that would hold the replies back",
                )
            }
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

    /// The faults aimed at the protocol's weak moments parse by their names, hit
    /// workers (they never excuse a stuck lock) except the stalls of the service, and a stall's
    /// drawn length is shorter than the lease.
    #[test]
    fn the_weak_moment_faults_parse_and_only_the_stalls_are_of_the_service() {
        let workers = [
            "pause-acquiring",
            "kill-acquiring",
            "pause-releasing",
            "isolate-releasing",
            "pause-waiter",
            "slow-reply",
            "client-clock-jump",
            "client-clock-skew",
        ];
        for name in workers {
            let f: FaultKind = name.parse().unwrap();
            assert_eq!(f.name(), name);
            assert_eq!(f.scope(), Scope::Workers, "{name}");
            assert_eq!(scope_of(name), Scope::Workers, "{name}");
        }
        for name in ["stall-service", "stall-leader"] {
            assert_eq!(scope_of(name), Scope::LockService, "{name}");
        }
        assert!(FaultKind::IsolateReleasing.is_partition());
        assert!(FaultKind::SlowReply.is_link());
        assert!(
            FaultKind::ClientClockJump.is_client_clock() && !FaultKind::ClientClockJump.is_clock()
        );
        assert!(FaultKind::PauseWaiter.is_in_flight() && !FaultKind::PauseHolder.is_in_flight());
    }

    #[test]
    fn a_stall_s_length_is_drawn_between_a_quarter_and_three_quarters_of_the_lease() {
        let ttl = Duration::from_secs(2);
        for fault in [FaultKind::StallService, FaultKind::StallLeader] {
            assert_eq!(
                fault.length_range(ttl),
                (Duration::from_millis(500), Duration::from_millis(1500))
            );
            let drawn: std::collections::BTreeSet<Duration> = (0..500u64)
                .map(|d| fault.drawn_length(ttl, d * 7919))
                .collect();
            assert!(drawn.len() > 100, "drawn, not fixed: {}", drawn.len());
            assert!(drawn.iter().all(|d| (ttl / 4..=ttl * 3 / 4).contains(d)));
        }
        // Every other fault keeps its one default length, drawn or not.
        assert_eq!(
            FaultKind::PauseWaiter.drawn_length(ttl, 12345),
            Duration::from_secs(4),
            "a waiter is frozen for 2 x ttl"
        );
        assert_eq!(FaultKind::KillAcquiring.drawn_length(ttl, 9), ttl);
    }

    #[test]
    fn the_weak_moment_faults_are_refused_where_they_cannot_act() {
        let memory = Provider::Memory.capabilities();
        for ok in [
            "pause-acquiring",
            "kill-acquiring",
            "pause-releasing",
            "pause-waiter",
        ] {
            let f: FaultKind = ok.parse().unwrap();
            assert!(f.unsupported_because(&memory).is_none(), "{ok} in process");
        }
        for no in [
            "stall-service",
            "slow-reply",
            "client-clock-jump",
            "isolate-releasing",
        ] {
            let f: FaultKind = no.parse().unwrap();
            assert!(f.unsupported_because(&memory).is_some(), "{no} in process");
        }
        let redlock = Provider::Redlock.capabilities();
        let why = FaultKind::StallLeader
            .unsupported_because(&redlock)
            .unwrap();
        assert!(why.contains("no leader"), "{why}");
        assert!(FaultKind::StallService
            .unsupported_because(&redlock)
            .is_none());
        let sentinel = Provider::RedisSentinel.capabilities();
        let why = FaultKind::SlowReply.unsupported_because(&sentinel).unwrap();
        assert!(why.contains("link proxy"), "{why}");
        let etcd = Provider::Etcd.capabilities();
        for f in ["stall-leader", "slow-reply", "client-clock-skew"] {
            let f: FaultKind = f.parse().unwrap();
            assert!(f.unsupported_because(&etcd).is_none(), "{f} on etcd");
        }
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
