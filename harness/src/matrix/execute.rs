//! Runs a matrix: every cell × seed, one at a time, each a full `fencecheck run` through
//! [`crate::run::execute`] (its own cluster, started and torn down per run: clusters are not
//! reused between cells), then reads each run back from its directory, judges every cell and
//! writes `matrix.md`, `matrix.html` and `matrix.json` into `<runs>/matrix/<name>/<UTC stamp>/`
//! (with `<runs>/matrix/<name>/latest` pointing at it).
//!
//! A harness error in one run is recorded against its cell and the matrix goes on: one flaky
//! container start must not hide the other 35 results.

use super::judge::{self, CellSummary};
use super::outcome::RunOutcome;
use super::spec::Matrix;
use super::{html, table};
use anyhow::Context;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Everything the matrix found; `matrix.json` is this value.
#[derive(Debug, Clone, Serialize)]
pub struct MatrixReport {
    pub name: String,
    pub stamp: String,
    pub config: String,
    pub seeds: Vec<u64>,
    pub wall_secs: f64,
    pub exit_code: u8,
    /// The run store the report links into.
    pub runs_root: PathBuf,
    /// Where `matrix.md` / `.html` / `.json` are.
    pub dir: PathBuf,
    pub cells: Vec<CellSummary>,
}

/// Runs every cell × seed and writes the matrix files. `config` is only printed (where the
/// matrix came from). Returns the report (its `exit_code` is the process's).
pub fn execute(matrix: &Matrix, config: &str, runs: &Path) -> anyhow::Result<MatrixReport> {
    let started = Instant::now();
    let stamp = results::layout::utc_stamp_now();
    let total: usize = matrix.cells.iter().map(|c| c.plans.len()).sum();
    let mut done = 0;
    let mut cells = Vec::new();
    for (i, cell) in matrix.cells.iter().enumerate() {
        let mut outcomes = Vec::new();
        for plan in &cell.plans {
            done += 1;
            eprintln!(
                "matrix: cell {}/{} seed {} (run {done}/{total}) {} — elapsed {}",
                i + 1,
                matrix.cells.len(),
                plan.seed,
                cell.label,
                elapsed(started)
            );
            let outcome = run_one(plan.clone(), runs);
            eprintln!("matrix:   → {}", outcome_line(&outcome));
            outcomes.push(outcome);
        }
        cells.push(judge::summarise(&cell.label, &cell.expect, outcomes));
    }
    let dir = out_dir(runs, &matrix.name, &stamp)?;
    let report = MatrixReport {
        name: matrix.name.clone(),
        stamp,
        config: config.to_string(),
        seeds: matrix.seeds.clone(),
        wall_secs: started.elapsed().as_secs_f64(),
        exit_code: judge::exit_code(&cells),
        runs_root: runs.to_path_buf(),
        dir: dir.clone(),
        cells,
    };
    write(&dir.join("matrix.md"), &table::render(&report))?;
    write(&dir.join("matrix.html"), &html::render(&report))?;
    let json = serde_json::to_string_pretty(&report).context("serializing matrix.json")?;
    write(&dir.join("matrix.json"), &json)?;
    Ok(report)
}

/// One run through the lead's pipeline, then read back from its directory.
fn run_one(plan: crate::config::TestPlan, runs: &Path) -> RunOutcome {
    let seed = plan.seed;
    let parent = runs.join(&plan.name);
    let before = entries(&parent);
    let t0 = Instant::now();
    let result = crate::run::execute(
        plan,
        &crate::run::Options {
            runs: runs.to_path_buf(),
            quiet: true,
        },
    );
    let wall = t0.elapsed().as_secs_f64();
    let dir = new_entry(&parent, &before);
    let read = |dir: &Path| RunOutcome::read(seed, dir, wall);
    match (result, dir) {
        (Ok(_), Some(dir)) => read(&dir)
            .unwrap_or_else(|e| RunOutcome::failed(seed, Some(dir), format!("{e:#}"), wall)),
        (Ok(_), None) => RunOutcome::failed(
            seed,
            None,
            format!(
                "the run finished but no new run directory appeared under {}",
                parent.display()
            ),
            wall,
        ),
        (Err(e), dir) => {
            // What the run recorded before it failed is checked and kept, but a run that stopped
            // early is not a measurement of the cell: count it as a harness error, keep the link.
            let mut o = RunOutcome::failed(seed, dir.clone(), format!("{e:#}"), wall);
            if let Some(Ok(partial)) = dir.as_deref().map(read) {
                o.kinds = partial.kinds;
                o.acquire_us = partial.acquire_us;
            }
            o
        }
    }
}

fn entries(dir: &Path) -> BTreeSet<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default()
}

/// The run directory this run created: the entry that was not there before (the newest, if
/// someone else ran the same test meanwhile).
fn new_entry(dir: &Path, before: &BTreeSet<PathBuf>) -> Option<PathBuf> {
    entries(dir)
        .into_iter()
        .filter(|p| !before.contains(p) && p.is_dir())
        .max()
}

fn out_dir(runs: &Path, name: &str, stamp: &str) -> anyhow::Result<PathBuf> {
    let parent = runs.join("matrix").join(name);
    let mut dir = parent.join(stamp);
    let mut n = 1;
    while dir.exists() {
        n += 1;
        dir = parent.join(format!("{stamp}-{n}"));
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let latest = parent.join("latest");
    let tmp = parent.join(format!(".latest-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let target = dir.file_name().map(PathBuf::from).unwrap_or_default();
    std::os::unix::fs::symlink(&target, &tmp)
        .and_then(|()| std::fs::rename(&tmp, &latest))
        .with_context(|| format!("cannot point {} at {}", latest.display(), dir.display()))?;
    Ok(dir)
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

fn elapsed(t: Instant) -> String {
    let s = t.elapsed().as_secs();
    format!("{}m{:02}s", s / 60, s % 60)
}

fn outcome_line(o: &RunOutcome) -> String {
    let verdict = match (&o.error, o.validity) {
        (Some(e), _) => format!("harness error: {}", e.lines().next().unwrap_or_default()),
        (None, Some(v)) => format!("exit {}", v.exit_code()),
        (None, None) => "no verdict".into(),
    };
    let kinds: Vec<String> = o
        .kinds
        .iter()
        .map(|(k, s)| format!("{k}{}", if s.fails { "" } else { " (observed)" }))
        .collect();
    format!(
        "{verdict}{} in {:.1}s",
        if kinds.is_empty() {
            String::new()
        } else {
            format!(" [{}]", kinds.join(", "))
        },
        o.wall_secs
    )
}
