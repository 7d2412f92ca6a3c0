//! The run's link proxy, for `slow-network`, `lossy-network` and `slow-reply`: started only when
//! the plan has such a fault or a replay's `slow-reply` step (the default test pays nothing), one container `netproxy` running `fencecheck
//! proxy` with a route per (worker, lock-service node). Each worker's `--endpoints` then point at
//! its own routes, so a fault slows or breaks exactly that worker's links. (Redis Sentinel hands
//! clients the master's own address, which bypasses the proxy: link faults there reach only the
//! sentinel connections.)

use crate::config::TestPlan;
use anyhow::Context;
use containers::cluster::ClusterHandle;
use containers::control::links::LinkProxy;
use containers::docker::{ContainerSpec, Node, Readiness, RunEnv};
use std::collections::BTreeMap;
use std::time::Duration;
use workloads::worker::WorkerLaunch;

/// Where the proxy's control port listens in its container.
pub const CONTROL_PORT: u16 = 7400;
/// The first route port; worker i's route to node j listens on `FIRST_PORT + 16 i + j`.
pub const FIRST_PORT: u16 = 8100;

/// The started proxy: its container, how the host controls it, and each worker's endpoints.
pub struct Links {
    pub node: Node,
    pub control: LinkProxy,
    pub endpoints: BTreeMap<String, Vec<String>>,
}

/// Whether the plan needs the proxy.
pub fn needed(plan: &TestPlan) -> bool {
    plan.link_proxy
}

/// The routes of `workers` (container short names) to every client node of `lock`.
pub fn routes(
    env: &RunEnv,
    lock: &ClusterHandle,
    workers: &[String],
) -> (String, BTreeMap<String, Vec<String>>) {
    let proxy_host = env.container_name("netproxy");
    let mut routes = Vec::new();
    let mut endpoints = BTreeMap::new();
    for (i, w) in workers.iter().enumerate() {
        let mut mine = Vec::new();
        for (j, node) in lock.client_nodes().enumerate() {
            let port = FIRST_PORT + 16 * i as u16 + j as u16;
            let short = containers::control::topology::short_name(env, &node.name);
            routes.push(format!("{w}>{short}=0.0.0.0:{port}->{}", node.address));
            mine.push(format!("{proxy_host}:{port}"));
        }
        endpoints.insert(w.clone(), mine);
    }
    (routes.join(","), endpoints)
}

/// Starts the proxy container for `workers` (short names) in front of `lock`, running
/// `binary` (the `fencecheck` binary) as `fencecheck proxy`.
pub async fn start(
    env: &RunEnv,
    lock: &ClusterHandle,
    workers: &[String],
    binary: std::path::PathBuf,
) -> anyhow::Result<Links> {
    let (routes, endpoints) = routes(env, lock, workers);
    let args = vec![
        "proxy".to_string(),
        format!("--routes={routes}"),
        format!("--control=0.0.0.0:{CONTROL_PORT}"),
    ];
    let spec = ContainerSpec::fencecheck("netproxy", binary, args)
        .port(CONTROL_PORT)
        .ready(Readiness::Listening(CONTROL_PORT))
        .ready_timeout(Duration::from_secs(30));
    let node = env
        .start_container(spec)
        .await
        .context("starting the link proxy")?;
    let port = node
        .client_port
        .context("the link proxy's control port is not published")?;
    Ok(Links {
        control: LinkProxy {
            control: format!("127.0.0.1:{port}"),
            cut_reply_to: None,
        },
        node,
        endpoints,
    })
}

/// Points a worker's endpoints at its own routes through the proxy.
pub fn point_at_proxy(launch: &mut WorkerLaunch, links: &Links, worker: &str) {
    if let Some(mine) = links.endpoints.get(worker) {
        launch.endpoints = mine.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{validate, RawTest};

    #[test]
    fn only_a_plan_with_a_link_fault_starts_the_proxy() {
        let default = validate(RawTest::default(), 1).unwrap();
        assert!(
            !needed(&default),
            "the default test pays nothing for the proxy"
        );
        let slow = validate(
            RawTest {
                nemesis: Some(vec!["slow-network".into()]),
                ..RawTest::default()
            },
            1,
        )
        .unwrap();
        assert!(needed(&slow));
    }
}
