//! The harness ↔ worker control protocol: JSON lines over one TCP connection (a port the worker's
//! container publishes on 127.0.0.1). The driver sends one [`Request`] at a time; the worker
//! answers each with a [`Message::Reply`] and may push [`Message::LeaseLost`] at any moment,
//! always before the reply it affects, so the history records the notice first, and
//! [`Message::Check`], its keep-alive's question and answer with the worker's own stamps.

use crate::client::NotOk;
use results::{Event, OpResult, OpType};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

/// One request; `id` is echoed by the reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub id: u64,
    #[serde(flatten)]
    pub op: Op,
}

/// What the driver asks for. `process` is the history process id the operation belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Op {
    Acquire {
        process: u32,
        lock: String,
    },
    /// Writes through the resource with the worker's current hold (owner, lease, token).
    Write {
        process: u32,
        key: String,
        value: serde_json::Value,
        op_id: String,
    },
    /// Counter workload: reads the counter, works for `work_ms` (the holder computing, the
    /// window a pause lands in), writes it back plus one — gated like a write, and guarded by
    /// the hold when the counter store is `etcd-guard`. The outcome's `value` is what it wrote.
    Increment {
        process: u32,
        key: String,
        #[serde(default)]
        work_ms: u64,
    },
    /// Reads the counter (no hold needed); the outcome's `value` is what it read.
    Read {
        process: u32,
        key: String,
    },
    /// Releases the current hold.
    Release {
        process: u32,
    },
    /// Forgets the current hold without releasing it and ends the client, as if it had crashed
    /// (after an indeterminate outcome, the application profile's `on_error: crash`).
    Abandon,
    /// Forgets the current hold without releasing it and keeps the client (after an
    /// indeterminate outcome, the profile's `on_error: keep`).
    Forget,
}

/// The completion of a request, in the shape of a history completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    #[serde(rename = "type")]
    pub kind: OpType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<OpResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highest_before: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The counter value written (increment) or read (read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<i64>,
    /// A check's answer: whether the lock client says it holds the lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<bool>,
    /// Beside a check's `held`: what the adapter's own read of the lock service said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_held: Option<bool>,
    /// Beside an acquire's `ok`: what the adapter's own read-back after the library's grant
    /// found (its node or key gone), when it found the grant's footing missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_back: Option<String>,
    /// The client library raised what it does not document (see `client::EXCEPTION`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exception: bool,
}

impl Outcome {
    pub fn bare(kind: OpType) -> Self {
        Outcome {
            kind,
            owner: None,
            lease: None,
            token: None,
            result: None,
            highest_before: None,
            error: None,
            value: None,
            held: None,
            server_held: None,
            read_back: None,
            exception: false,
        }
    }

    /// The history's completion of `invoke` with this outcome: the one place an outcome's
    /// fields become the event's (what the invoke named and the outcome does not is kept).
    pub fn complete(&self, invoke: Event) -> Event {
        let mut done = invoke;
        done.kind = self.kind;
        done.owner = self.owner.clone().or(done.owner);
        done.lease = self.lease.clone().or(done.lease);
        done.token = self.token.or(done.token);
        done.result = self.result;
        done.highest_before = self.highest_before;
        done.error = self.error.clone();
        done.exception = self.exception;
        if let Some(v) = self.value {
            done.value = Some(serde_json::json!(v));
        }
        if let Some(found) = &self.read_back {
            // A grant whose node or key the adapter's read-back found gone.
            done.value = Some(serde_json::json!({ "read_back": found }));
        }
        done
    }

    pub fn with_error(kind: OpType, error: impl Into<String>) -> Self {
        Outcome {
            error: Some(error.into()),
            ..Outcome::bare(kind)
        }
    }
}

/// A completion that is not `Ok` as the history's outcome: `fail`, or `info` (marked
/// `exception` for a library exception).
impl From<NotOk> for Outcome {
    fn from(not_ok: NotOk) -> Self {
        match not_ok {
            NotOk::Fail(e) => Outcome::with_error(OpType::Fail, e),
            NotOk::Info(e) => Outcome::with_error(OpType::Info, e),
            NotOk::Exception(e) => Outcome {
                exception: true,
                ..Outcome::with_error(OpType::Info, e)
            },
        }
    }
}

/// What the worker sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "msg", rename_all = "kebab-case")]
pub enum Message {
    /// First line on every connection.
    Hello {
        name: String,
        recipe: String,
    },
    Reply {
        id: u64,
        outcome: Outcome,
    },
    /// The worker noticed that `process`'s hold is gone.
    LeaseLost {
        process: u32,
        lock: String,
        owner: String,
        lease: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<u64>,
        why: String,
    },
    /// The keep-alive asked the lock client whether `process`'s hold is still held: `asked`
    /// and `answered` are run-clock ns stamped in the worker (before the question left, after
    /// the answer came), `outcome` the answer (`ok` with `held`, `fail` or `info`).
    Check {
        process: u32,
        lock: String,
        owner: String,
        lease: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<u64>,
        asked: u64,
        answered: u64,
        outcome: Outcome,
    },
}

/// A broken connection or a line that is not protocol.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    #[error("connection: {0}")]
    Io(#[from] std::io::Error),
    #[error("malformed line {line:?}: {message}")]
    Malformed { line: String, message: String },
}

/// Reads the next message; `Ok(None)` at end of stream.
pub async fn read_line<T: serde::de::DeserializeOwned>(
    r: &mut (impl AsyncBufRead + Unpin),
) -> Result<Option<T>, ProtocolError> {
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line).await? == 0 {
            return Ok(None);
        }
        if !line.trim().is_empty() {
            break;
        }
    }
    serde_json::from_str(line.trim())
        .map(Some)
        .map_err(|e| ProtocolError::Malformed {
            line: line.trim().to_string(),
            message: e.to_string(),
        })
}

/// Writes one message as one line and flushes.
pub async fn write_line<T: Serialize>(
    w: &mut (impl AsyncWrite + Unpin),
    msg: &T,
) -> Result<(), ProtocolError> {
    let mut bytes = serde_json::to_vec(msg).map_err(|e| ProtocolError::Malformed {
        line: String::new(),
        message: e.to_string(),
    })?;
    bytes.push(b'\n');
    w.write_all(&bytes).await?;
    w.flush().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_messages_have_a_readable_flat_shape() {
        let r = Request {
            id: 3,
            op: Op::Acquire {
                process: 7,
                lock: "l".into(),
            },
        };
        let s = serde_json::to_string(&r).unwrap();
        assert_eq!(s, r#"{"id":3,"op":"acquire","process":7,"lock":"l"}"#);
        assert_eq!(serde_json::from_str::<Request>(&s).unwrap(), r);
        let m = Message::Reply {
            id: 3,
            outcome: Outcome::with_error(OpType::Info, "timeout"),
        };
        let s = serde_json::to_string(&m).unwrap();
        assert_eq!(
            s,
            r#"{"msg":"reply","id":3,"outcome":{"type":"info","error":"timeout"}}"#
        );
    }

    /// An outcome completes its invoke in one call: its fields replace the invoke's, what it
    /// leaves out (the owner and lease a release named) is kept, a counter's value and a
    /// read-back become the event's value, and a library exception stays marked.
    #[test]
    fn an_outcome_completes_its_invoke_in_one_call() {
        let mut invoke = Event::new(
            5,
            results::Process::Worker(2),
            OpType::Invoke,
            results::F::Release,
        );
        invoke.owner = Some("worker-3".into());
        invoke.lease = Some("l-1".into());
        invoke.token = Some(9);
        let released = Outcome {
            result: Some(OpResult::Released),
            ..Outcome::bare(OpType::Ok)
        };
        let done = released.complete(invoke.clone());
        assert_eq!(done.kind, OpType::Ok);
        assert_eq!(
            (done.owner.as_deref(), done.lease.as_deref(), done.token),
            (Some("worker-3"), Some("l-1"), Some(9))
        );
        assert_eq!(done.result, Some(OpResult::Released));
        let raised = Outcome::from(NotOk::Exception("library exception: TypeError: x".into()));
        let done = raised.complete(invoke.clone());
        assert!(done.exception && done.kind == OpType::Info, "{done:?}");
        let counted = Outcome {
            value: Some(4),
            ..Outcome::bare(OpType::Ok)
        };
        assert_eq!(
            counted.complete(invoke.clone()).value,
            Some(serde_json::json!(4))
        );
        let gone = Outcome {
            read_back: Some("node gone".into()),
            ..Outcome::bare(OpType::Ok)
        };
        assert_eq!(
            gone.complete(invoke).value,
            Some(serde_json::json!({ "read_back": "node gone" }))
        );
    }

    #[tokio::test]
    async fn a_malformed_line_is_an_error_naming_it() {
        let mut input: &[u8] = b"\n{\"id\":1,\"op\":\"dance\"}\n";
        let err = read_line::<Request>(&mut input)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("dance"), "{err}");
        let mut empty: &[u8] = b"";
        assert!(read_line::<Request>(&mut empty).await.unwrap().is_none());
    }
}
