//! `fencecheck shrink <run dir>`: the smallest test that still shows the run's failing anomaly
//! kind ([`harness::shrink`]): each step printed as it ends, the smallest test written as a
//! test file with its reproduction rate, and the `reproduce` command offered on a run of it.
//! Exit 0 when a test showing the kind was written, 1 when the stored test did not show it
//! again in its tries (nothing to shrink), 3 when the directory is not a run or a flag is wrong.

use anyhow::Context;
use harness::config::validate;
use harness::reproduce::Stored;
use harness::shrink::{self, table, Budget, Candidate, Subprocess};
use results::{AnomalyKind, Dur};
use std::io::Write as _;
use std::path::PathBuf;

/// Arguments of `fencecheck shrink`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The stored run (e.g. results/runs/latest), checked (it has results.json).
    pub run_dir: PathBuf,
    /// The anomaly kind to keep (default: the kind of the run's first failing anomaly).
    #[arg(long)]
    pub kind: Option<String>,
    /// Tries per candidate; a reduction is kept when one of them shows the kind.
    #[arg(long, default_value_t = 3)]
    pub tries: usize,
    /// Runs of the smallest test at the end, for its reproduction rate.
    #[arg(long, default_value_t = 5)]
    pub confirm: usize,
    /// At most this many runs in all (the confirmation's included).
    #[arg(long, default_value_t = 30)]
    pub max_runs: usize,
    /// At most this long in all, e.g. 20m (a try that would not fit is not started).
    #[arg(long, default_value = "30m")]
    pub max_time: Dur,
    /// Where to write the smallest test (default: shrunk.yaml in the run directory).
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Where the tries' runs, test files and logs go (default: shrink/ in the run directory).
    #[arg(long)]
    pub work: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    anyhow::ensure!(args.tries > 0, "--tries 0: give at least 1");
    let stored = Stored::load(&args.run_dir)?;
    if let Some(scenario) = &stored.replay_of {
        anyhow::bail!(
            "{} is a replay of the scenario {scenario}: its steps are the scenario's, not a \
             workload a smaller test could keep; shrink a run of `fencecheck run` or a matrix",
            args.run_dir.display()
        );
    }
    let kind = match &args.kind {
        Some(k) => AnomalyKind::parse(k).ok_or_else(|| {
            anyhow::anyhow!(
                "--kind {k:?}: not an anomaly kind; use one of {}",
                AnomalyKind::ALL.map(|k| k.as_str()).join(", ")
            )
        })?,
        None => stored.anomaly(stored.first_failing()?)?.kind,
    };
    let test_yaml = args.run_dir.join(results::layout::TEST_YAML);
    let plan = validate(stored.test.clone(), 0)
        .map_err(|e| anyhow::anyhow!("{}: {e}", test_yaml.display()))?;
    let start = Candidate::from_plan(plan);
    let work = args
        .work
        .clone()
        .unwrap_or_else(|| args.run_dir.join("shrink"));
    let mut tries = Subprocess {
        exe: std::env::current_exe().context("finding the fencecheck binary")?,
        store: work.join("runs"),
        work: work.join("tests"),
    };
    let budget = Budget {
        runs: args.max_runs,
        time: args.max_time.get(),
        tries: args.tries,
        confirm: args.confirm,
    };
    println!(
        "shrinking {} for {kind}: {} (budget {} runs, {}; {} tries a step, {} to confirm)",
        args.run_dir.display(),
        start.summary(),
        budget.runs,
        args.max_time,
        budget.tries,
        budget.confirm
    );
    print!("{}", table::header());
    let mut print_row = |s: &shrink::Step| {
        print!("{}", table::row(s, kind));
        let _ = std::io::stdout().flush();
    };
    let shrunk = shrink::search(start, kind, budget, &mut tries, &mut print_row)?;
    print!("{}", table::summary(&shrunk));
    if !shrunk.reproduced() {
        println!(
            "nothing written: the stored test did not show {kind} again (tries: {})",
            work.display()
        );
        return Ok(1);
    }
    let (shown, of) = shrunk.rate();
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| args.run_dir.join("shrunk.yaml"));
    let mut best = shrunk.best.clone();
    best.plan.name = format!("{}-shrunk", stored.test.name.as_deref().unwrap_or("test"));
    let header = vec![
        format!(
            "The smallest test `fencecheck shrink {}` found that still shows {kind}:",
            args.run_dir.display()
        ),
        format!(
            "{kind} in {shown}/{of} of its last tries (seeds {} to {}); {} runs, {:.0} s.",
            best.plan.seed,
            best.plan.seed + of.saturating_sub(1) as u64,
            shrunk.runs,
            shrunk.wall.as_secs_f64()
        ),
        format!("Run it: fencecheck run --config {}", out.display()),
    ];
    std::fs::write(&out, best.to_yaml(&header)?)
        .with_context(|| format!("writing {}", out.display()))?;
    println!("smallest test: {}", out.display());
    if let Some(dir) = shrunk.showing_run() {
        println!(
            "next, a replay scenario from one of its runs: fencecheck reproduce {} -o scenarios/<name>.yaml",
            dir.display()
        );
    }
    Ok(0)
}
