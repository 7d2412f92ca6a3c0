//! Every scenario of `scenarios/` passes against every provider it names, against real
//! containers (`fencecheck replay` as a user runs it), and leaves nothing behind.

use crate::support::infra::labelled_containers;

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Replays `scenarios/<name>.yaml` and asserts exit 0, every row ✓, nothing left running.
/// Replays scenario `name` on each of `providers`, every expectation held; its runs' folder.
fn replays(name: &str, providers: &[&str]) -> tempfile::TempDir {
    let runs = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .arg("replay")
        .arg(repo().join("scenarios").join(format!("{name}.yaml")))
        .arg("--runs")
        .arg(runs.path())
        .output()
        .expect("run fencecheck replay");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}\n{stderr}");
    let mut wrong = Vec::new();
    if out.status.code() != Some(0) {
        wrong.push(format!("exit {:?}", out.status.code()));
    }
    for p in providers {
        if !stdout.contains(&format!("== {name} on {p} ==")) {
            wrong.push(format!("no replay on {p}"));
        }
        if !labelled_containers(&format!("replay-{name}-{p}")).is_empty() {
            wrong.push(format!("containers left on {p}"));
        }
    }
    let held = stdout.matches("every expectation held").count();
    if held != providers.len() || stdout.contains('✗') {
        wrong.push(format!("{held} of {} replays held", providers.len()));
    }
    if !wrong.is_empty() {
        // Kept, with every run's checkers' stats printed, so a failure seen once can be read.
        let kept = runs.keep();
        for v in verdicts(&kept) {
            println!("stats: {}", v["stats"]);
        }
        panic!(
            "{name}: {}; runs kept in {}",
            wrong.join(", "),
            kept.display()
        );
    }
    runs
}

/// Every run's `results.json` under `dir`, read.
fn verdicts(dir: &std::path::Path) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        // Not through a `latest` link: each run once.
        if entry.file_type().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        if path.is_dir() {
            out.extend(verdicts(&path));
        } else if path.file_name().is_some_and(|n| n == "results.json") {
            out.push(serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap());
        }
    }
    out
}

#[test]
fn stale_fence_is_rejected_by_the_fence_on_etcd_zookeeper_and_redis() {
    replays("stale-fence", &["etcd", "zookeeper", "redis"]);
}

#[test]
fn a_write_sent_during_the_pause_stays_open_and_is_rejected_after_resume() {
    replays("stale-fence-open-write", &["etcd"]);
}

#[test]
fn without_fencing_the_stale_write_is_accepted_and_flagged() {
    replays("stale-fence-unfenced", &["etcd", "zookeeper", "redis"]);
}

#[test]
fn plain_del_release_frees_the_new_holders_lock() {
    replays("redis-lock-del", &["redis"]);
}

/// The scenario `fencecheck reproduce` made from a red matrix cell (docs/reproduce.md).
#[test]
fn the_reproduced_double_release_of_the_red_example_comes_back() {
    replays("red-example-double-release", &["redis"]);
}

#[test]
fn zookeeper_session_expiry_two_holders_only_czxid_stops_the_stale_write() {
    replays("zk-session-expiry", &["zookeeper"]);
}

#[test]
fn a_lock_kept_alive_by_a_stuck_holder_is_flagged_stuck() {
    let runs = replays("stuck-keepalive", &["etcd", "zookeeper", "redis"]);
    // The lock service's own record names the holder it kept: A's key, with its lease or
    // session, renewed within the window where the service records renewals.
    let verdicts = verdicts(runs.path());
    assert_eq!(verdicts.len(), 3);
    for v in &verdicts {
        let stuck = v["anomalies"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["kind"] == "stuck-lock")
            .expect("a stuck lock");
        let holder = &stuck["other"]["service_holder"];
        let key = holder["key"].as_str().unwrap_or_default();
        assert!(key.contains("fencecheck-lock"), "{holder}");
        assert_eq!(
            holder["value"].as_str().map(|v| v.starts_with('A')),
            Some(true),
            "{holder}"
        );
        // Redis's PEXPIRE, etcd's lease and ZooKeeper's session renew the key.
        assert!(holder["renewals_in_window"].as_u64() > Some(0), "{holder}");
    }
}

#[test]
fn sentinel_failover_loses_an_acknowledged_lock() {
    replays("sentinel-failover", &["redis-sentinel"]);
}

#[test]
fn a_crashed_holders_lock_comes_back_after_its_lease() {
    replays("holder-crash", &["etcd", "zookeeper", "redis"]);
}

#[test]
fn a_holder_cut_from_the_lock_service_is_stopped_by_the_fence() {
    replays("isolated-holder", &["etcd", "zookeeper", "redis"]);
}

#[test]
fn a_lock_whose_acquirer_died_mid_acquire_is_granted_after_its_lease() {
    replays("kill-acquiring", &["etcd", "zookeeper", "redis"]);
}

#[test]
fn redis_py_keeps_its_lock_through_its_own_wall_clock_jumping_both_ways() {
    replays("client-clock-jump", &["redis (redis-py)"]);
    // A replay with a library is named after it.
    assert!(labelled_containers("replay-client-clock-jump-redis-py").is_empty());
}

#[test]
fn a_redis_server_restarted_without_its_data_hands_out_a_token_again() {
    replays("redis-restart-empty", &["redis"]);
}

#[test]
fn a_release_whose_reply_is_cut_has_freed_the_lock() {
    replays("cut-release-reply", &["etcd", "zookeeper", "redis"]);
}

#[test]
fn an_acquire_whose_reply_is_cut_leaves_the_service_holding_the_lock_for_nobody() {
    replays("phantom-holder", &["redis"]);
}

#[test]
fn a_holder_and_a_leader_starved_of_cpu_keep_the_lease() {
    replays("starved-holder", &["etcd", "zookeeper", "redis"]);
}
