//! Test configuration: raw YAML and flags → one validated [`TestPlan`] (STYLE.md rule 9).
//!
//! - [`raw`]: what the user wrote (all optional, unknown keys rejected).
//! - [`validate`]: the rules, with messages that say what to write instead.
//! - [`plan`]: the resolved test, also written to `test.yaml` of each run.
//! - [`duration`]: `2s` / `500ms` durations.

pub mod duration;
pub mod plan;
pub mod raw;
pub mod validate;

pub use duration::Dur;
pub use plan::{Discipline, Provider, Renewal, TestPlan, Workload};
pub use raw::RawTest;
pub use validate::{validate, ConfigError};

use std::path::Path;

/// Reads a test file. Errors name the file, and the line and column when the YAML says where.
pub fn load_file(path: &Path) -> anyhow::Result<RawTest> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("{}: cannot read test file: {e}", path.display()))?;
    serde_saphyr::from_str::<RawTest>(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}
