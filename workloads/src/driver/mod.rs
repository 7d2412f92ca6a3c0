//! The host side of the worker protocol: connections to workers ([`WorkerConn`]) and the
//! workload loop ([`run_workload`]) that drives them and records every invoke and completion in
//! `history.jsonl` with Jepsen's semantics.

mod conn;
mod counter;
mod deadline;
mod hangs;
mod session;
mod workload;

pub use conn::{Gone, WorkerConn};
pub use counter::{final_read, run_counter_worker, run_counter_workload};
pub use deadline::Deadline;
pub use hangs::Hangs;
pub use session::{Completed, ProcessIds, RecordedGrant, Session, Step};
pub use workload::{run_worker, run_workload, WorkerSummary, WorkloadSpec};

use results::jsonl::{HistoryWriter, JsonlError};
use results::{Event, OpType, Process, RunClock, F};
use std::sync::Arc;

/// Stamps events with the run clock and appends them to the history.
#[derive(Debug, Clone)]
pub struct Recorder {
    pub history: Arc<HistoryWriter>,
    pub clock: RunClock,
}

impl Recorder {
    pub fn new(history: Arc<HistoryWriter>, clock: RunClock) -> Self {
        Self { history, clock }
    }

    /// A fresh event stamped now.
    pub fn event(&self, process: u32, kind: OpType, f: F) -> Event {
        Event::new(self.clock.now(), Process::Worker(process), kind, f)
    }

    /// Appends `event`, stamped again just before the append: an invoke's time is before its
    /// request leaves, a completion's after its reply arrived. File order (`index`) is the
    /// order of the appends, and it is what orders operations (a completion appended before an
    /// invoke happened before it). Time order may disagree with it by a few microseconds: the
    /// time is read before the writer's lock, so two tasks recording at once can stamp in one
    /// order and append in the other, and the nemesis and the death watcher stamp their own.
    pub fn record(&self, mut event: Event) -> Result<u64, JsonlError> {
        event.time = self.clock.now();
        self.history.record(event)
    }

    /// Appends `event` with the time it carries: a worker's keep-alive check, stamped in the
    /// worker when it asked and when it heard (docs/design.md, "history.jsonl": such lines
    /// reach the file when the worker next speaks, so their times may precede lines above).
    pub fn record_stamped(&self, event: Event) -> Result<u64, JsonlError> {
        self.history.record(event)
    }
}
