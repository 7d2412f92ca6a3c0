//! Shared by the container tests: unique run ids and the check that a run left nothing behind
//! (from async tests through the library, from CLI tests through `docker ps`).

#![allow(dead_code)]

use containers::docker::{connect, list_run_containers, list_run_networks};

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

/// The run id the harness gives a test named `id`: the checkout's `FENCECHECK_RUN_PREFIX`, then
/// the id (containers are `fc-<run id>-<node>`).
pub fn harness_run_id(id: &str) -> String {
    use harness::run::deploy::{after_prefix, checkout_prefix};
    after_prefix(&checkout_prefix(), id)
}

/// The ids of the containers still labelled with `run_id` (empty when a run cleaned up), as
/// `docker ps` prints them: for tests that drive the `fencecheck` binary. `run_id` is the test's
/// own id; the checkout's `FENCECHECK_RUN_PREFIX` goes before it as the harness puts it.
pub fn labelled_containers(run_id: &str) -> String {
    containers_labelled(&harness_run_id(run_id))
}

/// The ids of the containers labelled with the full run id `id` (a shared cluster's id, which
/// already carries the checkout's prefix), as `docker ps` prints them.
pub fn containers_labelled(id: &str) -> String {
    let out = std::process::Command::new("docker")
        .args(["ps", "-aq", "--filter"])
        .arg(format!("label=fencecheck.run={id}"))
        .output()
        .expect("docker ps");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A fresh directory `<temp>/fc-<suite>-<pid>-<name>` for one test's config and runs.
pub fn fresh_root(suite: &str, name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fc-{suite}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `fencecheck run --quiet --config <root>/test.yaml --runs <root>/runs <args>`, with `yaml`
/// written as that test.yaml, as a user runs it.
pub fn run_config(root: &std::path::Path, yaml: &str, args: &[&str]) -> std::process::Output {
    let config = root.join("test.yaml");
    std::fs::write(&config, yaml).unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .args(["run", "--quiet", "--config"])
        .arg(&config)
        .arg("--runs")
        .arg(root.join("runs"))
        .args(args)
        .output()
        .unwrap()
}
