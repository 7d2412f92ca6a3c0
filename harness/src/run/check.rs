//! Phase 9 of a run, and all of `fencecheck check`: the checkers over a run directory. Streams
//! `history.jsonl` and `resource.jsonl` through every checker (memory follows open holds, not
//! history length), hands them the lock service's record (`service.jsonl`, small: only the lock
//! keys' changes) whole, writes `results.json`, and prints one line per anomaly kind. A live run and a
//! re-check of its directory judge the same way, through this file.
//!
//! A last line cut off mid-write (a killed writer) is not malformed input: everything before it
//! is judged and the verdict is at best unknown. So is a run whose `state.json` says it never
//! finished (still `running`: its harness was killed) or was interrupted. Any other unusable
//! input (a missing history, a malformed line) is an error naming the file and line.

use anyhow::Context;
use checkers::Engine;
use results::layout::{HISTORY, RESOURCE_LOG};
use results::reach::ReachCounter;
use results::store::{RunReader, StoreError};
use results::{Validity, Verdict};
use std::fmt::Write as _;
use std::path::Path;

/// Checks a stored run: `test.yaml` (optional: ttl, recovery_slack, fail_on), `history.jsonl`
/// (required), `resource.jsonl` (optional: without it the resource checkers are unknown when
/// the history has writes). Errors name the file and line.
pub fn check_run_dir(dir: &Path) -> anyhow::Result<Verdict> {
    if !dir.is_dir() {
        anyhow::bail!("{}: not a run directory (no such directory)", dir.display());
    }
    let run = RunReader::open(dir);
    let cfg = run.check_config()?;
    let history = run.file(HISTORY);
    if !history.is_file() {
        anyhow::bail!(
            "{}: missing; a run directory must hold the history it recorded",
            history.display()
        );
    }
    let mut engine = Engine::new(&cfg);
    // The lock service's own record, where the run has one (a malformed line is an error), told
    // to the engine before the history: without one, the kinds that need it read no event.
    match run.service_log()? {
        Some(record) => engine.service_log(record),
        None => engine.service_log_missing(format!(
            "the run has no {} (recorded without an observer, or converted)",
            results::layout::SERVICE_LOG
        )),
    }
    // A torn last line (the writer was killed mid-line) ends that stream: what came before is
    // judged and the verdict becomes unknown. Any other bad line is an error (exit 3).
    let mut torn = Vec::new();
    let mut tolerate_torn = |r: Result<u64, StoreError>| match r {
        Err(e @ StoreError::TornTail { .. }) => {
            torn.push(e.to_string());
            Ok(())
        }
        other => other.map(drop),
    };
    let mut order = IndexOrder::default();
    // Without a ttl in test.yaml, every hold counts against the 2 s a test defaults to.
    let mut reach = ReachCounter::new(cfg.ttl.unwrap_or(std::time::Duration::from_secs(2)));
    let mut last = 0;
    tolerate_torn(run.stream_history(|line, e| {
        order.see(line, e.index);
        reach.see(e);
        last = last.max(e.time);
        engine.event(e)
    }))?;
    if run.has_resource_log() {
        tolerate_torn(run.stream_resource_log(|r| engine.resource(r)))?;
    } else {
        let missing = run.file(RESOURCE_LOG);
        engine.resource_log_missing(format!("{}: missing", missing.display()));
    }
    let mut verdict = engine.finish();
    for why in torn {
        verdict.unknown_because(why);
    }
    // A run that never finished is at best unknown; a directory without the record (made by
    // hand, converted from another tool) is judged as it stands.
    if let Some(why) = run.state()?.and_then(|s| s.unfinished_because()) {
        verdict.unknown_because(why);
    }
    order.note(&mut verdict);
    let nodes = dir.join(results::layout::NODES_DIR);
    let reach = reach.finish(last, nodes.is_dir().then_some(nodes.as_path()));
    verdict
        .stats
        .insert("reach".into(), serde_json::json!(reach));
    Ok(verdict)
}

/// Whether the history's indices rise line by line, as a recorder writes them (0, 1, 2, ...).
/// A file edited or merged by hand may not; the checkers then judge it in file order, which
/// is said in the stats (and by [`summary_table`]) so a surprising finding can be traced to it.
#[derive(Debug, Default)]
struct IndexOrder {
    last: Option<u64>,
    count: u64,
    /// (line, index, the index before it) of the first line out of order.
    first: Option<(u64, u64, u64)>,
}

impl IndexOrder {
    fn see(&mut self, line: u64, index: u64) {
        if let Some(before) = self.last.filter(|&b| index <= b) {
            self.count += 1;
            self.first.get_or_insert((line, index, before));
        }
        self.last = Some(index);
    }

    fn note(&self, verdict: &mut Verdict) {
        if let Some((line, index, after)) = self.first {
            verdict.stats.insert(
                "indices_out_of_order".into(),
                serde_json::json!({
                    "count": self.count,
                    "line": line,
                    "index": index,
                    "after": after,
                }),
            );
        }
    }
}

/// Writes `results.json` through a temporary file, so a reader never sees half of it. The
/// temporary name is unique per call: after Ctrl-C the signal thread and the main path may both
/// write.
pub fn write_results(path: &Path, verdict: &Verdict) -> anyhow::Result<()> {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("json.{}-{n}.tmp", std::process::id()));
    let text = serde_json::to_string_pretty(verdict)?;
    std::fs::write(&tmp, text + "\n").with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// One line per anomaly kind (status, count, whether it fails the run), the verdict, the
/// reasons for an unknown verdict, and the first `show` anomalies' summaries.
pub fn summary_table(v: &Verdict, show: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<22} {:<15} {:>8}  fails run",
        "anomaly", "status", "count"
    );
    for kind in results::AnomalyKind::ALL {
        let st = &v.stats[kind.as_str()];
        let status = st["status"].as_str().unwrap_or("-");
        let count = st["count"].as_u64().unwrap_or(0);
        let fails = if st["fails_run"].as_bool().unwrap_or(false) {
            "yes"
        } else {
            "no"
        };
        let _ = writeln!(
            s,
            "{:<22} {:<15} {:>8}  {fails}",
            kind.as_str(),
            status,
            count
        );
    }
    let word = match v.valid {
        Validity::Valid => "VALID",
        Validity::Invalid => "INVALID",
        Validity::Unknown => "UNKNOWN",
    };
    let _ = writeln!(
        s,
        "verdict: {word} (exit {})  events: {}  resource entries: {}",
        v.valid.exit_code(),
        v.stats.get("events").cloned().unwrap_or_default(),
        v.stats.get("resource_entries").cloned().unwrap_or_default()
    );
    for r in &v.unknown_reasons {
        let _ = writeln!(s, "unknown: {r}");
    }
    for line in v.unplanned_lines() {
        let _ = writeln!(s, "unplanned: {line}");
    }
    if let Some(d) = v.stats.get("indices_out_of_order") {
        let n = d["count"].as_u64().unwrap_or(0);
        let _ = writeln!(
            s,
            "warning: the history's indices go backwards or repeat at {n} {} (first: line {}, \
             index {} after index {}): the file was edited or merged, and the checkers judged \
             it in file order",
            if n == 1 { "event" } else { "events" },
            d["line"],
            d["index"],
            d["after"]
        );
    }
    for a in v.anomalies.iter().take(show) {
        let _ = writeln!(s, "- {}: {}", a.kind, a.summary);
        let _ = writeln!(s, "    next: {}", a.diagnosis.next_action);
    }
    if v.anomalies.len() > show {
        let _ = writeln!(s, "  ... {} more in results.json", v.anomalies.len() - show);
    }
    s
}
