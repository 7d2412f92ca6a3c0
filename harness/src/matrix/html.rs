//! `matrix.html`: the same table as `matrix.md` as one self-contained page (inline CSS, no
//! scripts, no external assets, so a CI artifact opens offline), with each cell's seeds listed
//! under it: verdict, kinds, first anomaly, latency, error, report link.

use super::judge::{CellSummary, Status};
use super::table::{exit_meaning, kinds_text, latency, report_link, secs};
use super::MatrixReport;
use results::Validity;
use std::fmt::Write;

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3}code{font-size:13px}.pass{background:#e6f4e6}.fail{background:#fbe3e3}
.unknown{background:#fff6d6}.error{background:#fde9d0}.observed{background:#eef2fb}
tr.seed td{font-size:12px;color:#444;border-color:#e4e4e4}.muted{color:#777}";

fn class(s: Status) -> &'static str {
    match s {
        Status::Pass => "pass",
        Status::Fail => "fail",
        Status::Unknown => "unknown",
        Status::Error => "error",
        Status::Observed => "observed",
    }
}

fn verdict_text(v: Option<Validity>) -> &'static str {
    match v {
        Some(Validity::Valid) => "valid",
        Some(Validity::Invalid) => "invalid",
        Some(Validity::Unknown) => "unknown",
        None => "harness error",
    }
}

fn cell_rows(out: &mut String, m: &MatrixReport, c: &CellSummary) {
    let rate_of = match c.rate_kind {
        Some(k) => k.as_str().to_string(),
        None => "any failing kind".into(),
    };
    let _ = writeln!(
        out,
        "<tr class=\"{}\"><td><code>{}</code></td><td>{}</td><td><b>{}</b><br><span class=muted>{}</span></td>\
         <td>{}<br><span class=muted>{}</span></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} / {}</td><td>{}</td></tr>",
        class(c.status),
        esc(&c.label_with_libraries()),
        esc(&c.expect),
        c.status.as_str(),
        esc(&c.reason),
        esc(&c.rate_text()),
        esc(&rate_of),
        esc(&kinds_text(c)),
        esc(&c.reach_text()),
        esc(&c.landing_text()),
        c.median_first_ns.map(secs).unwrap_or_else(|| "-".into()),
        esc(&latency(c.acquire_p50_us)),
        esc(&latency(c.acquire_p99_us)),
        c.errors,
    );
    if let Some((seed, command)) = super::next::shrink_command(c) {
        let report = super::next::first_failing(c)
            .map(|(_, d)| report_link(&m.runs_root, d))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<tr class=seed><td colspan=10>&nbsp;&nbsp;next: its first failing seed \
             (<a href=\"{}\">seed {seed}</a>), made as small as it stays failing: \
             <code class=shrink>{}</code> (docs/reproduce.md)</td></tr>",
            esc(&report),
            esc(&command)
        );
    }
    for r in &c.runs {
        let kinds: Vec<String> = r
            .kinds
            .iter()
            .map(|(k, s)| {
                let first = s.first_ns.map(secs).unwrap_or_else(|| "-".into());
                format!(
                    "{k} ×{} (first {first}{})",
                    s.count,
                    if s.fails { "" } else { ", observed" }
                )
            })
            .collect();
        let link = match &r.dir {
            Some(d) => format!(
                "<a href=\"{}\">report</a>",
                esc(&report_link(&m.runs_root, d))
            ),
            None => "no run directory".into(),
        };
        let mut note = r.error.clone().unwrap_or_default();
        for u in &r.unknown_reasons {
            note.push_str(&format!(" unknown: {u}"));
        }
        let p50 = (!r.acquire_us.is_empty()).then(|| r.acquire_us.value_at_quantile(0.5));
        let p99 = (!r.acquire_us.is_empty()).then(|| r.acquire_us.value_at_quantile(0.99));
        let _ = writeln!(
            out,
            "<tr class=seed><td>&nbsp;&nbsp;seed {}</td><td>{:.0} s wall</td><td>{}</td><td>{}</td><td>{}</td><td></td><td>{}</td><td></td><td>{} / {}</td><td>{}</td></tr>",
            r.seed,
            r.wall_secs,
            verdict_text(r.validity),
            link,
            esc(&if kinds.is_empty() { "none".into() } else { kinds.join("; ") }),
            esc(&r.landing.as_ref().map_or("-".into(), |l| l.rate())),
            esc(&latency(p50)),
            esc(&latency(p99)),
            esc(note.trim()),
        );
    }
}

/// The whole `matrix.html`.
pub fn render(m: &MatrixReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>fencecheck matrix {}</title><style>{STYLE}</style></head><body>",
        esc(&m.name)
    );
    let _ = writeln!(
        out,
        "<h1>fencecheck matrix <code>{}</code></h1><p>{} — {} cells × seeds {} — {:.0} s wall — config <code>{}</code> — <b>exit {}</b> ({})</p>",
        esc(&m.name),
        esc(&m.stamp),
        m.cells.len(),
        esc(&m.seeds.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")),
        m.wall_secs,
        esc(&m.config),
        m.exit_code,
        exit_meaning(m.exit_code),
    );
    if let Some(s) = m.shard {
        let _ = writeln!(out, "<p>Shard {s} of the file's cells.</p>");
    }
    for l in &m.load {
        let _ = writeln!(out, "<p class=muted>Machine: {}.</p>", esc(&l.text()));
    }
    out.push_str(
        "<table><tr><th>cell / seed</th><th>expect</th><th>result</th><th>rate</th><th>anomaly kinds</th>\
         <th>reached</th><th>faults landed</th><th>median first</th><th>acquire p50 / p99</th><th>errors</th></tr>\n",
    );
    for c in &m.cells {
        cell_rows(&mut out, m, c);
    }
    out.push_str(
        "</table><p class=muted>rate: seeds showing the expected kind (for safe / observe cells: any \
         failing kind) of the seeds that reached a verdict. median first: test time from the run's \
         start to the first such anomaly. acquire: invoke → ok of granted acquires, all seeds.</p>\
         </body></html>\n",
    );
    out
}
