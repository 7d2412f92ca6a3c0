//! The client-adapter protocol's lines (version 2, `docs/adapters.md`): what the worker sends
//! an adapter and what the adapter answers. One JSON object per line; requests carry an `id`
//! and an `op`, replies repeat the `id` and give a `type`, events carry an `event` and no `id`.

use serde::{Deserialize, Serialize};

/// The protocol version this worker speaks.
pub const PROTOCOL: u32 = 2;

/// The first request: who the adapter works for and where the lock service is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Init {
    pub protocol: u32,
    /// The worker's name (the `owner` of its acquisitions in the history).
    pub worker: String,
    pub lock: String,
    pub provider: String,
    /// Endpoints as seen inside the run's network (`etcd-1:2379` ...).
    pub endpoints: Vec<String>,
    pub ttl_ms: u64,
    pub acquire_timeout_ms: u64,
    /// The test's operation timeout: the adapter sets its library's request timeout from it
    /// (unless the test's options keep the library's own default).
    pub op_timeout_ms: u64,
    /// Passed through from the test unchanged.
    pub options: serde_json::Value,
}

/// What an adapter may support besides `acquire`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    pub release: bool,
    pub renew: bool,
    pub check: bool,
    pub events: bool,
}

/// One reply line (to `init` or any operation). Only `id` and `type` are always there.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Reply {
    pub id: u64,
    #[serde(rename = "type")]
    pub kind: ReplyType,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub exception: bool,
    // init_ok
    #[serde(default)]
    pub library: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
    /// Where the token comes from; `null` (or absent) when the library has none.
    #[serde(default)]
    pub token: Option<serde_json::Value>,
    #[serde(default)]
    pub capabilities: Vec<String>,
    // acquire
    #[serde(default)]
    pub lease: Option<String>,
    /// The adapter's read-back after the library's grant found its node or key gone.
    #[serde(default)]
    pub read_back: Option<String>,
    // release
    #[serde(default)]
    pub reason: Option<String>,
    // renew
    #[serde(default)]
    pub valid_ms: Option<u64>,
    // check
    #[serde(default)]
    pub held: Option<bool>,
    /// Beside the library's belief: what the adapter's own read of the service said.
    #[serde(default)]
    pub server_held: Option<bool>,
}

/// Jepsen's three outcomes, as an adapter writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReplyType {
    Ok,
    Fail,
    Info,
}

/// An unsolicited line: the library reported a change of its connection or lease.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Event {
    pub event: String,
    #[serde(default)]
    pub detail: Option<String>,
}

/// What a line from an adapter is.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Reply(Reply),
    Event(Event),
}

/// Reads one line; the error names what is wrong with it.
pub fn parse_line(line: &str) -> Result<Line, String> {
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("not JSON ({e})"))?;
    if value.get("event").is_some() && value.get("id").is_none() {
        return serde_json::from_value(value)
            .map(Line::Event)
            .map_err(|e| format!("not an event ({e})"));
    }
    serde_json::from_value(value)
        .map(Line::Reply)
        .map_err(|e| format!("not a reply: {e}"))
}

impl Reply {
    /// The capabilities `init` named.
    pub fn capabilities(&self) -> Capabilities {
        let has = |c: &str| self.capabilities.iter().any(|x| x == c);
        Capabilities {
            release: has("release"),
            renew: has("renew"),
            check: has("check"),
            events: has("events"),
        }
    }

    /// The token source `init` named, if the library has one.
    pub fn token_source(&self) -> Option<String> {
        match &self.token {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        }
    }

    /// The acquisition's token: a non-negative integer, or what is wrong with it.
    pub fn token_value(&self) -> Result<Option<u64>, String> {
        match &self.token {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::Number(n)) => n
                .as_u64()
                .map(Some)
                .ok_or_else(|| format!("token {n} is not a non-negative integer")),
            Some(other) => Err(format!("token {other} is not an integer")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_and_events_are_told_apart_and_bad_lines_say_why() {
        let ok = r#"{"id":0,"type":"ok","library":"kazoo","version":"2.8.0","token":"czxid","capabilities":["release","check","events"]}"#;
        let Line::Reply(r) = parse_line(ok).unwrap() else {
            panic!("a reply")
        };
        assert_eq!(r.token_source().as_deref(), Some("czxid"));
        assert!(r.capabilities().check && !r.capabilities().renew);
        let ev = parse_line(r#"{"event":"lost","detail":"session expired"}"#).unwrap();
        assert!(matches!(ev, Line::Event(e) if e.event == "lost"));
        assert!(parse_line("hello").unwrap_err().contains("not JSON"));
        assert!(parse_line(r#"{"id":1}"#).unwrap_err().contains("type"));
        let big = r#"{"id":1,"type":"ok","lease":"/l/n","token":4294968174}"#;
        let Line::Reply(r) = parse_line(big).unwrap() else {
            panic!("a reply")
        };
        assert_eq!(r.token_value(), Ok(Some(4_294_968_174)));
        let neg = r#"{"id":1,"type":"ok","lease":"/l/n","token":-3}"#;
        let Line::Reply(r) = parse_line(neg).unwrap() else {
            panic!("a reply")
        };
        assert!(r.token_value().is_err());
    }
}
