//! One test, as a short pipeline (STYLE.md rule 6). [`execute`] runs, in order:
//!
//! 1. **prepare** ([`prepare`]): the run directory, the resolved `test.yaml` (seed, image and the
//!    fault plan drawn from the seed), `harness.log`;
//! 2. **image**: the node image, built if missing;
//! 3. **cluster** ([`deploy`]): the run's Docker network, the lock service (and a store the
//!    resource needs), started concurrently and checked ready with a real client;
//! 4. **resource**: the fenced resource server, logging every decision to `resource.jsonl`;
//! 5. **workers**: one container per lock client;
//! 6. **workload** ([`record`]): every worker loops acquire → work → write → release while the
//!    nemesis runs its plan, for the time limit; the history is written as it happens;
//! 7. **heal + recovery**: every fault healed, then a recovery window in which the workload goes
//!    on (liveness: `stuck-lock` looks here);
//! 8. **stop** and **teardown**: containers and the network removed (on every path);
//! 9. **check**: the checkers over the history and the resource log → `results.json`;
//! 10. **report**: `report.html`, plots, `junit.xml`; the summary and the verdict's exit code.
//!
//! Steps 9–10 also run when recording failed part-way: what was recorded is checked and kept.
//! On Ctrl-C (SIGINT / SIGTERM) the signal thread tears the containers down, then checks the
//! partial history into `results.json` ([`check_interrupted`]) before the process exits 130.

pub mod deploy;
pub mod in_process;
pub mod live;
pub mod prepare;
pub mod progress;
pub mod record;
pub mod summary;

use crate::config::TestPlan;
use anyhow::Context;
use results::layout::{self, RunDir};
use results::run_state::Stage;
use std::path::{Path, PathBuf};

/// How to run (not what to test: that is the plan).
#[derive(Debug, Clone)]
pub struct Options {
    /// Root of the run store (`results/runs`).
    pub runs: PathBuf,
    /// No progress bar.
    pub quiet: bool,
}

/// Runs the plan and returns the exit code (DESIGN.md: 0 valid, 1 invalid, 2 unknown; an error
/// is 3).
pub fn execute(plan: TestPlan, options: &Options) -> anyhow::Result<u8> {
    // 1. prepare
    let faults = record::fault_plan(&plan)?;
    let dir = prepare::create_run_dir(&options.runs, &plan)?;
    let extra = format!(
        "fault_plan:\n{}",
        faults
            .lines()
            .iter()
            .map(|l| format!("  - {l}\n"))
            .collect::<String>()
    );
    prepare::write_test_yaml(
        &dir,
        &plan,
        Some(if faults.steps.is_empty() {
            "fault_plan: []\n"
        } else {
            &extra
        }),
    )?;
    let log = prepare::HarnessLog::create(&dir)?;
    crate::docker::on_interrupt(check_interrupted);
    eprintln!(
        "fencecheck: {} (seed {}) → {}",
        plan.name,
        plan.seed,
        dir.path.display()
    );
    log.line(&format!("test {} seed {}", plan.name, plan.seed));

    let mut progress = progress::Progress::new(
        options.quiet,
        (plan.time_limit.get() + plan.recovery.get()).max(std::time::Duration::from_secs(1)),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    // 2–8
    let recorded = runtime.block_on(async {
        if plan.provider == crate::config::Provider::Memory {
            in_process::record(&plan, &dir, &log, &mut progress).await
        } else {
            record::record(&plan, &dir, &log, &mut progress, &faults).await
        }
    });
    if let Err(e) = &recorded {
        log.line(&format!("recording failed: {e:#}"));
    }
    prepare::finish(&dir.path, &recorded)?;
    if !dir.history().is_file() {
        progress.finish();
        return Err(recorded
            .err()
            .unwrap_or_else(|| anyhow::anyhow!("no history was recorded")));
    }
    // 9–10
    progress.phase("check");
    let verdict = check_and_report(&dir, &plan)?;
    let phases = progress.finish();
    log.line(&format!("phases:\n{phases}"));
    eprint!("{phases}");
    print!(
        "{}",
        summary::render(
            &verdict,
            &dir.path,
            &plan.rerun_command(&dir.file(layout::TEST_YAML))
        )
    );
    match recorded {
        Ok(()) => Ok(verdict.valid.exit_code()),
        Err(e) => Err(e.context(format!(
            "the run stopped early; what it recorded is checked and kept in {}",
            dir.path.display()
        ))),
    }
}

/// After an interrupt's teardown: marks the run interrupted, checks what it recorded and writes
/// `results.json`. An interrupted run is never a pass: a valid verdict becomes unknown
/// (anomalies found stand).
pub fn check_interrupted(dir: &Path) {
    let checked = prepare::mark(dir, Stage::Interrupted, Some(prepare::INTERRUPTED.into()))
        .and_then(|()| check_run_dir(dir))
        .and_then(|v| {
            crate::commands::check::write_results(&dir.join(layout::RESULTS), &v)?;
            Ok(v)
        });
    match checked {
        Ok(v) => eprint!(
            "fencecheck: the partial history of {} checked:\n{}results: {}\n",
            dir.display(),
            crate::commands::check::summary_table(&v, 3),
            dir.join(layout::RESULTS).display()
        ),
        Err(e) => eprintln!(
            "fencecheck: the partial history could not be checked now ({e:#}); it is kept: run \
             `fencecheck check {}`",
            dir.display()
        ),
    }
}

/// The check of a run's directory: `state.json` says whether the run finished (the signal
/// thread marks it interrupted before it gets here).
fn check_run_dir(dir: &Path) -> anyhow::Result<results::Verdict> {
    crate::commands::check::check_run_dir(dir)
}

/// Checks a recorded run, writes `results.json` and the report files.
pub fn check_and_report(dir: &RunDir, plan: &TestPlan) -> anyhow::Result<results::Verdict> {
    let verdict = check_run_dir(&dir.path)?;
    crate::commands::check::write_results(&dir.file(layout::RESULTS), &verdict)?;
    let stored = report::stored::StoredRun::load(&dir.path)
        .with_context(|| format!("reading {} back for the report", dir.path.display()))?;
    let mut input = stored.input();
    input.checked = &plan.fail_on;
    report::write_run_report(&dir.path, &input).context("writing the report")?;
    Ok(verdict)
}
