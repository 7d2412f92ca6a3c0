//! `fencecheck reproduce <run dir> [--anomaly N] [-o scenario.yaml]`: a replay scenario made
//! from one anomaly's evidence ([`harness::reproduce`]), written where asked, then replayed to
//! show whether the anomaly comes back. Exit 0 when it came back (every expectation of the
//! scenario held, the anomaly among them), 1 when it did not, 3 when the directory is not a
//! run, the anomaly number is out of range, or a replay cannot express the anomaly (the message
//! says why).

use anyhow::Context;
use harness::replay::{execute, scenario, table};
use harness::reproduce::{self, Stored};
use std::path::PathBuf;

/// Arguments of `fencecheck reproduce`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The stored run (e.g. results/runs/latest), checked (it has results.json).
    pub run_dir: PathBuf,
    /// Which anomaly of its results.json, counted from 1 (default: the first that fails the
    /// run).
    #[arg(long)]
    pub anomaly: Option<usize>,
    /// Where to write the scenario (default: reproduce-<N>.yaml in the run directory); the
    /// scenario is named after the file.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Write the scenario only; do not replay it.
    #[arg(long)]
    pub no_replay: bool,
    /// Root of the run store for the replay's run.
    #[arg(long, default_value = "results/runs")]
    pub runs: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let stored = Stored::load(&args.run_dir)?;
    let number = match args.anomaly {
        Some(n) => n,
        None => stored.first_failing()?,
    };
    // A scenario written where asked is named after its file (`-o scenarios/my-incident.yaml`).
    let name = args
        .output
        .as_ref()
        .and_then(|o| o.file_stem())
        .and_then(|s| s.to_str())
        .filter(|s| {
            s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        });
    let made = reproduce::make(&stored, number, name)?;
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| args.run_dir.join(format!("reproduce-{number}.yaml")));
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(&path, &made.text).with_context(|| format!("writing {}", path.display()))?;
    println!(
        "anomaly {number} ({}): {} steps, workers:",
        made.kind, made.steps
    );
    for c in &made.cast {
        println!("  {c}");
    }
    println!("scenario: {}", path.display());
    if args.no_replay {
        println!("replay it: fencecheck replay {}", path.display());
        return Ok(0);
    }
    let sc = scenario::parse(&made.text)
        .map_err(|e| anyhow::anyhow!("{}:{}: {}", path.display(), e.line, e.message))?;
    let mut plan =
        execute::plan_for(&sc, &sc.providers[0]).with_context(|| format!("{}", path.display()))?;
    harness::run::release::prepare(&mut plan)?;
    let replayed = execute::replay(&sc, &path, &plan, &args.runs)?;
    print!("{}", table::render(&sc.name, &replayed));
    let back = replayed
        .verdict
        .as_ref()
        .is_some_and(|v| v.anomalies.iter().any(|a| a.kind == made.kind));
    if back && replayed.passed() {
        println!(
            "reproduced: {} came back, every expectation held; the scenario is a regression \
             test: fencecheck replay {}",
            made.kind,
            path.display()
        );
        Ok(0)
    } else {
        println!(
            "not reproduced: {}",
            if back {
                format!(
                    "{} came back, but an expectation did not hold (above)",
                    made.kind
                )
            } else {
                format!("the replay showed no {}", made.kind)
            }
        );
        Ok(1)
    }
}
