//! `matrix.md`: the comparison table a person reads first (and a CI job posts), one row per cell,
//! then one line per failing or incomplete cell saying why, then every run with its report link.
//! Links are relative to the matrix directory, so the run store can be moved or archived whole.

use super::judge::{CellSummary, Status};
use super::outcome::RunOutcome;
use super::MatrixReport;
use std::fmt::Write;
use std::path::Path;

/// Seconds of test time with one decimal.
pub fn secs(ns: u64) -> String {
    format!("{:.1}s", ns as f64 / 1e9)
}

/// A latency in µs as µs or ms.
pub fn latency(us: Option<u64>) -> String {
    match us {
        None => "-".into(),
        Some(us) if us < 1_000 => format!("{us}µs"),
        Some(us) if us < 100_000 => format!("{:.1}ms", us as f64 / 1e3),
        Some(us) => format!("{:.0}ms", us as f64 / 1e3),
    }
}

/// The link from the matrix directory (`<runs>/matrix/<name>/<stamp>/`) to a run's report.
pub fn report_link(runs_root: &Path, run_dir: &Path) -> String {
    match run_dir.strip_prefix(runs_root) {
        Ok(rel) => format!("../../../{}/report.html", rel.display()),
        Err(_) => run_dir.join("report.html").display().to_string(),
    }
}

/// Failing kinds first (with `!`), then the observed ones, each with how many seeds showed it.
pub fn kinds_text(cell: &CellSummary) -> String {
    if cell.kinds.is_empty() {
        return "none".into();
    }
    let n = cell.runs.len();
    let mut rows: Vec<_> = cell.kinds.iter().collect();
    rows.sort_by_key(|(_, r)| !r.fails);
    rows.iter()
        .map(|(k, r)| {
            let mark = if r.fails { "" } else { " (observed)" };
            format!("{k} {}/{n}{mark}", r.seeds)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn status_text(s: Status) -> &'static str {
    match s {
        Status::Pass => "✅ pass",
        Status::Fail => "❌ FAIL",
        Status::Unknown => "❔ unknown",
        Status::Error => "⚠️ error",
        Status::Observed => "👁 observed",
    }
}

/// The whole `matrix.md`.
/// How many runs shared clusters, on how many, and how many started their own.
fn clusters_line(m: &MatrixReport) -> String {
    let runs: Vec<&RunOutcome> = m.cells.iter().flat_map(|c| &c.runs).collect();
    let mut shared: Vec<&str> = runs.iter().filter_map(|r| r.cluster.as_deref()).collect();
    let on_shared = shared.len();
    shared.sort_unstable();
    shared.dedup();
    format!(
        "Clusters: {on_shared} of {} runs on {} shared cluster(s); the others on their own \
         or in process.",
        runs.len(),
        shared.len()
    )
}

pub fn render(m: &MatrixReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# fencecheck matrix `{}` — {}\n", m.name, m.stamp);
    let _ = writeln!(
        out,
        "{} cells × {} seeds ({}), {} runs in {:.0} s wall; config `{}`; exit {} ({}).\n",
        m.cells.len(),
        m.seeds.len(),
        m.seeds
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        m.cells.iter().map(|c| c.runs.len()).sum::<usize>(),
        m.wall_secs,
        m.config,
        m.exit_code,
        exit_meaning(m.exit_code)
    );
    if let Some(s) = m.shard {
        let _ = writeln!(
            out,
            "Shard {s}: {} of the file's cells; `fencecheck matrix merge` joins the shards.\n",
            m.cells.len()
        );
    }
    for l in &m.load {
        let _ = writeln!(out, "Machine: {}.", l.text());
    }
    let _ = writeln!(out, "{}", clusters_line(m));
    for line in &m.own_clusters {
        let _ = writeln!(out, "- {line}");
    }
    if !m.load.is_empty() {
        out.push('\n');
    }
    out.push_str(
        "| cell | expect | result | rate | anomaly kinds (seeds) | reached | faults landed | median first | acquire p50 / p99 | errors | reports |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for c in &m.cells {
        let rate_of = match c.rate_kind {
            Some(k) => format!(" {k}"),
            None => " failing".into(),
        };
        let links: Vec<String> = c
            .runs
            .iter()
            .map(|r| match &r.dir {
                Some(d) => format!("[s{}]({})", r.seed, report_link(&m.runs_root, d)),
                None => format!("s{} (no run dir)", r.seed),
            })
            .collect();
        let _ = writeln!(
            out,
            "| `{}`{} | {} | {} | {}{} | {} | {} | {} | {} | {} / {} | {} | {} |",
            c.label,
            match c.libraries() {
                l if l.is_empty() => String::new(),
                l => format!(" ({})", l.join(", ")),
            },
            c.expect,
            status_text(c.status),
            c.rate_text(),
            if c.decided > 0 {
                rate_of
            } else {
                String::new()
            },
            kinds_text(c),
            c.reach_text(),
            c.landing_text(),
            c.median_first_ns.map(secs).unwrap_or_else(|| "-".into()),
            latency(c.acquire_p50_us),
            latency(c.acquire_p99_us),
            c.errors,
            links.join(" "),
        );
    }
    let notes: Vec<&CellSummary> = m
        .cells
        .iter()
        .filter(|c| matches!(c.status, Status::Fail | Status::Error | Status::Unknown))
        .collect();
    if !notes.is_empty() {
        out.push_str("\n## Cells that did not pass\n\n");
        for c in notes {
            let _ = writeln!(out, "- `{}` ({}): {}", c.label, c.status.as_str(), c.reason);
            if let Some((seed, command)) = super::next::shrink_command(c) {
                let _ = writeln!(
                    out,
                    "  - its first failing seed ({seed}), made as small as it stays failing: `{command}`"
                );
            }
            for r in &c.runs {
                if let Some(e) = &r.error {
                    let _ = writeln!(out, "  - seed {}: harness error: {}", r.seed, one_line(e));
                }
                for u in &r.unknown_reasons {
                    let _ = writeln!(out, "  - seed {}: unknown: {}", r.seed, one_line(u));
                }
            }
        }
    }
    out.push_str(
        "\nrate: seeds showing the expected kind (or, for safe / observe cells, any failing kind) \
         of the seeds that reached a verdict. median first: test time from the run's start to the \
         first such anomaly, median over the seeds that showed it. reached, summed over the seeds: \
         holds that outlived the lease / holds · checks asked of the client · library errors \
         (info) · renewals and retries its adapter saw; `nothing`: none of the client's renewal, \
         retry or recovery code ran. faults landed: planned fault starts that struck, of all \
         planned, summed over the seeds. acquire: invoke → ok of granted \
         acquires over all seeds (waiting for a held lock included).\n",
    );
    out
}

/// What an exit code of the matrix means.
pub fn exit_meaning(code: u8) -> &'static str {
    match code {
        0 => "every cell as expected",
        1 => "a cell broke its expectation",
        2 => "some verdicts unknown",
        _ => "harness or configuration error",
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
