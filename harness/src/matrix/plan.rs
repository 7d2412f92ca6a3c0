//! `fencecheck matrix --plan`: what a matrix (or one shard of it) will run, before anything
//! starts: each cell's provider, faults, runs and expected time, the clusters the runs start, and
//! the expected wall time with `--jobs` runs at once (the executor's own order: each next run
//! goes to the first free slot), and which runs share a cluster and why the others cannot. A run's
//! expected time takes its recovery tail at full length (tails that settle early end sooner,
//! docs/design.md, "Recovery") and a fixed start-up and teardown, which a loaded machine
//! exceeds: the figures are estimates, not bounds (docs/matrix.md compares them with grids run).

use super::shard::{self, Shard};
use super::spec::Matrix;
use super::Options;
use crate::config::TestPlan;
use crate::run::shared_cluster;
use std::collections::BTreeMap;
use std::fmt::Write;
use workloads::kinds::Provider;

/// The plan's text for the cells at `chosen` (indices into `m.cells`), run as `options` say.
pub fn render(m: &Matrix, chosen: &[usize], options: &Options, shard: Option<Shard>) -> String {
    let jobs = options.jobs.max(1);
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
    let mut shared: BTreeMap<String, usize> = BTreeMap::new();
    let mut durations = vec![];
    let mut rows = vec![];
    for &c in chosen {
        let cell = &m.cells[c];
        let mut place = "-";
        for p in &cell.plans {
            match (p.provider.no_servers_because(), placed(p, options)) {
                (Some(_), _) => {}
                (None, Ok(provider)) => {
                    *shared.entry(provider.to_string()).or_default() += 1;
                    place = "shared";
                }
                (None, Err(_)) => {
                    *clusters.entry(p.provider.to_string()).or_default() += 1;
                    place = "own";
                }
            }
            durations.push(shard::expected_secs_of(p));
        }
        let first = cell.plans.first();
        let provider = first.map(|p| p.provider.to_string()).unwrap_or_default();
        rows.push([
            clock(shard::expected_secs(cell)),
            cell.plans.len().to_string(),
            provider,
            place.to_string(),
            first.map(faults_of).unwrap_or_default(),
            cell.label.clone(),
        ]);
    }
    let header = ["expected", "runs", "provider", "cluster", "faults", "cell"].map(str::to_string);
    let width = |i: usize| {
        rows.iter()
            .chain([&header])
            .map(|r| r[i].chars().count())
            .max()
            .unwrap_or(0)
    };
    let (w0, w1, w2, w3, w4) = (width(0), width(1), width(2), width(3), width(4));
    let _ = writeln!(out);
    for r in [&header].into_iter().chain(&rows) {
        let _ = writeln!(
            out,
            "  {:>w0$}  {:>w1$}  {:<w2$}  {:<w3$}  {:<w4$}  {}",
            r[0], r[1], r[2], r[3], r[4], r[5]
        );
    }
    let by_provider = |counts: &BTreeMap<String, usize>| {
        let each: Vec<String> = counts.iter().map(|(p, n)| format!("{p} {n}")).collect();
        each.join(", ")
    };
    let _ = writeln!(out);
    if clusters.is_empty() && shared.is_empty() {
        let _ = writeln!(out, "clusters: none: every run is in process");
    }
    if !clusters.is_empty() {
        let _ = writeln!(
            out,
            "clusters: {} of their own, one per run, each started and torn down by its run ({})",
            clusters.values().sum::<usize>(),
            by_provider(&clusters)
        );
    }
    if !shared.is_empty() {
        let _ = writeln!(
            out,
            "shared clusters: {} runs on one cluster per provider while its runs overlap, each \
             checked before a run takes it, a fresh one for any that fails ({})",
            shared.values().sum::<usize>(),
            by_provider(&shared)
        );
    }
    for line in sharing(m, chosen, options) {
        let _ = writeln!(out, "  {line}");
    }
    let _ = writeln!(
        out,
        "expected wall: about {} ({} of runs; each run its time limit, its full recovery tail, \
         its longest hold and {:.0} s of start-up and teardown, which a loaded machine exceeds)",
        clock(wall(&durations, jobs)),
        clock(durations.iter().sum()),
        shard::STARTUP_SECS
    );
    out
}

/// The provider whose shared cluster a run takes, or why it starts its own.
fn placed(p: &TestPlan, options: &Options) -> Result<Provider, String> {
    if options.own_clusters {
        return Err("--own-clusters".into());
    }
    shared_cluster::sharing(p)
}

/// Why the cells that start clusters of their own do, one line per reason with the cells it
/// holds for (docs/design.md, "Shared clusters"): what the plan and `matrix.md` say.
pub fn sharing(m: &Matrix, chosen: &[usize], options: &Options) -> Vec<String> {
    let mut why: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for &c in chosen {
        let cell = &m.cells[c];
        let reasons: Vec<String> = cell
            .plans
            .iter()
            .filter(|p| p.provider.no_servers_because().is_none())
            .filter_map(|p| placed(p, options).err())
            .collect();
        if let Some(reason) = reasons.into_iter().next() {
            why.entry(reason).or_default().push(&cell.label);
        }
    }
    why.into_iter()
        .map(|(reason, cells)| {
            let named = match cells.len() {
                1..=3 => cells.join(", "),
                n => format!("{}, ... ({n} cells)", cells[..3].join(", ")),
            };
            format!("own cluster, {reason}: {named}")
        })
        .collect()
}

/// The faults a run's plan starts, by name, once each (`none` for a run without faults).
fn faults_of(p: &crate::config::TestPlan) -> String {
    let mut names: Vec<&str> = p.faults.plan.steps.iter().map(|s| s.fault.name()).collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(",")
    }
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
    fn the_plan_names_every_cell_its_runs_and_the_clusters_they_start() {
        let m = crate::matrix::spec::parse(
            "name: tiny
seeds: [1, 2]
defaults: { ttl: 300ms, time_limit: 2s, recovery: 1s }
cells:
  - { provider: memory, nemesis: [pause-holder], expect: safe }
  - { provider: memory, nemesis: [none], expect: safe }
",
        )
        .unwrap();
        let options = Options {
            config: String::new(),
            config_text: String::new(),
            runs: std::path::PathBuf::new(),
            shard: None,
            jobs: 2,
            own_clusters: false,
        };
        let text = render(&m, &[0, 1], &options, None);
        assert!(
            text.starts_with("matrix tiny: 2 of 2 cells × 2 seeds = 4 runs, 2 at once"),
            "{text}"
        );
        assert!(text.contains("pause-holder"), "{text}");
        assert!(text.contains("  none  "), "{text}");
        assert!(
            text.contains("clusters: none: every run is in process"),
            "{text}"
        );
        // Four runs of 2 + 1 + 12 s and a last hold of 1.5 × 75 ms (work is ttl / 4), two at a
        // time.
        assert!(text.contains("expected wall: about 30s"), "{text}");
    }

    /// Which runs share a cluster is read off the fault table and the plan, and the plan says
    /// why each other cell starts its own.
    #[test]
    fn the_plan_says_which_cells_share_a_cluster_and_why_the_others_cannot() {
        let m = crate::matrix::spec::parse(
            "name: sharing
seeds: [1]
defaults: { ttl: 1s, time_limit: 14s }
cells:
  - { recipe: redis-lock, nemesis: [pause-holder], expect: safe }
  - { recipe: redis-lock, nemesis: [slow-reply], expect: safe }
  - { recipe: redis-lock, nemesis: [stall-service], expect: safe }
  - { recipe: redis-lock, nemesis: [mute-holder], expect: safe }
  - { recipe: etcd-lock, resource: postgres, nemesis: [kill-holder], ttl: 2s, expect: safe }
  - { client: tooz, provider: postgres, resource: none, nemesis: [pause-holder], expect: observe }
",
        )
        .unwrap();
        let mut options = Options {
            config: String::new(),
            config_text: String::new(),
            runs: std::path::PathBuf::new(),
            shard: None,
            jobs: 4,
            own_clusters: false,
        };
        let text = render(&m, &[0, 1, 2, 3, 4, 5], &options, None);
        assert!(text.contains("clusters: 4 of their own"), "{text}");
        assert!(text.contains("shared clusters: 2 runs"), "{text}");
        assert!(
            text.contains("own cluster, stall-service: it acts on the lock service's nodes"),
            "{text}"
        );
        assert!(
            text.contains("own cluster, mute-holder: its iptables rules go into the nodes'"),
            "{text}"
        );
        assert!(
            text.contains("own cluster, its resource (postgres) keeps its state"),
            "{text}"
        );
        assert!(
            text.contains("own cluster, tooz's advisory lock key is a hash of the lock name"),
            "{text}"
        );
        options.own_clusters = true;
        let text = render(&m, &[0, 1, 2, 3, 4, 5], &options, None);
        assert!(text.contains("clusters: 6 of their own"), "{text}");
        assert!(!text.contains("shared clusters"), "{text}");
    }

    #[test]
    fn durations_read_as_a_clock() {
        assert_eq!(clock(12.4), "12s");
        assert_eq!(clock(245.0), "4m 05s");
        assert_eq!(clock(3720.0), "1h 02m");
    }
}
