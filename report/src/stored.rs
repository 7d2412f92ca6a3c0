//! A stored run read back, so its report can be rendered again without running anything —
//! after `fencecheck check` re-judged it, or when the report code improved. The files are read
//! by [`RunReader`] (its errors name the file); this picks out what a report shows of
//! `test.yaml`: its `name`, `seed` and the re-run comment line.

use std::path::{Path, PathBuf};

use super::ReportInput;
use results::layout::TEST_YAML;
use results::store::{RunReader, StoreError};
use results::{Event, ResourceEntry, Verdict};

/// Everything a report needs, owned.
#[derive(Debug, Clone)]
pub struct StoredRun {
    pub dir: PathBuf,
    pub test_name: String,
    pub config: serde_json::Value,
    pub seed: u64,
    pub rerun: String,
    /// The run directory's own name: its UTC start stamp.
    pub started: String,
    pub history: Vec<Event>,
    pub resource: Vec<ResourceEntry>,
    /// The lock service's own record; empty when the run has none.
    pub service: Vec<results::service_log::ServiceEntry>,
    pub verdict: Verdict,
    /// The libraries the adapters reported (`clients.txt`), empty for a recipe.
    pub clients: Vec<String>,
}

impl StoredRun {
    /// Reads a run directory. `results.json` must exist (run `fencecheck check <dir>` first); a
    /// torn last line of a log is left out, as the verdict already says the log was cut off.
    pub fn load(dir: &Path) -> Result<StoredRun, StoreError> {
        let run = RunReader::open(dir);
        let yaml = run.test_yaml()?;
        let verdict = run.verdict()?;
        let history = run.history()?;
        let resource = run.resource_log()?;
        let service = run.service_log()?.unwrap_or_default();
        let clients = run.clients()?;
        let dir_name = |p: &Path| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let config = yaml.value;
        let test_name = config
            .get("name")
            .and_then(|n| n.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| dir.parent().map(dir_name).unwrap_or_default());
        let seed = config.get("seed").and_then(|s| s.as_u64()).unwrap_or(0);
        let rerun = rerun_line(&yaml.text).unwrap_or_else(|| {
            format!("fencecheck run --config {}", run.file(TEST_YAML).display())
        });
        Ok(StoredRun {
            dir: dir.to_path_buf(),
            test_name,
            config,
            seed,
            rerun,
            started: dir_name(dir),
            history,
            resource,
            service,
            verdict,
            clients,
        })
    }

    /// The report input; `checked` is left empty: the checkers' per-kind stats say what ran.
    pub fn input(&self) -> ReportInput<'_> {
        ReportInput {
            test_name: &self.test_name,
            config: &self.config,
            seed: self.seed,
            rerun: &self.rerun,
            started: Some(&self.started),
            run_end: None,
            history: &self.history,
            resource: &self.resource,
            service: &self.service,
            verdict: &self.verdict,
            checked: &[],
            process_workers: Default::default(),
            clients: &self.clients,
        }
    }
}

/// The `#   fencecheck run ...` comment the harness writes at the top of `test.yaml`.
fn rerun_line(yaml: &str) -> Option<String> {
    yaml.lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim())
        .find(|l| l.starts_with("fencecheck "))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_rerun_comment_of_test_yaml() {
        let yaml = "# The fully resolved test of this run. Re-run it with:\n#   fencecheck run --seed 7\nname: x\n";
        assert_eq!(rerun_line(yaml).as_deref(), Some("fencecheck run --seed 7"));
        assert_eq!(rerun_line("name: x\n# fencecheck run\n"), None);
    }
}
