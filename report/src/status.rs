//! What a run says about each anomaly kind, for the summary table and the JUnit cases: from the
//! verdict's anomalies and, when the checkers recorded them, their per-kind stats
//! (`stats["stale-accepted-write"] = {"status": "checked" | "not applicable" | "unknown",
//! "count": n, "fails_run": bool, "note": "...", "reported": m}`), which also carry the kinds that
//! could not be decided and the total count when only some anomalies were reported.

use super::ReportInput;
use results::AnomalyKind;

/// The state of one kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Found, and the kind is in `fail_on`.
    Fail,
    /// Found, but the kind does not fail the run (e.g. `concurrent-holders`).
    Observed,
    Pass,
    /// The checker could not decide (the note says why).
    Unknown(String),
    /// The kind does not apply to this test (e.g. no tokens, no counter).
    NotApplicable(String),
    NotChecked,
}

/// One kind's line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindStatus {
    pub kind: AnomalyKind,
    pub state: State,
    /// How many were found (may exceed the anomalies listed, when the checker capped them).
    pub count: u64,
    /// Positions in `verdict.anomalies` of this kind.
    pub listed: Vec<usize>,
    /// What the checker said beside its finding (why it did not apply, could not decide, or
    /// left something undecided): its stats' `note`, or empty.
    pub note: String,
}

/// Every kind, in `AnomalyKind::ALL` order.
pub fn kinds(input: &ReportInput<'_>) -> Vec<KindStatus> {
    let v = input.verdict;
    AnomalyKind::ALL
        .into_iter()
        .map(|kind| {
            let listed: Vec<usize> = (0..v.anomalies.len())
                .filter(|i| v.anomalies[*i].kind == kind)
                .collect();
            let stat = v.stats.get(kind.as_str());
            let field = |k: &str| stat.and_then(|s| s.get(k));
            let status = field("status").and_then(|s| s.as_str());
            let note = field("note")
                .and_then(|n| n.as_str())
                .unwrap_or("")
                .to_string();
            let count = field("count")
                .and_then(|c| c.as_u64())
                .unwrap_or(0)
                .max(listed.len() as u64);
            let fails = listed.iter().any(|i| v.anomalies[*i].fails)
                || (listed.is_empty()
                    && field("fails_run").and_then(|f| f.as_bool()) == Some(true));
            let checked = status.is_some() || input.checked.contains(&kind) || !listed.is_empty();
            let state = match status {
                _ if count > 0 && fails => State::Fail,
                _ if count > 0 => State::Observed,
                Some("unknown") => State::Unknown(note.clone()),
                Some("not applicable") => State::NotApplicable(note.clone()),
                _ if checked => State::Pass,
                _ => State::NotChecked,
            };
            KindStatus {
                kind,
                state,
                count,
                listed,
                note,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{Validity, Verdict};
    use std::collections::BTreeMap;

    #[test]
    fn checker_stats_say_unknown_not_applicable_and_capped_counts() {
        let mut stats = BTreeMap::new();
        stats.insert("duplicate-token".to_string(), serde_json::json!({"status": "not applicable", "count": 0, "fails_run": true, "note": "recipe has no token"}));
        stats.insert("stuck-lock".to_string(), serde_json::json!({"status": "unknown", "count": 0, "fails_run": true, "note": "history ends mid-hold"}));
        stats.insert("concurrent-holders".to_string(), serde_json::json!({"status": "checked", "count": 250, "fails_run": false, "reported": 100}));
        let verdict = Verdict {
            valid: Validity::Unknown,
            anomalies: vec![],
            unknown_reasons: vec![],
            stats,
        };
        let cfg = serde_json::Value::Null;
        let input = ReportInput {
            test_name: "t",
            config: &cfg,
            seed: 0,
            rerun: "",
            started: None,
            run_end: None,
            history: &[],
            resource: &[],
            service: &[],
            verdict: &verdict,
            checked: &[AnomalyKind::StaleAcceptedWrite],
            process_workers: BTreeMap::new(),
            clients: &[],
        };
        let by_kind = |k: AnomalyKind| kinds(&input).into_iter().find(|s| s.kind == k).unwrap();
        assert_eq!(
            by_kind(AnomalyKind::DuplicateToken).state,
            State::NotApplicable("recipe has no token".into())
        );
        assert_eq!(
            by_kind(AnomalyKind::StuckLock).state,
            State::Unknown("history ends mid-hold".into())
        );
        let ch = by_kind(AnomalyKind::ConcurrentHolders);
        assert_eq!((ch.state, ch.count), (State::Observed, 250));
        assert_eq!(by_kind(AnomalyKind::StaleAcceptedWrite).state, State::Pass);
        assert_eq!(by_kind(AnomalyKind::LostUpdate).state, State::NotChecked);
    }
}
