//! The in-process [`Site`], for the `memory` provider: the same workload loops, protocol,
//! worker and checkers as a container run, but the lock service, the workers and the resource
//! live in this process. It exists so the whole `run` pipeline (record → check → report) is
//! exercised by a plain `cargo test` in seconds, with knobs that plant the classic bugs; it
//! proves nothing about a real provider and applies no faults (validation refuses them). With
//! `client: memory` each worker reaches the service through the adapter protocol (an
//! in-process adapter), so the protocol is covered by the same plain test.

use super::prepare::HarnessLog;
use super::progress::Progress;
use super::site::Site;
use crate::config::{ResourceKind, TestPlan};
use anyhow::Context;
use futures::future::BoxFuture;
use nemesis::Plan;
use results::jsonl::{HistoryWriter, JsonlWriter};
use results::layout::RunDir;
use results::RunClock;
use std::sync::{Arc, Mutex};
use workloads::adapter::{AdapterClient, InProcessAdapter, Init, INIT_DEADLINE, PROTOCOL};
use workloads::client::Client;
use workloads::config::{RawRecipeConfig, RecipeKind};
use workloads::counter::MemoryCounter;
use workloads::counter_guard::{Counter, Plain};
use workloads::driver::{Recorder, WorkerConn};
use workloads::fenced_write::{MemoryMode, MemoryResource};
use workloads::recipes::{MemoryKnobs, MemoryLockService};
use workloads::worker::{spawn_local, Worker};

/// A run whose lock service, workers and resource are in this process.
pub struct InProcessSite {
    clock: RunClock,
    /// Each worker's end of its in-process connection, until the workload takes it.
    conns: Mutex<Vec<Option<tokio::io::DuplexStream>>>,
    resource: MemoryResource,
    dir: RunDir,
}

impl InProcessSite {
    /// Starts the in-process service and one in-process worker per worker of `plan`.
    pub async fn deploy(
        plan: &TestPlan,
        dir: &RunDir,
        log: &HarnessLog,
        progress: &mut Progress,
    ) -> anyhow::Result<InProcessSite> {
        progress.phase("workers");
        let clock = RunClock::start();
        let cfg = RawRecipeConfig {
            ttl: Some(plan.ttl.get()),
            renew_interval: Some(plan.renew_interval.get()),
            op_timeout: Some(plan.op_timeout.get()),
            ..Default::default()
        }
        .validate(RecipeKind::Memory)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        let service = MemoryLockService::new(MemoryKnobs::planting(&plan.memory_bugs));
        let mode = if plan.resource == ResourceKind::None {
            MemoryMode::None
        } else {
            MemoryMode::Strict
        };
        let resource = MemoryResource::new(mode, clock);
        // The counter workload's store: one in-process counter all workers share.
        let counter: Arc<dyn Counter> =
            Arc::new(Plain::new("memory", Arc::new(MemoryCounter::default())));
        let mut conns = Vec::new();
        for i in 0..plan.workers as usize {
            let name = super::deploy::worker_name(i);
            let recipe_client = {
                let (service, name, ttl, wait) =
                    (service.clone(), name.clone(), cfg.ttl, cfg.acquire_timeout);
                move || -> Arc<dyn Client> { Arc::new(service.client(&name, ttl, wait)) }
            };
            let (client, label): (Arc<dyn Client>, String) = match plan.client.adapter() {
                None => (recipe_client(), RecipeKind::Memory.to_string()),
                Some(a) => {
                    let init = Init {
                        protocol: PROTOCOL,
                        worker: name.clone(),
                        lock: plan.lock.clone(),
                        provider: plan.provider.to_string(),
                        endpoints: Vec::new(),
                        ttl_ms: cfg.ttl.as_millis() as u64,
                        acquire_timeout_ms: cfg.acquire_timeout.as_millis() as u64,
                        options: a.options.clone(),
                    };
                    let launch = Box::new(InProcessAdapter::new(recipe_client));
                    let adapter =
                        AdapterClient::start(&a.name, launch, init, INIT_DEADLINE, cfg.clone())
                            .await
                            .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
                    let d = adapter.described();
                    let label = format!("{} ({} {})", a.name, d.library, d.version);
                    (Arc::new(adapter), label)
                }
            };
            let worker = Worker::new(
                &name,
                client,
                Box::new(resource.clone()),
                cfg.clone(),
                plan.discipline,
            )
            .with_client_label(label)
            .with_counter(counter.clone());
            conns.push(Some(spawn_local(worker)));
        }
        log.line(&format!("{} in-process workers", plan.workers));
        Ok(InProcessSite {
            clock,
            conns: Mutex::new(conns),
            resource,
            dir: dir.clone(),
        })
    }
}

impl Site for InProcessSite {
    fn clock(&self) -> RunClock {
        self.clock
    }

    fn workers(&self) -> usize {
        self.conns.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    fn connect<'a>(
        &'a self,
        worker: usize,
        recorder: &'a Recorder,
        _until_ns: u64,
    ) -> BoxFuture<'a, anyhow::Result<Option<WorkerConn>>> {
        Box::pin(async move {
            let stream = self
                .conns
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_mut(worker)
                .and_then(Option::take);
            // An in-process worker is connected once: nothing kills it.
            let Some(stream) = stream else {
                return Ok(None);
            };
            let conn = WorkerConn::over(stream, recorder.clone())
                .await
                .map_err(|e| anyhow::anyhow!("worker {}: {e}", worker + 1))?;
            Ok(Some(conn))
        })
    }

    fn restarted(&self, _worker: usize, _until_ns: u64) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }

    fn faults<'a>(
        &'a self,
        plan: &'a Plan,
        _history: &'a HistoryWriter,
    ) -> BoxFuture<'a, anyhow::Result<nemesis::Summary>> {
        Box::pin(async move {
            anyhow::ensure!(
                plan.steps.is_empty(),
                "the in-process site cannot apply faults (validation refuses them)"
            );
            Ok(nemesis::Summary::default())
        })
    }

    fn watch(&self, _history: &Arc<HistoryWriter>) -> Box<dyn Send> {
        Box::new(())
    }

    fn finish(&self) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            let out =
                JsonlWriter::create(&self.dir.resource_log()).context("creating resource.jsonl")?;
            for entry in self.resource.log() {
                out.append(&entry).context("writing resource.jsonl")?;
            }
            Ok(())
        })
    }
}
