//! An adapter in this process: the adapter protocol served over an in-memory pipe on top of
//! any [`Client`] (in practice the in-process memory lock service). It exists so a plain
//! `cargo test` runs the whole pipeline through the protocol — the worker's adapter client, its
//! reader, its deadlines, the history — with no container and no other language. It reports the
//! lock service's own token, as a library with a fence token would. [`InProcessAdapter::checking`]
//! keeps the lock alive itself and offers `check` instead of `renew` (as kazoo and Curator do),
//! answering whether the service still has the hold.

use super::link::{Launch, Launched};
use crate::client::{Client, Completion, Grant, NOT_OWNER};
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Serves the protocol for one lock client; every launch is a fresh adapter (no hold carried over).
pub struct InProcessAdapter {
    make: Arc<dyn Fn() -> Arc<dyn Client> + Send + Sync>,
    checks: bool,
}

impl InProcessAdapter {
    /// `make` builds the client a new adapter uses (called on every launch).
    pub fn new(make: impl Fn() -> Arc<dyn Client> + Send + Sync + 'static) -> Self {
        InProcessAdapter {
            make: Arc::new(make),
            checks: false,
        }
    }

    /// An adapter with `check` and no `renew`: its library keeps the lease alive on its own.
    pub fn checking(make: impl Fn() -> Arc<dyn Client> + Send + Sync + 'static) -> Self {
        InProcessAdapter {
            checks: true,
            ..InProcessAdapter::new(make)
        }
    }
}

impl Launch for InProcessAdapter {
    fn launch(&self) -> std::io::Result<Launched> {
        let (worker_end, adapter_end) = tokio::io::duplex(64 * 1024);
        let (rd, wr) = tokio::io::split(worker_end);
        let client = (self.make)();
        tokio::spawn(serve(client, adapter_end, self.checks));
        Ok(Launched {
            input: Box::new(wr),
            output: Box::new(rd),
            child: None,
        })
    }
}

/// The adapter's loop: one request at a time, like a real adapter's main loop.
async fn serve(client: Arc<dyn Client>, stream: tokio::io::DuplexStream, checks: bool) {
    let (rd, mut wr) = tokio::io::split(stream);
    let mut lines = BufReader::new(rd).lines();
    let mut lock = String::new();
    let mut held: Option<Grant> = None;
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(req) = serde_json::from_str::<Value>(&line) else {
            return;
        };
        let id = req["id"].clone();
        let reply = match req["op"].as_str().unwrap_or_default() {
            "init" => {
                lock = req["lock"].as_str().unwrap_or_default().to_string();
                json!({"id": id, "type": "ok", "library": "fencecheck-in-process",
                       "version": env!("CARGO_PKG_VERSION"),
                       "token": "the in-process lock service's token",
                       "capabilities": if checks { ["release", "check"] } else { ["release", "renew"] }})
            }
            "acquire" => match client.acquire(&lock).await {
                Completion::Ok(g) => {
                    let r = json!({"id": id, "type": "ok", "lease": g.lease, "token": g.token});
                    held = Some(g);
                    r
                }
                other => not_ok(id, other),
            },
            "renew" => match &held {
                None => json!({"id": id, "type": "fail", "error": "nothing held"}),
                Some(g) => match client.renew(g).await {
                    Completion::Ok(d) => {
                        json!({"id": id, "type": "ok", "valid_ms": d.as_millis() as u64})
                    }
                    other => not_ok(id, other),
                },
            },
            // The library's own keep-alive is the renewal; the answer says whether it held.
            "check" if checks => match &held {
                None => json!({"id": id, "type": "ok", "held": false}),
                Some(g) => match client.renew(g).await {
                    Completion::Ok(_) => json!({"id": id, "type": "ok", "held": true}),
                    Completion::Fail(_) => json!({"id": id, "type": "ok", "held": false}),
                    other => not_ok(id, other),
                },
            },
            "release" => match held.take() {
                None => {
                    json!({"id": id, "type": "fail", "reason": "not-owner", "error": "nothing held"})
                }
                Some(g) => match client.release(&g).await {
                    Completion::Ok(()) => json!({"id": id, "type": "ok"}),
                    Completion::Fail(e) if e == NOT_OWNER => {
                        json!({"id": id, "type": "fail", "reason": "not-owner", "error": e})
                    }
                    other => not_ok(id, other),
                },
            },
            op => json!({"id": id, "type": "fail", "error": format!("unsupported op {op}")}),
        };
        let mut out = reply.to_string();
        out.push('\n');
        if wr.write_all(out.as_bytes()).await.is_err() {
            return;
        }
    }
}

fn not_ok<T>(id: Value, c: Completion<T>) -> Value {
    match c {
        Completion::Fail(e) => json!({"id": id, "type": "fail", "error": e}),
        Completion::Info(e) => json!({"id": id, "type": "info", "error": e}),
        Completion::Exception(e) => {
            json!({"id": id, "type": "info", "error": e, "exception": true})
        }
        Completion::Ok(_) => json!({"id": id, "type": "info", "error": "unexpected ok"}),
    }
}
