//! Runs a matrix: every cell × seed (or one shard's cells, `--shard I/N`), `jobs` runs at a
//! time, each a full `fencecheck run` through [`crate::run::execute_into`]: on a cluster of the
//! [`Pool`] where its faults and resource let it share one, else on its own,
//! then reads each run back from its directory, judges every cell and writes `matrix.md`,
//! `matrix.html` and `matrix.json` into `<runs>/matrix/<name>/<UTC stamp>[-shard-I-of-N]/`
//! (with `<runs>/matrix/<name>/latest` pointing at it).
//!
//! A harness error in one run is recorded against its cell and the matrix goes on: one flaky
//! container start must not hide the other 35 results.

use super::judge::{self, CellSummary};
use super::load::{self, Load};
use super::outcome::RunOutcome;
use super::pool::Pool;
use super::shard::{self, Shard};
use super::spec::Matrix;
use super::{html, table};
use crate::run::shared_cluster::OnCluster;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

/// Everything the matrix found; `matrix.json` is this value (and what `matrix merge` reads).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MatrixReport {
    pub name: String,
    pub stamp: String,
    pub config: String,
    /// sha256 of the matrix file's text: shards of different files are not merged.
    #[serde(default)]
    pub config_sha256: String,
    pub seeds: Vec<u64>,
    pub wall_secs: f64,
    pub exit_code: u8,
    /// The share of the cells this report holds (`--shard`), none for the whole matrix.
    #[serde(default)]
    pub shard: Option<Shard>,
    /// How busy each machine was: one entry, or one per shard after a merge.
    #[serde(default)]
    pub load: Vec<Load>,
    /// The run store the report links into.
    pub runs_root: PathBuf,
    /// Where `matrix.md` / `.html` / `.json` are.
    pub dir: PathBuf,
    pub cells: Vec<CellSummary>,
    /// Why the cells that started clusters of their own could not share one, a line per
    /// reason ([`super::plan::sharing`]).
    #[serde(default)]
    pub own_clusters: Vec<String>,
}

/// How to run a matrix (not what: that is the file).
#[derive(Debug, Clone)]
pub struct Options {
    /// The file's path, only printed, and its text, hashed into the report.
    pub config: String,
    pub config_text: String,
    pub runs: PathBuf,
    pub shard: Option<Shard>,
    /// Runs at once (≥ 1).
    pub jobs: usize,
    /// Every run starts and tears down a cluster of its own, as `fencecheck run` does, even
    /// where it could share one (docs/design.md, "Shared clusters").
    pub own_clusters: bool,
}

/// sha256 of a matrix file's text, hex.
pub fn config_sha256(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Runs the cells (all, or the shard's) × seeds and writes the matrix files. Returns the report
/// (its `exit_code` is the process's).
pub fn execute(matrix: &Matrix, options: &Options) -> anyhow::Result<MatrixReport> {
    let started = Instant::now();
    let stamp = results::layout::utc_stamp_now();
    let chosen: Vec<usize> = match options.shard {
        Some(s) => shard::cells_of(&matrix.cells, s),
        None => (0..matrix.cells.len()).collect(),
    };
    // Every (cell, seed) run, in file order; `jobs` threads take the next one in turn.
    let work: Vec<(usize, usize)> = chosen
        .iter()
        .flat_map(|&c| (0..matrix.cells[c].plans.len()).map(move |p| (c, p)))
        .collect();
    let total = work.len();
    let next = Mutex::new(0usize);
    let outcomes: Mutex<Vec<Option<RunOutcome>>> = Mutex::new(vec![None; total]);
    let sampler = load::Sampler::start();
    let jobs = options.jobs.clamp(1, total.max(1));
    let pool = match options.own_clusters {
        true => None,
        false => Some(Pool::new(&options.runs.join("clusters").join(&stamp))?),
    };
    let pool = pool.as_ref();
    std::thread::scope(|scope| {
        for slot in 0..jobs {
            let (next, outcomes, work) = (&next, &outcomes, &work);
            scope.spawn(move || loop {
                let n = {
                    let Ok(mut next) = next.lock() else { return };
                    let n = *next;
                    *next += 1;
                    n
                };
                let Some(&(c, p)) = work.get(n) else { return };
                let cell = &matrix.cells[c];
                let plan = &cell.plans[p];
                eprintln!(
                    "matrix: cell {}/{} seed {} (run {}/{total}) {} — elapsed {}",
                    c + 1,
                    matrix.cells.len(),
                    plan.seed,
                    n + 1,
                    cell.label,
                    elapsed(started)
                );
                let mut plan = plan.clone();
                if jobs > 1 {
                    plan.docker_slot = Some(slot as u32 + 1);
                }
                let outcome = run_placed(plan, &options.runs, pool);
                eprintln!("matrix:   → {} {}", cell.label, outcome_line(&outcome));
                if let Ok(mut all) = outcomes.lock() {
                    all[n] = Some(outcome);
                }
            });
        }
    });
    for e in pool.map(Pool::finish).unwrap_or_default() {
        eprintln!("matrix: {e}");
    }
    let mut outcomes = outcomes
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a matrix thread panicked"))?
        .into_iter();
    let mut cells = Vec::new();
    for &c in &chosen {
        let cell = &matrix.cells[c];
        let runs: Vec<RunOutcome> = (0..cell.plans.len())
            .filter_map(|_| outcomes.next().flatten())
            .collect();
        let mut summary = judge::summarise(&cell.label, &cell.expect, runs);
        summary.index = c;
        cells.push(summary);
    }
    let wall_secs = started.elapsed().as_secs_f64();
    let shard_label = options.shard.map(|s| s.to_string());
    let load = sampler.finish(shard_label, jobs, wall_secs);
    let suffix = match options.shard {
        Some(s) => format!("{stamp}-shard-{}-of-{}", s.index, s.count),
        None => stamp.clone(),
    };
    let dir = out_dir(&options.runs, &matrix.name, &suffix)?;
    let report = MatrixReport {
        name: matrix.name.clone(),
        stamp,
        config: options.config.clone(),
        config_sha256: config_sha256(&options.config_text),
        seeds: matrix.seeds.clone(),
        wall_secs,
        exit_code: judge::exit_code(&cells),
        shard: options.shard,
        load: vec![load],
        runs_root: options.runs.clone(),
        dir: dir.clone(),
        cells,
        own_clusters: super::plan::sharing(matrix, &chosen, options),
    };
    write_report(&report)?;
    Ok(report)
}

/// Writes `matrix.md`, `matrix.html` and `matrix.json` into the report's directory.
pub fn write_report(report: &MatrixReport) -> anyhow::Result<()> {
    let dir = &report.dir;
    write(&dir.join("matrix.md"), &table::render(report))?;
    write(&dir.join("matrix.html"), &html::render(report))?;
    let json = serde_json::to_string_pretty(report).context("serializing matrix.json")?;
    write(&dir.join("matrix.json"), &json)
}

/// One run on a shared cluster of `pool` where it may share one, else on its own.
fn run_placed(mut plan: crate::config::TestPlan, runs: &Path, pool: Option<&Pool>) -> RunOutcome {
    let seed = plan.seed;
    match pool.and_then(|pool| pool.checkout(&plan).map(|c| (pool, c))) {
        None => run_one(plan, runs, None),
        Some((_, Err(e))) => RunOutcome::failed(seed, None, format!("{e:#}"), 0.0),
        Some((pool, Ok(checkout))) => {
            plan.lock = checkout.lock;
            let id = checkout.on.id.clone();
            let mut outcome = run_one(plan, runs, Some(checkout.on));
            pool.checkin(&id);
            outcome.cluster = Some(id);
            outcome
        }
    }
}

/// One run through the lead's pipeline, then read back from the directory it made.
fn run_one(plan: crate::config::TestPlan, runs: &Path, cluster: Option<OnCluster>) -> RunOutcome {
    let seed = plan.seed;
    let t0 = Instant::now();
    let mut made = None;
    let result = crate::run::execute_into(
        plan,
        &crate::run::Options {
            runs: runs.to_path_buf(),
            quiet: true,
            cluster,
        },
        &mut made,
    );
    let wall = t0.elapsed().as_secs_f64();
    let read = |dir: &Path| RunOutcome::read(seed, dir, wall);
    match (result, made) {
        (Ok(_), Some(dir)) => read(&dir)
            .unwrap_or_else(|e| RunOutcome::failed(seed, Some(dir), format!("{e:#}"), wall)),
        (Ok(_), None) => RunOutcome::failed(
            seed,
            None,
            "the run finished but made no run directory".into(),
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

pub(super) fn out_dir(runs: &Path, name: &str, stamp: &str) -> anyhow::Result<PathBuf> {
    let parent = runs.join("matrix").join(name);
    let mut dir = parent.join(stamp);
    let mut n = 1;
    while dir.exists() {
        n += 1;
        dir = parent.join(format!("{stamp}-{n}"));
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let latest = parent.join("latest");
    let tmp = parent.join(format!(".latest-{}-{stamp}", std::process::id()));
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
