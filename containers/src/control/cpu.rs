//! CPU starvation: a container's CPU quota (its cgroup's `cpu.cfs_quota_us`) cut to a share of
//! one CPU through Docker's update API, and lifted again. Every process of the container runs
//! slowly rather than not at all: a renewal comes late instead of never, as on a host where a
//! noisy neighbour or a long collection takes the CPU.

use bollard::models::ContainerUpdateBody;
use bollard::Docker;

/// The scheduling period the quota is a share of, in microseconds (the kernel's default).
const PERIOD_US: i64 = 100_000;

/// Limits `container` to `cpus` of one CPU; `None` lifts the limit (a quota of -1).
pub async fn limit(docker: &Docker, container: &str, cpus: Option<f64>) -> Result<(), String> {
    let quota = cpus.map_or(-1, |c| ((c * PERIOD_US as f64).round() as i64).max(1_000));
    let body = ContainerUpdateBody {
        cpu_period: Some(PERIOD_US),
        cpu_quota: Some(quota),
        ..Default::default()
    };
    docker
        .update_container(container, body)
        .await
        .map_err(|e| format!("update the CPU quota of {container}: {e}"))
}

/// Lifts `container`'s limit without a runtime (a control dropped without its heal), through the
/// `docker` command; best effort, as the container is about to be removed anyway.
pub fn lift_blocking(container: &str) {
    let _ = std::process::Command::new("docker")
        .args(["update", "--cpu-quota", "-1", container])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}
