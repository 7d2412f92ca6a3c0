//! `fencecheck matrix merge DIR...`: joins the shards of one matrix run (`--shard I/N` on N CI
//! jobs) into the table, HTML and exit code the whole run would have given. Refuses, naming the
//! directories, shards of different matrix files or seeds, a shard given twice, a shard of a
//! different count, and a missing shard: a merged table that silently lacks cells would claim
//! more than was run.
//!
//! Each DIR is a shard's matrix directory (holding `matrix.json`). Its run links are rebased
//! onto where the shard's run store now is (`DIR/../../..`, as a CI artifact is downloaded), so
//! the merged report's links lead to the runs.

use super::execute::{self, MatrixReport};
use super::judge;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

/// One shard read back from its directory.
struct Part {
    dir: PathBuf,
    report: MatrixReport,
}

fn read(dir: &Path) -> anyhow::Result<Part> {
    let file = dir.join("matrix.json");
    let text = std::fs::read_to_string(&file).with_context(|| {
        format!(
            "{}: cannot read (is it a shard's matrix directory?)",
            file.display()
        )
    })?;
    let report: MatrixReport = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a fencecheck matrix.json", file.display()))?;
    Ok(Part {
        dir: dir.to_path_buf(),
        report,
    })
}

/// Reads, checks and joins the shards; writes the merged matrix under `<runs>/matrix/<name>/`.
pub fn merge(dirs: &[PathBuf], runs: &Path) -> anyhow::Result<MatrixReport> {
    if dirs.is_empty() {
        bail!("matrix merge: name the shards' matrix directories (each holds a matrix.json)");
    }
    let mut parts = dirs
        .iter()
        .map(|d| read(d))
        .collect::<anyhow::Result<Vec<_>>>()?;
    check_compatible(&parts)?;
    parts.sort_by_key(|p| p.report.shard.map_or(0, |s| s.index));
    let first = &parts[0].report;
    let (name, config, sha, seeds) = (
        first.name.clone(),
        first.config.clone(),
        first.config_sha256.clone(),
        first.seeds.clone(),
    );
    let mut cells = Vec::new();
    let mut load = Vec::new();
    let mut own_clusters = Vec::new();
    let mut wall: f64 = 0.0;
    for part in parts {
        let store = shard_store(&part.dir);
        wall = wall.max(part.report.wall_secs);
        own_clusters.extend(part.report.own_clusters.iter().cloned());
        load.extend(part.report.load.iter().cloned());
        for mut cell in part.report.cells {
            for run in &mut cell.runs {
                if let (Some(d), Some(store)) = (&run.dir, &store) {
                    if let Ok(rel) = d.strip_prefix(&part.report.runs_root) {
                        run.dir = Some(store.join(rel));
                    }
                }
            }
            cells.push(cell);
        }
    }
    cells.sort_by_key(|c| c.index);
    let stamp = results::layout::utc_stamp_now();
    let dir = execute::out_dir(runs, &name, &format!("{stamp}-merged"))?;
    let report = MatrixReport {
        name,
        stamp,
        config,
        config_sha256: sha,
        seeds,
        wall_secs: wall,
        exit_code: judge::exit_code(&cells),
        shard: None,
        load,
        runs_root: runs.to_path_buf(),
        dir,
        cells,
        own_clusters,
    };
    execute::write_report(&report)?;
    Ok(report)
}

/// Where a shard's run store is now: three levels above its matrix directory.
fn shard_store(dir: &Path) -> Option<PathBuf> {
    let abs = std::fs::canonicalize(dir).ok()?;
    Some(abs.parent()?.parent()?.parent()?.to_path_buf())
}

fn check_compatible(parts: &[Part]) -> anyhow::Result<()> {
    let first = &parts[0];
    let shown = |p: &Part| p.dir.display().to_string();
    let Some(count) = first.report.shard.map(|s| s.count) else {
        bail!(
            "{}: not a shard (it was run without --shard); only shards are merged",
            shown(first)
        );
    };
    let mut seen: Vec<Option<&Part>> = vec![None; count];
    for p in parts {
        let r = &p.report;
        if r.config_sha256 != first.report.config_sha256 || r.name != first.report.name {
            bail!(
                "{} ({} from {}) and {} ({} from {}) are shards of different matrix files",
                shown(first),
                first.report.name,
                first.report.config,
                shown(p),
                r.name,
                r.config
            );
        }
        if r.seeds != first.report.seeds {
            bail!(
                "{} (seeds {:?}) and {} (seeds {:?}) ran different seeds",
                shown(first),
                first.report.seeds,
                shown(p),
                r.seeds
            );
        }
        let Some(s) = r.shard else {
            bail!("{}: not a shard (it was run without --shard)", shown(p));
        };
        if s.count != count || s.index == 0 || s.index > count {
            bail!(
                "{} is shard {s} but {} is of {count} shards",
                shown(p),
                shown(first)
            );
        }
        match seen[s.index - 1] {
            Some(other) => bail!(
                "shard {s} is given twice: {} and {}",
                shown(other),
                shown(p)
            ),
            None => seen[s.index - 1] = Some(p),
        }
    }
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, p)| p.is_none())
        .map(|(i, _)| format!("{}/{count}", i + 1))
        .collect();
    if !missing.is_empty() {
        bail!(
            "shard {} missing: a merge of part of a matrix would claim less was run than the table shows",
            missing.join(", ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::judge::{CellSummary, Status};
    use crate::matrix::shard::Shard;

    fn cell(index: usize, status: Status) -> CellSummary {
        let mut c = judge::summarise(
            &format!("cell-{index}"),
            &crate::matrix::spec::Expectation::Observe,
            vec![],
        );
        c.index = index;
        c.status = status;
        c
    }

    /// A shard's matrix directory under `store/matrix/m/<stamp>`, as `execute` writes it.
    fn shard(store: &Path, i: usize, n: usize, sha: &str, cells: Vec<CellSummary>) -> PathBuf {
        let dir = store.join("matrix/m").join(format!("s-shard-{i}-of-{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        let report = MatrixReport {
            name: "m".into(),
            stamp: "s".into(),
            config: "m.yaml".into(),
            config_sha256: sha.into(),
            seeds: vec![1, 2],
            wall_secs: 10.0 * i as f64,
            exit_code: judge::exit_code(&cells),
            shard: Some(Shard { index: i, count: n }),
            load: vec![],
            runs_root: store.to_path_buf(),
            dir: dir.clone(),
            own_clusters: vec![],
            cells,
        };
        execute::write_report(&report).unwrap();
        dir
    }

    #[test]
    fn shards_merge_back_in_file_order_with_the_whole_runs_exit_code() {
        let t = tempfile::tempdir().unwrap();
        let a = shard(
            t.path(),
            1,
            2,
            "h",
            vec![cell(0, Status::Pass), cell(3, Status::Pass)],
        );
        let b = shard(
            t.path(),
            2,
            2,
            "h",
            vec![cell(1, Status::Fail), cell(2, Status::Pass)],
        );
        let m = merge(&[b, a], t.path()).unwrap();
        let order: Vec<usize> = m.cells.iter().map(|c| c.index).collect();
        assert_eq!(order, [0, 1, 2, 3]);
        assert_eq!(
            m.exit_code, 1,
            "a failing cell in any shard fails the merge"
        );
        assert_eq!(
            m.wall_secs, 20.0,
            "shards run side by side: the longest is the wall"
        );
        assert!(m.dir.join("matrix.md").is_file() && m.dir.join("matrix.html").is_file());
    }

    #[test]
    fn a_missing_repeated_or_foreign_shard_is_refused_by_name() {
        let t = tempfile::tempdir().unwrap();
        let a = shard(t.path(), 1, 2, "h", vec![cell(0, Status::Pass)]);
        let b = shard(t.path(), 2, 2, "other", vec![cell(1, Status::Pass)]);
        let e = format!(
            "{:#}",
            merge(&[a.clone(), b.clone()], t.path()).unwrap_err()
        );
        assert!(
            e.contains("different matrix files") && e.contains(&b.display().to_string()),
            "{e}"
        );
        let e = format!(
            "{:#}",
            merge(std::slice::from_ref(&a), t.path()).unwrap_err()
        );
        assert!(e.contains("shard 2/2 missing"), "{e}");
        let e = format!(
            "{:#}",
            merge(&[a.clone(), a.clone()], t.path()).unwrap_err()
        );
        assert!(e.contains("given twice"), "{e}");
        let e = format!(
            "{:#}",
            merge(&[t.path().join("nope")], t.path()).unwrap_err()
        );
        assert!(e.contains("nope/matrix.json"), "{e}");
    }
}
