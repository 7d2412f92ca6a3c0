//! One test, as a short pipeline (docs/design.md, "How the code should read", 6). [`execute`] runs, in order:
//!
//! 1. **prepare** ([`prepare`]): the run directory, the resolved `test.yaml` (seed, image and the
//!    fault plan drawn from the seed), `state.json` (running), `harness.log`;
//! 2. **deploy** (phases 2–5, [`site`]): where the run lives — in containers ([`container_site`]:
//!    the node image, the run's network, the lock service and the stores a resource needs, the
//!    fenced resource, one container per worker, each checked ready with a real client) or in
//!    this process ([`in_process`], the memory provider);
//! 6. **workload** (phases 6–7, [`workload`]): every worker loops acquire → work → write →
//!    release while the nemesis runs its plan, for the time limit; every fault healed; the
//!    recovery window; the history is written as it happens, and the lock service's own record
//!    beside it ([`observe`]);
//! 8. **finish**: the site removes what it started (on every path) and `state.json` says how
//!    the run ended;
//! 9. **check** ([`check`]): the checkers over the history and the resource log →
//!    `results.json`;
//! 10. **report**: `report.html`, plots, `junit.xml`; the summary and the verdict's exit code.
//!
//! Steps 9–10 also run when recording failed part-way: what was recorded is checked and kept.
//! On Ctrl-C (SIGINT / SIGTERM) the signal thread tears the containers down, then checks the
//! partial history into `results.json` ([`check_interrupted`]) before the process exits 130.

pub mod check;
pub mod container_site;
pub mod deploy;
pub mod driven;
pub mod in_process;
pub mod launch;
pub mod lease_expiry;
pub mod links;
pub mod live;
pub mod observe;
pub mod prepare;
pub mod progress;
pub mod release;
pub mod settle;
pub mod shared_cluster;
pub mod site;
pub mod summary;
pub mod workload;

use crate::config::TestPlan;
use anyhow::Context;
use live::LiveView;
use prepare::HarnessLog;
use progress::Progress;
use results::layout::{self, RunDir};
use results::run_state::Stage;
use site::Site;
use std::path::{Path, PathBuf};

/// How to run (not what to test: that is the plan).
#[derive(Debug, Clone)]
pub struct Options {
    /// Root of the run store (`results/runs`).
    pub runs: PathBuf,
    /// No progress bar.
    pub quiet: bool,
    /// The cluster the run shares with other runs (a matrix's), instead of starting its own.
    pub cluster: Option<shared_cluster::OnCluster>,
}

/// Runs the plan and returns the exit code (docs/design.md, "Exit codes": 0 valid, 1 invalid, 2 unknown; an error
/// is 3).
pub fn execute(plan: TestPlan, options: &Options) -> anyhow::Result<u8> {
    execute_into(plan, options, &mut None)
}

/// [`execute`], also saying which run directory it created (`made`), whatever the outcome:
/// the matrix runs several cells at once and must not guess the directory from the store.
pub fn execute_into(
    mut plan: TestPlan,
    options: &Options,
    made: &mut Option<PathBuf>,
) -> anyhow::Result<u8> {
    // 1. prepare: a PyPI release's image first (a version the registry lacks stops here)
    release::prepare(&mut plan)?;
    let dir = prepare::create_run_dir(&options.runs, &plan)?;
    *made = Some(dir.path.clone());
    let log = HarnessLog::create(&dir)?;
    containers::docker::on_interrupt(check_interrupted);
    eprintln!(
        "fencecheck: {} (seed {}) → {}",
        plan.name,
        plan.seed,
        dir.path.display()
    );
    log.line(&format!("test {} seed {}", plan.name, plan.seed));
    let mut progress = Progress::new(
        options.quiet,
        (plan.time_limit.get() + plan.recovery.get()).max(std::time::Duration::from_secs(1)),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    // 2–8
    let live = LiveView::default();
    let on = options.cluster.as_ref();
    let recorded = runtime.block_on(record(&plan, &dir, &log, &mut progress, &live, on));
    if let Err(e) = &recorded {
        log.line(&format!("recording failed: {e:#}"));
    }
    prepare::finish(&dir.path, &recorded)?;
    // The libraries the adapters named, kept beside the history for the report, JUnit and
    // the matrix (`clients.txt`).
    let clients = match plan.client.adapter() {
        Some(_) => live.clients(),
        None => Vec::new(),
    };
    if !clients.is_empty() {
        let text: String = clients.iter().map(|c| format!("{c}\n")).collect();
        std::fs::write(dir.file(layout::CLIENTS), text)
            .with_context(|| format!("writing {}", layout::CLIENTS))?;
    }
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
    // An adapter's library and the version that ran, as the library reported itself, and the
    // pins installed with it.
    let pins = match plan.client.pins() {
        [] => String::new(),
        pins => format!(" with {}", pins.join(", ")),
    };
    for client in &clients {
        println!("client: {client}{pins}");
    }
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

/// Phases 2–8: deploy where the plan runs, record its workload, and finish the site whatever
/// happened (the first error wins, teardown problems included).
async fn record(
    plan: &TestPlan,
    dir: &RunDir,
    log: &HarnessLog,
    progress: &mut Progress,
    live: &LiveView,
    on: Option<&shared_cluster::OnCluster>,
) -> anyhow::Result<()> {
    let moments = live.moments.clone();
    let site: Box<dyn Site> = if plan.in_process() {
        Box::new(in_process::InProcessSite::deploy(plan, dir, log, progress, moments).await?)
    } else {
        let site = container_site::ContainerSite::deploy(plan, dir, log, progress, moments, on);
        Box::new(site.await?)
    };
    let recorded = workload::record(&*site, plan, dir, log, progress, live).await;
    progress.phase("teardown");
    let finished = site.finish().await;
    recorded?;
    finished
}

/// After an interrupt's teardown: marks the run interrupted, checks what it recorded and writes
/// `results.json`. An interrupted run is never a pass: a valid verdict becomes unknown
/// (anomalies found stand).
pub fn check_interrupted(dir: &Path) {
    let checked = prepare::mark(dir, Stage::Interrupted, Some(prepare::INTERRUPTED.into()))
        .and_then(|()| check::check_run_dir(dir))
        .and_then(|v| {
            check::write_results(&dir.join(layout::RESULTS), &v)?;
            Ok(v)
        });
    match checked {
        Ok(v) => eprint!(
            "fencecheck: the partial history of {} checked:\n{}results: {}\n",
            dir.display(),
            check::summary_table(&v, 3),
            dir.join(layout::RESULTS).display()
        ),
        Err(e) => eprintln!(
            "fencecheck: the partial history could not be checked now ({e:#}); it is kept: run \
             `fencecheck check {}`",
            dir.display()
        ),
    }
}

/// Phases 9–10: checks a recorded run, writes `results.json` and the report files.
pub fn check_and_report(dir: &RunDir, plan: &TestPlan) -> anyhow::Result<results::Verdict> {
    let verdict = check::check_run_dir(&dir.path)?;
    check::write_results(&dir.file(layout::RESULTS), &verdict)?;
    let stored = report::stored::StoredRun::load(&dir.path)
        .with_context(|| format!("reading {} back for the report", dir.path.display()))?;
    let mut input = stored.input();
    input.checked = &plan.fail_on;
    report::write_run_report(&dir.path, &input).context("writing the report")?;
    Ok(verdict)
}
