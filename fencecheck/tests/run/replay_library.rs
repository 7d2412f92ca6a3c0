//! Every scenario of `scenarios/` passes against every provider it names, against real
//! containers (`fencecheck replay` as a user runs it), and leaves nothing behind.

use crate::support::infra::labelled_containers;

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Replays `scenarios/<name>.yaml` and asserts exit 0, every row ✓, nothing left running.
fn replays(name: &str, providers: &[&str]) {
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
    assert_eq!(out.status.code(), Some(0), "{name}:\n{stdout}\n{stderr}");
    for p in providers {
        assert!(stdout.contains(&format!("== {name} on {p} ==")), "{stdout}");
        assert!(
            labelled_containers(&format!("replay-{name}-{p}")).is_empty(),
            "containers left by {name} on {p}"
        );
    }
    assert_eq!(
        stdout.matches("every expectation held").count(),
        providers.len(),
        "{stdout}"
    );
    assert!(!stdout.contains('✗'), "{stdout}");
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
    replays("stuck-keepalive", &["etcd", "zookeeper", "redis"]);
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
