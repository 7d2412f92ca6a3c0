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

    /// The fault executor over this site's control, one fault at a time (a replay's steps),
    /// recording to `history`: the same actions, tracking and heal as [`Site::faults`].
    fn one_step<'a>(&'a self, history: &'a HistoryWriter) -> Box<dyn nemesis::OneStep + 'a>;

    /// The lock service's nodes that replicate its data (a master and its replicas; not the
    /// sentinels), by the names faults use; none where the service has no nodes.
    fn data_nodes(&self) -> Vec<String> {
        Vec::new()
    }

    /// Waits, at most `limit`, until the lock service itself says the acquisition `lease` of
    /// `lock` is over, and returns how long that took; an error where it cannot be asked.
    fn lease_expired<'a>(
        &'a self,
        lock: &'a str,
        lease: &'a str,
        limit: std::time::Duration,
    ) -> BoxFuture<'a, Result<std::time::Duration, String>> {
        let _ = (lock, lease, limit);
        Box::pin(async { Err("this site cannot ask its lock service about a lease".into()) })
    }

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
