//! Shipped adapters over library releases from PyPI, each in its own image: a version the
//! registry does not have, or a pin of a dependency it does not have (`--with`), stops the run
//! with exit 3 before any container, naming it; the
//! python-redis-lock adapter (a library only this path installs) takes the lock cleanly, and
//! under holder pauses its renewal thread dies without telling its caller. These runs build only
//! the per-release image (about a minute, once), never the full client image.

use super::{explain, history, latest_run};
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

/// `fencecheck <args> --runs <root>/runs` from the repository's root, without building the
/// client image (a PyPI release's run builds its own).
fn fencecheck_release(root: &Path, args: &[&str]) -> Output {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::process::Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .current_dir(repo)
        .args(args)
        .arg("--runs")
        .arg(root.join("runs"))
        .output()
        .unwrap()
}

#[test]
fn a_version_the_registry_does_not_have_exits_3_within_30s_naming_it() {
    let root = crate::support::infra::fresh_root("adapters", "no-such-version");
    let started = Instant::now();
    let out = fencecheck_release(&root, &["run", "--quiet", "--client", "kazoo@0.0.99"]);
    let text = explain(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(started.elapsed() < Duration::from_secs(30), "{text}");
    assert!(
        text.contains("kazoo 0.0.99") && text.contains("No matching distribution"),
        "{text}"
    );
    // Nothing started: no run directory.
    assert_eq!(latest_run_dirs(&root), 0, "{text}");
}

#[test]
fn a_pin_the_registry_does_not_have_exits_3_within_30s_naming_it() {
    let root = crate::support::infra::fresh_root("adapters", "no-such-pin");
    let started = Instant::now();
    let out = fencecheck_release(
        &root,
        &[
            "run",
            "--quiet",
            "--client",
            "python-redis-lock",
            "--resource",
            "none",
            "--with",
            "redis==0.0.99",
        ],
    );
    let text = explain(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(started.elapsed() < Duration::from_secs(30), "{text}");
    assert!(
        text.contains("the pin redis==0.0.99 is not on PyPI")
            && text.contains("No matching distribution found for redis==0.0.99"),
        "{text}"
    );
    assert_eq!(latest_run_dirs(&root), 0, "{text}");
}

fn latest_run_dirs(root: &Path) -> usize {
    std::fs::read_dir(root.join("runs")).map_or(0, |d| d.count())
}

fn redis_lock_run(
    name: &str,
    nemesis: &str,
    time_limit: &str,
) -> (Option<i32>, String, Vec<serde_json::Value>) {
    let root = crate::support::infra::fresh_root("adapters", name);
    let out = fencecheck_release(
        &root,
        &[
            "run",
            "--quiet",
            "--client",
            "python-redis-lock@4.0.1",
            "--resource",
            "none",
            "--nemesis",
            nemesis,
            "--time-limit",
            time_limit,
            "--seed",
            "1",
        ],
    );
    let text = explain(&out);
    (out.status.code(), text, history(&latest_run(&root)))
}

#[test]
fn python_redis_lock_takes_the_lock_cleanly_and_names_its_release() {
    let (code, text, events) = redis_lock_run("python-redis-lock-clean", "none", "20s");
    assert_eq!(code, Some(0), "{text}");
    let acquired: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["f"] == "acquire" && e["type"] == "ok")
        .collect();
    assert!(
        acquired.len() >= 10,
        "{} acquisitions:\n{text}",
        acquired.len()
    );
    assert!(acquired.iter().all(|e| e["token"].is_null()), "{text}");
    // The summary names the library and the version it reported at its handshake.
    assert!(
        text.contains("client: python-redis-lock (python-redis-lock 4.0.1 (redis-py 8.1.0))"),
        "{text}"
    );
}

/// Observed (docs/adapters.md, the note under the tokens table): a paused holder's key
/// expires, but the waiters sit in BLPOP on the lock's signal list for their whole acquire
/// timeout (an expiry pushes no signal), so a takeover during a pause happens only when a
/// waiter's timeout ends inside it; the woken holder's renewal thread dies of NotAcquired
/// without telling its caller, and its release is refused (NotAcquired). Whether a stale write
/// lands is therefore up to timing: the run ends valid or with stale-accepted-write, and the
/// library's refusal is always there.
#[test]
fn python_redis_lock_under_holder_pauses_refuses_the_woken_holders_release() {
    let (code, text, events) = redis_lock_run("python-redis-lock-pause", "pause-holder", "30s");
    match code {
        Some(0) => assert!(text.contains("verdict: VALID"), "{text}"),
        Some(1) => assert!(text.contains("stale-accepted-write"), "{text}"),
        other => panic!("exit {other:?}:\n{text}"),
    }
    let refused = events
        .iter()
        .filter(|e| e["f"] == "release" && e["type"] == "fail")
        .count();
    assert!(refused >= 1, "no release refused:\n{text}");
}
