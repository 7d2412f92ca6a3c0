//! One operation event of `history.jsonl`, with Jepsen's semantics: `invoke` opens an operation,
//! `ok` says it happened, `fail` that it certainly did not, `info` that nobody knows.
//!
//! The wire format is flat (all of an `f`'s fields sit beside `index`, `time`, `process`, `type`),
//! as docs/design.md, "history.jsonl", specifies; the Rust type keeps it flat too so that parsing millions of lines stays
//! cheap, and uses enums wherever the format has a closed set of values.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// Who performed an operation: a worker process id, or the nemesis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Process {
    Worker(u32),
    Nemesis,
}

impl fmt::Display for Process {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Process::Worker(p) => write!(f, "{p}"),
            Process::Nemesis => f.write_str("nemesis"),
        }
    }
}

impl Serialize for Process {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Process::Worker(p) => s.serialize_u32(*p),
            Process::Nemesis => s.serialize_str("nemesis"),
        }
    }
}

impl<'de> Deserialize<'de> for Process {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Process;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a worker process id (integer) or \"nemesis\"")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Process, E> {
                u32::try_from(v)
                    .map(Process::Worker)
                    .map_err(|_| E::custom(format!("process id {v} is out of range")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Process, E> {
                u32::try_from(v)
                    .map(Process::Worker)
                    .map_err(|_| E::custom(format!("process id {v} is out of range")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Process, E> {
                if v == "nemesis" {
                    Ok(Process::Nemesis)
                } else {
                    Err(E::custom(format!(
                        "unknown process {v:?}: expected an integer or \"nemesis\""
                    )))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// The `type` of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpType {
    Invoke,
    Ok,
    Fail,
    Info,
}

/// The operation (`f`). Nemesis operations are open-ended (`start-<fault>` / `stop-<fault>`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum F {
    Acquire,
    Write,
    Release,
    Read,
    Increment,
    LeaseLost,
    Exit,
    /// The keep-alive asked the lock client whether it still holds the lock (an adapter's
    /// `check`): `ok` carries `held`. Not one of the process's own operations (see
    /// docs/design.md, "history.jsonl"): it ends no hold and retires nobody.
    Check,
    /// `start-<fault>`: the nemesis began a fault. (The names are boxed `str`s, not `String`s:
    /// eight bytes less in every event a check holds, see [`crate::Detail`].)
    Start(Box<str>),
    /// `stop-<fault>`: the nemesis healed a fault.
    Stop(Box<str>),
}

impl F {
    pub fn as_str(&self) -> std::borrow::Cow<'_, str> {
        use std::borrow::Cow::*;
        match self {
            F::Acquire => Borrowed("acquire"),
            F::Write => Borrowed("write"),
            F::Release => Borrowed("release"),
            F::Read => Borrowed("read"),
            F::Increment => Borrowed("increment"),
            F::LeaseLost => Borrowed("lease-lost"),
            F::Exit => Borrowed("exit"),
            F::Check => Borrowed("check"),
            F::Start(fault) => Owned(format!("start-{fault}")),
            F::Stop(fault) => Owned(format!("stop-{fault}")),
        }
    }

    /// Parses an `f` value; `None` for a name the format does not define.
    pub fn parse(s: &str) -> Option<F> {
        Some(match s {
            "acquire" => F::Acquire,
            "write" => F::Write,
            "release" => F::Release,
            "read" => F::Read,
            "increment" => F::Increment,
            "lease-lost" => F::LeaseLost,
            "exit" => F::Exit,
            "check" => F::Check,
            _ => {
                if let Some(fault) = s.strip_prefix("start-").filter(|f| !f.is_empty()) {
                    F::Start(fault.into())
                } else if let Some(fault) = s.strip_prefix("stop-").filter(|f| !f.is_empty()) {
                    F::Stop(fault.into())
                } else {
                    return None;
                }
            }
        })
    }
}

impl fmt::Display for F {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_str())
    }
}

impl Serialize for F {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.as_str())
    }
}

impl<'de> Deserialize<'de> for F {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = F;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an operation name such as \"acquire\" or \"start-pause-holder\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<F, E> {
                F::parse(v).ok_or_else(|| E::custom(format!(
                    "unknown f {v:?}: expected acquire, write, release, read, increment, lease-lost, exit, check, start-<fault> or stop-<fault>"
                )))
            }
        }
        d.deserialize_str(V)
    }
}

/// The `result` of a write or release completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpResult {
    Accepted,
    RejectedStaleFence,
    RejectedDuplicate,
    Released,
    ReleaseRejectedNotOwner,
}

impl OpResult {
    pub fn as_str(&self) -> &'static str {
        match self {
            OpResult::Accepted => "accepted",
            OpResult::RejectedStaleFence => "rejected-stale-fence",
            OpResult::RejectedDuplicate => "rejected-duplicate",
            OpResult::Released => "released",
            OpResult::ReleaseRejectedNotOwner => "release-rejected-not-owner",
        }
    }
}

/// One line of `history.jsonl`. Which optional fields are present depends on `f` (docs/design.md, "history.jsonl").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub index: u64,
    /// Nanoseconds since the run's start.
    pub time: u64,
    pub process: Process,
    #[serde(rename = "type")]
    pub kind: OpType,
    pub f: F,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The provider's handle of the acquisition (etcd lease id, ZooKeeper node path, Redis owner value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<String>,
    /// Fence token; absent when the recipe has none (Redlock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Written value (a string), a counter value (an integer), or a nemesis description (an object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<OpResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highest_before: Option<u64>,
    /// A `check`'s answer: whether the lock client says it still holds the lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<bool>,
    /// Why an operation is `fail` or `info` (an addition to the fields of docs/design.md, "history.jsonl", for humans).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The client library raised something its documentation does not list as an operational
    /// error (a bug, not a fault): a verdict with one is at best unknown.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exception: bool,
}

impl Event {
    /// A bare event; the recorder assigns `index` when it appends.
    pub fn new(time: u64, process: Process, kind: OpType, f: F) -> Self {
        Event {
            index: 0,
            time,
            process,
            kind,
            f,
            lock: None,
            owner: None,
            lease: None,
            token: None,
            key: None,
            value: None,
            op_id: None,
            result: None,
            highest_before: None,
            held: None,
            error: None,
            exception: false,
        }
    }

    pub fn is_invoke(&self) -> bool {
        self.kind == OpType::Invoke
    }

    /// True for `ok`, `fail` and `info` (everything that closes or reports).
    pub fn is_completion(&self) -> bool {
        self.kind != OpType::Invoke
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_a_write_completion_in_the_design_format() {
        let line = r#"{"index":7,"time":1500,"process":3,"type":"fail","f":"write","lock":"report","key":"k","value":"v1","token":1,"op_id":"3-1","result":"rejected-stale-fence","highest_before":2}"#;
        let e: Event = serde_json::from_str(line).unwrap();
        assert_eq!(e.process, Process::Worker(3));
        assert_eq!(e.kind, OpType::Fail);
        assert_eq!(e.f, F::Write);
        assert_eq!(e.result, Some(OpResult::RejectedStaleFence));
        assert_eq!(e.highest_before, Some(2));
        let back: Event = serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn nemesis_events_carry_their_fault_name() {
        let line = r#"{"index":0,"time":0,"process":"nemesis","type":"info","f":"start-pause-holder","value":{"fault":"pause","targets":["worker-3"]}}"#;
        let e: Event = serde_json::from_str(line).unwrap();
        assert_eq!(e.process, Process::Nemesis);
        assert_eq!(e.f, F::Start("pause-holder".into()));
        assert!(serde_json::to_string(&e)
            .unwrap()
            .contains("\"f\":\"start-pause-holder\""));
    }

    #[test]
    fn unknown_values_are_errors_that_say_what_is_allowed() {
        let bad_type = r#"{"index":0,"time":0,"process":1,"type":"maybe","f":"acquire"}"#;
        assert!(serde_json::from_str::<Event>(bad_type).is_err());
        let bad_f = r#"{"index":0,"time":0,"process":1,"type":"ok","f":"frobnicate"}"#;
        let err = serde_json::from_str::<Event>(bad_f)
            .unwrap_err()
            .to_string();
        assert!(err.contains("frobnicate"), "{err}");
        let bad_process = r#"{"index":0,"time":0,"process":"bob","type":"ok","f":"acquire"}"#;
        assert!(serde_json::from_str::<Event>(bad_process).is_err());
        assert_eq!(F::parse("start-"), None);
    }
}
