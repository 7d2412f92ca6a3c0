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
    /// The holder's work hangs (the driver sends it nothing: its next write and release wait)
    /// while its process and its lock client, renewals included, run on: the zombie owner.
    HangWork,
    /// The holder's container starved of CPU (its quota cut to a few percent) for 2 x ttl, then
    /// restored: it runs slowly rather than not at all, so its renewals come late, not never.
    StarveWorker,
    /// A lock-service node starved of CPU the same way.
    StarveNode,
    /// A worker whose acquire is in flight: the request passes, and its connection to the lock
    /// service is closed when the next reply comes back, once; the request landed, its answer
    /// never arrives (the moment a retry turns into a phantom holder).
    CutAcquireReply,
    /// The same for a worker whose release is in flight (a retried release may free the next
    /// holder's lock).
    CutReleaseReply,
    /// The same for the holder's next reply (a renewal's or a keep-alive's answer, or its
    /// release's).
    CutRenewReply,
    /// SIGKILL a random lock-service node (a Redis or ZooKeeper server) and empty its data
    /// directory; at the end it restarts with nothing, whatever it had persisted (a lost disk).
    RestartEmptyNode,
    /// The same for the master.
    RestartEmptyLeader,
}

/// Every fault, in the order `--help` lists them.
pub const ALL_FAULTS: [FaultKind; 40] = [
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
    FaultKind::HangWork,
    FaultKind::StarveWorker,
    FaultKind::StarveNode,
    FaultKind::CutAcquireReply,
    FaultKind::CutReleaseReply,
    FaultKind::CutRenewReply,
    FaultKind::RestartEmptyNode,
    FaultKind::RestartEmptyLeader,
];

/// How a fault acts on its targets: the mechanism the nemesis applies at the start and undoes
/// at the heal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mechanism {
    /// SIGSTOP every process of the target; SIGCONT at the heal.
    Freeze,
    /// SIGKILL; the target is restarted at the heal (a node with its data, a worker fresh).
    Kill,
    /// SIGKILL, and the node's data directory emptied: it restarts at the heal with nothing.
    KillEmpty,
    /// iptables rules both ways (a grudge); partitions may not overlap, their heal is a flush.
    Cut,
    /// One way: the target hears nothing from the other side, while what it sends arrives.
    Deafen,
    /// One way: the other side hears nothing from the target, while the target hears it.
    Mute,
    /// libfaketime on lock-service nodes, which only reaches servers that read the time through
    /// libc.
    ServerClock(ClockMove),
    /// libfaketime in the lock client's container, which only reaches clients that read the time
    /// through libc; the direction is drawn.
    ClientClock(ClockMove),
    /// The run's link proxy (started only for these) shapes the target's links.
    Link(Shaping),
    /// The driver sends the target (a worker) no operation while its process runs on; it
    /// resumes at the heal.
    Hang,
    /// The target's container gets a few percent of one CPU (a cgroup quota); its quota is
    /// lifted at the heal.
    Starve,
}

/// How a clock fault moves a wall clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClockMove {
    /// Set off the real time by a fixed amount.
    Jump,
    /// Running faster (or slower) than real time.
    Skew,
}

/// How the link proxy shapes a target's links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shaping {
    /// Every chunk either way delayed.
    Slow,
    /// Connections broken at random.
    Lossy,
    /// Replies held back past the client's timeout, requests passed at once.
    HoldReplies,
    /// The connection closed when the next reply comes back, once; requests pass.
    CutReply,
}

impl Mechanism {
    /// The mechanism of a fault as the history names it; `None` for a name this build does not
    /// know.
    pub fn of(name: &str) -> Option<Mechanism> {
        name.parse::<FaultKind>().ok().map(FaultKind::mechanism)
    }
}

/// How a fault's targets are chosen at its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Aim {
    /// The worker that holds the lock (waited for when nobody does).
    Holder,
    /// The holder, else a worker whose acquire is in flight.
    HolderElseAcquiring,
    /// A worker drawn with the step's pick.
    AnyWorker,
    /// A worker whose acquire is in flight, struck after a delay drawn within its recent
    /// acquire latency.
    Acquiring,
    /// A worker whose release is in flight.
    Releasing,
    /// A worker blocked in acquire while another holds the lock.
    Waiter,
    /// A lock-service node drawn with the step's pick.
    AnyNode,
    /// The leader / master, asked of the system.
    Leader,
    /// A follower drawn with the step's pick, cut from the leader.
    Follower,
    /// Every lock-service node.
    EveryNode,
    /// A drawn majority of the nodes, while a worker holds the lock.
    MajorityWhileHeld,
    /// The protected resource's container.
    Resource,
    /// The nodes split into a minority and a majority.
    Halves,
    /// Every node in a ring of overlapping majorities.
    Ring,
}

impl Aim {
    /// Whether the fault strikes a worker in the middle of one operation of the lock protocol,
    /// found in the live history at fault time.
    pub fn is_in_flight(self) -> bool {
        matches!(self, Aim::Acquiring | Aim::Releasing | Aim::Waiter)
    }

    /// Whether the fault waits for a holder or a worker in flight, and so may start late.
    pub fn waits(self) -> bool {
        self.is_in_flight()
            || matches!(
                self,
                Aim::Holder | Aim::HolderElseAcquiring | Aim::MajorityWhileHeld
            )
    }

    /// What a fault with this aim hits, as far as a lock can tell.
    pub fn scope(self) -> Scope {
        match self {
            Aim::Holder
            | Aim::HolderElseAcquiring
            | Aim::AnyWorker
            | Aim::Acquiring
            | Aim::Releasing
            | Aim::Waiter => Scope::Workers,
            Aim::Resource => Scope::Resource,
            Aim::AnyNode
            | Aim::Leader
            | Aim::Follower
            | Aim::EveryNode
            | Aim::MajorityWhileHeld
            | Aim::Halves
            | Aim::Ring => Scope::LockService,
        }
    }
}

/// What the report colours and labels a fault by: plain kin share a family, and a fault whose
/// point is the moment it strikes or the length it is drawn reads apart from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// A process frozen (a worker or a node).
    Pause,
    /// A process killed.
    Kill,
    /// Traffic cut, either way or one way.
    Partition,
    /// A worker struck in the middle of an acquire or a release.
    InFlight,
    /// The service (or its leader) frozen for less than the lease.
    Stall,
    /// Replies held back past the client's timeout, or cut off.
    Reply,
    /// A lock-service node's wall clock moved.
    ServerClock,
    /// A lock client's wall clock moved.
    ClientClock,
    /// Links made slow or lossy.
    Link,
    /// A worker's work hung while its process runs.
    Hang,
    /// A process starved of CPU: slow, not stopped.
    Starve,
    /// A fault this build does not know by name.
    Other,
}

impl Family {
    /// The family of a fault as the history names it, unplanned faults of the nodes included;
    /// [`Family::Other`] for a name this build does not know.
    pub fn of(name: &str) -> Family {
        match name.parse::<FaultKind>() {
            Ok(f) => f.family(),
            Err(_) if name == NODE_FROZEN => Family::Pause,
            Err(_) if name == NODE_DIED => Family::Kill,
            Err(_) => Family::Other,
        }
    }

    /// The words the report's legend uses for the family.
    pub fn label(self) -> &'static str {
        match self {
            Family::Pause => "pause",
            Family::Kill => "kill",
            Family::Partition => "partition",
            Family::InFlight => "struck in flight",
            Family::Stall => "service stall",
            Family::Reply => "replies held back or cut",
            Family::ServerClock => "server clock",
            Family::ClientClock => "client clock",
            Family::Link => "slow or lossy link",
            Family::Hang => "work hung",
            Family::Starve => "CPU starved",
            Family::Other => "other fault",
        }
    }
}

/// What a system must offer for a fault to act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Needs {
    /// Worker processes only: every system has them, the in-process one too.
    Workers,
    /// Nodes, a network or links of a system with servers.
    Servers,
    /// A leader or master.
    Leader,
    /// Nodes that form a quorum a partition could split.
    Quorum,
    /// A leader whose followers replicate from it.
    Replication,
    /// Automatic failover.
    Failover,
    /// Servers that can restart without their data, one of which a drawn node is (no
    /// sentinels among the nodes).
    EmptyNode,
    /// Such a server that leads.
    EmptyLeader,
    /// Servers whose wall clocks libfaketime reaches.
    FakeServerClock,
    /// Clients that reach the lock through the link proxy.
    RepliesThroughProxy,
}

/// How `fencecheck replay` and `reproduce` express a fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplayForm {
    /// A step of the worker it hit (`pause`, `kill`, `isolate`, `slow-reply` ...).
    Worker,
    /// A `nemesis:` step on the nodes it hit (`pause`, `stall-service` ...).
    Service,
    /// A step that sends the operation and strikes it (`pause-acquiring after 5ms`); reproduce
    /// names it for the user to write in place of the operation's step.
    InFlight,
    /// No step expresses it.
    None,
}

/// A fault's length when a schedule gives none, drawn between two bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Length {
    /// Between `lo` and `hi` quarters of the ttl (one length when they are equal).
    Ttl { lo: u32, hi: u32 },
    /// A fixed number of seconds: long enough for an election or a failover to happen.
    Secs(u64),
    /// Quarters of the ttl and a fixed number of seconds more.
    TtlPlus { quarters: u32, secs: u64 },
}

/// One row of the table: every fact of a fault, so a new fault is one new row and its action.
struct Row {
    name: &'static str,
    mechanism: Mechanism,
    aim: Aim,
    family: Family,
    length: Length,
    needs: Needs,
    replay: ReplayForm,
}

/// A pause outlives the lease.
const TWO_TTL: Length = Length::Ttl { lo: 8, hi: 8 };
/// A killed worker or node is restarted after one ttl; a clock jump acts at its start and the
/// heal sets the clock back.
const ONE_TTL: Length = Length::Ttl { lo: 4, hi: 4 };
/// A stall of the service is shorter than the lease, between ttl / 4 and 3 ttl / 4, so that a
/// lock which keeps its lease alive correctly survives it while one that lets it lapse does not.
const STALL: Length = Length::Ttl { lo: 1, hi: 3 };
const TEN_SECS: Length = Length::Secs(10);
/// A hang outlasts the lease and the default recovery slack after it by a ttl at least: a lock
/// renewed by a thread that does not watch the work is then held with nobody working under it
/// for longer than stuck-lock's patience.
const HANG: Length = Length::TtlPlus {
    quarters: 8,
    secs: 6,
};

impl FaultKind {
    #[rustfmt::skip]
    fn row(self) -> Row {
        use Aim as A;
        use Family as Fam;
        use Mechanism as M;
        use Needs as N;
        use ReplayForm as R;
        let row = |name, mechanism, aim, family, length, needs, replay| Row {
            name,
            mechanism,
            aim,
            family,
            length,
            needs,
            replay,
        };
        match self {
            FaultKind::PauseHolder => row("pause-holder", M::Freeze, A::Holder, Fam::Pause, TWO_TTL, N::Workers, R::Worker),
            FaultKind::PauseWorker => row("pause-worker", M::Freeze, A::AnyWorker, Fam::Pause, TWO_TTL, N::Workers, R::Worker),
            FaultKind::KillHolder => row("kill-holder", M::Kill, A::Holder, Fam::Kill, ONE_TTL, N::Workers, R::Worker),
            FaultKind::KillWorker => row("kill-worker", M::Kill, A::AnyWorker, Fam::Kill, ONE_TTL, N::Workers, R::Worker),
            FaultKind::PauseNode => row("pause-node", M::Freeze, A::AnyNode, Fam::Pause, TEN_SECS, N::Servers, R::Service),
            FaultKind::PauseLeader => row("pause-leader", M::Freeze, A::Leader, Fam::Pause, TEN_SECS, N::Leader, R::Service),
            FaultKind::KillNode => row("kill-node", M::Kill, A::AnyNode, Fam::Kill, TEN_SECS, N::Servers, R::None),
            FaultKind::KillLeader => row("kill-leader", M::Kill, A::Leader, Fam::Kill, TEN_SECS, N::Leader, R::None),
            FaultKind::IsolateLeader => row("isolate-leader", M::Cut, A::Leader, Fam::Partition, TEN_SECS, N::Leader, R::None),
            FaultKind::Halves => row("halves", M::Cut, A::Halves, Fam::Partition, TEN_SECS, N::Quorum, R::None),
            FaultKind::MajoritiesRing => row("majorities-ring", M::Cut, A::Ring, Fam::Partition, TEN_SECS, N::Quorum, R::None),
            FaultKind::IsolateWorker => row("isolate-worker", M::Cut, A::AnyWorker, Fam::Partition, TEN_SECS, N::Servers, R::Worker),
            FaultKind::IsolateHolder => row("isolate-holder", M::Cut, A::Holder, Fam::Partition, TEN_SECS, N::Servers, R::Worker),
            FaultKind::IsolateResource => row("isolate-resource", M::Cut, A::Resource, Fam::Partition, TEN_SECS, N::Servers, R::None),
            FaultKind::Failover => row("failover", M::Freeze, A::Leader, Fam::Pause, TEN_SECS, N::Failover, R::None),
            FaultKind::DeafenHolder => row("deafen-holder", M::Deafen, A::Holder, Fam::Partition, TEN_SECS, N::Servers, R::None),
            FaultKind::MuteHolder => row("mute-holder", M::Mute, A::Holder, Fam::Partition, TEN_SECS, N::Servers, R::None),
            FaultKind::DeafenFollower => row("deafen-follower", M::Deafen, A::Follower, Fam::Partition, TEN_SECS, N::Replication, R::None),
            FaultKind::ClockJump => row("clock-jump", M::ServerClock(ClockMove::Jump), A::MajorityWhileHeld, Fam::ServerClock, ONE_TTL, N::FakeServerClock, R::None),
            FaultKind::ClockSkew => row("clock-skew", M::ServerClock(ClockMove::Skew), A::AnyNode, Fam::ServerClock, TEN_SECS, N::FakeServerClock, R::None),
            FaultKind::SlowNetwork => row("slow-network", M::Link(Shaping::Slow), A::Holder, Fam::Link, TEN_SECS, N::Servers, R::None),
            FaultKind::LossyNetwork => row("lossy-network", M::Link(Shaping::Lossy), A::Holder, Fam::Link, TEN_SECS, N::Servers, R::None),
            FaultKind::PauseAcquiring => row("pause-acquiring", M::Freeze, A::Acquiring, Fam::InFlight, TWO_TTL, N::Workers, R::InFlight),
            FaultKind::KillAcquiring => row("kill-acquiring", M::Kill, A::Acquiring, Fam::InFlight, ONE_TTL, N::Workers, R::InFlight),
            FaultKind::PauseReleasing => row("pause-releasing", M::Freeze, A::Releasing, Fam::InFlight, TWO_TTL, N::Workers, R::Worker),
            FaultKind::IsolateReleasing => row("isolate-releasing", M::Cut, A::Releasing, Fam::InFlight, TWO_TTL, N::Servers, R::Worker),
            FaultKind::PauseWaiter => row("pause-waiter", M::Freeze, A::Waiter, Fam::InFlight, TWO_TTL, N::Workers, R::InFlight),
            FaultKind::StallService => row("stall-service", M::Freeze, A::EveryNode, Fam::Stall, STALL, N::Servers, R::Service),
            FaultKind::StallLeader => row("stall-leader", M::Freeze, A::Leader, Fam::Stall, STALL, N::Leader, R::Service),
            FaultKind::SlowReply => row("slow-reply", M::Link(Shaping::HoldReplies), A::HolderElseAcquiring, Fam::Reply, TWO_TTL, N::RepliesThroughProxy, R::Worker),
            FaultKind::ClientClockJump => row("client-clock-jump", M::ClientClock(ClockMove::Jump), A::Holder, Fam::ClientClock, ONE_TTL, N::Servers, R::Worker),
            FaultKind::ClientClockSkew => row("client-clock-skew", M::ClientClock(ClockMove::Skew), A::Holder, Fam::ClientClock, TEN_SECS, N::Servers, R::Worker),
            FaultKind::HangWork => row("hang-work", M::Hang, A::Holder, Fam::Hang, HANG, N::Workers, R::None),
            FaultKind::StarveWorker => row("starve-worker", M::Starve, A::Holder, Fam::Starve, TWO_TTL, N::Servers, R::Worker),
            FaultKind::CutAcquireReply => row("cut-acquire-reply", M::Link(Shaping::CutReply), A::Acquiring, Fam::Reply, TWO_TTL, N::RepliesThroughProxy, R::InFlight),
            FaultKind::CutReleaseReply => row("cut-release-reply", M::Link(Shaping::CutReply), A::Releasing, Fam::Reply, TWO_TTL, N::RepliesThroughProxy, R::Worker),
            FaultKind::CutRenewReply => row("cut-renew-reply", M::Link(Shaping::CutReply), A::Holder, Fam::Reply, TWO_TTL, N::RepliesThroughProxy, R::Worker),
            FaultKind::RestartEmptyNode => row("restart-empty-node", M::KillEmpty, A::AnyNode, Fam::Kill, TEN_SECS, N::EmptyNode, R::Service),
            FaultKind::RestartEmptyLeader => row("restart-empty-leader", M::KillEmpty, A::Leader, Fam::Kill, TEN_SECS, N::EmptyLeader, R::Service),
            FaultKind::StarveNode => row("starve-node", M::Starve, A::AnyNode, Fam::Starve, TWO_TTL, N::Servers, R::Service),
        }
    }

    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// How the fault acts on its targets.
    pub fn mechanism(self) -> Mechanism {
        self.row().mechanism
    }

    /// How its targets are chosen.
    pub fn aim(self) -> Aim {
        self.row().aim
    }

    /// What the report colours and labels it by.
    pub fn family(self) -> Family {
        self.row().family
    }

    /// How replay and reproduce express it.
    pub fn replay_form(self) -> ReplayForm {
        self.row().replay
    }

    /// Partitions install iptables rules; two may not be active at once (their heal is a flush).
    pub fn is_partition(self) -> bool {
        matches!(
            self.mechanism(),
            Mechanism::Cut | Mechanism::Deafen | Mechanism::Mute
        )
    }

    /// Faults on the lock service's wall clocks.
    pub fn is_clock(self) -> bool {
        matches!(self.mechanism(), Mechanism::ServerClock(_))
    }

    /// Faults on a lock client's wall clock.
    pub fn is_client_clock(self) -> bool {
        matches!(self.mechanism(), Mechanism::ClientClock(_))
    }

    /// Faults on the links through the run's link proxy (started only for them).
    pub fn is_link(self) -> bool {
        matches!(self.mechanism(), Mechanism::Link(_))
    }

    /// Faults that strike a worker in the middle of one operation of the lock protocol.
    pub fn is_in_flight(self) -> bool {
        self.aim().is_in_flight()
    }

    /// What the fault hits. `isolate-worker` counts as a fault on workers; a reader that knows
    /// its target did not hold the lock may treat it as cutting a trying client off the service.
    pub fn scope(self) -> Scope {
        self.aim().scope()
    }

    /// Why a run with this fault cannot share its lock service's cluster with other runs at
    /// once, if it cannot: the fault must touch only the run's own containers and links. A
    /// fault on the service reaches every run on it. A cut of a worker and a deafened worker
    /// hold their rules in the worker's own namespace; a muted worker's rules are the nodes'
    /// (they drop what it sends), and its heal would flush there every run's.
    pub fn cannot_share_a_cluster(self) -> Option<&'static str> {
        match (self.scope(), self.mechanism()) {
            (Scope::LockService, _) => Some("it acts on the lock service's nodes"),
            (Scope::Resource, _) => {
                Some("it cuts the resource off from every node, in the nodes' network namespaces")
            }
            (Scope::Workers, Mechanism::Mute) => Some(
                "its iptables rules go into the nodes' network namespaces, where its heal \
                 flushes every run's",
            ),
            // The link proxy is the run's own: it shapes only the run's workers' links.
            (Scope::Workers, _) => None,
        }
    }

    /// The duration used when a schedule gives none: the middle of [`FaultKind::length_range`].
    pub fn default_duration(self, ttl: Duration) -> Duration {
        let (lo, hi) = self.length_range(ttl);
        (lo + hi) / 2
    }

    /// The range a length is drawn from when a schedule gives none. Only a stall's is a range
    /// (see [`STALL`]); every other fault has its one default length.
    pub fn length_range(self, ttl: Duration) -> (Duration, Duration) {
        match self.row().length {
            Length::Ttl { lo, hi } => (ttl * lo / 4, ttl * hi / 4),
            Length::Secs(s) => (Duration::from_secs(s), Duration::from_secs(s)),
            Length::TtlPlus { quarters, secs } => {
                let d = ttl * quarters / 4 + Duration::from_secs(secs);
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
    pub fn unsupported_because(self, caps: &Capabilities) -> Option<String> {
        let needs = self.row().needs;
        if caps.in_process && needs != Needs::Workers {
            let apply: Vec<&str> = ALL_FAULTS
                .into_iter()
                .filter(|f| f.row().needs == Needs::Workers)
                .map(FaultKind::name)
                .collect();
            return Some(format!(
                "it runs in this process, with no nodes, network, clocks or links to fault: only \
                 the worker faults {} apply",
                apply.join(", ")
            ));
        }
        let why = match needs {
            Needs::Workers | Needs::Servers => None,
            Needs::Leader if !caps.leader => Some("it has no leader or master"),
            Needs::Quorum if !caps.quorum => {
                Some("its nodes do not form a quorum that a partition could split")
            }
            Needs::Replication if !(caps.leader && caps.quorum) => {
                Some("it has no leader whose followers replicate from it")
            }
            Needs::Failover if !caps.failover => {
                Some("it has no automatic failover (only redis-sentinel has)")
            }
            Needs::EmptyNode | Needs::EmptyLeader if caps.no_empty_restart.is_some() => {
                caps.no_empty_restart
            }
            Needs::EmptyNode if caps.failover => Some(
                "its nodes include the sentinels, which keep no data: restart-empty-leader \
                 empties the master",
            ),
            Needs::EmptyLeader if !caps.leader => Some("it has no leader or master"),
            Needs::FakeServerClock => caps.no_fake_clock,
            Needs::RepliesThroughProxy => caps.replies_past_proxy,
            Needs::Leader
            | Needs::Quorum
            | Needs::Replication
            | Needs::Failover
            | Needs::EmptyNode
            | Needs::EmptyLeader => None,
        };
        why.map(str::to_string)
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

/// How a cut's stop line begins its error when no reply came on the struck links while the cut
/// was armed: it struck nothing, and the run counts it as a fault that did not land.
pub const CUT_UNSPENT: &str = "cut unspent: no reply came on the struck links while it was armed";

/// How a holder freeze's stop line begins its error when the worker it froze had let go of the
/// lock before the freeze reached it (its release's reply reached the history just after) and
/// the fault was aimed again: that start is no planned start of its own, landed or not.
pub const AIMED_AGAIN: &str = "aimed again: the worker it froze had let go of the lock first";

/// How a holder freeze's stop line begins its error when the worker it froze had let go first
/// and the fault's time to find a holder had run out: it struck nothing, and did not land.
pub const HOLDER_MISSED: &str = "missed: the worker it froze had let go of the lock first";

/// The fault recorded when a node exited that no fault of the plan had stopped or killed
/// (`start-node-died`; `stop-node-died` only if someone starts it again): a fault nobody healed.
pub const NODE_DIED: &str = "node-died";

/// The fault recorded when a node's processes were frozen from outside the plan (`docker
/// pause`; `stop-node-frozen` at the thaw): a service stall nobody scheduled.
pub const NODE_FROZEN: &str = "node-frozen";

/// The scope of a fault as the history records it: by its name, and for a name this build does
/// not know (a history converted from another tool) by its recorded targets: a fault whose
/// every target is a worker (`is_worker`) hits those workers. Any other unknown fault, an
/// unplanned node death or freeze included, counts as a fault of the lock service: judging
/// liveness through it would blame the lock for an outage it did not cause.
pub fn scope_of<T: AsRef<str>>(
    name: &str,
    targets: &[T],
    is_worker: impl Fn(&str) -> bool,
) -> Scope {
    match name.parse::<FaultKind>() {
        Ok(f) => f.scope(),
        Err(_) if !targets.is_empty() && targets.iter().all(|t| is_worker(t.as_ref())) => {
            Scope::Workers
        }
        Err(_) => Scope::LockService,
    }
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

    fn by_name(name: &str) -> Scope {
        scope_of(name, &[] as &[&str], |_| true)
    }

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

    /// A fault shares a cluster only when it touches nothing but its own run's containers and
    /// links, and is not a fault through the link proxy: the hunt's pause and isolation do; a
    /// stall of the service, a muted worker and the lossy and slow-reply links do not.
    #[test]
    fn only_faults_on_a_runs_own_workers_and_links_share_a_cluster() {
        for name in [
            "pause-holder",
            "kill-acquiring",
            "hang-work",
            "isolate-holder",
            "deafen-holder",
            "lossy-network",
            "slow-reply",
        ] {
            let f: FaultKind = name.parse().unwrap();
            assert_eq!(f.cannot_share_a_cluster(), None, "{name}");
        }
        for name in [
            "stall-service",
            "mute-holder",
            "isolate-resource",
            "clock-skew",
        ] {
            let f: FaultKind = name.parse().unwrap();
            assert!(f.cannot_share_a_cluster().is_some(), "{name}");
        }
        for f in ALL_FAULTS {
            let shares = f.scope() == Scope::Workers && f.mechanism() != Mechanism::Mute;
            assert_eq!(f.cannot_share_a_cluster().is_none(), shares, "{f}");
        }
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
            assert_eq!(by_name(name), Scope::Workers, "{name}");
        }
        for name in ["stall-service", "stall-leader"] {
            assert_eq!(by_name(name), Scope::LockService, "{name}");
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
        assert_eq!(by_name("kill-holder"), Scope::Workers);
        assert_eq!(by_name("pause-worker"), Scope::Workers);
        assert_eq!(by_name("isolate-resource"), Scope::Resource);
        assert_eq!(by_name("halves"), Scope::LockService);
        assert_eq!(by_name(NODE_DIED), Scope::LockService);
        assert_eq!(by_name(NODE_FROZEN), Scope::LockService);
        assert_eq!(by_name("a-fault-from-a-newer-build"), Scope::LockService);
    }

    /// A fault from another tool is judged by its targets: on workers only, it hits workers;
    /// with a node among its targets, or none, it is of the service.
    #[test]
    fn a_server_restarts_without_its_data_only_where_it_can_rejoin() {
        let refused = |f: FaultKind, p: Provider| f.unsupported_because(&p.capabilities());
        for p in [Provider::Redis, Provider::Redlock, Provider::Zookeeper] {
            assert_eq!(refused(FaultKind::RestartEmptyNode, p), None, "{p}");
        }
        for p in [
            Provider::Redis,
            Provider::RedisSentinel,
            Provider::Zookeeper,
        ] {
            assert_eq!(refused(FaultKind::RestartEmptyLeader, p), None, "{p}");
        }
        let etcd = refused(FaultKind::RestartEmptyNode, Provider::Etcd).unwrap_or_default();
        assert!(etcd.contains("member id"), "{etcd}");
        let sentinel =
            refused(FaultKind::RestartEmptyNode, Provider::RedisSentinel).unwrap_or_default();
        assert!(sentinel.contains("restart-empty-leader"), "{sentinel}");
        assert!(refused(FaultKind::RestartEmptyLeader, Provider::Redlock).is_some());
        assert!(refused(FaultKind::RestartEmptyNode, Provider::Postgres).is_some());
    }

    #[test]
    fn an_unknown_fault_is_judged_by_its_recorded_targets() {
        let worker = |t: &str| t.starts_with("worker-");
        assert_eq!(scope_of("gc-storm", &["worker-a"], worker), Scope::Workers);
        assert_eq!(
            scope_of("gc-storm", &["worker-a", "worker-b"], worker),
            Scope::Workers
        );
        assert_eq!(
            scope_of("gc-storm", &["worker-a", "etcd-1"], worker),
            Scope::LockService
        );
        assert_eq!(
            scope_of("gc-storm", &[] as &[&str], worker),
            Scope::LockService
        );
        // A known name is judged by its row, whatever its targets say.
        assert_eq!(
            scope_of("pause-node", &["worker-a"], worker),
            Scope::LockService
        );
    }

    /// Every fault's facts come from its row: the in-process refusal lists exactly the faults
    /// that need only workers, and every fault has a family of its own kind (none is "other").
    #[test]
    fn the_table_answers_for_every_fault() {
        let memory = Provider::Memory.capabilities();
        let why = FaultKind::Halves.unsupported_because(&memory).unwrap();
        for f in ALL_FAULTS {
            let listed = why.contains(&format!(" {},", f.name()))
                || why.contains(&format!(" {} apply", f.name()));
            assert_eq!(
                listed,
                f.unsupported_because(&memory).is_none(),
                "{f}: {why}"
            );
            assert_ne!(f.family(), Family::Other, "{f}");
            assert_eq!(Family::of(f.name()), f.family());
            let (lo, hi) = f.length_range(Duration::from_secs(2));
            assert!(lo <= hi && lo > Duration::ZERO, "{f}");
        }
        assert_eq!(Family::of(NODE_FROZEN), Family::Pause);
        assert_eq!(Family::of(NODE_DIED), Family::Kill);
        assert_eq!(Family::of("partition"), Family::Other);
    }
}
