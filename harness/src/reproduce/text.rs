//! The scenario file `reproduce` writes: a header saying where it comes from (the run, the
//! anomaly, who stands for which acquisition, what the lock service's record showed of them,
//! how to replay it), the run's provider, lock
//! client and settings, and the steps, each with the place in the run it comes from.

use super::actors::Actor;
use super::steps::{self, Line};
use super::Stored;
use results::Anomaly;
use std::fmt::Write as _;

/// The whole file.
pub fn render(
    stored: &Stored,
    number: usize,
    anomaly: &Anomaly,
    cast: &[Actor],
    lines: &[Line],
    witnesses: &[&Anomaly],
    name: Option<&str>,
) -> String {
    let t = &stored.test;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Made by `fencecheck reproduce {} --anomaly {number}` from its {}:",
        stored.dir.display(),
        anomaly.kind
    );
    let _ = writeln!(out, "#   {}", one_line(&anomaly.summary));
    let _ = writeln!(
        out,
        "# Each worker stands for one acquisition of that run (its grant, the faults on its \
         worker,"
    );
    let _ = writeln!(
        out,
        "# its writes as the resource decided them, its releases), up to the anomaly:"
    );
    for a in cast {
        let _ = writeln!(out, "#   {}", a.describe());
    }
    if !witnesses.is_empty() {
        let _ = writeln!(
            out,
            "# The lock service's own record showed beside it, of the same acquisitions (the \
             replay"
        );
        let _ = writeln!(
            out,
            "# records the service as the run did, and expects it too):"
        );
        for w in witnesses {
            let _ = writeln!(out, "#   {}: {}", w.kind, one_line(&w.summary));
        }
    }
    let _ = writeln!(out, "# Replay it: fencecheck replay <this file>");
    let name = name.map(str::to_string).unwrap_or_else(|| {
        format!(
            "{}-{}",
            t.name.as_deref().unwrap_or("run"),
            anomaly.kind.as_str()
        )
    });
    let _ = writeln!(out, "name: {name}");
    match (&t.client, &t.recipe) {
        // The adapter names its provider (`refusal` turned away a backend a replay cannot pick).
        (Some(client), _) => {
            let _ = writeln!(out, "client: {client}");
            let pins: Vec<String> = t.with.iter().flatten().map(|p| p.to_string()).collect();
            if !pins.is_empty() {
                let _ = writeln!(out, "with: [{}]", pins.join(", "));
            }
        }
        (None, recipe) => {
            if let Some(p) = &t.provider {
                let _ = writeln!(out, "provider: {p}");
            }
            if let Some(r) = recipe {
                let _ = writeln!(out, "recipe: {r}");
            }
        }
    }
    if let Some(o) = t
        .client_options
        .as_ref()
        .filter(|o| o.as_object().is_some_and(|m| !m.is_empty()))
    {
        let _ = writeln!(out, "client_options: {o}");
    }
    let _ = writeln!(
        out,
        "resource: {}",
        t.resource.as_deref().unwrap_or("strict")
    );
    for (key, value) in [
        ("ttl", t.ttl),
        ("renew_interval", t.renew_interval),
        ("session_timeout", t.session_timeout),
        ("op_timeout", t.op_timeout),
        ("recovery_slack", t.recovery_slack),
    ] {
        if let Some(v) = value {
            let _ = writeln!(out, "{key}: {v}");
        }
    }
    if let Some(r) = &t.renewal {
        let _ = writeln!(out, "renewal: {r}");
    }
    if let Some(a) = t.acquire_timeout {
        let _ = writeln!(out, "acquire_timeout: {a}");
    }
    if let Some(c) = &t.cut_reply_to {
        let _ = writeln!(out, "cut_reply_to: {c}");
    }
    // A memory run's planted bugs, planted again in the in-process replay.
    if let Some(bugs) = t.memory_bugs.as_ref().filter(|b| !b.is_empty()) {
        let _ = writeln!(out, "memory_bugs: [{}]", bugs.join(", "));
    }
    // The actors live as the run's workers did: asking their library before each write,
    // keeping their client after its errors.
    if let Some(app) = t.app.as_deref().filter(|a| *a != "short") {
        let _ = writeln!(out, "app: {app}");
    }
    let _ = writeln!(out, "workers: [{}]", steps::workers(cast, lines).join(", "));
    let mut expected = vec![anomaly.kind];
    for w in witnesses {
        if !expected.contains(&w.kind) {
            expected.push(w.kind);
        }
    }
    let expected: Vec<&str> = expected.iter().map(|k| k.as_str()).collect();
    let _ = writeln!(out, "expect_anomalies: [{}]", expected.join(", "));
    let _ = writeln!(out, "steps:");
    for l in lines {
        let _ = writeln!(
            out,
            "  - {}: {}  # {}",
            l.who(),
            l.action(),
            one_line(&l.from)
        );
        if let Some(e) = l.expect() {
            let _ = writeln!(out, "    expect: {e}");
        }
    }
    out
}

/// Text safe to put in a YAML comment: one line.
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}
