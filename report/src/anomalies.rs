//! The anomalies section of the page: every anomaly with its evidence packet (the fields, the
//! history events and resource decisions it names, and its JSON), its diagnosis, and a link to its
//! flag on the timeline — the part an engineer reads to decide what to fix.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::markup::{esc, join_nums, json_text, secs};
use super::timeline::{opt, Timeline};
use super::ReportInput;
use results::{Anomaly, Event, ResourceEntry};

/// Anomalies drawn as full cards; the rest are listed as rows (still linkable).
const FULL_CARDS: usize = 40;

pub fn section(input: &ReportInput<'_>, model: &Timeline) -> String {
    let anomalies = &input.verdict.anomalies;
    let mut s = String::new();
    if anomalies.is_empty() {
        s.push_str(r#"<p class="none">No anomaly was found.</p>"#);
        return s;
    }
    let mut look = Lookup {
        events: input.history.iter().map(|e| (e.index, e)).collect(),
        entries: input.resource.iter().map(|r| (r.seq, r)).collect(),
        by_op: HashMap::new(),
    };
    for e in input.history {
        if let Some(op) = e.op_id.as_deref() {
            look.by_op.entry(op).or_default().push(e);
        }
    }
    let at: HashMap<usize, u64> = model.anomalies.iter().map(|m| (m.number, m.time)).collect();
    for (n, a) in anomalies.iter().enumerate().take(FULL_CARDS) {
        card(&mut s, n, a, at.get(&n).copied(), &look);
    }
    if anomalies.len() > FULL_CARDS {
        let _ = write!(
            s,
            r#"<details class="more"><summary>{} more anomalies</summary><table class="rows"><tr><th>#</th><th>kind</th><th>at</th><th>summary</th><th>indices</th><th>seqs</th></tr>"#,
            anomalies.len() - FULL_CARDS
        );
        for (n, a) in anomalies.iter().enumerate().skip(FULL_CARDS) {
            let when = at
                .get(&n)
                .map(|t| format!(r##"<a href="#tl-anomaly-{}">{}</a>"##, n + 1, secs(*t)))
                .unwrap_or_default();
            let _ = write!(
                s,
                r#"<tr id="anomaly-{}"><td>#{0}</td><td>{}</td><td>{when}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
                n + 1,
                a.kind,
                esc(&a.summary),
                join_nums(&a.evidence.indices),
                join_nums(&a.evidence.seqs)
            );
        }
        s.push_str("</table></details>");
    }
    s
}

/// The history and resource log, indexed the ways evidence points into them.
struct Lookup<'a> {
    events: HashMap<u64, &'a Event>,
    entries: HashMap<u64, &'a ResourceEntry>,
    by_op: HashMap<&'a str, Vec<&'a Event>>,
}

fn card(s: &mut String, n: usize, a: &Anomaly, at: Option<u64>, look: &Lookup<'_>) {
    let num = n + 1;
    let (class, pill) = if a.fails {
        ("fails", "fails the run")
    } else {
        ("observed", "observed — does not fail the run")
    };
    let _ = write!(
        s,
        r#"<article class="anomaly {class}" id="anomaly-{num}"><header><span class="num">#{num}</span><span class="kind">{}</span><span class="pill {class}">{pill}</span>"#,
        a.kind
    );
    if let Some(t) = at {
        let _ = write!(
            s,
            r##"<a class="jump" href="#tl-anomaly-{num}">at {} — show on the timeline ↑</a>"##,
            secs(t)
        );
    }
    let _ = write!(
        s,
        r#"</header><p class="summary">{}</p><div class="cols"><div><h4>Evidence</h4><table class="kv">"#,
        esc(&a.summary)
    );
    let ev = &a.evidence;
    let rows: [(&str, String); 10] = [
        ("lock", ev.lock.clone().unwrap_or_default()),
        ("key", ev.key.clone().unwrap_or_default()),
        ("owner", ev.owner.clone().unwrap_or_default()),
        ("lease", ev.lease.clone().unwrap_or_default()),
        ("token", ev.token.map(|t| t.to_string()).unwrap_or_default()),
        (
            "highest_before",
            ev.highest_before.map(|t| t.to_string()).unwrap_or_default(),
        ),
        ("result", ev.result.clone().unwrap_or_default()),
        ("history indices", join_nums(&ev.indices)),
        ("resource seqs", join_nums(&ev.seqs)),
        (
            "times",
            ev.times
                .iter()
                .map(|t| secs(*t))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    ];
    for (k, v) in rows.iter().filter(|(_, v)| !v.is_empty()) {
        let _ = write!(s, "<tr><th>{k}</th><td>{}</td></tr>", esc(v));
    }
    for (k, v) in &ev.other {
        let _ = write!(
            s,
            "<tr><th>{}</th><td>{}</td></tr>",
            esc(k),
            other_value(k, v)
        );
    }
    s.push_str(r#"</table></div><div><h4>Diagnosis</h4><dl class="diag">"#);
    let d = &a.diagnosis;
    for (k, v) in [
        ("Observation", &d.observation),
        ("Likely boundary", &d.likely_boundary),
        ("What to check", &d.what_to_check),
        ("Next action", &d.next_action),
    ] {
        if !v.is_empty() {
            let _ = write!(s, "<dt>{k}</dt><dd>{}</dd>", esc(v));
        }
    }
    s.push_str("</dl></div></div>");
    let res: Vec<&ResourceEntry> = ev
        .seqs
        .iter()
        .filter_map(|q| look.entries.get(q).copied())
        .collect();
    // The named history events, plus each resource decision's own write (invoke and completion,
    // found by op_id), so the worker's view sits beside the resource's.
    let mut hist: Vec<&Event> = ev
        .indices
        .iter()
        .filter_map(|i| look.events.get(i).copied())
        .collect();
    let named = hist.len();
    hist.extend(
        res.iter()
            .flat_map(|r| look.by_op.get(r.op_id.as_str()).into_iter().flatten()),
    );
    hist.sort_by_key(|e| e.index);
    hist.dedup_by_key(|e| e.index);
    let _ = write!(
        s,
        r#"<details class="packet" open><summary>Evidence packet — {} history events{}, {} resource decisions</summary>"#,
        hist.len(),
        if hist.len() > named {
            " (with the writes' own invoke / completion, by op_id)"
        } else {
            ""
        },
        res.len()
    );
    if !hist.is_empty() {
        s.push_str(r#"<table class="events"><tr><th>history #</th><th>time</th><th>process</th><th>type</th><th>f</th><th>lock / key</th><th>owner</th><th>lease</th><th>token</th><th>highest_before</th><th>result</th></tr>"#);
        for e in hist {
            let where_ = [e.lock.as_deref(), e.key.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" / ");
            let result = e
                .result
                .map(|r| r.as_str().to_string())
                .or_else(|| e.held.map(|h| format!("held: {h}")))
                .or_else(|| e.error.clone())
                .unwrap_or_default();
            let _ = write!(
                s,
                r#"<tr class="t-{}"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
                type_str(e),
                e.index,
                secs(e.time),
                e.process,
                type_str(e),
                e.f,
                esc(&where_),
                esc(e.owner.as_deref().unwrap_or("")),
                esc(e.lease.as_deref().unwrap_or("")),
                opt(e.token),
                opt(e.highest_before),
                esc(&result)
            );
        }
        s.push_str("</table>");
    }
    if !res.is_empty() {
        s.push_str(r#"<table class="events"><tr><th>resource seq</th><th>time</th><th>process</th><th>key</th><th>owner</th><th>lease</th><th>token</th><th>highest_before</th><th>result</th><th>op_id</th></tr>"#);
        for r in res {
            let _ = write!(
                s,
                r#"<tr class="r-{}"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
                r.result.as_str(),
                r.seq,
                secs(r.time),
                r.process,
                esc(&r.key),
                esc(&r.owner),
                esc(&r.lease),
                opt(r.token),
                opt(r.highest_before),
                r.result.as_str(),
                esc(&r.op_id)
            );
        }
        s.push_str("</table>");
    }
    let json = serde_json::to_string_pretty(a).unwrap_or_default();
    let _ = write!(
        s,
        r#"<details class="json"><summary>JSON (as in results.json)</summary><pre>{}</pre></details></details></article>"#,
        esc(&json)
    );
}

/// One kind-specific evidence value: the orders of a `basis: every-order` stale write as the
/// sentences that say why each is stale, anything else as its JSON.
fn other_value(k: &str, v: &serde_json::Value) -> String {
    let whys: Option<Vec<&str>> = (k == "orders")
        .then(|| v.as_array())
        .flatten()
        .and_then(|orders| orders.iter().map(|o| o["why"].as_str()).collect());
    match whys {
        Some(whys) => {
            let items: String = whys
                .iter()
                .map(|w| format!("<li>{}</li>", esc(w)))
                .collect();
            format!(r#"<ul class="orders">{items}</ul>"#)
        }
        None => esc(&json_text(v)),
    }
}

fn type_str(e: &Event) -> &'static str {
    match e.kind {
        results::OpType::Invoke => "invoke",
        results::OpType::Ok => "ok",
        results::OpType::Fail => "fail",
        results::OpType::Info => "info",
    }
}
