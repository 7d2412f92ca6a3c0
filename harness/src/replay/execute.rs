//! Runs one scenario against one provider, strictly in the scenario's order:
//!
//! 1. **plan**: the scenario as a `TestPlan` (built before anything starts: a scenario a plan
//!    cannot express is rejected with exit 3 first);
//! 2. **stage**: run directory, cluster, resource, one worker container per scenario worker;
//! 3. **steps**: each step applied and its expectation checked; an operation sent to a paused
//!    worker stays open and completes (and is checked) after the worker's `resume`;
//! 4. **heal + teardown**: everything paused resumed, every cut removed, containers removed (on
//!    every path);
//! 5. **check**: `run::check_and_report` over the recorded history; `expect_anomalies` and
//!    `expect: <anomaly kind>` compared with the verdict.

use super::actor::Actor;
use super::scenario::{Expect, Scenario};
use super::stage;
use super::steps::{self, Row, Stage, W};
use crate::config::{validate, Provider, RawTest, TestPlan};
use crate::control::{ClusterRestart, DockerControl};
use crate::docker::{DockerError, RunEnv};
use crate::run::{self, deploy, prepare};
use anyhow::Context;
use results::jsonl::HistoryWriter;
use results::layout::RunDir;
use results::{AnomalyKind, RunClock, Validity, Verdict};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use workloads::driver::{ProcessAllocator, Recorder, WorkerConn};

/// The outcome of one scenario against one provider.
#[derive(Debug)]
pub struct Replayed {
    pub provider: String,
    pub run_dir: PathBuf,
    pub rows: Vec<Row>,
    /// Why the steps stopped early (a harness problem mid-scenario), if they did.
    pub aborted: Option<String>,
    pub verdict: Option<Verdict>,
    /// Mismatches between the expected anomalies and the verdict.
    pub anomaly_mismatches: Vec<String>,
}

impl Replayed {
    /// Every expectation held.
    pub fn passed(&self) -> bool {
        self.aborted.is_none()
            && self.anomaly_mismatches.is_empty()
            && self.rows.iter().all(|r| r.held != Some(false))
    }
}

/// The test plan of `scenario` on `provider`: what the resource, the check and the workers see.
pub fn plan_for(scenario: &Scenario, provider: &str) -> anyhow::Result<TestPlan> {
    let p = Provider::parse(provider).with_context(|| {
        format!(
            "unknown provider {provider:?}; use one of {}",
            Provider::NAMES
        )
    })?;
    anyhow::ensure!(
        p != Provider::Memory,
        "replay runs against real providers; memory has no containers to pause"
    );
    let raw = RawTest {
        name: Some(format!("replay-{}-{}", scenario.name, provider)),
        provider: Some(provider.to_string()),
        recipe: scenario.recipe.clone(),
        resource: Some(scenario.resource.clone()),
        workers: Some(scenario.workers.len() as u32),
        ttl: Some(scenario.ttl),
        nemesis: Some(vec![]),
        seed: Some(0),
        recovery_slack: scenario.recovery_slack,
        renewal: scenario.renewal.clone(),
        // An acquire against a held lock must fail certainly and soon (`expect: lock-held`).
        acquire_timeout: Some(scenario.acquire_timeout.unwrap_or(scenario.ttl)),
        ..RawTest::default()
    };
    // The recipe's own rules (etcd leases are whole seconds, at least 2 s) are checked here.
    validate(raw, 0).map_err(|e| anyhow::anyhow!("scenario {} on {provider}: {e}", scenario.name))
}

/// Runs `scenario` on one provider (its plan from [`plan_for`]) and checks the recorded run.
pub fn replay(scenario: &Scenario, plan: &TestPlan, runs: &Path) -> anyhow::Result<Replayed> {
    let dir = prepare::create_run_dir(runs, plan)?;
    let extra = format!(
        "replay_scenario: {}\nreplay_steps: {}\n",
        scenario.name,
        scenario.steps.len()
    );
    prepare::write_test_yaml(&dir, plan, Some(&extra))?;
    let log = prepare::HarnessLog::create(&dir)?;
    eprintln!(
        "fencecheck replay: {} on {} → {}",
        scenario.name,
        plan.provider.as_str(),
        dir.path.display()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let recorded = runtime.block_on(record(scenario, plan, &dir, &log));
    // Steps that stopped early (a harness problem mid-scenario) did not finish the run.
    let ended = match &recorded {
        Ok((_, None)) => Ok(()),
        Ok((_, Some(why))) => Err(anyhow::anyhow!("the steps stopped early: {why}")),
        Err(e) => Err(anyhow::anyhow!("{e:#}")),
    };
    prepare::finish(&dir.path, &ended)?;
    let (rows, aborted) = recorded?;
    if let Some(why) = &aborted {
        log.line(&format!("steps stopped: {why}"));
    }
    anyhow::ensure!(dir.history().is_file(), "no history was recorded");
    let verdict = run::check_and_report(&dir, plan)?;
    let mut rows = rows;
    let anomaly_mismatches = compare_anomalies(scenario, plan, &verdict, &mut rows);
    Ok(Replayed {
        provider: plan.provider.as_str().to_string(),
        run_dir: dir.path.clone(),
        rows,
        aborted,
        verdict: Some(verdict),
        anomaly_mismatches,
    })
}

/// `expect: <kind>` rows and `expect_anomalies` against the verdict. Kinds that fail the run but
/// were not expected are mismatches too; kinds reported without failing it (concurrent-holders
/// by default) only when expected and absent.
fn compare_anomalies(
    scenario: &Scenario,
    plan: &TestPlan,
    verdict: &Verdict,
    rows: &mut [Row],
) -> Vec<String> {
    let found: BTreeSet<AnomalyKind> = verdict.anomalies.iter().map(|a| a.kind).collect();
    for row in rows.iter_mut() {
        if let Some(Expect::Anomaly(kind)) = &row.expect {
            let held = found.contains(kind);
            row.held = Some(held);
            if !held {
                row.why = Some(format!("the check reported no {}", kind.as_str()));
            }
        }
    }
    let mut expected: BTreeSet<AnomalyKind> = scenario.expect_anomalies.iter().copied().collect();
    expected.extend(rows.iter().filter_map(|r| match &r.expect {
        Some(Expect::Anomaly(k)) => Some(*k),
        _ => None,
    }));
    let mut out = Vec::new();
    for k in &expected {
        if !found.contains(k) {
            out.push(format!("expected anomaly {} was not reported", k.as_str()));
        }
    }
    for k in &found {
        if plan.fail_on.contains(k) && !expected.contains(k) {
            out.push(format!(
                "anomaly {} was reported but the scenario does not expect it",
                k.as_str()
            ));
        }
    }
    if verdict.valid == Validity::Unknown && expected.is_empty() {
        out.push(format!(
            "the check could not decide: {}",
            verdict.unknown_reasons.join("; ")
        ));
    }
    out
}

async fn record(
    scenario: &Scenario,
    plan: &TestPlan,
    dir: &RunDir,
    log: &prepare::HarnessLog,
) -> anyhow::Result<(Vec<Row>, Option<String>)> {
    let env = match RunEnv::create(&deploy::run_id(plan), Some(&dir.path)).await {
        Err(DockerError::ImageMissing { image }) => anyhow::bail!(
            "the node image {image} is missing: build it with `fencecheck image build`"
        ),
        other => Arc::new(other.context("creating the run's Docker environment")?),
    };
    log.line(&format!("network {} created", env.network()));
    let outcome = stage_and_run(&env, scenario, plan, dir, log).await;
    let torn = env.teardown().await;
    log.line(&format!("teardown: {torn:?}"));
    let rows = outcome?;
    torn.context("tearing down the replay's containers")?;
    Ok(rows)
}

async fn stage_and_run(
    env: &Arc<RunEnv>,
    scenario: &Scenario,
    plan: &TestPlan,
    dir: &RunDir,
    log: &prepare::HarnessLog,
) -> anyhow::Result<(Vec<Row>, Option<String>)> {
    let (lock, stores) = deploy::start_clusters(env, plan).await?;
    log.line(&format!(
        "cluster {} up: {:?}",
        lock.system,
        lock.endpoints()
    ));
    let clock = RunClock::start();
    let resource =
        deploy::start_resource(env, plan, &dir.path, &lock, &stores, clock.start_ns()).await?;
    let acquire_timeout = plan.acquire_timeout.unwrap_or(plan.ttl).get();
    let names: Vec<(String, String)> = scenario
        .workers
        .iter()
        .map(|w| (stage::container_of(w), w.clone()))
        .collect();
    let nodes =
        deploy::start_named_workers(env, plan, &names, &lock, &resource, clock.start_ns()).await?;
    log.line(&format!("{} workers up", nodes.len()));

    let history =
        Arc::new(HistoryWriter::create(&dir.history()).context("creating history.jsonl")?);
    let rec = Recorder::new(history.clone(), clock);
    let alloc = ProcessAllocator::new(nodes.len() as u32);
    let mut workers = Vec::new();
    for (i, (name, node)) in scenario.workers.iter().zip(&nodes).enumerate() {
        let port = node
            .host_port(deploy::WORKER_PORT)
            .with_context(|| format!("{}: no published worker port", node.name))?;
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let conn = WorkerConn::connect(addr, Duration::from_secs(30), rec.clone())
            .await
            .map_err(|e| anyhow::anyhow!("worker {name}: {e}"))?;
        workers.push(W::new(
            name.clone(),
            stage::container_of(name),
            Actor::spawn(
                conn,
                i as u32,
                plan.lock.clone(),
                "k0".into(),
                alloc.clone(),
                rec.clone(),
            ),
        ));
    }
    let cluster = Arc::new(RwLock::new(lock));
    let mut targets = {
        let c = cluster.read().unwrap_or_else(|p| p.into_inner());
        crate::control::topology::targets(env, c.nodes.iter())
    };
    targets.extend(crate::control::topology::targets(
        env,
        nodes.iter().chain([&resource]),
    ));
    let restart = Arc::new(ClusterRestart {
        env: env.clone(),
        cluster: cluster.clone(),
        others: Mutex::new(nodes.iter().cloned().chain([resource.clone()]).collect()),
    });
    let control = DockerControl::new(env.docker().clone(), env.network(), targets, restart);
    let mut stage = Stage {
        env: env.clone(),
        cluster,
        control,
        rec,
        plan: plan.clone(),
        workers,
        op_wait: acquire_timeout + plan.op_timeout.get() * 2 + Duration::from_secs(15),
        paused_nodes: Vec::new(),
        isolated: BTreeSet::new(),
        cut_replication: None,
        log: log.clone(),
    };
    let (rows, aborted) = steps::run_all(&mut stage, &scenario.steps).await;
    history.sync().context("syncing history.jsonl")?;
    Ok((rows, aborted))
}
