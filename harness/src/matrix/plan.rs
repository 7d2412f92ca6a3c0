//! `fencecheck matrix --plan`: what a matrix (or one shard of it) will run, before anything
//! starts: each cell's provider, faults, runs and expected time, the clusters the runs start, and
//! the expected wall time with `--jobs` runs at once (the executor's own order: each next run
//! goes to the first free slot). Every run starts and tears down its own cluster. A run's
//! expected time takes its recovery tail at full length, so the figures are upper bounds where
//! tails settle early (docs/design.md, "Recovery").

use super::shard::{self, Shard};
use super::spec::Matrix;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The plan's text for the cells at `chosen` (indices into `m.cells`), `jobs` runs at once.
pub fn render(m: &Matrix, chosen: &[usize], jobs: usize, shard: Option<Shard>) -> String {
    let jobs = jobs.max(1);
    let runs: usize = chosen.iter().map(|&c| m.cells[c].plans.len()).sum();
    let mut out = String::new();
    let share = shard.map_or(String::new(), |s| format!(", shard {s}"));
    let _ = writeln!(
        out,
        "matrix {}: {} of {} cells × {} seeds{share} = {runs} runs, {jobs} at once",
        m.name,
        chosen.len(),
        m.cells.len(),
        m.seeds.len(),
    );
    let mut clusters: BTreeMap<String, usize> = BTreeMap::new();
    let mut durations = vec![];
    let _ = writeln!(out, "\n  expected  runs  provider   faults  cell");
    for &c in chosen {
        let cell = &m.cells[c];
        for p in &cell.plans {
            *clusters.entry(p.provider.to_string()).or_default() += 1;
            durations.push(shard::expected_secs_of(p));
        }
        let faults = cell
            .plans
            .first()
            .map(|p| {
                let mut names: Vec<&str> =
                    p.faults.plan.steps.iter().map(|s| s.fault.name()).collect();
                names.sort_unstable();
                names.dedup();
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(",")
                }
            })
            .unwrap_or_default();
        let provider = cell
            .plans
            .first()
            .map(|p| p.provider.to_string())
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:>8}  {:>4}  {provider:<9}  {faults}  {}",
            clock(shard::expected_secs(cell)),
            cell.plans.len(),
            cell.label
        );
    }
    let by_provider: Vec<String> = clusters.iter().map(|(p, n)| format!("{p} {n}")).collect();
    let _ = writeln!(
        out,
        "\nclusters: {runs}, one per run, each started and torn down by its run ({})",
        by_provider.join(", ")
    );
    let _ = writeln!(
        out,
        "expected wall: at most {} ({} of runs; each run its time limit, its full recovery tail \
         and {:.0} s of start-up and teardown)",
        clock(wall(&durations, jobs)),
        clock(durations.iter().sum()),
        shard::STARTUP_SECS
    );
    out
}

/// The executor's wall time for runs of `durations` seconds, in order, `jobs` at once.
pub fn wall(durations: &[f64], jobs: usize) -> f64 {
    let mut free_at = vec![0.0f64; jobs.max(1)];
    for d in durations {
        let slot = free_at
            .iter_mut()
            .min_by(|a, b| a.total_cmp(b))
            .expect("at least one slot");
        *slot += d;
    }
    free_at.into_iter().fold(0.0, f64::max)
}

/// Seconds as `1h 02m`, `4m 05s` or `12s`.
fn clock(secs: f64) -> String {
    let s = secs.round() as u64;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m {s:02}s"),
        (h, m, _) => format!("{h}h {m:02}m"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_take_the_first_free_slot_in_order() {
        assert_eq!(wall(&[10.0, 10.0, 10.0], 2), 20.0);
        assert_eq!(wall(&[30.0, 10.0, 10.0, 10.0], 2), 30.0);
        assert_eq!(wall(&[5.0, 5.0], 1), 10.0);
        assert_eq!(wall(&[], 3), 0.0);
    }

    #[test]
    fn durations_read_as_a_clock() {
        assert_eq!(clock(12.4), "12s");
        assert_eq!(clock(245.0), "4m 05s");
        assert_eq!(clock(3720.0), "1h 02m");
    }
}
