//! Test configuration: raw YAML and flags → one validated [`TestPlan`] (docs/design.md, "How the code should read", 9).
//!
//! - [`raw`]: what the user wrote (all optional, unknown keys rejected).
//! - [`validate`]: the rules, one concern per file, with messages that say what to write
//!   instead; it returns typed pieces, so nothing downstream parses again.
//! - [`plan`]: the resolved test; [`plan_file`]: the same written out as each run's `test.yaml`.
//! - [`duration`]: `2s` / `500ms` durations (results', so a stored run reads them alike).
//! - [`clients`]: the lock clients a test can name (recipes, shipped and own adapters).

pub mod clients;
// The data model owns the one duration type; config's files name it through here.
pub use results::duration;
pub mod plan;
pub mod plan_file;
pub mod raw;
pub mod validate;

pub use clients::{AdapterPlan, LockClient};
pub use duration::Dur;
pub use plan::{
    CounterStore, Discipline, Faults, MemoryBug, Provider, RecipeKind, ResourceKind, TestPlan,
    Workload,
};
pub use raw::RawTest;
pub use validate::{validate, ConfigError, DEFAULT_TIME_LIMIT};

use std::path::Path;

/// Reads a test file. Errors name the file, and the line and column when the YAML says where.
pub fn load_file(path: &Path) -> anyhow::Result<RawTest> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("{}: cannot read test file: {e}", path.display()))?;
    serde_saphyr::from_str::<RawTest>(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}
