//! `junit.xml` for CI: one test case per anomaly kind checked, so a nightly job's test view shows
//! "stale-accepted-write: failed" with the evidence in the failure body rather than a bare exit
//! code. A kind observed but not in `fail_on` passes, its observations in `system-out`; an
//! undecided run adds one `verdict` case with an `error` carrying the reasons.

use std::fmt::Write as _;

use super::markup::{esc, join_nums, secs};
use super::ReportInput;
use crate::{Anomaly, AnomalyKind, Validity};

/// Renders the JUnit XML document.
pub fn junit_xml(input: &ReportInput<'_>) -> String {
    let v = input.verdict;
    let mut kinds: Vec<AnomalyKind> = input.checked.to_vec();
    kinds.extend(v.anomalies.iter().map(|a| a.kind));
    kinds.sort();
    kinds.dedup();
    let unknown = v.valid == Validity::Unknown;
    let failures = kinds
        .iter()
        .filter(|k| v.anomalies.iter().any(|a| a.kind == **k && a.fails))
        .count();
    let tests = kinds.len() + usize::from(unknown);
    let errors = usize::from(unknown);
    let end = input
        .history
        .iter()
        .map(|e| e.time)
        .chain(input.resource.iter().map(|r| r.time))
        .max()
        .unwrap_or(0)
        .max(input.run_end.unwrap_or(0));
    let time = format!("{:.3}", end as f64 / 1e9);
    let suite = format!("fencecheck.{}", input.test_name);
    let mut s = String::new();
    let _ = writeln!(s, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        s,
        r#"<testsuites name="fencecheck" tests="{tests}" failures="{failures}" errors="{errors}" time="{time}">"#
    );
    let _ = writeln!(
        s,
        r#"  <testsuite name="{}" tests="{tests}" failures="{failures}" errors="{errors}" skipped="0" time="{time}">"#,
        esc(&suite)
    );
    let _ = writeln!(
        s,
        r#"    <properties><property name="seed" value="{}"/><property name="rerun" value="{}"/></properties>"#,
        input.seed,
        esc(input.rerun)
    );
    for kind in kinds {
        let of_kind: Vec<&Anomaly> = v.anomalies.iter().filter(|a| a.kind == kind).collect();
        let failing: Vec<&&Anomaly> = of_kind.iter().filter(|a| a.fails).collect();
        let _ = write!(
            s,
            r#"    <testcase classname="{}" name="{kind}" time="{time}">"#,
            esc(&suite)
        );
        if let Some(first) = failing.first() {
            let message = format!(
                "{} {kind} anomal{}; first: {}",
                failing.len(),
                if failing.len() == 1 { "y" } else { "ies" },
                first.summary
            );
            let body: String = failing
                .iter()
                .map(|a| evidence_text(a))
                .collect::<Vec<_>>()
                .join("\n");
            let _ = write!(
                s,
                "\n      <failure type=\"{kind}\" message=\"{}\">{}</failure>\n    ",
                esc(&message),
                esc(&body)
            );
        } else if !of_kind.is_empty() {
            let body: String = of_kind
                .iter()
                .map(|a| evidence_text(a))
                .collect::<Vec<_>>()
                .join("\n");
            let _ = write!(
                s,
                "\n      <system-out>{} observed (not in fail_on):\n{}</system-out>\n    ",
                of_kind.len(),
                esc(&body)
            );
        }
        s.push_str("</testcase>\n");
    }
    if unknown {
        let _ = writeln!(
            s,
            r#"    <testcase classname="{}" name="verdict" time="{time}"><error type="unknown" message="the checkers could not decide">{}</error></testcase>"#,
            esc(&suite),
            esc(&v.unknown_reasons.join("\n"))
        );
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}

/// The evidence packet of one anomaly as plain text lines.
pub fn evidence_text(a: &Anomaly) -> String {
    let ev = &a.evidence;
    let mut t = format!("{}: {}\n", a.kind, a.summary);
    let fields = [
        ("lock", ev.lock.clone()),
        ("key", ev.key.clone()),
        ("owner", ev.owner.clone()),
        ("lease", ev.lease.clone()),
        ("token", ev.token.map(|v| v.to_string())),
        ("highest_before", ev.highest_before.map(|v| v.to_string())),
        ("result", ev.result.clone()),
        (
            "history indices",
            (!ev.indices.is_empty()).then(|| join_nums(&ev.indices)),
        ),
        (
            "resource seqs",
            (!ev.seqs.is_empty()).then(|| join_nums(&ev.seqs)),
        ),
        (
            "times",
            (!ev.times.is_empty()).then(|| {
                ev.times
                    .iter()
                    .map(|t| secs(*t))
                    .collect::<Vec<_>>()
                    .join(", ")
            }),
        ),
    ];
    for (k, v) in fields {
        if let Some(v) = v {
            let _ = writeln!(t, "  {k}: {v}");
        }
    }
    for (k, v) in &ev.other {
        let _ = writeln!(t, "  {k}: {v}");
    }
    let d = &a.diagnosis;
    for (k, v) in [
        ("observation", &d.observation),
        ("likely boundary", &d.likely_boundary),
        ("what to check", &d.what_to_check),
        ("next action", &d.next_action),
    ] {
        if !v.is_empty() {
            let _ = writeln!(t, "  {k}: {v}");
        }
    }
    t
}
