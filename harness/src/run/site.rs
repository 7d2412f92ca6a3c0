//! The one seam where runs differ: where the lock service, the workers and the resource live.
//! [`super::container_site::ContainerSite`] starts them in Docker; [`super::in_process::InProcessSite`]
//! runs the memory provider's service, workers and register inside this process. Everything
//! else of a run (the workload loops, the fault plan's timing, heal, recovery, check, report) is
//! the same code for both, so a plain `cargo test` of the in-process site covers the pipeline
//! the containers run (docs/design.md, "How the code should read", 16).

use futures::future::BoxFuture;
use nemesis::Plan;
use results::jsonl::HistoryWriter;
use results::RunClock;
use std::sync::Arc;
use workloads::driver::{Hangs, Recorder, WorkerConn};

/// A deployed run: its workers reachable, its faults applicable, its clock started.
pub trait Site: Send + Sync {
    /// The run's clock (started once the lock service was up).
    fn clock(&self) -> RunClock;

    /// How many workers there are.
    fn workers(&self) -> usize;

    /// Worker `i`'s connection, once it serves; `Ok(None)` when it is not back before `until_ns`
    /// (a killed worker the nemesis did not restart in time).
    fn connect<'a>(
        &'a self,
        worker: usize,
        recorder: &'a Recorder,
        until_ns: u64,
    ) -> BoxFuture<'a, anyhow::Result<Option<WorkerConn>>>;

    /// Resolves once worker `i` was started again after its death (a kill of the nemesis), or
    /// with false when that will not happen before `until_ns`.
    fn restarted(&self, worker: usize, until_ns: u64) -> BoxFuture<'_, bool>;

    /// Runs the fault plan from now until it ends, recording every start and stop in the
    /// history, and heals everything on every path; `hang-work` hangs the driver's sessions
    /// through `hangs`.
    fn faults<'a>(
        &'a self,
        plan: &'a Plan,
        history: &'a HistoryWriter,
        hangs: &'a Hangs,
        cancel: BoxFuture<'a, ()>,
    ) -> BoxFuture<'a, anyhow::Result<nemesis::Summary>>;

    /// Starts watching the run for what nobody planned (nodes that die) until the returned
    /// guard is dropped; the deaths go to `history`.
    fn watch(&self, history: &Arc<HistoryWriter>) -> Box<dyn Send>;

    /// Starts the observer of the lock service's own record, writing to `path`, until the
    /// returned guard is dropped, and waits (a bounded time) until it follows the service;
    /// nothing where the service has no observer (no file written).
    fn observe<'a>(
        &'a self,
        _path: &'a std::path::Path,
    ) -> BoxFuture<'a, anyhow::Result<Box<dyn Send>>> {
        Box::pin(async { Ok(Box::new(()) as Box<dyn Send>) })
    }

    /// Recording is over: everything the site started is removed.
    fn finish(&self) -> BoxFuture<'_, anyhow::Result<()>>;
}
