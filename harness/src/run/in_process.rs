//! The in-process [`Site`], for the `memory` provider: the same workload loops, protocol,
//! worker, nemesis executor and checkers as a container run, but the lock service, the workers
//! and the resource live in this process. It exists so the whole `run` pipeline (record → faults
//! and their heal → check → report) is exercised by a plain `cargo test` in seconds, with knobs
//! that plant the classic bugs; it proves nothing about a real provider. Each worker is made
//! from the plan's [`WorkerLaunch`] by the constructor the container worker uses
//! ([`workers`]); the fault plan runs through the nemesis executor over in-process workers
//! ([`control`]: pause freezes a worker, kill ends it, restart starts a fresh one). With
//! `client: memory` each worker reaches the service through the adapter protocol (an
//! in-process adapter), so the protocol is covered by the same plain test.

mod control;
mod workers;

use super::driven::Driven;
use super::prepare::HarnessLog;
use super::progress::Progress;
use super::site::Site;
use crate::config::{ResourceKind, TestPlan};
use anyhow::Context;
use control::{InProcessControl, InProcessTopology};
use futures::future::BoxFuture;
use nemesis::{Nemesis, Plan};
use results::jsonl::{HistoryWriter, JsonlWriter};
use results::layout::RunDir;
use results::RunClock;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use workers::{Shared, Workers};
use workloads::counter::MemoryCounter;
use workloads::counter_guard::Plain;
use workloads::driver::{Hangs, Recorder, WorkerConn};
use workloads::fenced_write::{MemoryMode, MemoryResource};
use workloads::recipes::{MemoryKnobs, MemoryLockService};
use workloads::worker::WorkerLaunch;

/// A run whose lock service, workers and resource are in this process.
pub struct InProcessSite {
    clock: RunClock,
    /// The lock service, asked whether a lease is over.
    service: MemoryLockService,
    control: InProcessControl,
    topology: InProcessTopology,
    time_limit: Duration,
}

impl InProcessSite {
    /// Starts the in-process service and one in-process worker per worker of `plan`; `moments`
    /// is where the live view keeps the current holder and the workers in flight, which holder
    /// and in-flight faults target.
    pub async fn deploy(
        plan: &TestPlan,
        dir: &RunDir,
        log: &HarnessLog,
        progress: &mut Progress,
        moments: Arc<Mutex<nemesis::Moments>>,
    ) -> anyhow::Result<InProcessSite> {
        let owners: Vec<String> = (0..plan.workers as usize)
            .map(super::deploy::worker_name)
            .collect();
        Self::deploy_named(plan, dir, log, progress, moments, &owners).await
    }

    /// [`InProcessSite::deploy`] with one worker per owner name, which faults target too (a
    /// replay names its workers after the scenario's).
    pub async fn deploy_named(
        plan: &TestPlan,
        dir: &RunDir,
        log: &HarnessLog,
        progress: &mut Progress,
        moments: Arc<Mutex<nemesis::Moments>>,
        owners: &[String],
    ) -> anyhow::Result<InProcessSite> {
        progress.phase("workers");
        let clock = RunClock::start();
        let mode = if plan.resource == ResourceKind::None {
            MemoryMode::None
        } else {
            MemoryMode::Strict
        };
        let service = MemoryLockService::new(MemoryKnobs::planting(&plan.memory_bugs));
        let shared = Arc::new(Shared {
            service: service.clone(),
            // Each decision reaches resource.jsonl as it is made, as the resource server's does.
            resource: MemoryResource::new(mode, clock).logging_to(
                JsonlWriter::create(&dir.resource_log()).context("creating resource.jsonl")?,
            ),
            counter: Arc::new(Plain::new("memory", Arc::new(MemoryCounter::default()))),
        });
        let launches: Vec<WorkerLaunch> = owners
            .iter()
            .map(|owner| super::launch::worker_launch(plan, owner))
            .collect();
        let workers = Arc::new(
            Workers::start_all(launches, shared)
                .await
                .context("starting the in-process workers")?,
        );
        log.line(&format!("{} in-process workers", workers.len()));
        Ok(InProcessSite {
            clock,
            service,
            topology: InProcessTopology {
                workers: workers.names(),
                moments,
            },
            control: InProcessControl { workers },
            time_limit: plan.time_limit.get(),
        })
    }

    fn workers(&self) -> &Workers {
        &self.control.workers
    }
}

impl Site for InProcessSite {
    fn clock(&self) -> RunClock {
        self.clock
    }

    fn workers(&self) -> usize {
        InProcessSite::workers(self).len()
    }

    fn connect<'a>(
        &'a self,
        worker: usize,
        recorder: &'a Recorder,
        _until_ns: u64,
    ) -> BoxFuture<'a, anyhow::Result<Option<WorkerConn>>> {
        Box::pin(async move {
            // Taken once per start: a killed worker is back only after its restart.
            let Some(stream) = InProcessSite::workers(self).take_conn(worker) else {
                return Ok(None);
            };
            let conn = WorkerConn::over(stream, recorder.clone())
                .await
                .map_err(|e| anyhow::anyhow!("worker {}: {e}", worker + 1))?;
            Ok(Some(conn))
        })
    }

    fn restarted(&self, worker: usize, until_ns: u64) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            let left = Duration::from_nanos(until_ns.saturating_sub(self.clock.now()));
            let deadline = tokio::time::Instant::now() + left;
            InProcessSite::workers(self)
                .restarted(worker, deadline)
                .await
        })
    }

    fn faults<'a>(
        &'a self,
        plan: &'a Plan,
        history: &'a HistoryWriter,
        hangs: &'a Hangs,
        cancel: BoxFuture<'a, ()>,
    ) -> BoxFuture<'a, anyhow::Result<nemesis::Summary>> {
        Box::pin(async move {
            let control = Driven {
                control: &self.control,
                hangs,
            };
            let nemesis = Nemesis::new(&control, &self.topology, history, self.clock)
                .ending_at(self.time_limit);
            Ok(nemesis.run(plan, cancel).await?)
        })
    }

    fn one_step<'a>(&'a self, history: &'a HistoryWriter) -> Box<dyn nemesis::OneStep + 'a> {
        Box::new(Nemesis::new(
            &self.control,
            &self.topology,
            history,
            self.clock,
        ))
    }

    fn lease_expired<'a>(
        &'a self,
        lock: &'a str,
        lease: &'a str,
        limit: Duration,
    ) -> BoxFuture<'a, Result<Duration, String>> {
        Box::pin(async move {
            let start = tokio::time::Instant::now();
            while self.service.holds(lock, lease) {
                if start.elapsed() > limit {
                    return Err(format!("{lease} still holds {lock} after {limit:?}"));
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Ok(start.elapsed())
        })
    }

    fn watch(&self, _history: &Arc<HistoryWriter>) -> Box<dyn Send> {
        // No node can die outside the plan here: there are none.
        Box::new(())
    }

    fn finish(&self) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            InProcessSite::workers(self).kill_all();
            Ok(())
        })
    }
}
