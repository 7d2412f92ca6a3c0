//! `report.html`: one self-contained page (inline CSS, inline SVG, a little inline JavaScript for
//! zooming the timeline; nothing fetched) that answers, top to bottom: did the run pass, what was
//! tested, who held the lock when, what went wrong with what evidence, and how the system behaved
//! (latency, throughput) around the faults.

use std::fmt::Write as _;

use super::markup::{duration, esc, flatten_config, secs};
use super::series::Series;
use super::status::{self, State};
use super::timeline::Timeline;
use super::{anomalies, charts, glyphs, timeline_svg, ReportInput};
use results::{AnomalyKind, Validity};

const CSS: &str = include_str!("report.css");
const JS: &str = include_str!("report.js");

/// Renders the whole page.
pub fn render_html(input: &ReportInput<'_>) -> String {
    let model = Timeline::build(input);
    let series = Series::build(input.history, model.end);
    render_html_drawn(input, &model, &series)
}

/// Renders the whole page from the run's timeline and series, built once by the caller.
pub(crate) fn render_html_drawn(
    input: &ReportInput<'_>,
    model: &Timeline,
    series: &Series,
) -> String {
    let mut s = String::with_capacity(256 * 1024);
    let v = input.verdict;
    let (class, word) = match v.valid {
        Validity::Valid => ("valid", "VALID"),
        Validity::Invalid => ("invalid", "INVALID"),
        Validity::Unknown => ("unknown", "UNKNOWN"),
    };
    let _ = write!(
        s,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>{word} · {} · fencecheck</title><style>{CSS}</style></head><body>"#,
        esc(input.test_name)
    );
    header(&mut s, input, model, class, word);
    s.push_str(r#"<main><div class="grid2">"#);
    summary(&mut s, input, model);
    config(&mut s, input);
    s.push_str("</div>");
    timeline(&mut s, model);
    let _ = write!(
        s,
        r#"<section class="card" id="anomalies"><h2>Anomalies <small>{} found · each with its evidence packet and diagnosis</small></h2>{}</section>"#,
        v.anomalies.len(),
        anomalies::section(input, model)
    );
    let _ = write!(
        s,
        r#"<section class="card" id="latency"><h2>Latency over time <small>invoke → completion, p50 / p99 / max per {} bucket (HDR histogram); faults shaded</small></h2><div class="chart">{}</div></section>"#,
        duration(series.bucket),
        charts::latency_svg(series, &model.faults)
    );
    let _ = write!(
        s,
        r#"<section class="card" id="throughput"><h2>Throughput <small>completions per second; faults shaded</small></h2><div class="chart">{}</div></section>"#,
        charts::throughput_svg(series, &model.faults)
    );
    stats(&mut s, input);
    let _ = write!(
        s,
        r#"</main><footer>fencecheck report · {} · seed {} · history {} events · resource log {} decisions</footer><script>{JS}</script></body></html>"#,
        esc(input.test_name),
        input.seed,
        input.history.len(),
        input.resource.len()
    );
    s
}

fn header(s: &mut String, input: &ReportInput<'_>, model: &Timeline, class: &str, word: &str) {
    let v = input.verdict;
    let failing: Vec<AnomalyKind> = kinds_where(input, |a| a.fails);
    let line = match v.valid {
        Validity::Valid if v.anomalies.is_empty() => "no anomaly found".to_string(),
        Validity::Valid => {
            let seen: Vec<&str> = kinds_where(input, |_| true)
                .iter()
                .map(|k| k.as_str())
                .collect();
            format!(
                "{} observed ({}); none fails the run",
                v.anomalies.len(),
                seen.join(", ")
            )
        }
        Validity::Invalid => {
            let n = v.anomalies.iter().filter(|a| a.fails).count();
            let kinds: Vec<&str> = failing.iter().map(|k| k.as_str()).collect();
            let (noun, verb) = if n == 1 {
                ("anomaly", "fails")
            } else {
                ("anomalies", "fail")
            };
            format!("{n} {noun} {verb} the run: {}", kinds.join(", "))
        }
        Validity::Unknown => format!(
            "the checkers could not decide: {}",
            v.unknown_reasons.join("; ")
        ),
    };
    let _ = write!(
        s,
        r#"<header class="top {class}"><div class="brand">fencecheck · distributed-lock fault-injection report</div><div class="row"><h1>{}</h1><span class="badge {class}" id="verdict">{word}</span><span class="verdict-line">{}</span></div><div class="meta">"#,
        esc(input.test_name),
        esc(&line)
    );
    if let Some(started) = input.started {
        let _ = write!(s, "<span>started <b>{}</b></span>", esc(started));
    }
    for client in input.clients {
        let _ = write!(s, "<span>library <b>{}</b></span>", esc(client));
    }
    let faults = model.faults.len();
    let _ = write!(s, "<span>seed <b>{}</b></span><span>duration <b>{}</b></span><span>workers <b>{}</b></span><span>faults <b>{faults}</b></span><span>history <b>{}</b> events</span><span>resource log <b>{}</b> decisions</span></div>", input.seed, secs(model.end), model.lanes.len(), input.history.len(), input.resource.len());
    let _ = write!(
        s,
        r#"<div class="rerun"><span>re-run:</span><code>{}</code></div></header>"#,
        esc(input.rerun)
    );
}

fn kinds_where(
    input: &ReportInput<'_>,
    pred: impl Fn(&results::Anomaly) -> bool,
) -> Vec<AnomalyKind> {
    let mut kinds: Vec<AnomalyKind> = input
        .verdict
        .anomalies
        .iter()
        .filter(|a| pred(a))
        .map(|a| a.kind)
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds
}

fn summary(s: &mut String, input: &ReportInput<'_>, model: &Timeline) {
    let v = input.verdict;
    s.push_str(r#"<section class="card" id="summary"><h2>Verdict by anomaly kind</h2><table class="kinds"><tr><th>kind</th><th>result</th><th>count</th><th>first at</th><th>first</th></tr>"#);
    for k in status::kinds(input) {
        let (st, word, note) = match &k.state {
            // A kind that judged may still say what it left undecided.
            State::Fail => ("fail", "FAIL", k.note.as_str()),
            State::Observed => ("observed", "observed", k.note.as_str()),
            State::Pass => ("pass", "pass", k.note.as_str()),
            State::Unknown(n) => ("observed", "UNKNOWN", n.as_str()),
            State::NotApplicable(n) => ("skip", "n/a", n.as_str()),
            State::NotChecked => ("skip", "not checked", ""),
        };
        let first = k
            .listed
            .iter()
            .filter_map(|i| model.anomalies.iter().find(|m| m.number == *i))
            .map(|m| m.time)
            .min();
        let link = k
            .listed
            .first()
            .map(|i| format!(r##"<a href="#anomaly-{}">#{0}</a>"##, i + 1))
            .unwrap_or_default();
        let count = match k.state {
            State::NotChecked | State::NotApplicable(_) | State::Unknown(_) => String::new(),
            _ if k.count > k.listed.len() as u64 => {
                format!("{} ({} listed)", k.count, k.listed.len())
            }
            _ => k.count.to_string(),
        };
        let note = if note.is_empty() {
            String::new()
        } else {
            format!(r#"<div class="note">{}</div>"#, esc(note))
        };
        let _ = write!(
            s,
            r#"<tr><td>{}</td><td><span class="st {st}">{word}</span>{note}</td><td>{count}</td><td>{}</td><td>{link}</td></tr>"#,
            k.kind,
            first.map(secs).unwrap_or_default()
        );
    }
    s.push_str("</table>");
    if let Some(reach) = results::reach::Reach::of(v) {
        let _ = write!(
            s,
            r#"<div class="note reach"><b>Reached:</b> {}</div>"#,
            esc(&reach.line())
        );
    }
    if let Some(landing) = results::landing::Landing::of(v) {
        let _ = write!(
            s,
            r#"<div class="note landing"><b>Faults:</b> {}</div>"#,
            esc(&landing.line())
        );
    }
    if !v.unknown_reasons.is_empty() {
        s.push_str(r#"<div class="unknown-reasons"><b>Why unknown:</b><ul>"#);
        for r in &v.unknown_reasons {
            let _ = write!(s, "<li>{}</li>", esc(r));
        }
        s.push_str("</ul></div>");
    }
    let unplanned = v.unplanned_lines();
    if !unplanned.is_empty() {
        s.push_str(r#"<div class="unknown-reasons"><b>Outside the fault plan:</b><ul>"#);
        for line in &unplanned {
            let _ = write!(s, "<li>{}</li>", esc(line));
        }
        s.push_str("</ul></div>");
    }
    s.push_str("</section>");
}

fn config(s: &mut String, input: &ReportInput<'_>) {
    s.push_str(r#"<section class="card" id="config"><h2>Configuration <small>the resolved test (test.yaml)</small></h2><div class="config"><table>"#);
    let rows = flatten_config(input.config);
    if rows.is_empty() {
        s.push_str("<tr><td>(no configuration recorded)</td></tr>");
    }
    for (k, v) in rows {
        let _ = write!(s, "<tr><th>{}</th><td>{}</td></tr>", esc(&k), esc(&v));
    }
    s.push_str("</table></div></section>");
}

fn timeline(s: &mut String, model: &Timeline) {
    let h = timeline_svg::height(model);
    let w = timeline_svg::X0 + timeline_svg::PLOT_W + timeline_svg::PAD;
    let _ = write!(
        s,
        r#"<section class="card" id="timeline"><h2>Timeline <small>one lane per worker · hover anything for details · click a flag for its anomaly</small><span class="controls">zoom <input type="range" id="tl-zoom" min="0" max="50" value="0" aria-label="timeline zoom"><span id="tl-zoom-val">1.0×</span><button type="button" id="tl-fit">fit</button></span></h2><div class="legend">"#
    );
    for (shape, label) in glyphs::legend() {
        let _ = write!(
            s,
            r#"<span><svg width="18" height="16" viewBox="-9 -8 18 16">{shape}</svg>{}</span>"#,
            esc(label)
        );
    }
    for (name, label) in [
        ("pause", "fault band (pause, freeze)"),
        ("partition", "partition"),
        ("kill", "kill / crash"),
        ("other", "other fault"),
    ] {
        let _ = write!(
            s,
            r#"<span><svg width="18" height="12"><rect width="18" height="12" rx="2" fill="{}"/></svg>{label}</span>"#,
            glyphs::fault_color(name).0
        );
    }
    let _ = write!(
        s,
        r#"</div><div class="tl"><svg class="tl-labels" xmlns="http://www.w3.org/2000/svg" width="{lw}" height="{h}" viewBox="0 0 {lw} {h}">{labels}</svg><div class="tl-scroll"><svg id="tl-plot" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" data-end="{end}" data-pps="{pps}" data-x0="{x0}" data-pad="{pad}">{plot}</svg></div></div><p class="hint">Holds run from acquire ok to release invoke, lease-lost, process exit or the end of the run. Writes are placed where the resource decided them (resource.jsonl).</p></section>"#,
        lw = timeline_svg::LABEL_W,
        h = super::markup::px(h),
        w = super::markup::px(w),
        end = model.end as f64 / 1e9,
        pps = timeline_svg::base_pps(model),
        x0 = timeline_svg::X0,
        pad = timeline_svg::PAD,
        labels = timeline_svg::labels(model),
        plot = timeline_svg::plot(model)
    );
}

fn stats(s: &mut String, input: &ReportInput<'_>) {
    // Per-kind entries are in the summary table already.
    let rest: Vec<_> = input
        .verdict
        .stats
        .iter()
        .filter(|(k, _)| AnomalyKind::parse(k).is_none())
        .collect();
    if rest.is_empty() {
        return;
    }
    s.push_str(r#"<section class="card" id="stats"><h2>Checker statistics and notes</h2><table class="kv">"#);
    for (k, v) in rest {
        let _ = write!(
            s,
            "<tr><th>{}</th><td>{}</td></tr>",
            esc(k),
            esc(&super::markup::json_text(v))
        );
    }
    s.push_str("</table></section>");
}
