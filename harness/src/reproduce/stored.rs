//! A stored run read back for `reproduce` (and `shrink`): its test as written (`test.yaml`, the
//! fully resolved test), its verdict, its history and resource log. A directory that is not a
//! run, or an anomaly number it does not have, is a [`Refusal`] naming the directory and what
//! is missing.

use super::Refusal;
use crate::config::RawTest;
use results::layout::{HISTORY, RESULTS, TEST_YAML};
use results::store::RunReader;
use results::{Anomaly, Event, ResourceEntry, Verdict};
use std::path::{Path, PathBuf};

/// One run directory, read whole.
#[derive(Debug, Clone)]
pub struct Stored {
    pub dir: PathBuf,
    pub test: RawTest,
    /// The scenario this run replayed, when `fencecheck replay` made it.
    pub replay_of: Option<String>,
    pub verdict: Verdict,
    pub history: Vec<Event>,
    pub resource: Vec<ResourceEntry>,
}

impl Stored {
    /// Reads `dir`; a directory without a test, a history or a verdict is not a run to work
    /// from, and the message says which file is missing and how to get it.
    pub fn load(dir: &Path) -> Result<Stored, Refusal> {
        let reader = RunReader::open(dir);
        if !dir.is_dir() {
            return Err(Refusal::new(format!(
                "{} is not a run directory: no such directory",
                dir.display()
            )));
        }
        for (file, how) in [
            (TEST_YAML, "the resolved test"),
            (HISTORY, "the history"),
            (RESULTS, "the verdict: run `fencecheck check` on it first"),
        ] {
            if !reader.file(file).is_file() {
                return Err(Refusal::new(format!(
                    "{} is not a run directory: it has no {file} ({how})",
                    dir.display()
                )));
            }
        }
        let test_path = reader.file(TEST_YAML);
        let text = std::fs::read_to_string(&test_path)
            .map_err(|e| Refusal::new(format!("{}: {e}", test_path.display())))?;
        // A replay's run names its scenario beside the plan (`run::prepare`): the plan is the
        // rest.
        let replay_of = text
            .lines()
            .find_map(|l| l.strip_prefix("replay_scenario:"))
            .map(|n| n.trim().to_string());
        let plan: String = text
            .lines()
            .filter(|l| !l.starts_with("replay_"))
            .map(|l| format!("{l}\n"))
            .collect();
        let test: RawTest = serde_saphyr::from_str(&plan)
            .map_err(|e| Refusal::new(format!("{}: {e}", test_path.display())))?;
        let store = |e: results::store::StoreError| Refusal::new(e.to_string());
        Ok(Stored {
            dir: dir.to_path_buf(),
            test,
            replay_of,
            verdict: reader.verdict().map_err(store)?,
            history: reader.history().map_err(store)?,
            resource: reader.resource_log().map_err(store)?,
        })
    }

    /// Anomaly `number` (1-based, in `results.json` order).
    pub fn anomaly(&self, number: usize) -> Result<&Anomaly, Refusal> {
        let n = self.verdict.anomalies.len();
        if number == 0 || number > n {
            let have = match n {
                0 => "no anomalies".to_string(),
                1 => "1 anomaly (--anomaly 1)".to_string(),
                n => format!("{n} anomalies (--anomaly 1 to {n})"),
            };
            return Err(Refusal::new(format!(
                "--anomaly {number}: {} lists {have}",
                self.dir.join(RESULTS).display()
            )));
        }
        Ok(&self.verdict.anomalies[number - 1])
    }

    /// The number of the first anomaly that fails the run (what a red run is red for), else
    /// of the first one reported.
    pub fn first_failing(&self) -> Result<usize, Refusal> {
        let a = &self.verdict.anomalies;
        a.iter()
            .position(|x| x.fails)
            .or_else(|| (!a.is_empty()).then_some(0))
            .map(|i| i + 1)
            .ok_or_else(|| {
                Refusal::new(format!(
                    "{} reports no anomaly: there is nothing to reproduce",
                    self.dir.join(RESULTS).display()
                ))
            })
    }
}
