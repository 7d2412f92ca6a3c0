//! The timeline as a model: who held the lock when, which writes the resource accepted or
//! rejected, when leases were lost and processes died, and which faults were active — derived
//! from the history and the resource log before anything is drawn, so the drawing stays dumb and
//! this derivation can be tested on its own.
//!
//! Lanes are workers, not process ids (see [`super::lanes`]).

use results::AnomalyKind;

/// A time span in ns since the run's start, with what to call it.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub start: u64,
    pub end: u64,
    pub label: String,
}

/// Why a hold ended: the checkers' definition (docs/design.md, "Holds"), which the bars follow.
pub use checkers::holds::HoldEnd;

/// One hold drawn as a bar: acquire ok → its end.
#[derive(Debug, Clone, PartialEq)]
pub struct HoldBar {
    pub start: u64,
    pub end: u64,
    pub ended_by: HoldEnd,
    pub process: u32,
    pub lock: Option<String>,
    pub owner: Option<String>,
    pub lease: Option<String>,
    pub token: Option<u64>,
    /// History index of the acquire `ok`.
    pub index: u64,
}

/// What became of a write, the resource log's word first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    Accepted,
    RejectedStale,
    RejectedDuplicate,
    /// The worker got no answer and the resource has no record of it.
    Unknown,
    /// It certainly did not happen, for a reason other than fencing.
    Failed,
}

impl WriteOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            WriteOutcome::Accepted => "accepted",
            WriteOutcome::RejectedStale => "rejected-stale-fence",
            WriteOutcome::RejectedDuplicate => "rejected-duplicate",
            WriteOutcome::Unknown => "unknown (info)",
            WriteOutcome::Failed => "failed",
        }
    }
}

/// One write on the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteMark {
    pub time: u64,
    pub process: u32,
    pub outcome: WriteOutcome,
    pub token: Option<u64>,
    pub highest_before: Option<u64>,
    pub key: Option<String>,
    pub op_id: Option<String>,
    pub seq: Option<u64>,
    pub index: Option<u64>,
    /// Numbers (positions in the verdict) of the anomalies naming this write as evidence.
    pub anomalies: Vec<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkKind {
    LeaseLost,
    Exit,
    Released,
    ReleaseRejected,
    ReleaseUnknown,
}

/// A point event on a lane other than a write.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub time: u64,
    pub kind: MarkKind,
    pub index: u64,
    pub detail: String,
    pub anomalies: Vec<usize>,
}

/// One worker's lane.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Lane {
    pub name: String,
    pub processes: Vec<u32>,
    pub holds: Vec<HoldBar>,
    /// Acquire invoke → completion: the worker was trying.
    pub waits: Vec<Span>,
    /// Faults that named this worker (pauses, kills, partitions of the worker).
    pub faulted: Vec<Span>,
    pub writes: Vec<WriteMark>,
    pub marks: Vec<Mark>,
}

/// A nemesis fault: start → stop (or the end of the run).
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    pub name: String,
    pub start: u64,
    pub end: u64,
    pub targets: Vec<String>,
}

/// Where an anomaly sits on the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct AnomalyMark {
    /// Position in `verdict.anomalies`.
    pub number: usize,
    /// The latest time its evidence names: when the anomaly became manifest.
    pub time: u64,
    pub kind: AnomalyKind,
    pub fails: bool,
    pub lane: Option<usize>,
}

/// One key of a lock standing at the lock service, by its own record (`service.jsonl`): put →
/// deleted, expired, or the end of the record.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceBar {
    pub start: u64,
    pub end: u64,
    /// Its server's row in [`ServiceLane::nodes`].
    pub row: usize,
    pub key: String,
    /// Its owner (lease, session, backend) or value, as the service gave it.
    pub holder: Option<String>,
    /// The lane whose grant names the key; `None`: no grant of the history does.
    pub lane: Option<usize>,
    /// How it ended: `deleted`, `expired`, or `still there` at the record's end.
    pub ended: &'static str,
}

/// A sentinel's announcement that it now calls another server the master (Redis Sentinel).
#[derive(Debug, Clone, PartialEq)]
pub struct MasterSwitch {
    pub at: u64,
    pub sentinel: String,
    pub master: String,
}

/// The lock service's lane under the workers': the keys of the run's locks as the service held
/// them, one row per server where the service keeps no one order (Redlock's masters, Sentinel's
/// servers), where the record is blind (before it began, and each gap), and each sentinel's
/// failovers.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServiceLane {
    pub nodes: Vec<Option<String>>,
    pub keys: Vec<ServiceBar>,
    pub blind: Vec<Span>,
    pub masters: Vec<MasterSwitch>,
}

/// Everything the timeline draws.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Timeline {
    /// The last instant anything happened (ns); the timeline spans 0..end.
    pub end: u64,
    pub lanes: Vec<Lane>,
    /// Present when the run has the service's own record.
    pub service: Option<ServiceLane>,
    pub faults: Vec<Fault>,
    pub anomalies: Vec<AnomalyMark>,
}

/// `worker-3`, `worker-3/ab12`, `worker-B:7` → `worker-3` / `worker-B`; other owners name no worker.
pub fn worker_of_owner(owner: &str) -> Option<String> {
    let rest = owner.strip_prefix("worker-")?;
    let id: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    (!id.is_empty()).then(|| format!("worker-{id}"))
}

impl Timeline {
    /// Rows drawn under the nemesis row: the workers' lanes, then the service's.
    pub fn rows(&self) -> usize {
        self.lanes.len() + usize::from(self.service.is_some())
    }

    /// The lane index of a worker process.
    pub fn lane_of(&self, process: u32) -> Option<usize> {
        self.lanes
            .iter()
            .position(|l| l.processes.contains(&process))
    }
}

/// An optional number for humans.
pub fn opt(v: Option<u64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "—".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_name_their_worker_whatever_follows_the_name() {
        assert_eq!(worker_of_owner("worker-3").as_deref(), Some("worker-3"));
        assert_eq!(
            worker_of_owner("worker-12/7f3a").as_deref(),
            Some("worker-12")
        );
        assert_eq!(
            worker_of_owner("worker-B:lease-9").as_deref(),
            Some("worker-B")
        );
        assert_eq!(worker_of_owner("3f2a-uuid"), None);
        assert_eq!(worker_of_owner("worker-"), None);
    }
}
