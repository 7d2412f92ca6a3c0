//! `fencecheck check <run-dir>`: re-checks a stored run offline with the pipeline's own check
//! phase ([`harness::run::check`]), writes `results.json`, prints one line per anomaly kind, and
//! exits 0 valid / 1 invalid / 2 unknown / 3 when the run directory itself is unusable (missing
//! history, a malformed line — the message names the file and line).

use harness::run::check::{check_run_dir, summary_table, write_results};
use results::layout::RESULTS;
use std::path::PathBuf;

/// Arguments of `fencecheck check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run directory (e.g. results/runs/latest) holding history.jsonl, resource.jsonl and
    /// test.yaml.
    pub run_dir: PathBuf,
    /// How many anomalies to describe after the table.
    #[arg(long, default_value_t = 5)]
    pub show: usize,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let verdict = check_run_dir(&args.run_dir)?;
    let out = args.run_dir.join(RESULTS);
    write_results(&out, &verdict)?;
    print!("{}", summary_table(&verdict, args.show));
    println!("results: {}", out.display());
    Ok(verdict.valid.exit_code())
}
