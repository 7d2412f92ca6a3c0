//! Deaths nobody planned. A node of the run (a lock-service member, a store, the resource) may
//! exit outside the fault plan: an OOM kill, a crash, someone's `docker kill`. Such a death is a
//! fault nobody healed, and a verdict that never mentions it would claim more than the run
//! showed. [`watch`] follows the engine's `die` events for the run's label and hands every death
//! the control did not cause itself (its kills are counted in [`PlannedDeaths`]) to the run,
//! which records it in the history.

use bollard::query_parameters::EventsOptions;
use bollard::Docker;
use futures::StreamExt;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// The deaths the nemesis is about to cause, per container: each `die` event of one of them is
/// expected once.
#[derive(Debug, Clone, Default)]
pub struct PlannedDeaths(Arc<Mutex<HashMap<String, u32>>>);

impl PlannedDeaths {
    /// The control is about to kill `container`.
    pub fn expect(&self, container: &str) {
        *self.lock().entry(container.to_string()).or_default() += 1;
    }

    /// Whether this death of `container` was one the control caused (and counts it off).
    fn consume(&self, container: &str) -> bool {
        match self.lock().get_mut(container) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A node that died outside the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeDeath {
    /// The nemesis's name for it (`etcd-2`).
    pub target: String,
    pub container: String,
    /// The exit code Docker reported (137: SIGKILL).
    pub exit_code: Option<i64>,
}

/// Stops the watch when dropped.
#[derive(Debug)]
pub struct Watch(tokio::task::JoinHandle<()>);

impl Drop for Watch {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Watches the containers in `nodes` (container name -> the nemesis's name) of run `run_id`
/// until the returned guard is dropped (before teardown, whose removals are not deaths). When
/// the engine's event stream breaks, `on_blind` hears why: deaths after that go unseen.
pub fn watch(
    docker: Docker,
    run_id: &str,
    nodes: BTreeMap<String, String>,
    planned: PlannedDeaths,
    on_death: impl Fn(NodeDeath) + Send + 'static,
    on_blind: impl FnOnce(String) + Send + 'static,
) -> Watch {
    let filters = HashMap::from([
        ("type".to_string(), vec!["container".to_string()]),
        ("event".to_string(), vec!["die".to_string()]),
        (
            "label".to_string(),
            vec![format!("{}={run_id}", crate::docker::RUN_LABEL)],
        ),
    ]);
    let options = EventsOptions {
        filters: Some(filters),
        ..Default::default()
    };
    Watch(tokio::spawn(async move {
        let mut events = docker.events(Some(options));
        loop {
            let event = match events.next().await {
                Some(Ok(event)) => event,
                Some(Err(e)) => return on_blind(e.to_string()),
                None => return on_blind("the engine closed its event stream".into()),
            };
            let attributes = event.actor.and_then(|a| a.attributes).unwrap_or_default();
            let Some(container) = attributes.get("name") else {
                continue;
            };
            let Some(target) = nodes.get(container) else {
                continue; // a worker: its session records the exit itself
            };
            if planned.consume(container) {
                continue;
            }
            on_death(NodeDeath {
                target: target.clone(),
                container: container.clone(),
                exit_code: attributes.get("exitCode").and_then(|c| c.parse().ok()),
            });
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_planned_kill_excuses_one_death() {
        let planned = PlannedDeaths::default();
        planned.expect("fc-r-etcd-1");
        assert!(planned.consume("fc-r-etcd-1"));
        assert!(
            !planned.consume("fc-r-etcd-1"),
            "the second death was not planned"
        );
        assert!(!planned.consume("fc-r-etcd-2"));
    }
}
