//! Shared by the container tests: unique run ids and the check that a run left nothing behind
//! (from async tests through the library, from CLI tests through `docker ps`).

#![allow(dead_code)]

use harness::docker::{connect, list_run_containers, list_run_networks};

/// A run id unique to this test and process: `t-infra-<what>-<random>`.
pub fn run_id(what: &str) -> String {
    format!("t-infra-{what}-{:08x}", rand::random::<u32>())
}

/// Panics unless no container and no network labelled with `run_id` exists.
pub async fn assert_nothing_left(run_id: &str) {
    let docker = connect().await.expect("docker");
    let containers = list_run_containers(&docker, Some(run_id))
        .await
        .expect("list");
    let networks = list_run_networks(&docker, Some(run_id))
        .await
        .expect("list");
    assert!(
        containers.is_empty() && networks.is_empty(),
        "run {run_id} left containers {containers:?} and networks {networks:?}"
    );
}

/// The ids of the containers still labelled with `run_id` (empty when a run cleaned up), as
/// `docker ps` prints them: for tests that drive the `fencecheck` binary.
pub fn labelled_containers(run_id: &str) -> String {
    let out = std::process::Command::new("docker")
        .args(["ps", "-aq", "--filter"])
        .arg(format!("label=fencecheck.run={run_id}"))
        .output()
        .expect("docker ps");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
