//! The run pipeline through the client-adapter protocol, in-process (`--client memory`): each
//! worker's lock calls go as JSON lines to an adapter, which calls the memory lock service. The
//! same planted bugs must surface through the adapter as they do through the recipe, so the
//! tokens, the releases and the outcomes an adapter reports reach the history unchanged.

use std::path::Path;

const BASE: &str = "client: memory
workers: 4
ttl: 300ms
time_limit: 2s
recovery: 1s
recovery_slack: 1s
seed: 11
";

fn failing_kinds(root: &Path) -> Vec<String> {
    let dir = std::fs::canonicalize(root.join("runs/latest")).unwrap();
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    let mut k: Vec<String> = r["anomalies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["fails"] == true)
        .map(|a| a["kind"].as_str().unwrap().to_string())
        .collect();
    k.sort();
    k.dedup();
    k
}

fn explain(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_correct_service_behind_the_adapter_protocol_passes_with_its_tokens_recorded() {
    let r = crate::support::infra::fresh_root("run-adapter", "clean");
    let out = crate::support::infra::run_config(&r, BASE, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    let dir = std::fs::canonicalize(r.join("runs/latest")).unwrap();
    let history = std::fs::read_to_string(dir.join("history.jsonl")).unwrap();
    let acquired: Vec<serde_json::Value> = history
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["f"] == "acquire" && e["type"] == "ok")
        .collect();
    assert!(acquired.len() >= 10, "{} acquisitions", acquired.len());
    assert!(acquired.iter().all(|e| e["token"].as_u64().is_some()));
    let test_yaml = std::fs::read_to_string(dir.join("test.yaml")).unwrap();
    assert!(
        test_yaml.contains("client: memory") && !test_yaml.contains("recipe:"),
        "{test_yaml}"
    );
}

#[test]
fn bugs_behind_the_adapter_surface_as_the_same_anomalies() {
    let r = crate::support::infra::fresh_root("run-adapter", "tokens");
    let out =
        crate::support::infra::run_config(&r, BASE, &["--memory-bugs", "tokens-not-monotonic"]);
    assert_eq!(out.status.code(), Some(1), "{}", explain(&out));
    assert_eq!(failing_kinds(&r), ["duplicate-token", "token-regression"]);
    let r = crate::support::infra::fresh_root("run-adapter", "release");
    let out = crate::support::infra::run_config(
        &r,
        BASE,
        &["--memory-bugs", "expires-early,release-without-owner-check"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", explain(&out));
    assert_eq!(failing_kinds(&r), ["double-release"]);
}

fn reach(root: &Path) -> serde_json::Value {
    let dir = std::fs::canonicalize(root.join("runs/latest")).unwrap();
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    r["stats"]["reach"].clone()
}

#[test]
fn short_critical_sections_never_outlive_the_lease_and_jobs_live_on_the_librarys_renewal() {
    // The default profile: holds of ttl / 4 reach none of the library's renewal code, and the
    // summary says so.
    let r = crate::support::infra::fresh_root("run-adapter", "short");
    let out = crate::support::infra::run_config(&r, BASE, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    assert_eq!(reach(&r)["holds_past_ttl"], 0, "{}", explain(&out));
    assert!(
        explain(&out).contains("reached: none of the client's renewal, retry or recovery paths"),
        "{}",
        explain(&out)
    );
    // Jobs of 3 x ttl: every hold lives on the library's renewal, and the run says it did.
    let r = crate::support::infra::fresh_root("run-adapter", "job");
    let out = crate::support::infra::run_config(&r, BASE, &["--app", "job"]);
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    let reach = reach(&r);
    assert!(
        reach["holds_past_ttl"].as_u64().unwrap() >= 2,
        "{reach}: {}",
        explain(&out)
    );
    assert!(
        explain(&out).contains("holds outlived the lease"),
        "{}",
        explain(&out)
    );
}
