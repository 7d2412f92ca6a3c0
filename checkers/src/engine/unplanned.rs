//! What happened to the run's nodes outside the fault plan, as the history recorded it: a node
//! that died (`start-node-died`, and `stop-node-died` if someone started it again) or was frozen
//! from outside (`start-node-frozen` / `stop-node-frozen`). The checkers already treat both as
//! faults of the lock service (stuck-lock's clock stops meanwhile); this note decides what they
//! mean for the verdict: a node that died and never came back leaves the rest of the run
//! unjudgeable — its workload ran against a service the test did not describe — so the verdict
//! is at best unknown, naming the node, when, and how much of the workload came after. A node
//! that came back is judged as a planned kill would be. Anomalies found stand either way.

use results::fault::{NODE_DIED, NODE_FROZEN};
use results::verdict::{UNPLANNED_NODE_EXITS, UNPLANNED_NODE_FREEZES};
use results::{EventRef, Verdict, F};
use serde_json::json;

/// One unplanned outage of one node: when it began and, if it did, ended.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outage {
    node: String,
    at: u64,
    until: Option<u64>,
}

/// The unplanned outages of a run, in history order.
#[derive(Debug, Default)]
pub(super) struct Unplanned {
    deaths: Vec<Outage>,
    freezes: Vec<Outage>,
}

impl Unplanned {
    /// One nemesis event (the engine hands over no other: only a nemesis start or stop can
    /// say what happened to a node).
    pub(super) fn event(&mut self, e: &EventRef<'_>) {
        let (list, start) = match &e.f {
            F::Start(f) if &**f == NODE_DIED => (&mut self.deaths, true),
            F::Stop(f) if &**f == NODE_DIED => (&mut self.deaths, false),
            F::Start(f) if &**f == NODE_FROZEN => (&mut self.freezes, true),
            F::Stop(f) if &**f == NODE_FROZEN => (&mut self.freezes, false),
            _ => return,
        };
        for node in e.targets().iter() {
            if start {
                list.push(Outage {
                    node: node.to_string(),
                    at: e.time,
                    until: None,
                });
            } else if let Some(open) = list
                .iter_mut()
                .rev()
                .find(|o| o.node == *node && o.until.is_none())
            {
                open.until = Some(e.time);
            }
        }
    }

    /// Writes the outages into the verdict's stats and makes it unknown for each node that
    /// died and never came back; `first_time` and `last_time` are the history's first event's
    /// time and its latest.
    pub(super) fn finish(
        &self,
        verdict: &mut Verdict,
        first_time: Option<u64>,
        last_time: Option<u64>,
    ) {
        let list = |outages: &[Outage]| -> Vec<serde_json::Value> {
            outages
                .iter()
                .map(|o| json!({ "node": o.node, "at": o.at, "until": o.until }))
                .collect()
        };
        if !self.deaths.is_empty() {
            let exits = list(&self.deaths);
            verdict
                .stats
                .insert(UNPLANNED_NODE_EXITS.into(), json!(exits));
        }
        if !self.freezes.is_empty() {
            let freezes = list(&self.freezes);
            verdict
                .stats
                .insert(UNPLANNED_NODE_FREEZES.into(), json!(freezes));
        }
        let (first, last) = (first_time.unwrap_or(0), last_time.unwrap_or(0));
        for o in self.deaths.iter().filter(|o| o.until.is_none()) {
            let span = last.saturating_sub(first).max(1) as f64;
            let after = last.saturating_sub(o.at) as f64 / span;
            verdict.unknown_reasons.push(format!(
                "node {} died at {:.3}s outside the fault plan and never came back: {:.0}% of \
                 the workload's time ran after it, against a system the test did not describe",
                o.node,
                o.at as f64 / 1e9,
                after * 100.0
            ));
        }
    }
}
