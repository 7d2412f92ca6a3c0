//! The stage of one replay: the provider's cluster, the resource server, and one worker container
//! per scenario worker, named after it (`worker-a` serves the owner `A`), so a reader of the
//! history and of `docker ps` can tell A from B. The lead's run pipeline starts the cluster and
//! the resource; the workers are started here because a replay needs what a run does not: a
//! short acquire timeout (an acquire against a held lock must fail certainly and soon, for
//! `expect: lock-held`) and the scenario's names.

use crate::cluster::ClusterHandle;
use crate::config::{Discipline, Renewal, TestPlan};
use crate::docker::{ContainerSpec, Node, Readiness, Role, RunEnv};
use crate::run::deploy::WORKER_PORT;
use anyhow::Context;
use std::time::Duration;

/// The container short name of scenario worker `name` (`A` -> `worker-a`).
pub fn container_of(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!("worker-{safe}")
}

/// The flags of one worker container: the run's flags (as `run::deploy` gives them) plus the
/// replay's acquire timeout.
fn worker_args(
    plan: &TestPlan,
    name: &str,
    lock: &ClusterHandle,
    resource: &Node,
    clock_start: u64,
    acquire_timeout: Duration,
) -> Vec<String> {
    let discipline = match plan.discipline {
        Discipline::Stop => "stop",
        Discipline::Continue => "continue",
    };
    let renewal = match plan.renewal {
        Renewal::Background => "background",
        Renewal::Inline => "inline",
    };
    vec![
        "worker".to_string(),
        format!("--listen=0.0.0.0:{WORKER_PORT}"),
        format!("--name={name}"),
        format!("--recipe={}", plan.recipe),
        format!("--provider={}", plan.provider.as_str()),
        format!("--endpoints={}", lock.network_endpoints().join(",")),
        format!("--ttl={}", plan.ttl),
        format!("--renew-interval={}", plan.renew_interval),
        format!("--session-timeout={}", plan.session_timeout),
        format!("--op-timeout={}", plan.op_timeout),
        format!("--acquire-timeout={}ms", acquire_timeout.as_millis()),
        format!("--discipline={discipline},{renewal}"),
        format!("--clock-start={clock_start}"),
        format!("--resource={}", resource.address),
    ]
}

/// Starts one container per scenario worker, concurrently; returned in the scenario's order.
pub async fn start_workers(
    env: &RunEnv,
    plan: &TestPlan,
    names: &[String],
    lock: &ClusterHandle,
    resource: &Node,
    clock_start: u64,
    acquire_timeout: Duration,
) -> anyhow::Result<Vec<Node>> {
    let binary = std::env::current_exe().context("locating the fencecheck binary to mount")?;
    let starts = names.iter().map(|name| {
        let spec = ContainerSpec::fencecheck(
            &container_of(name),
            binary.clone(),
            worker_args(plan, name, lock, resource, clock_start, acquire_timeout),
        )
        .port(WORKER_PORT)
        .role(Role::Worker)
        .ready(Readiness::Listening(WORKER_PORT))
        .ready_timeout(Duration::from_secs(45));
        env.start_container(spec)
    });
    futures::future::join_all(starts)
        .await
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .context("starting the scenario's workers")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_are_named_after_the_scenario() {
        assert_eq!(container_of("A"), "worker-a");
        assert_eq!(container_of("client 2"), "worker-client-2");
    }
}
