//! Phases 5–8 for the `memory` provider: the same workload loop, protocol, worker and
//! checkers as a container run, but the lock service, the workers and the resource live in this
//! process. It exists so the whole `run` pipeline (record → check → report) is exercised by a
//! plain `cargo test` in seconds, with knobs that plant the classic bugs; it proves nothing about
//! a real provider and applies no faults.

use super::live::Live;
use super::prepare::HarnessLog;
use super::progress::Progress;
use crate::config::TestPlan;
use anyhow::Context;
use results::jsonl::{HistoryWriter, JsonlWriter};
use results::layout::RunDir;
use results::RunClock;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use workloads::client::Client;
use workloads::config::{RawRecipeConfig, RecipeKind};
use workloads::counter::MemoryCounter;
use workloads::counter_guard::{Counter, Plain};
use workloads::driver::{run_counter_workload, run_workload, Recorder, WorkerConn, WorkloadSpec};
use workloads::fenced_write::{MemoryMode, MemoryResource};
use workloads::recipes::{MemoryKnobs, MemoryLockService};
use workloads::worker::{spawn_local, Worker};

/// The bugs the in-memory lock service can be told to have.
pub const MEMORY_BUGS: &[&str] = &[
    "expires-early",
    "release-without-owner-check",
    "tokens-not-monotonic",
];

fn knobs(bugs: &[String]) -> MemoryKnobs {
    MemoryKnobs {
        expires_early: bugs.iter().any(|b| b == "expires-early").then_some(0.3),
        release_without_owner_check: bugs.iter().any(|b| b == "release-without-owner-check"),
        tokens_not_monotonic: bugs.iter().any(|b| b == "tokens-not-monotonic"),
    }
}

/// Records one run in this process.
pub async fn record(
    plan: &TestPlan,
    dir: &RunDir,
    log: &HarnessLog,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    progress.phase("workers");
    let clock = RunClock::start();
    let live = Live::new(Arc::new(Mutex::new(None)));
    let observer = live.clone();
    let history = Arc::new(
        HistoryWriter::create_observed(&dir.history(), Box::new(move |e| observer.observe(e)))
            .context("creating history.jsonl")?,
    );
    let recorder = Recorder::new(history.clone(), clock);
    let cfg = RawRecipeConfig {
        ttl: Some(plan.ttl.get()),
        renew_interval: Some(plan.renew_interval.get()),
        op_timeout: Some(plan.op_timeout.get()),
        ..Default::default()
    }
    .validate(RecipeKind::Memory)
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let service = MemoryLockService::new(knobs(&plan.memory_bugs));
    let mode = if plan.resource == "none" {
        MemoryMode::None
    } else {
        MemoryMode::Strict
    };
    let resource = MemoryResource::new(mode, clock);
    let discipline = format!("{},{}", plan.discipline.as_str(), plan.renewal.as_str())
        .parse()
        .map_err(|e| anyhow::anyhow!("discipline: {e}"))?;
    // The counter workload's store: one in-process counter all workers share.
    let counter: Arc<dyn Counter> =
        Arc::new(Plain::new("memory", Arc::new(MemoryCounter::default())));
    let mut conns = Vec::new();
    for i in 0..plan.workers as usize {
        let name = super::deploy::worker_name(i);
        let client: Arc<dyn Client> = Arc::new(service.client(&name, cfg.ttl, cfg.acquire_timeout));
        let worker = Worker::new(
            &name,
            client,
            Box::new(resource.clone()),
            cfg.clone(),
            discipline,
        )
        .with_counter(counter.clone());
        conns.push(
            WorkerConn::over(spawn_local(worker), recorder.clone())
                .await
                .map_err(|e| anyhow::anyhow!("{name}: {e}"))?,
        );
    }
    log.line(&format!("{} in-process workers", conns.len()));
    progress.phase("workload");
    let until = plan.time_limit.get() + plan.recovery.get();
    let spec = WorkloadSpec {
        lock: plan.lock.clone(),
        key: "k0".into(),
        work: plan.work.get() / 2..=plan.work.get() * 3 / 2,
        writes_per_hold: plan.writes_per_hold,
        between: Duration::ZERO..=plan.ttl.get() / 10,
        until_ns: until.as_nanos() as u64,
        seed: plan.seed,
    };
    let counter_workload = plan.workload == crate::config::Workload::Counter;
    let workload = async {
        if counter_workload {
            let (sums, value) = run_counter_workload(conns, &spec, &recorder).await?;
            Ok(format!("{sums:?}; final counter read: {value:?}"))
        } else {
            run_workload(conns, &spec, &recorder)
                .await
                .map(|sums| format!("{sums:?}"))
        }
    };
    let ticker = async {
        loop {
            tokio::time::sleep(Duration::from_millis(250)).await;
            progress.workload(Duration::from_nanos(clock.now()), until, live.ops(), &[]);
        }
    };
    let summaries: String = tokio::select! {
        s = workload => s.context("recording the workload")?,
        () = ticker => unreachable!("the ticker never ends"),
    };
    log.line(&format!("workers: {summaries}"));
    progress.phase("stop");
    let out = JsonlWriter::create(&dir.resource_log()).context("creating resource.jsonl")?;
    for entry in resource.log() {
        out.append(&entry).context("writing resource.jsonl")?;
    }
    history.sync().context("syncing history.jsonl")?;
    Ok(())
}
