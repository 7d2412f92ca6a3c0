//! What happens to the run's nodes outside the fault plan. A node of the run (a lock-service
//! member, a store, the resource) may exit when nobody planned it (an OOM kill, a crash,
//! someone's `docker kill`), come back when someone starts it again, or be frozen and thawed
//! from outside (`docker pause` / `unpause`: the cgroup freezer; the nemesis itself pauses with
//! SIGSTOP, never with the freezer). Each is a fault nobody scheduled, and a verdict that never
//! mentions it would claim more than the run showed. [`watch`] follows the engine's events for
//! the run's label and hands the run each one the control did not cause itself (its kills are
//! counted in [`PlannedDeaths`]) and the run's own teardown did not cause either (a node removed
//! by the run is not a death).

use bollard::query_parameters::EventsOptions;
use bollard::Docker;
use futures::StreamExt;
use std::collections::{BTreeMap, BTreeSet, HashMap};
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

/// Something that happened to a node outside the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unplanned {
    /// It exited; `exit_code` as Docker reported it (137: SIGKILL).
    Died { exit_code: Option<i64> },
    /// It was started again after an unplanned death (by someone else than the nemesis).
    Back,
    /// Its processes were frozen (`docker pause`).
    Frozen,
    /// They were thawed (`docker unpause`).
    Thawed,
}

/// One unplanned event of one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeEvent {
    /// The nemesis's name for it (`etcd-2`).
    pub target: String,
    pub container: String,
    pub what: Unplanned,
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
/// (theirs, or those of a cluster the run shares) until the returned guard is dropped. Events
/// while the run tears itself down (its own end, Ctrl-C) are not reported. When the engine's event stream breaks, `on_blind` hears why:
/// events after that go unseen.
pub fn watch(
    docker: Docker,
    run_id: &str,
    nodes: BTreeMap<String, String>,
    planned: PlannedDeaths,
    on_event: impl Fn(NodeEvent) + Send + 'static,
    on_blind: impl FnOnce(String) + Send + 'static,
) -> Watch {
    let filters = HashMap::from([
        ("type".to_string(), vec!["container".to_string()]),
        (
            "event".to_string(),
            ["die", "start", "pause", "unpause"]
                .map(String::from)
                .to_vec(),
        ),
        // By name, not by the run's label: a cluster shared by several runs carries its own.
        ("container".to_string(), nodes.keys().cloned().collect()),
    ]);
    let options = EventsOptions {
        filters: Some(filters),
        ..Default::default()
    };
    let run_id = run_id.to_string();
    Watch(tokio::spawn(async move {
        let mut events = docker.events(Some(options));
        // Containers that died outside the plan and are not back yet.
        let mut dead = BTreeSet::new();
        loop {
            let event = match events.next().await {
                Some(Ok(event)) => event,
                Some(Err(e)) => return on_blind(e.to_string()),
                None => return on_blind("the engine closed its event stream".into()),
            };
            if crate::docker::tearing_down(&run_id) {
                continue; // the run removes its own containers: not a fault
            }
            let action = event.action.unwrap_or_default();
            let attributes = event.actor.and_then(|a| a.attributes).unwrap_or_default();
            let Some(container) = attributes.get("name") else {
                continue;
            };
            let Some(target) = nodes.get(container) else {
                continue; // a worker: its session records the exit itself
            };
            let what = match action.as_str() {
                "die" if planned.consume(container) => continue,
                "die" => {
                    dead.insert(container.clone());
                    Unplanned::Died {
                        exit_code: attributes.get("exitCode").and_then(|c| c.parse().ok()),
                    }
                }
                // A planned restart starts a container that died as planned: not news.
                "start" if dead.remove(container) => Unplanned::Back,
                "pause" => Unplanned::Frozen,
                "unpause" => Unplanned::Thawed,
                _ => continue,
            };
            on_event(NodeEvent {
                target: target.clone(),
                container: container.clone(),
                what,
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
