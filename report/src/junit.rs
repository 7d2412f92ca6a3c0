//! `junit.xml` for CI: one test case per anomaly kind checked, so a nightly job's test view shows
//! "stale-accepted-write: failed" with the evidence in the failure body rather than a bare exit
//! code. A kind observed but not in `fail_on` passes, its observations in `system-out`; a kind
//! the checkers could not decide is an `error`, one that does not apply is `skipped`; an
//! undecided run whose reasons no kind carries adds one `verdict` case with an `error`.

use std::fmt::Write as _;

use super::markup::{esc, join_nums, json_text, secs};
use super::status::{self, KindStatus, State};
use super::ReportInput;
use results::{Anomaly, Validity};

/// Renders the JUnit XML document.
pub fn junit_xml(input: &ReportInput<'_>) -> String {
    let v = input.verdict;
    let kinds: Vec<KindStatus> = status::kinds(input)
        .into_iter()
        .filter(|k| k.state != State::NotChecked)
        .collect();
    let count = |f: fn(&State) -> bool| kinds.iter().filter(|k| f(&k.state)).count();
    let failures = count(|s| *s == State::Fail);
    let skipped = count(|s| matches!(s, State::NotApplicable(_)));
    let kind_errors = count(|s| matches!(s, State::Unknown(_)));
    // An undecided run whose reasons no kind carries gets its own case, so CI shows why.
    let verdict_case = v.valid == Validity::Unknown && kind_errors == 0;
    let tests = kinds.len() + usize::from(verdict_case);
    let errors = kind_errors + usize::from(verdict_case);
    let end = input
        .history
        .iter()
        .map(|e| e.time)
        .chain(input.resource.iter().map(|r| r.time))
        .max()
        .unwrap_or(0)
        .max(input.run_end.unwrap_or(0));
    let time = format!("{:.3}", end as f64 / 1e9);
    let suite = esc(&format!("fencecheck.{}", input.test_name));
    let mut s = String::new();
    let _ = writeln!(s, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        s,
        r#"<testsuites name="fencecheck" tests="{tests}" failures="{failures}" errors="{errors}" time="{time}">"#
    );
    let _ = writeln!(
        s,
        r#"  <testsuite name="{suite}" tests="{tests}" failures="{failures}" errors="{errors}" skipped="{skipped}" time="{time}">"#
    );
    let mut clients: String = input
        .clients
        .iter()
        .map(|c| format!(r#"<property name="library" value="{}"/>"#, esc(c)))
        .collect();
    if let Some(reach) = results::reach::Reach::of(v) {
        let _ = write!(
            clients,
            r#"<property name="reached" value="{}"/>"#,
            esc(&reach.line())
        );
    }
    if let Some(landing) = results::landing::Landing::of(v) {
        let _ = write!(
            clients,
            r#"<property name="faults" value="{}"/>"#,
            esc(&landing.line())
        );
    }
    let _ = writeln!(
        s,
        r#"    <properties><property name="seed" value="{}"/><property name="rerun" value="{}"/>{clients}</properties>"#,
        input.seed,
        esc(input.rerun)
    );
    for k in &kinds {
        let kind = k.kind;
        let listed: Vec<&Anomaly> = k.listed.iter().map(|i| &v.anomalies[*i]).collect();
        let _ = write!(
            s,
            r#"    <testcase classname="{suite}" name="{kind}" time="{time}">"#
        );
        let body = listed
            .iter()
            .map(|a| evidence_text(a))
            .collect::<Vec<_>>()
            .join("\n");
        match &k.state {
            State::Fail => {
                let first = listed.first().map(|a| a.summary.as_str()).unwrap_or("");
                let message = format!(
                    "{} {kind} anomal{}; first: {first}",
                    k.count,
                    if k.count == 1 { "y" } else { "ies" }
                );
                let _ = write!(
                    s,
                    "\n      <failure type=\"{kind}\" message=\"{}\">{}</failure>\n    ",
                    esc(&message),
                    esc(&body)
                );
            }
            State::Observed => {
                let _ = write!(
                    s,
                    "\n      <system-out>{} observed (not in fail_on):\n{}</system-out>\n    ",
                    k.count,
                    esc(&body)
                );
            }
            State::Unknown(note) => {
                let _ = write!(
                    s,
                    "\n      <error type=\"unknown\" message=\"{}\">{}</error>\n    ",
                    esc(note),
                    esc(&v.unknown_reasons.join("\n"))
                );
            }
            State::NotApplicable(note) => {
                let _ = write!(s, "<skipped message=\"{}\"/>", esc(note));
            }
            State::Pass | State::NotChecked => {}
        }
        s.push_str("</testcase>\n");
    }
    if verdict_case {
        let _ = writeln!(
            s,
            r#"    <testcase classname="{suite}" name="verdict" time="{time}"><error type="unknown" message="the checkers could not decide">{}</error></testcase>"#,
            esc(&v.unknown_reasons.join("\n"))
        );
    }
    let unplanned = v.unplanned_lines();
    if !unplanned.is_empty() {
        let _ = writeln!(
            s,
            "    <system-out>outside the fault plan:\n{}</system-out>",
            esc(&unplanned.join("\n"))
        );
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}

/// The evidence packet of one anomaly as plain text lines.
pub fn evidence_text(a: &Anomaly) -> String {
    let ev = &a.evidence;
    let mut t = format!("{}: {}\n", a.kind, a.summary);
    if let Some(at) = a.when() {
        t.push_str(&format!("  became true at: {:.3}s\n", at as f64 / 1e9));
    }
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
        let _ = writeln!(t, "  {k}: {}", json_text(v));
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
