//! `fencecheck replay <scenario.yaml> [--provider P] [--runs DIR]`: replays a scripted incident
//! against each provider the scenario names (or only `--provider`), records a normal run
//! directory per provider, prints the step table and every anomaly's evidence, and exits 0 when
//! every expectation held, 1 when one did not (the step and why are printed), 3 when the
//! scenario is malformed (file:line, before any container starts) or the harness fails.

use anyhow::Context;
use harness::replay::{execute, scenario, table};
use std::path::PathBuf;

/// Arguments of `fencecheck replay`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The scenario file (see scenarios/ for examples).
    pub scenario: PathBuf,
    /// Run only against this provider (one the scenario names).
    #[arg(long)]
    pub provider: Option<String>,
    /// Root of the run store.
    #[arg(long, default_value = "results/runs")]
    pub runs: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let path = &args.scenario;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read scenario {}", path.display()))?;
    let sc = scenario::parse(&text).map_err(|e| {
        if e.line == 0 {
            anyhow::anyhow!("{}: {}", path.display(), e.message)
        } else {
            anyhow::anyhow!("{}:{}: {}", path.display(), e.line, e.message)
        }
    })?;
    let providers: Vec<String> = match &args.provider {
        Some(p) if sc.providers.iter().any(|x| x == p) => vec![p.clone()],
        Some(p) => anyhow::bail!(
            "--provider {p}: the scenario {} names only {}",
            sc.name,
            sc.providers.join(", ")
        ),
        None => sc.providers.clone(),
    };
    // Every plan is validated, and its library release's image made ready, before the first
    // container starts.
    let mut plans = providers
        .iter()
        .map(|p| execute::plan_for(&sc, p).with_context(|| format!("{}", path.display())))
        .collect::<anyhow::Result<Vec<_>>>()?;
    for plan in &mut plans {
        harness::run::release::prepare(plan)?;
    }
    let mut all_passed = true;
    for plan in &plans {
        let replayed = execute::replay(&sc, path, plan, &args.runs)?;
        print!("{}", table::render(&sc.name, &replayed));
        all_passed &= replayed.passed();
    }
    Ok(if all_passed { 0 } else { 1 })
}
