//! One test, as a short pipeline (STYLE.md rule 6).

pub mod live;
pub mod prepare;
pub mod progress;
pub mod summary;

use crate::config::TestPlan;
use std::path::PathBuf;

/// How to run (not what to test: that is the plan).
#[derive(Debug, Clone)]
pub struct Options {
    /// Root of the run store (`results/runs`).
    pub runs: PathBuf,
    /// No progress bar.
    pub quiet: bool,
}

/// Runs the plan and returns the exit code.
pub fn execute(plan: TestPlan, _options: &Options) -> anyhow::Result<u8> {
    anyhow::bail!("the run pipeline for {} is not built yet", plan.name)
}
