//! The lines a run prints when it ends: one row per anomaly kind (count, when the first became
//! true, an example), the verdict, where the report is, and on failure the line that re-runs
//! the test.

use results::{AnomalyKind, Validity, Verdict};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// Formats nanoseconds since the run's start as seconds with millisecond precision.
pub fn secs(ns: u64) -> String {
    format!("{:.3}s", ns as f64 / 1e9)
}

/// The summary table, verdict line and (when the run did not pass) the rerun line.
pub fn render(verdict: &Verdict, run_dir: &Path, rerun: &str) -> String {
    let mut by_kind: BTreeMap<AnomalyKind, (usize, u64, &str, bool)> = BTreeMap::new();
    for a in &verdict.anomalies {
        let first = a.when().unwrap_or(u64::MAX);
        let e = by_kind
            .entry(a.kind)
            .or_insert((0, u64::MAX, a.summary.as_str(), a.fails));
        e.0 += 1;
        if first < e.1 {
            e.1 = first;
            e.2 = a.summary.as_str();
        }
    }
    let mut out = String::new();
    if by_kind.is_empty() {
        out.push_str("no anomalies\n");
    } else {
        let _ = writeln!(
            out,
            "{:<22} {:>6} {:>10}  {:<5}  example",
            "anomaly", "count", "first", "fails"
        );
        for (kind, (count, first, example, fails)) in &by_kind {
            let first = if *first == u64::MAX {
                "-".to_string()
            } else {
                secs(*first)
            };
            let fails = if *fails { "yes" } else { "no" };
            let _ = writeln!(
                out,
                "{:<22} {:>6} {:>10}  {:<5}  {}",
                kind.as_str(),
                count,
                first,
                fails,
                example
            );
        }
    }
    if let Some(ops) = verdict.stats.get("operations") {
        let part = |op: &str| {
            let n = |t: &str| ops[op][t].as_u64().unwrap_or(0);
            format!(
                "{op} {} ok / {} fail / {} info",
                n("ok"),
                n("fail"),
                n("info")
            )
        };
        let _ = writeln!(out, "operations: {} · {}", part("acquire"), part("write"));
    }
    if let Some(reach) = results::reach::Reach::of(verdict) {
        let _ = writeln!(out, "reached: {}", reach.line());
    }
    if let Some(landing) = results::landing::Landing::of(verdict) {
        let _ = writeln!(out, "faults: {}", landing.line());
    }
    for reason in &verdict.unknown_reasons {
        let _ = writeln!(out, "unknown: {reason}");
    }
    for line in verdict.unplanned_lines() {
        let _ = writeln!(out, "unplanned: {line}");
    }
    let word = match verdict.valid {
        Validity::Valid => "VALID",
        Validity::Invalid => "INVALID",
        Validity::Unknown => "UNKNOWN",
    };
    let _ = writeln!(out, "verdict: {word} (exit {})", verdict.valid.exit_code());
    let _ = writeln!(
        out,
        "report:  {}",
        run_dir.join(results::layout::REPORT).display()
    );
    if verdict.valid != Validity::Valid {
        let _ = writeln!(out, "re-run:  {rerun}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{Anomaly, Diagnosis, Evidence};

    fn anomaly(kind: AnomalyKind, t: u64, fails: bool) -> Anomaly {
        Anomaly {
            kind,
            fails,
            summary: format!("{kind} at {t}"),
            at: Some(t),
            evidence: Evidence {
                times: vec![t / 2, t],
                ..Default::default()
            },
            diagnosis: Diagnosis::default(),
        }
    }

    fn verdict(valid: Validity, anomalies: Vec<Anomaly>) -> Verdict {
        Verdict {
            valid,
            anomalies,
            unknown_reasons: vec![],
            stats: Default::default(),
        }
    }

    #[test]
    fn counts_kinds_shows_the_earliest_and_the_rerun_line_on_failure() {
        let v = Verdict {
            valid: Validity::Invalid,
            anomalies: vec![
                anomaly(AnomalyKind::StaleAcceptedWrite, 5_000_000_000, true),
                anomaly(AnomalyKind::StaleAcceptedWrite, 2_000_000_000, true),
                anomaly(AnomalyKind::ConcurrentHolders, 1_000_000_000, false),
            ],
            unknown_reasons: vec![],
            stats: Default::default(),
        };
        let text = render(&v, Path::new("/r"), "fencecheck run --seed 3");
        assert!(
            text.contains("stale-accepted-write        2     2.000s"),
            "{text}"
        );
        assert!(
            text.contains("at 2000000000"),
            "the earliest example is shown: {text}"
        );
        assert!(text.contains("verdict: INVALID (exit 1)"));
        assert!(text.contains("re-run:  fencecheck run --seed 3"));
        let ok = verdict(Validity::Valid, vec![]);
        assert!(!render(&ok, Path::new("/r"), "x").contains("re-run"));
    }

    /// The observed `held-after-loss` is counted like the other kinds, not failing.
    #[test]
    fn held_after_loss_is_a_row_of_its_own_that_does_not_fail() {
        let v = verdict(
            Validity::Valid,
            vec![
                anomaly(AnomalyKind::HeldAfterLoss, 3_000_000_000, false),
                anomaly(AnomalyKind::HeldAfterLoss, 4_000_000_000, false),
            ],
        );
        let text = render(&v, Path::new("/r"), "x");
        assert!(
            text.contains("held-after-loss             2     3.000s  no"),
            "{text}"
        );
        assert!(text.contains("verdict: VALID (exit 0)"), "{text}");
    }
}
