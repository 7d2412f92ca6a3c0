//! One cell's runs → one table row: the kinds found, the reproduction rate over the seeds, the
//! median time to the first anomaly, acquire latency, harness errors, and whether the cell kept
//! its expectation. Pure: the executor hands it outcomes read from disk, tests hand it made-up
//! ones.
//!
//! Rules (the nightly job's contract):
//! - `safe`: any failing anomaly on any seed fails the cell. Otherwise a seed that hit a harness
//!   error makes the cell `error`, a seed with an unknown verdict makes it `unknown`.
//! - `unsafe: K`: the rate is the share of decided seeds (valid or invalid verdict, or unknown
//!   but showing K) on which K was found, whether or not K fails the run (so a
//!   `concurrent-holders` contrast can be expected too). Below `min_rate` fails the cell;
//!   otherwise errors / undecided seeds make it `error` / `unknown`.
//! - `safe, shows: K`: both of the above (e.g. two holders observed, the fence kept it harmless).
//! - `observe`: recorded, never judged (harness errors still count for the exit code).

use super::outcome::{latency_histogram, RunOutcome};
use super::spec::Expectation;
use results::{AnomalyKind, Validity};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How a cell did against its expectation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Pass,
    Fail,
    Unknown,
    Error,
    Observed,
}

impl Status {
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "FAIL",
            Status::Unknown => "unknown",
            Status::Error => "error",
            Status::Observed => "observed",
        }
    }
}

/// One row of the matrix.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellSummary {
    /// The cell's place in the matrix file (0-based): shards are merged back in file order.
    #[serde(default)]
    pub index: usize,
    pub label: String,
    pub expect: String,
    pub status: Status,
    /// Why the status is what it is, in one line.
    pub reason: String,
    /// The kind the rate counts (the expected one), or none: any failing kind.
    pub rate_kind: Option<AnomalyKind>,
    /// Seeds on which it was found / seeds that decided.
    pub hits: usize,
    pub decided: usize,
    /// Every kind found, with the number of seeds that showed it and whether it failed there.
    pub kinds: BTreeMap<AnomalyKind, KindRow>,
    /// Median over the seeds of the first anomaly counted by the rate (test time, ns).
    pub median_first_ns: Option<u64>,
    /// Acquire latency over all seeds (µs): p50, p99, count.
    pub acquire_p50_us: Option<u64>,
    pub acquire_p99_us: Option<u64>,
    pub acquires: u64,
    pub errors: usize,
    pub unknowns: usize,
    /// The expected kind could not be checked on any decided seed: the checker's note.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(default)]
    pub not_applicable: Option<String>,
    pub runs: Vec<RunOutcome>,
}

/// A kind across a cell's seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindRow {
    pub seeds: usize,
    pub fails: bool,
}

impl CellSummary {
    /// What the cell's runs reached of the client's machinery, summed over its seeds: holds
    /// past the lease, checks asked, library errors, renewals seen; `nothing` when none, `-`
    /// when no run recorded it.
    pub fn reach_text(&self) -> String {
        let all: Vec<&results::reach::Reach> =
            self.runs.iter().filter_map(|r| r.reach.as_ref()).collect();
        if all.is_empty() {
            return "-".into();
        }
        let sum = |f: fn(&results::reach::Reach) -> u64| all.iter().map(|r| f(r)).sum::<u64>();
        let reach = results::reach::Reach {
            holds: sum(|r| r.holds),
            holds_past_ttl: sum(|r| r.holds_past_ttl),
            checks: sum(|r| r.checks),
            checks_not_held: sum(|r| r.checks_not_held),
            library_errors: sum(|r| r.library_errors),
            exceptions: sum(|r| r.exceptions),
            renewals_seen: sum(|r| r.renewals_seen),
            retries_seen: sum(|r| r.retries_seen),
        };
        if reach.nothing() {
            return "nothing".into();
        }
        format!(
            "{}/{} · {} · {} · {}",
            reach.holds_past_ttl,
            reach.holds,
            reach.checks,
            reach.library_errors,
            reach.renewals_seen + reach.retries_seen
        )
    }

    /// Its seeds' planned faults that landed, `landed/planned`; `-` when none planned any.
    pub fn landing_text(&self) -> String {
        let all: Vec<&results::landing::Landing> = self
            .runs
            .iter()
            .filter_map(|r| r.landing.as_ref())
            .collect();
        if all.is_empty() {
            return "-".into();
        }
        results::landing::Landing::sum(all).rate()
    }

    /// The libraries its runs' adapters named, each once (`kazoo (kazoo 2.11.0)`); empty for
    /// a recipe's cell.
    pub fn libraries(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self
            .runs
            .iter()
            .flat_map(|r| r.clients.iter().map(String::as_str))
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// The cell's label, with the libraries that ran after it.
    pub fn label_with_libraries(&self) -> String {
        let libraries = self.libraries();
        if libraries.is_empty() {
            self.label.clone()
        } else {
            format!("{} · {}", self.label, libraries.join(", "))
        }
    }

    /// `hits/decided` as text, `-` when nothing decided.
    pub fn rate_text(&self) -> String {
        if self.not_applicable.is_some() {
            "n/a".into()
        } else if self.decided == 0 {
            "-".into()
        } else {
            format!(
                "{}/{} ({:.0}%)",
                self.hits,
                self.decided,
                100.0 * self.hits as f64 / self.decided as f64
            )
        }
    }
}

/// The expectation as written in the file.
pub fn expect_text(e: &Expectation) -> String {
    match e {
        Expectation::Safe => "safe".into(),
        Expectation::Unknown => "unknown".into(),
        Expectation::Observe => "observe".into(),
        Expectation::Unsafe { kind, .. } => format!("unsafe: {kind}"),
        Expectation::SafeShowing { kind, .. } => format!("safe, shows: {kind}"),
    }
}

/// Summarises and judges one cell.
pub fn summarise(label: &str, expect: &Expectation, runs: Vec<RunOutcome>) -> CellSummary {
    let rate_kind = match expect {
        Expectation::Unsafe { kind, .. } | Expectation::SafeShowing { kind, .. } => Some(*kind),
        Expectation::Safe | Expectation::Unknown | Expectation::Observe => None,
    };
    let shows = |r: &RunOutcome| match rate_kind {
        Some(k) => r.kinds.contains_key(&k),
        None => r.failed_anomaly(),
    };
    let first = |r: &RunOutcome| match rate_kind {
        Some(k) => r.kinds.get(&k).and_then(|s| s.first_ns),
        None => r.first_failing_ns(),
    };
    let errors = runs.iter().filter(|r| r.validity.is_none()).count();
    let unknowns = runs
        .iter()
        .filter(|r| r.validity == Some(Validity::Unknown))
        .count();
    let decided: Vec<&RunOutcome> = runs
        .iter()
        .filter(|r| match r.validity {
            Some(Validity::Valid | Validity::Invalid) => true,
            Some(Validity::Unknown) => shows(r),
            None => false,
        })
        .collect();
    let hits = decided.iter().filter(|r| shows(r)).count();
    let mut firsts: Vec<u64> = decided.iter().filter_map(|r| first(r)).collect();
    firsts.sort_unstable();
    let median_first_ns = match firsts.len() {
        0 => None,
        n if n % 2 == 1 => Some(firsts[n / 2]),
        n => Some((firsts[n / 2 - 1] + firsts[n / 2]) / 2),
    };
    let mut kinds: BTreeMap<AnomalyKind, KindRow> = BTreeMap::new();
    for r in &runs {
        for (kind, seen) in &r.kinds {
            let row = kinds.entry(*kind).or_insert(KindRow {
                seeds: 0,
                fails: false,
            });
            row.seeds += 1;
            row.fails |= seen.fails;
        }
    }
    let mut hist = latency_histogram();
    for r in &runs {
        let _ = hist.add(&r.acquire_us);
    }
    let acquires = hist.len();
    // A kind nobody could check on any decided seed is not "absent": say why.
    let not_applicable = rate_kind.and_then(|k| {
        let notes: Vec<&String> = decided
            .iter()
            .filter_map(|r| r.not_applicable.get(&k))
            .collect();
        (!decided.is_empty() && notes.len() == decided.len()).then(|| notes[0].clone())
    });
    let (status, reason) = match (&not_applicable, rate_kind) {
        (Some(note), Some(k)) => (
            Status::Fail,
            format!("expected {k}, but it is not applicable on any seed: {note}"),
        ),
        _ => judge(expect, &runs, hits, decided.len(), errors, unknowns),
    };
    CellSummary {
        index: 0,
        label: label.to_string(),
        expect: expect_text(expect),
        status,
        reason,
        rate_kind,
        hits,
        decided: decided.len(),
        kinds,
        median_first_ns,
        acquire_p50_us: (acquires > 0).then(|| hist.value_at_quantile(0.5)),
        acquire_p99_us: (acquires > 0).then(|| hist.value_at_quantile(0.99)),
        acquires,
        errors,
        unknowns,
        not_applicable,
        runs,
    }
}

fn judge(
    expect: &Expectation,
    runs: &[RunOutcome],
    hits: usize,
    decided: usize,
    errors: usize,
    unknowns: usize,
) -> (Status, String) {
    let incomplete = || {
        if errors > 0 {
            (
                Status::Error,
                format!("{errors} of {} seeds hit a harness error", runs.len()),
            )
        } else {
            (
                Status::Unknown,
                format!("{unknowns} of {} seeds had an unknown verdict", runs.len()),
            )
        }
    };
    // A failing anomaly in a cell expected safe (or undecidable) is definite, whatever else
    // went wrong.
    if matches!(
        expect,
        Expectation::Safe | Expectation::SafeShowing { .. } | Expectation::Unknown
    ) {
        let bad: Vec<String> = runs
            .iter()
            .filter(|r| r.failed_anomaly())
            .map(|r| {
                let kinds: Vec<&str> = r.failing_kinds().map(|k| k.as_str()).collect();
                format!("seed {}: {}", r.seed, kinds.join(", "))
            })
            .collect();
        if !bad.is_empty() {
            return (
                Status::Fail,
                format!(
                    "expected {}, found failing anomalies ({})",
                    expect_text(expect),
                    bad.join("; ")
                ),
            );
        }
    }
    if let Expectation::Unsafe { kind, min_rate } | Expectation::SafeShowing { kind, min_rate } =
        expect
    {
        if decided == 0 {
            return incomplete();
        }
        let rate = hits as f64 / decided as f64;
        if rate + 1e-9 < *min_rate {
            return (
                Status::Fail,
                format!(
                    "expected {kind} on at least {:.0}% of seeds, found on {hits} of {decided}",
                    min_rate * 100.0
                ),
            );
        }
    }
    if let Expectation::Observe = expect {
        return (Status::Observed, "not judged".into());
    }
    if let Expectation::Unknown = expect {
        let valid: Vec<String> = runs
            .iter()
            .filter(|r| r.validity == Some(Validity::Valid))
            .map(|r| r.seed.to_string())
            .collect();
        if !valid.is_empty() {
            return (
                Status::Fail,
                format!(
                    "expected unknown, but seed {} came out valid: the system under test \
                     changed, revisit this cell",
                    valid.join(", ")
                ),
            );
        }
        if errors > 0 {
            return incomplete();
        }
        return (
            Status::Pass,
            format!("as expected: {unknowns} of {} seeds unknown", runs.len()),
        );
    }
    if errors > 0 {
        return incomplete();
    }
    let undecided = runs.len() - decided;
    let unsure = match expect {
        Expectation::Unsafe { .. } => undecided > 0,
        _ => unknowns > 0,
    };
    if unsure {
        return incomplete();
    }
    (Status::Pass, "as expected".into())
}

/// The matrix's exit code: 1 if a cell failed its expectation, else 3 if any run hit a harness
/// error, else 2 if a judged cell is unknown, else 0.
pub fn exit_code(cells: &[CellSummary]) -> u8 {
    if cells.iter().any(|c| c.status == Status::Fail) {
        1
    } else if cells.iter().any(|c| c.errors > 0) {
        3
    } else if cells.iter().any(|c| c.status == Status::Unknown) {
        2
    } else {
        0
    }
}

#[cfg(test)]
mod tests;
