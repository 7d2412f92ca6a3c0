//! The seam that runs one try of a candidate: [`Subprocess`] runs `fencecheck run --config
//! <its file>` (the very command a user would), in a store of the shrink's own, and reads
//! which anomaly kinds the run's `results.json` reports. A test of the search puts a fake here.

use super::Candidate;
use anyhow::Context;
use results::store::RunReader;
use results::AnomalyKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One try's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Tried {
    pub seed: u64,
    /// Every kind the run reported (failing or observed).
    pub kinds: Vec<AnomalyKind>,
    /// The run directory, when one was made.
    pub dir: Option<PathBuf>,
    /// The run's exit code (3: it could not run; the log says why).
    pub exit: i32,
    pub wall: Duration,
}

impl Tried {
    pub fn shows(&self, kind: AnomalyKind) -> bool {
        self.kinds.contains(&kind)
    }
}

/// Runs one try of a candidate.
pub trait Tries {
    /// Runs `candidate` (already named and seeded for this try).
    fn run(&mut self, candidate: &Candidate) -> anyhow::Result<Tried>;
}

/// Tries as `fencecheck run` processes of the binary `exe`, their runs stored under `store`,
/// each try's test file and output kept under `work`.
#[derive(Debug, Clone)]
pub struct Subprocess {
    pub exe: PathBuf,
    pub store: PathBuf,
    pub work: PathBuf,
}

impl Tries for Subprocess {
    fn run(&mut self, c: &Candidate) -> anyhow::Result<Tried> {
        let name = &c.plan.name;
        std::fs::create_dir_all(&self.work)
            .with_context(|| format!("creating {}", self.work.display()))?;
        let file = self.work.join(format!("{name}-seed{}.yaml", c.plan.seed));
        std::fs::write(
            &file,
            c.to_yaml(&["a try of fencecheck shrink".to_string()])?,
        )
        .with_context(|| format!("writing {}", file.display()))?;
        let log = self.work.join(format!("{name}-seed{}.log", c.plan.seed));
        let out = std::fs::File::create(&log).with_context(|| format!("{}", log.display()))?;
        let before = runs_of(&self.store, name);
        let start = Instant::now();
        let status = Command::new(&self.exe)
            .arg("run")
            .arg("--config")
            .arg(&file)
            .arg("--quiet")
            .arg("--runs")
            .arg(&self.store)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .status()
            .with_context(|| format!("starting {} run", self.exe.display()))?;
        let wall = start.elapsed();
        let dir = runs_of(&self.store, name)
            .into_iter()
            .find(|d| !before.contains(d));
        let kinds = dir
            .as_deref()
            .and_then(|d| RunReader::open(d).verdict().ok())
            .map(|v| v.anomalies.iter().map(|a| a.kind).collect())
            .unwrap_or_default();
        Ok(Tried {
            seed: c.plan.seed,
            kinds,
            dir,
            exit: status.code().unwrap_or(-1),
            wall,
        })
    }
}

/// The run directories of test `name` in `store`.
fn runs_of(store: &Path, name: &str) -> Vec<PathBuf> {
    std::fs::read_dir(store.join(name))
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}
