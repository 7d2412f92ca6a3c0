//! The two seams between the nemesis and the world. [`NodeControl`] is how a fault is applied
//! (signals, restarts, iptables); [`Topology`] is what the nemesis must know at fault time (who
//! holds the lock, who leads). The harness implements both over Docker; [`crate::fake`] has
//! in-memory versions. The nemesis only ever speaks in names (`worker-3`, `etcd-1`).

use crate::clock::{ClockSetting, LinkShaping};
use crate::grudge::Grudge;
use std::future::Future;
use std::time::Duration;

/// A signal sent to every process of a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Signal {
    /// SIGSTOP: freeze (a GC pause, keep-alive threads included).
    Stop,
    /// SIGCONT: thaw.
    Cont,
    /// SIGKILL: die without cleanup.
    Kill,
}

/// A control action that did not happen; names the target and the action.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{action} {target}: {message}")]
pub struct ControlError {
    pub target: String,
    pub action: String,
    pub message: String,
}

impl ControlError {
    pub fn new(target: &str, action: &str, message: impl std::fmt::Display) -> Self {
        Self {
            target: target.to_string(),
            action: action.to_string(),
            message: message.to_string(),
        }
    }
}

/// Applies faults to named targets (workers, lock-service nodes, the resource).
pub trait NodeControl: Send + Sync {
    /// Sends `signal` to every process of `target`.
    fn signal(
        &self,
        target: &str,
        signal: Signal,
    ) -> impl Future<Output = Result<(), ControlError>> + Send;

    /// Brings a killed target back: a node restarts with its data (new PID, re-resolved port);
    /// a worker is replaced by a fresh worker process (new process id).
    fn restart(&self, target: &str) -> impl Future<Output = Result<(), ControlError>> + Send;

    /// Installs a grudge: each node drops traffic from (and to) the nodes it holds a grudge
    /// against. Replaces any previous partition.
    fn partition(&self, grudge: &Grudge) -> impl Future<Output = Result<(), ControlError>> + Send;

    /// Installs a one-way grudge: each node drops only the traffic that arrives from the nodes
    /// it holds a grudge against; what it sends to them still arrives. Replaces any previous
    /// partition; [`Self::heal_network`] removes it.
    fn partition_inbound(
        &self,
        grudge: &Grudge,
    ) -> impl Future<Output = Result<(), ControlError>> + Send;

    /// Removes every rule any partition installed, in every namespace.
    fn heal_network(&self) -> impl Future<Output = Result<(), ControlError>> + Send;

    /// Shapes every link of `target` (a worker) through the run's link proxy; `None` heals it.
    fn shape_links(
        &self,
        target: &str,
        shaping: Option<LinkShaping>,
    ) -> impl Future<Output = Result<(), ControlError>> + Send;

    /// Whether the cut a `cut-*-reply` armed on `target`'s links was spent on a reply
    /// (`Some(false)`: no reply came while it was armed); `None` where the control cannot tell.
    fn cut_spent(
        &self,
        target: &str,
    ) -> impl Future<Output = Result<Option<bool>, ControlError>> + Send {
        let _ = target;
        async { Ok(None) }
    }

    /// Sets `target`'s wall clock (a lock-service node started with a fakeable clock).
    fn set_clock(
        &self,
        target: &str,
        setting: ClockSetting,
    ) -> impl Future<Output = Result<(), ControlError>> + Send;

    /// Empties the data directory of `target`, a node killed and not yet restarted: its restart
    /// then starts from nothing.
    fn empty_data(&self, target: &str) -> impl Future<Output = Result<(), ControlError>> + Send;

    /// Limits `target`'s container to `cpus` of one CPU (a cgroup quota); `None` lifts the
    /// limit.
    fn throttle(
        &self,
        target: &str,
        cpus: Option<f64>,
    ) -> impl Future<Output = Result<(), ControlError>> + Send;

    /// Hangs (`true`) or resumes `target`'s work: the driver sends the worker no operation
    /// while its process runs on. The driver does this, not the system's processes, so a
    /// control that is not bound to the run's driver refuses.
    fn hang_work(
        &self,
        target: &str,
        hung: bool,
    ) -> impl Future<Output = Result<(), ControlError>> + Send {
        let _ = hung;
        let target = target.to_string();
        async move {
            Err(ControlError::new(
                &target,
                "hang the work of",
                "this control is not bound to the run's driver",
            ))
        }
    }
}

/// A worker in the middle of one operation of the lock protocol, as the live history shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InFlight {
    /// The worker, by the name the nemesis targets (`worker-3`).
    pub worker: String,
    /// The history index of the operation's invoke: the same index later means the same
    /// operation is still in flight.
    pub index: u64,
    /// When it was invoked (ns since the run's start).
    pub invoked_ns: u64,
    /// How long this worker's recent acquires took, invoke to completion (the median of its
    /// last few); `None` before its first one completed.
    pub acquire_latency: Option<Duration>,
}

/// Who is where in the lock protocol right now, from the live history (docs/design.md,
/// "Holds", for the holder): the targets of the holder faults and of the in-flight faults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Moments {
    /// The worker that holds the lock (the newest certain holder).
    pub holder: Option<String>,
    /// Every worker with a hold still open, the holder among them (an earlier holder whose
    /// lease lapsed under a fault holds on in the history until it lets go).
    pub holding: Vec<String>,
    /// Workers whose acquire is in flight, by worker name.
    pub acquiring: Vec<InFlight>,
    /// Workers whose release is in flight.
    pub releasing: Vec<InFlight>,
}

impl Moments {
    /// Acquires in flight while another worker holds the lock: waiters.
    pub fn waiting(&self) -> Vec<InFlight> {
        match &self.holder {
            Some(h) => self
                .acquiring
                .iter()
                .filter(|a| a.worker != *h)
                .cloned()
                .collect(),
            None => Vec::new(),
        }
    }
}

/// What the nemesis needs to know about the run at fault time.
pub trait Topology: Send + Sync {
    /// Every worker, by name.
    fn workers(&self) -> Vec<String>;
    /// Every lock-service node (servers, replicas, sentinels), by name.
    fn nodes(&self) -> Vec<String>;
    /// The protected resource's container, if it is one.
    fn resource(&self) -> Option<String>;
    /// Who holds the lock and who is in the middle of an acquire or a release right now (the
    /// driver knows from the history).
    fn moments(&self) -> impl Future<Output = Moments> + Send;
    /// The current leader / master of the lock service, asked of the system itself.
    fn leader(&self) -> impl Future<Output = Option<String>> + Send;
}
