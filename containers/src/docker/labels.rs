//! Names and labels: every container and network fencecheck creates carries
//! `fencecheck.run=<run id>` and a name starting with `fc-<run id>`, so a run (or everything
//! fencecheck ever left behind) can be found and removed by label alone.

use super::DockerError;
use bollard::query_parameters::{
    ListContainersOptions, ListNetworksOptions, RemoveContainerOptions,
};
use bollard::Docker;
use std::collections::HashMap;

/// The label on every container and network of a run; its value is the run id.
pub const RUN_LABEL: &str = "fencecheck.run";

/// The Docker name (and in-network host name) of a run's container `short`, e.g. `etcd-1`.
pub fn container_name(run_id: &str, short: &str) -> String {
    format!("fc-{run_id}-{short}")
}

/// The name of a run's Docker network.
pub fn network_name(run_id: &str) -> String {
    format!("fc-{run_id}")
}

/// `name` as a Docker name or host name can carry it: lower-case ASCII letters and digits, every
/// other character a `-` (test and scenario worker names are free text).
pub fn docker_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// Rejects run ids that Docker names or host names cannot carry.
pub(crate) fn validate_run_id(run_id: &str) -> Result<(), DockerError> {
    let ok = !run_id.is_empty()
        && run_id.len() <= 48
        && run_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.');
    if ok {
        Ok(())
    } else {
        Err(DockerError::Invalid(format!(
            "run id {run_id:?} is not usable in container names: use 1-48 characters from \
             [A-Za-z0-9_.-]"
        )))
    }
}

fn label_filter(run: Option<&str>) -> HashMap<String, Vec<String>> {
    let value = match run {
        Some(id) => format!("{RUN_LABEL}={id}"),
        None => RUN_LABEL.to_string(),
    };
    HashMap::from([("label".to_string(), vec![value])])
}

/// Containers (running or not) labelled with `run` (or with any run id when `None`), as
/// `(id, name)` pairs.
pub async fn list_run_containers(
    docker: &Docker,
    run: Option<&str>,
) -> Result<Vec<(String, String)>, DockerError> {
    let options = ListContainersOptions {
        all: true,
        filters: Some(label_filter(run)),
        ..Default::default()
    };
    let list = docker
        .list_containers(Some(options))
        .await
        .map_err(DockerError::api("list containers"))?;
    Ok(list
        .into_iter()
        .map(|c| {
            let name = c
                .names
                .and_then(|n| n.into_iter().next())
                .unwrap_or_default()
                .trim_start_matches('/')
                .to_string();
            (c.id.unwrap_or_default(), name)
        })
        .collect())
}

/// Networks labelled with `run` (or any run id when `None`), as `(id, name)` pairs.
pub async fn list_run_networks(
    docker: &Docker,
    run: Option<&str>,
) -> Result<Vec<(String, String)>, DockerError> {
    let options = ListNetworksOptions {
        filters: Some(label_filter(run)),
    };
    let list = docker
        .list_networks(Some(options))
        .await
        .map_err(DockerError::api("list networks"))?;
    Ok(list
        .into_iter()
        .map(|n| (n.id.unwrap_or_default(), n.name.unwrap_or_default()))
        .collect())
}

/// What [`remove_by_run`] removed, by name.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CleanReport {
    pub containers: Vec<String>,
    pub networks: Vec<String>,
}

/// Force-removes every container, then every network, labelled with `run` (any run when `None`).
/// Containers are removed concurrently; one that is already gone is not an error. Requests a
/// killed or interrupted harness sent just before may still be completing in the engine (a
/// container appearing after the listing), so it sweeps again until a listing comes back empty.
pub async fn remove_by_run(docker: &Docker, run: Option<&str>) -> Result<CleanReport, DockerError> {
    // One teardown at a time in this process (the tests of one binary run two at once, a
    // matrix with --jobs too): Docker 20.10 was seen to keep a phantom endpoint on a network
    // when two runs' containers were detached and removed at once, and such a network
    // ("has active endpoints", none listed) cannot be removed until the engine restarts.
    static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let _one = ONE_AT_A_TIME.lock().await;
    // A network keeps "active endpoints" until the engine has detached every removed container,
    // which takes seconds on a loaded machine (two runs at once, `matrix --jobs 2`: 3 s of
    // passes was seen to be too short): up to ~15 s of passes.
    const PASSES: usize = 40;
    let mut report = CleanReport::default();
    for pass in 1..=PASSES {
        let last = pass == PASSES;
        let swept = sweep_once(docker, run, &mut report).await;
        let containers = list_run_containers(docker, run).await?;
        let networks = list_run_networks(docker, run).await?;
        match swept {
            Ok(()) if containers.is_empty() && networks.is_empty() => break,
            Err(e) if last => return Err(e),
            _ if last => {
                let names: Vec<_> = containers.iter().chain(&networks).map(|c| &c.1).collect();
                return Err(DockerError::Invalid(format!(
                    "still present after {PASSES} removal passes: {names:?}"
                )));
            }
            _ => tokio::time::sleep(std::time::Duration::from_millis(300)).await,
        }
    }
    report.containers.sort();
    report.containers.dedup();
    report.networks.sort();
    report.networks.dedup();
    Ok(report)
}

async fn sweep_once(
    docker: &Docker,
    run: Option<&str>,
    report: &mut CleanReport,
) -> Result<(), DockerError> {
    let containers = list_run_containers(docker, run).await?;
    let networks = list_run_networks(docker, run).await?;
    // Detach every container from the run's networks before removing it: with two runs
    // tearing down at once (`matrix --jobs 2`) the engine once kept a phantom endpoint of a
    // container removed while still attached, and that network could never be removed again
    // ("has active endpoints", no container listed) until the engine restarted.
    let detaches = containers.iter().flat_map(|(id, _)| {
        networks.iter().map(move |(net, _)| async move {
            let request = bollard::models::NetworkDisconnectRequest {
                container: id.clone(),
                force: Some(true),
            };
            // Not attached, or already gone: the removal below settles it.
            let _ = docker.disconnect_network(net, request).await;
        })
    });
    futures::future::join_all(detaches).await;
    let removals = containers.iter().map(|(id, name)| async move {
        let options = RemoveContainerOptions {
            force: true,
            v: true,
            ..Default::default()
        };
        match docker.remove_container(id, Some(options)).await {
            Ok(()) => Ok(name.clone()),
            // 404: already gone; 409: its removal is already under way (teardown racing a
            // signal or Drop); the next listing tells whether it went.
            Err(e) if is_not_found(&e) || status_of(&e) == Some(409) => Ok(name.clone()),
            Err(e) => Err(DockerError::api(format!("remove container {name}"))(e)),
        }
    });
    for result in futures::future::join_all(removals).await {
        report.containers.push(result?);
    }
    for (id, name) in networks {
        match docker.remove_network(&id).await {
            Ok(()) => report.networks.push(name),
            Err(e) if is_not_found(&e) => report.networks.push(name),
            Err(e) => return Err(DockerError::api(format!("remove network {name}"))(e)),
        }
    }
    Ok(())
}

fn status_of(e: &bollard::errors::Error) -> Option<u16> {
    match e {
        bollard::errors::Error::DockerResponseServerError { status_code, .. } => Some(*status_code),
        _ => None,
    }
}

/// True when the engine answered 404 (the object is already gone).
pub(crate) fn is_not_found(e: &bollard::errors::Error) -> bool {
    matches!(
        e,
        bollard::errors::Error::DockerResponseServerError {
            status_code: 404,
            ..
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_run_id() {
        assert_eq!(container_name("t-1", "etcd-2"), "fc-t-1-etcd-2");
        assert_eq!(network_name("t-1"), "fc-t-1");
    }

    #[test]
    fn run_ids_must_fit_in_container_names() {
        assert!(validate_run_id("t-infra-9f3a").is_ok());
        assert!(validate_run_id("").is_err());
        assert!(validate_run_id("has space").is_err());
        assert!(validate_run_id("a/b").is_err());
    }
}
