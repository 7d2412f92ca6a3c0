//! What `fencecheck shrink` prints: one row per step as it ends (what changed, the tries with
//! their seeds and whether each showed the kind, kept or not, the test after it), and at the
//! end the smallest test with its reproduction rate.

use super::search::{Shrunk, Step};
use results::AnomalyKind;
use std::fmt::Write as _;

/// The table's header.
pub fn header() -> String {
    "| step | change | tries (seed: shown?) | kept | test after the step | wall |\n|---|---|---|---|---|---|\n"
        .to_string()
}

/// One step's row.
pub fn row(step: &Step, kind: AnomalyKind) -> String {
    let tries: Vec<String> = step
        .tries
        .iter()
        .map(|t| {
            let shown = if t.shows(kind) {
                "yes"
            } else if t.exit == 3 {
                "error (exit 3)"
            } else {
                "no"
            };
            format!("{}: {shown}", t.seed)
        })
        .collect();
    let wall: f64 = step.tries.iter().map(|t| t.wall.as_secs_f64()).sum();
    format!(
        "| {} | {} | {} | {} | {} | {:.0} s |\n",
        step.number,
        step.change,
        tries.join(", "),
        if step.kept { "kept" } else { "no" },
        step.test,
        wall
    )
}

/// The closing lines.
pub fn summary(s: &Shrunk) -> String {
    let mut out = String::new();
    let (shown, of) = s.rate();
    let _ = writeln!(out, "stopped: {}", s.stopped);
    let _ = writeln!(
        out,
        "smallest test: {}; {} in {shown}/{of} of its last tries",
        s.best.summary(),
        s.kind
    );
    for line in s.best.faults().lines() {
        let _ = writeln!(out, "  {line}");
    }
    let _ = writeln!(out, "runs: {}, wall {:.0} s", s.runs, s.wall.as_secs_f64());
    out
}
