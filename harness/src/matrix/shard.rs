//! `--shard I/N`: a deterministic share of a matrix's cells, so that N CI jobs can run one
//! matrix side by side and `fencecheck matrix merge` can join them. Cells are dealt longest
//! first to the least-loaded shard (expected duration: every seed's time limit, recovery window
//! and a fixed cluster start-up and teardown), ties to the lower shard, so every job computes
//! the same split from the same file.

use super::spec::Cell;
use crate::config::TestPlan;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a run costs beyond its time limit and recovery window: cluster start, readiness checks,
/// teardown, check and report (measured on this machine: 9–14 s for a 3-node cluster).
pub const STARTUP_SECS: f64 = 12.0;

/// Shard `index` of `count`, both counted from 1 as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// `I/N` with 1 ≤ I ≤ N.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("--shard {s:?}: use I/N with 1 ≤ I ≤ N, e.g. 1/2");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// The expected wall seconds of one cell: the sum of its runs' ([`expected_secs_of`]).
pub fn expected_secs(cell: &Cell) -> f64 {
    cell.plans.iter().map(expected_secs_of).sum()
}

/// The expected wall seconds of one run: its time limit, its recovery tail at full length, the
/// longest hold a worker may have begun just before the end (it runs to its release), and the
/// start-up.
pub fn expected_secs_of(p: &TestPlan) -> f64 {
    let last_hold = p.work.get().as_secs_f64() * 1.5;
    p.time_limit.get().as_secs_f64() + p.recovery.get().as_secs_f64() + last_hold + STARTUP_SECS
}

/// The shard (1-based) of each cell, given the cells' expected durations.
pub fn assign(durations: &[f64], count: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..durations.len()).collect();
    // Longest first; equal durations keep file order.
    order.sort_by(|&a, &b| durations[b].total_cmp(&durations[a]).then(a.cmp(&b)));
    let mut load = vec![0.0f64; count];
    let mut shard_of = vec![0; durations.len()];
    for cell in order {
        let (least, _) = load
            .iter()
            .enumerate()
            .min_by(|(i, a), (j, b)| a.total_cmp(b).then(i.cmp(j)))
            .unwrap_or((0, &0.0));
        load[least] += durations[cell];
        shard_of[cell] = least + 1;
    }
    shard_of
}

/// The indices (into the matrix's cells) that `shard` runs, in file order.
pub fn cells_of(cells: &[Cell], shard: Shard) -> Vec<usize> {
    let durations: Vec<f64> = cells.iter().map(expected_secs).collect();
    assign(&durations, shard.count)
        .into_iter()
        .enumerate()
        .filter(|&(_, s)| s == shard.index)
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_text_is_checked() {
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, count: 3 }));
        for bad in ["0/2", "3/2", "1", "a/b", "1/0", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn every_cell_lands_in_exactly_one_shard_and_the_loads_balance() {
        let d = [60.0, 60.0, 30.0, 30.0, 30.0, 30.0, 20.0, 90.0];
        for n in 1..=4 {
            let s = assign(&d, n);
            assert!(s.iter().all(|&x| (1..=n).contains(&x)));
            let mut loads = vec![0.0; n];
            for (i, &x) in s.iter().enumerate() {
                loads[x - 1] += d[i];
            }
            let (lo, hi) = loads
                .iter()
                .fold((f64::MAX, 0.0f64), |(lo, hi), &l| (lo.min(l), hi.max(l)));
            // LPT: no shard exceeds another by more than the longest cell.
            assert!(hi - lo <= 90.0, "{n}: {loads:?}");
        }
        assert_eq!(assign(&d, 2), assign(&d, 2), "deterministic");
        let two = assign(&d, 2);
        let sum = |k| {
            two.iter()
                .zip(d)
                .filter(|(s, _)| **s == k)
                .map(|(_, x)| x)
                .sum::<f64>()
        };
        assert_eq!((sum(1), sum(2)), (180.0, 170.0));
    }
}
