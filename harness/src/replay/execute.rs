//! Runs one scenario against one provider, strictly in the scenario's order:
//!
//! 1. **plan**: the scenario as a `TestPlan` (built before anything starts: a scenario a plan
//!    cannot express is rejected with exit 3 first);
//! 2. **stage**: run directory, cluster, resource, one worker container per scenario worker (or,
//!    for the memory provider, the in-process site: its service and one worker per scenario
//!    worker in this process);
//! 3. **steps**: each step applied and its expectation checked; an operation sent to a paused
//!    worker stays open and completes (and is checked) after the worker's `resume`;
//! 4. **heal + teardown**: everything paused resumed, every cut removed, containers removed (on
//!    every path);
//! 5. **check**: `run::check_and_report` over the recorded history; `expect_anomalies` and
//!    `expect: <anomaly kind>` compared with the verdict.

use super::actor::Actor;
use super::scenario::{Action, Control, Expect, Scenario, Step};
use super::stage;
use super::steps::{self, Row, Stage, W};
use crate::config::{validate, Provider, RawTest, TestPlan};
use crate::run::container_site::ContainerSite;
use crate::run::in_process::InProcessSite;
use crate::run::progress::Progress;
use crate::run::site::Site;
use crate::run::{self, prepare};
use anyhow::Context;
use results::fault::Mechanism;
use results::jsonl::HistoryWriter;
use results::layout::RunDir;
use results::{AnomalyKind, Validity, Verdict};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use workloads::driver::{ProcessIds, Recorder, Session};

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
    Provider::parse_lock(provider)?;
    let raw = RawTest {
        name: Some(format!(
            "replay-{}-{}",
            scenario.name,
            scenario.client.as_deref().unwrap_or(provider)
        )),
        provider: Some(provider.to_string()),
        recipe: scenario.recipe.clone(),
        client: scenario.client.clone(),
        with: (!scenario.with.is_empty()).then(|| scenario.with.clone()),
        resource: Some(scenario.resource.clone()),
        workers: Some(scenario.workers.len() as u32),
        ttl: Some(scenario.ttl),
        nemesis: Some(vec![]),
        seed: Some(0),
        recovery_slack: scenario.recovery_slack,
        renewal: scenario.renewal.clone(),
        client_options: scenario.client_options.clone(),
        renew_interval: scenario.renew_interval,
        session_timeout: scenario.session_timeout,
        op_timeout: scenario.op_timeout,
        app: scenario.app.clone(),
        memory_bugs: (!scenario.memory_bugs.is_empty()).then(|| scenario.memory_bugs.clone()),
        // An acquire against a held lock must fail certainly and soon (`expect: lock-held`).
        acquire_timeout: Some(scenario.acquire_timeout.unwrap_or(scenario.ttl)),
        ..RawTest::default()
    };
    // The recipe's own rules (etcd leases are whole seconds, at least 2 s) are checked here.
    let mut plan = validate(raw, 0)
        .map_err(|e| anyhow::anyhow!("scenario {} on {provider}: {e}", scenario.name))?;
    plan.fake_clocks = scenario.steps.iter().any(|s| {
        matches!(
            s,
            Step::Control {
                control: Control::ClockJump { .. },
                ..
            }
        )
    });
    if let (true, Some(why)) = (plan.fake_clocks, plan.provider.capabilities().no_fake_clock) {
        anyhow::bail!(
            "scenario {} on {provider}: clock-jump cannot act on {provider}: {why}",
            scenario.name
        );
    }
    // A worker step's fault the run would refuse is refused here, naming its line.
    let first = |wanted: fn(&Action) -> bool| {
        scenario.steps.iter().find_map(|s| match s {
            Step::Worker { action, line, .. } if wanted(action) => Some(*line),
            _ => None,
        })
    };
    if let Some(line) = first(|a| matches!(a, Action::ClientClock(_))) {
        plan.fake_client_clocks = true;
        if let Some(why) = plan.client.no_fake_clock() {
            anyhow::bail!(
                "scenario {}, line {line}: a client clock step cannot act on client {}: {why}",
                scenario.name,
                plan.client.name()
            );
        }
    }
    plan.cut_reply_to =
        crate::config::validate::cut_reply_to(scenario.cut_reply_to.as_deref(), plan.provider)
            .map_err(|e| anyhow::anyhow!("scenario {} on {provider}: {e}", scenario.name))?;
    // Every step's fault is held to the provider's row of the fault table, as a run's would be,
    // and refused naming its line.
    let caps = plan.provider.capabilities();
    for s in &scenario.steps {
        let (fault, line) = match s {
            Step::Worker { action, line, .. } => (action.fault(), line),
            Step::Control { control, line, .. } => (control.fault(), line),
        };
        let Some(fault) = fault else {
            continue;
        };
        if let Some(why) = fault.unsupported_because(&caps) {
            anyhow::bail!(
                "scenario {}, line {line}: {fault} cannot act on {provider}: {why}",
                scenario.name
            );
        }
        plan.link_proxy |= matches!(fault.mechanism(), Mechanism::Link(_));
    }
    plan.empties_data = scenario.steps.iter().any(|s| {
        matches!(
            s,
            Step::Control {
                control: Control::RestartEmpty(_),
                ..
            }
        )
    });
    Ok(plan)
}

/// Runs `scenario` (read from the file `source`) on one provider (its plan from [`plan_for`])
/// and checks the recorded run. The run's `test.yaml` says to replay `source` again.
pub fn replay(
    scenario: &Scenario,
    source: &Path,
    plan: &TestPlan,
    runs: &Path,
) -> anyhow::Result<Replayed> {
    let origin = prepare::Origin::Replay {
        scenario: source,
        name: &scenario.name,
        steps: scenario.steps.len(),
    };
    let dir = prepare::create_run_dir_for(runs, plan, origin)?;
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
        // The client, when the actors use a library: "zookeeper (kazoo)".
        provider: match plan.client.adapter() {
            Some(a) => format!("{} ({})", plan.provider, a.name),
            None => plan.provider.as_str().to_string(),
        },
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
    let mut progress = Progress::new(true, Duration::from_secs(1));
    let site: Box<dyn Site> = if plan.in_process() {
        // The memory provider's service and workers in this process, named as the scenario's.
        Box::new(
            InProcessSite::deploy_named(
                plan,
                dir,
                log,
                &mut progress,
                Default::default(),
                &scenario.workers,
            )
            .await?,
        )
    } else {
        // One container per scenario worker, named after it (`worker-a` serves the owner `A`).
        let names: Vec<(String, String)> = scenario
            .workers
            .iter()
            .map(|w| (stage::container_of(w), w.clone()))
            .collect();
        let site =
            ContainerSite::deploy_named(plan, dir, log, &mut progress, Default::default(), &names);
        Box::new(site.await?)
    };
    let outcome = stage_and_run(site.as_ref(), scenario, plan, dir, log).await;
    let finished = site.finish().await;
    let rows = outcome?;
    finished?;
    Ok(rows)
}

async fn stage_and_run(
    site: &dyn Site,
    scenario: &Scenario,
    plan: &TestPlan,
    dir: &RunDir,
    log: &prepare::HarnessLog,
) -> anyhow::Result<(Vec<Row>, Option<String>)> {
    let history =
        Arc::new(HistoryWriter::create(&dir.history()).context("creating history.jsonl")?);
    let rec = Recorder::new(history.clone(), site.clock());
    let _watch = site.watch(&history);
    // What the lock service itself held, for the kinds judged against its record.
    let _observer = site.observe(&dir.service_log()).await?;
    let n = scenario.workers.len();
    let faults = site.one_step(&history);
    let targets = faults.workers();
    let mut workers = Vec::new();
    for (i, name) in scenario.workers.iter().enumerate() {
        let conn = site
            .connect(i, &rec, u64::MAX)
            .await?
            .with_context(|| format!("worker {name}: not serving"))?;
        let session = Session::new(conn, ProcessIds::of_worker(i as u32, n as u32), rec.clone())
            .on_error(plan.app.on_error());
        workers.push(W::new(
            name.clone(),
            targets[i].clone(),
            Actor::spawn(session, plan.lock.clone(), "k0".into()),
        ));
    }
    let acquire_timeout = plan.client_timing.acquire_timeout;
    let mut stage = Stage {
        site,
        faults,
        rec,
        plan: plan.clone(),
        workers,
        op_wait: acquire_timeout + plan.client_timing.op_timeout * 2 + Duration::from_secs(15),
        standing: Default::default(),
        log: log.clone(),
    };
    let (rows, aborted) = steps::run_all(&mut stage, &scenario.steps).await;
    history.sync().context("syncing history.jsonl")?;
    Ok((rows, aborted))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Scenario {
        super::super::scenario::parse(text).expect("a valid scenario")
    }

    #[test]
    fn every_shipped_scenario_plans_on_every_provider_it_names() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let mut planned = 0;
        for entry in std::fs::read_dir(&dir).expect("scenarios/") {
            let path = entry.expect("an entry").path();
            let scenario = parse(&std::fs::read_to_string(&path).expect("readable"));
            for provider in &scenario.providers {
                if let Err(e) = plan_for(&scenario, provider) {
                    panic!("{} on {provider}: {e:#}", path.display());
                }
                planned += 1;
            }
        }
        assert!(planned >= 40, "only {planned} scenario plans");
    }

    #[test]
    fn a_step_fault_the_provider_cannot_take_is_refused_naming_its_line() {
        let text = "name: x\nproviders: [etcd]\nworkers: [A]\nsteps:\n  - A: acquire\n  \
                    - nemesis: restart-empty etcd-1\n";
        let e = plan_for(&parse(text), "etcd").expect_err("etcd keeps its data");
        assert!(
            e.to_string()
                .contains("line 6: restart-empty-node cannot act on etcd"),
            "{e}"
        );
        let text = "name: x\nproviders: [redis-sentinel]\nworkers: [A]\nsteps:\n  \
                    - A: acquire\n  - A: slow-reply\n";
        let e = plan_for(&parse(text), "redis-sentinel").expect_err("replies pass the proxy");
        assert!(
            e.to_string()
                .contains("line 6: slow-reply cannot act on redis-sentinel"),
            "{e}"
        );
        let text = "name: x\nproviders: [redis]\nworkers: [A]\nsteps:\n  - A: acquire\n  \
                    - A: slow-reply\n  - nemesis: restart-empty redis-1\n";
        let plan = plan_for(&parse(text), "redis").expect("redis takes both");
        assert!(plan.link_proxy && plan.empties_data);
    }
}
