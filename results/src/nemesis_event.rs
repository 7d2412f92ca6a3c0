//! The nemesis's line of the history, owned by the data model because three writers make it and
//! two readers read it: the executor running a plan, replay acting a scenario and the container
//! site noting a node that died outside the plan all build it through [`NemesisEvent::event`];
//! the checkers ([`crate::EventRef`]) and the report read what it hit through [`targets`]. One
//! constructor and one reading rule, so a target the report draws is a target the checkers
//! judged.
//!
//! On the wire it is an `info` event of process `nemesis` with `f` `start-<fault>` or
//! `stop-<fault>` and `value` `{"fault": <fault>, "targets": [..], ..extra}`.

use crate::event::{Event, OpType, Process, F};
use crate::fault::{FaultKind, NODE_DIED, NODE_FROZEN};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// Whether the event begins or heals its fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultPhase {
    Start,
    Stop,
}

/// The fault a nemesis event names: one a schedule can name, or one of the two the harness
/// records without a schedule behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventFault {
    Kind(FaultKind),
    /// A node exited that no fault had stopped or killed ([`NODE_DIED`]): stopped only if
    /// someone starts it again.
    NodeDied,
    /// A node was frozen from outside (`docker pause`, [`NODE_FROZEN`]); stopped at the thaw.
    NodeFrozen,
    /// Replay's cut of a Redis master from its replicas: a scenario step, not a schedulable
    /// fault.
    CutReplication,
}

impl EventFault {
    /// The name the history records after `start-` / `stop-` and under `value.fault`.
    pub fn name(self) -> &'static str {
        match self {
            EventFault::Kind(kind) => kind.name(),
            EventFault::NodeDied => NODE_DIED,
            EventFault::NodeFrozen => NODE_FROZEN,
            EventFault::CutReplication => "cut-replication",
        }
    }
}

impl From<FaultKind> for EventFault {
    fn from(kind: FaultKind) -> Self {
        EventFault::Kind(kind)
    }
}

impl fmt::Display for EventFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One nemesis event before it is timed and indexed.
#[derive(Debug, Clone, PartialEq)]
pub struct NemesisEvent {
    pub phase: FaultPhase,
    pub fault: EventFault,
    /// What the fault hit, by the names the nemesis uses (`worker-3`, `etcd-1`).
    pub targets: Vec<String>,
    /// The rest of `value` (a partition's `grudge`, a death's `exit_code`); a `fault` or
    /// `targets` key here is ignored: the typed fields say those.
    pub extra: Map<String, Value>,
    /// Why a start did nothing (`skipped: ..`), or that the final heal made a stop.
    pub error: Option<String>,
}

impl NemesisEvent {
    pub fn new(phase: FaultPhase, fault: impl Into<EventFault>, targets: Vec<String>) -> Self {
        NemesisEvent {
            phase,
            fault: fault.into(),
            targets,
            extra: Map::new(),
            error: None,
        }
    }

    pub fn start(fault: impl Into<EventFault>, targets: Vec<String>) -> Self {
        Self::new(FaultPhase::Start, fault, targets)
    }

    /// The stop of this start: the same fault, targets and description, so a reader pairing
    /// the two finds what was healed on either line.
    pub fn stopped(&self) -> Self {
        NemesisEvent {
            phase: FaultPhase::Stop,
            error: None,
            ..self.clone()
        }
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.extra.insert(key.to_string(), value.into());
        self
    }

    pub fn with_error(mut self, error: impl Into<String>) -> Self {
        self.error = Some(error.into());
        self
    }

    /// The event's `value`.
    pub fn value(&self) -> Value {
        let mut value = Map::new();
        value.insert("fault".into(), self.fault.name().into());
        value.insert("targets".into(), self.targets.clone().into());
        for (k, v) in &self.extra {
            if k != "fault" && k != "targets" {
                value.insert(k.clone(), v.clone());
            }
        }
        Value::Object(value)
    }

    /// The history line at `time` (ns since the run's start); the recorder sets `index`. The
    /// only place a nemesis event becomes an [`Event`].
    pub fn event(&self, time: u64) -> Event {
        let name: Box<str> = self.fault.name().into();
        let f = match self.phase {
            FaultPhase::Start => F::Start(name),
            FaultPhase::Stop => F::Stop(name),
        };
        let mut e = Event::new(time, Process::Nemesis, OpType::Info, f);
        e.value = Some(self.value());
        e.error = self.error.clone();
        e
    }
}

/// What a nemesis event's fault hit, read from its `value`: the reading rule of every reader.
/// Our writers only write a list of names; a history from elsewhere may hold anything, and
/// nothing it says is dropped. A list gives its items, one string gives itself; a non-string
/// target (a number, an object) reads as its compact JSON text, so the checkers judge and the
/// report draws the same target; `null`, alone or in the list, is no target.
pub fn targets(value: Option<&Value>) -> Vec<Cow<'_, str>> {
    fn one(v: &Value) -> Option<Cow<'_, str>> {
        match v {
            Value::Null => None,
            Value::String(s) => Some(Cow::Borrowed(s.as_str())),
            other => Some(Cow::Owned(other.to_string())),
        }
    }
    match value.and_then(|v| v.get("targets")) {
        Some(Value::Array(items)) => items.iter().filter_map(one).collect(),
        Some(v) => one(v).into_iter().collect(),
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
