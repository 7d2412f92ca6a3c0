//! The proof that a heal healed: no process of any container is stopped (`/proc/<pid>/status`
//! says `T`), no container's CPU is limited and no iptables rule remains in any container's
//! namespace. Used by the tests, and by
//! a run after its final heal, where anything found is a harness error.

use super::{iptables, procs};
use bollard::Docker;

/// What is still hurt after a heal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Audit {
    /// (container, pid, process name) of every stopped process.
    pub stopped: Vec<(String, i32, String)>,
    /// (container, rule) of every iptables rule left.
    pub rules: Vec<(String, String)>,
    /// (container, CPU quota in microseconds per period) of every container left limited.
    pub throttled: Vec<(String, i64)>,
    /// Containers that are not running (and so cannot be hurt; a killed node not restarted).
    pub not_running: Vec<String>,
}

impl Audit {
    pub fn is_clean(&self) -> bool {
        self.stopped.is_empty() && self.rules.is_empty() && self.throttled.is_empty()
    }
}

/// Inspects every container (by name or id).
pub async fn audit(docker: &Docker, containers: &[String]) -> Result<Audit, String> {
    let mut audit = Audit::default();
    for c in containers {
        let info = docker
            .inspect_container(c, None)
            .await
            .map_err(|e| format!("inspect {c}: {e}"))?;
        let state = info.state.unwrap_or_default();
        if state.running != Some(true) {
            audit.not_running.push(c.clone());
            continue;
        }
        let quota = info.host_config.and_then(|h| h.cpu_quota).unwrap_or(0);
        if quota > 0 {
            audit.throttled.push((c.clone(), quota));
        }
        let id = info.id.unwrap_or_default();
        for (pid, name) in procs::stopped_in(&id) {
            audit.stopped.push((c.clone(), pid, name));
        }
        let pid = u32::try_from(state.pid.unwrap_or(0)).unwrap_or(0);
        let rules = tokio::task::spawn_blocking(move || iptables::rules(pid))
            .await
            .map_err(|e| e.to_string())??;
        audit
            .rules
            .extend(rules.into_iter().map(|r| (c.clone(), r)));
    }
    Ok(audit)
}
