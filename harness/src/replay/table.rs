//! What `fencecheck replay` prints: per provider the step table (step, worker, action, token,
//! highest token at the resource before, result, expected, ✓/✗), the failing steps with why,
//! and the evidence packet of every anomaly the check reported.

use super::execute::Replayed;
use super::steps::{expect_text, Row};
use std::fmt::Write as _;

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

fn mark(r: &Row) -> &'static str {
    match r.held {
        Some(true) => "✓",
        Some(false) => "✗",
        None => "",
    }
}

/// The step table of one replay.
pub fn steps(rows: &[Row]) -> String {
    let header = [
        "step",
        "worker",
        "action",
        "token",
        "highest_before",
        "result",
        "expected",
        "",
    ];
    let cells: Vec<[String; 8]> = rows
        .iter()
        .map(|r| {
            [
                format!("{} (l.{})", r.step, r.line),
                r.who.clone(),
                r.action.clone(),
                opt(r.token),
                opt(r.highest_before),
                r.result.clone(),
                r.expect.as_ref().map(expect_text).unwrap_or_default(),
                mark(r).to_string(),
            ]
        })
        .collect();
    let mut width = header.map(|h| h.chars().count());
    for row in &cells {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count()).min(60);
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cols: &[String]| {
        let parts: Vec<String> = cols
            .iter()
            .zip(width)
            .map(|(c, w)| {
                let c: String = c.chars().take(w).collect();
                format!("{c}{}", " ".repeat(w - c.chars().count()))
            })
            .collect();
        let _ = writeln!(out, "| {} |", parts.join(" | "));
    };
    line(&mut out, &header.map(String::from));
    let _ = writeln!(
        out,
        "|{}|",
        width
            .iter()
            .map(|w| "-".repeat(w + 2))
            .collect::<Vec<_>>()
            .join("|")
    );
    for row in &cells {
        line(&mut out, row);
    }
    out
}

/// Everything printed for one provider.
pub fn render(name: &str, r: &Replayed) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n== {name} on {} ==", r.provider);
    out.push_str(&steps(&r.rows));
    for row in r.rows.iter().filter(|x| x.held == Some(false)) {
        let _ = writeln!(
            out,
            "✗ step {} (line {}) {} {}: {}",
            row.step,
            row.line,
            row.who,
            row.action,
            row.why
                .clone()
                .unwrap_or_else(|| "expectation not met".into())
        );
    }
    if let Some(why) = &r.aborted {
        let _ = writeln!(out, "✗ the scenario stopped at {why}");
    }
    for m in &r.anomaly_mismatches {
        let _ = writeln!(out, "✗ {m}");
    }
    if let Some(v) = &r.verdict {
        let _ = writeln!(out, "check: {:?}, {} anomalies", v.valid, v.anomalies.len());
        for a in &v.anomalies {
            let e = &a.evidence;
            let _ = writeln!(
                out,
                "  {} ({}): {}",
                a.kind.as_str(),
                if a.fails { "fails the run" } else { "reported" },
                a.summary
            );
            let _ = writeln!(
                out,
                "    lock {} key {} owner {} lease {} token {} highest_before {} result {}",
                e.lock.as_deref().unwrap_or("-"),
                e.key.as_deref().unwrap_or("-"),
                e.owner.as_deref().unwrap_or("-"),
                e.lease.as_deref().unwrap_or("-"),
                opt(e.token),
                opt(e.highest_before),
                e.result.as_deref().unwrap_or("-"),
            );
            let _ = writeln!(
                out,
                "    history {:?} resource seqs {:?} times(ns) {:?}",
                e.indices, e.seqs, e.times
            );
            let _ = writeln!(out, "    likely boundary: {}", a.diagnosis.likely_boundary);
        }
    }
    let _ = writeln!(out, "run: {}", r.run_dir.display());
    let _ = writeln!(
        out,
        "{}",
        if r.passed() {
            "every expectation held"
        } else {
            "EXPECTATIONS FAILED"
        }
    );
    out
}
