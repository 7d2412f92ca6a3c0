//! A claimed run as an anomaly: its evidence (the worker, its attempts, the grants to others in
//! its window) and its diagnosis.

use super::run::{Run, LISTED};
use crate::checker::Findings;
use crate::diagnosis;
use crate::kinds::concurrent_holders::secs;
use results::{Evidence, OpType};
use serde_json::json;

fn outcome(kind: OpType) -> &'static str {
    match kind {
        OpType::Invoke => "invoke",
        OpType::Ok => "ok",
        OpType::Fail => "fail",
        OpType::Info => "info",
    }
}

/// Reports worker `w`'s `run`, which became true at `at`; `name_of` gives the name of the
/// worker a process belongs to, if its grants named it.
pub(super) fn push<'a>(
    w: u32,
    run: &Run,
    at: u64,
    name_of: &dyn Fn(u32) -> Option<&'a str>,
    out: &mut Findings,
) {
    let lock = run.lock.as_str();
    let name = name_of(run.processes[0]);
    let span = run.last.1 - run.first.1;
    let attempts: Vec<_> = run
        .attempts
        .iter()
        .map(|a| {
            json!({
                "invoke": a.invoke,
                "index": a.index,
                "process": a.process,
                "outcome": outcome(a.outcome),
                "error": a.error,
            })
        })
        .collect();
    let grants: Vec<_> = run
        .grants
        .iter()
        .map(|g| {
            json!({
                "index": g.index,
                "process": g.process,
                "owner": name_of(g.process),
                "token": g.token,
            })
        })
        .collect();
    let mut indices: Vec<u64> = run
        .attempts
        .iter()
        .flat_map(|a| [a.invoke, a.index])
        .chain(run.grants.iter().map(|g| g.index))
        .collect();
    indices.sort_unstable();
    let mut evidence = Evidence {
        lock: Some(lock.to_string()),
        owner: name.map(str::to_string),
        indices,
        times: vec![run.first.1, at, run.last.1],
        ..Default::default()
    };
    let other = &mut evidence.other;
    other.insert("worker".into(), json!(w));
    other.insert("processes".into(), json!(run.processes));
    other.insert("attempts".into(), json!(attempts));
    other.insert("attempts_total".into(), json!(run.attempts_total));
    other.insert("grants".into(), json!(grants));
    other.insert("grants_to_others".into(), json!(run.granted));
    other.insert("window_ms".into(), json!(span / 1_000_000));
    other.insert("failed_while_free".into(), json!(run.while_free));
    let named = name.map_or_else(String::new, |n| format!(" ({n})"));
    let summary = format!(
        "worker {w}{named} failed all {} of its acquires of lock {lock} over {} (index {} to \
         {}) while other workers were granted it {} times",
        run.attempts_total,
        secs(span),
        run.first.0,
        run.last.0,
        run.granted
    );
    let fails = run
        .attempts
        .iter()
        .filter(|a| a.outcome == OpType::Fail)
        .count();
    let listed = if run.attempts.len() < run.attempts_total as usize {
        format!(" (the first {LISTED} listed)")
    } else {
        String::new()
    };
    let last_error = run
        .attempts
        .iter()
        .rev()
        .find_map(|a| a.error.as_deref())
        .map_or_else(String::new, |e| format!("; the last error listed: {e:?}"));
    let obs = format!(
        "worker {w}{named}'s {} acquires of {lock} from t={}ns to t={}ns ({}) all failed or \
         timed out ({fails} fail, {} info{listed}) and none was granted, while other workers \
         were granted {lock} {} times in that window; {} of its failures were answered while no \
         other worker held {lock}{last_error}",
        run.attempts_total,
        run.first.1,
        run.last.1,
        secs(span),
        run.attempts.len() - fails,
        run.granted,
        run.while_free
    );
    out.push(at, summary, evidence, diagnosis::locked_out_client(obs));
}
