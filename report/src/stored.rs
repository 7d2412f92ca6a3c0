//! A stored run read back, so its report can be rendered again without running anything —
//! after `fencecheck check` re-judged it, or when the report code improved. Reads `test.yaml`
//! (shown as the configuration; `name`, `seed` and the re-run comment line are picked out),
//! `history.jsonl`, `resource.jsonl` (optional) and `results.json`.

use std::path::{Path, PathBuf};

use super::ReportInput;
use results::jsonl::{JsonlError, JsonlReader};
use results::layout::{HISTORY, RESOURCE_LOG, RESULTS, TEST_YAML};
use results::{Event, ResourceEntry, Verdict};

/// Why a run directory cannot be rendered; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Jsonl(#[from] JsonlError),
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
}

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
    pub verdict: Verdict,
}

/// Every line but a torn last one (a crash mid-write): the verdict already says the history
/// was cut off.
fn whole<T>(line: &Result<T, JsonlError>) -> bool {
    !matches!(line, Err(JsonlError::TornTail { .. }))
}

impl StoredRun {
    /// Reads a run directory. `results.json` must exist (run `fencecheck check <dir>` first).
    pub fn load(dir: &Path) -> Result<StoredRun, LoadError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read_to_string(&path).map_err(|source| LoadError::Read { path, source })
        };
        let yaml_path = dir.join(TEST_YAML);
        let yaml = if yaml_path.is_file() {
            read(TEST_YAML)?
        } else {
            String::new()
        };
        let config: serde_json::Value = if yaml.trim().is_empty() {
            serde_json::Value::Null
        } else {
            serde_saphyr::from_str(&yaml).map_err(|e| LoadError::Parse {
                path: yaml_path.clone(),
                message: e.to_string(),
            })?
        };
        let verdict: Verdict =
            serde_json::from_str(&read(RESULTS)?).map_err(|e| LoadError::Parse {
                path: dir.join(RESULTS),
                message: e.to_string(),
            })?;
        // A torn last line (a crash mid-write) is left out: the verdict already says so.
        let history = JsonlReader::<Event>::open(&dir.join(HISTORY))?
            .take_while(whole)
            .map(|line| line.map(|(_, e)| e))
            .collect::<Result<Vec<_>, _>>()?;
        let resource = if dir.join(RESOURCE_LOG).is_file() {
            JsonlReader::<ResourceEntry>::open(&dir.join(RESOURCE_LOG))?
                .take_while(whole)
                .map(|line| line.map(|(_, r)| r))
                .collect::<Result<Vec<_>, _>>()?
        } else {
            Vec::new()
        };
        let dir_name = |p: &Path| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let test_name = config
            .get("name")
            .and_then(|n| n.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| dir.parent().map(dir_name).unwrap_or_default());
        let seed = config.get("seed").and_then(|s| s.as_u64()).unwrap_or(0);
        let rerun = rerun_line(&yaml)
            .unwrap_or_else(|| format!("fencecheck run --config {}", yaml_path.display()));
        Ok(StoredRun {
            dir: dir.to_path_buf(),
            test_name,
            config,
            seed,
            rerun,
            started: dir_name(dir),
            history,
            resource,
            verdict,
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
            verdict: &self.verdict,
            checked: &[],
            process_workers: Default::default(),
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
