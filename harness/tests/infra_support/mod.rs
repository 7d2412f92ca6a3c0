//! Shared by the container tests of the docker/cluster layer: unique run ids and the assertion
//! that a run left nothing behind.

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
