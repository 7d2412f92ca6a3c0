// Token: none. rslock's Redlock writes SET <lock> <20 random bytes> NX PX <ttl> on each master; the value is fresh randomness per lock() and the Lock (resource, val, validity_time) carries nothing that grows from one holder to the next, so it gives no fence token.
//! fencecheck client adapter (protocol 2) for the rslock crate (Redlock over N independent Redis
//! masters), provider `redlock`. JSON lines on stdin/stdout, free text on stderr; see
//! docs/adapters.md.
//!
//! Library calls, as rslock's README shows them:
//! - init: `LockManager::new(["redis://host:port", ...])`, then `set_retry(count, delay)` only
//!   when `options` name `retry_count` / `retry_delay_ms` (otherwise the library's defaults:
//!   3 tries, a random 0..200 ms pause between them). rslock connects lazily, so init PINGs each
//!   master once with rslock's own `redis` client (the protocol wants a wrong endpoint to fail at
//!   init); fewer than a quorum (N/2+1) answering is `fail`.
//! - acquire: `lock(resource, ttl)` (its bounded retries; `acquire`/`acquire_no_guard` loop
//!   forever and would ignore `acquire_timeout_ms`). `Ok(Lock)` is `ok` with lease
//!   "<resource>:<hex of Lock.val>" (the key's value is the 20 raw bytes; the lease spells them
//!   in hex). `Err(Unavailable)` (no quorum in any try; it has run its unlock script on every
//!   master after each try) is `fail`. `Err(TtlExceeded)` (the SETs took longer than the TTL; it
//!   returns without cleaning up) is `info`. rslock swallows per-master Redis errors (a
//!   connection error counts as "not locked on that master"), so a partition shows as
//!   `Unavailable`, i.e. `fail`, not `info`: that is the library's answer, reported as given.
//!   `acquire_timeout_ms` is not used: rslock has no such setting; its retries bound the wait.
//! - release: `unlock(&lock)`. It returns `()`: "best effort ... simply try to contact all
//!   instances and remove the key". It says nothing when the key was already gone or held by
//!   another value, nor when a master was unreachable, so a release is always `ok` (the library
//!   says it released) and never `fail` with `not-owner`.
//! - renew: `extend(&lock, ttl)` (the same retried quorum loop as lock, with its compare-and-
//!   SET PX script). `Ok(Lock)` is `ok` with `valid_ms` = the new Lock's `validity_time` (ttl
//!   minus drift minus the time the successful try took, counted from that try's start, which
//!   is after the request was sent). `Err(Unavailable)` is `fail`: no quorum, and rslock has run
//!   its unlock script on every master, so the lock is gone. `TtlExceeded` is `info`.
//! - check: `is_freed(&lock)`, the library's own answer about a lock it granted (it reads the
//!   first master only, not a quorum; rslock keeps no local belief beyond the `Lock` value).
//!   `Ok(false)` is `held: true`; it answers a freed lock with `Err(RedisKeyNotFound)` or
//!   `Err(RedisKeyMismatch)` (never `Ok(true)`), both `held: false` naming the variant; an I/O
//!   or Redis error is `info`. No acquisition held is `held: false`.
//! - init's `op_timeout_ms` is not used: rslock has no timeout setting, and its connections
//!   keep the `redis` crate's own defaults. `ttl_ms` is the lock's TTL (rslock has no default).
//! - events: none. rslock renews only inside `using`, which this adapter does not drive: it
//!   drives `lock` / `extend` / `unlock`, the calls the README shows first.
//!
//! Seen against five redis-server masters, not promised by rslock's docs: a failed extend runs
//! the unlock script on every master (the key is deleted where it was still ours); after a lost
//! lock, unlock deletes nothing of the new holder's (compare-and-delete) and still says nothing;
//! `retry_delay_ms: 0` with `retry_count` > 1 panics in `lock` ("cannot sample empty range",
//! rand's `random_range(0..0)`), reported as `info` with `"exception": true`, as is any panic.
use std::io::{self, BufRead, Write};
use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use rslock::{Lock, LockError, LockManager};
use serde_json::{json, Value};

// The pinned rslock release (Cargo.toml: rslock = "=0.10.0"); keep the two equal.
const RSLOCK_VERSION: &str = "0.10.0";

// rslock's own defaults (private consts DEFAULT_RETRY_COUNT / DEFAULT_RETRY_DELAY in lock.rs),
// used only to fill in the one of the two that `options` leave out when they name the other.
const DEFAULT_RETRY_COUNT: u32 = 3;
const DEFAULT_RETRY_DELAY_MS: u64 = 200;

struct Adapter {
    rt: tokio::runtime::Runtime,
    rl: Option<LockManager>,
    resource: String,
    ttl: Duration,
    lock: Option<Lock>,
}

fn send(v: &Value) {
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "{}", v);
    let _ = out.flush();
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{:02x}", b)).collect()
}

fn reply(id: &Value, typ: &str) -> Value {
    json!({"id": id, "type": typ})
}

fn with_error(mut v: Value, err: String) -> Value {
    v["error"] = Value::String(err);
    v
}

/// The reply for an error rslock returned from lock() or extend().
fn lock_error(id: &Value, what: &str, e: &LockError) -> Value {
    let msg = format!("{}: {:?}: {}", what, e, e);
    match e {
        // No quorum in any of its tries; it ran its unlock script on every master after each.
        LockError::Unavailable => with_error(reply(id, "fail"), msg),
        // Nothing was sent: the TTL does not fit in usize milliseconds.
        LockError::TtlTooLarge => with_error(reply(id, "fail"), msg),
        // TtlExceeded returns without the cleanup unlock; Io / Redis are I/O errors: unknown.
        LockError::TtlExceeded | LockError::Io(_) | LockError::Redis(_) => {
            with_error(reply(id, "info"), msg)
        }
        // Not among the answers lock()/extend() can give.
        _ => {
            let mut v = with_error(reply(id, "info"), msg);
            v["exception"] = Value::Bool(true);
            v
        }
    }
}

impl Adapter {
    /// Runs a library future; a panic inside it becomes Err(message).
    fn run<F: std::future::Future>(&self, fut: F) -> Result<F::Output, String> {
        panic::catch_unwind(AssertUnwindSafe(|| self.rt.block_on(fut))).map_err(|p| {
            if let Some(s) = p.downcast_ref::<&str>() {
                s.to_string()
            } else if let Some(s) = p.downcast_ref::<String>() {
                s.clone()
            } else {
                "panic".to_string()
            }
        })
    }

    fn init(&mut self, id: &Value, req: &Value) -> Value {
        let endpoints: Vec<String> = match req["endpoints"].as_array() {
            Some(a) if !a.is_empty() => a.iter().filter_map(|e| e.as_str().map(String::from)).collect(),
            _ => return with_error(reply(id, "fail"), "init: no endpoints".into()),
        };
        let uris: Vec<String> = endpoints.iter().map(|e| format!("redis://{}", e)).collect();
        self.resource = req["lock"].as_str().unwrap_or("fencecheck-lock").to_string();
        self.ttl = Duration::from_millis(req["ttl_ms"].as_u64().unwrap_or(2000));

        // rslock connects lazily and swallows connection errors, so reach each master here.
        let mut reachable = 0;
        let mut errors = Vec::new();
        for uri in &uris {
            let client = match redis::Client::open(uri.as_str()) {
                Ok(c) => c,
                Err(e) => return with_error(reply(id, "fail"), format!("init: {}: {}", uri, e)),
            };
            let ping = async {
                let mut con = client.get_multiplexed_async_connection().await?;
                redis::cmd("PING").query_async::<String>(&mut con).await
            };
            match self.run(ping) {
                Ok(Ok(_)) => reachable += 1,
                Ok(Err(e)) => errors.push(format!("{}: {}", uri, e)),
                Err(p) => errors.push(format!("{}: panic: {}", uri, p)),
            }
        }
        for e in &errors {
            eprintln!("rslock-adapter: init: master unreachable: {}", e);
        }
        let quorum = uris.len() / 2 + 1;
        if reachable < quorum {
            return with_error(
                reply(id, "fail"),
                format!("init: {} of {} masters answered PING, quorum {}: {}", reachable, uris.len(), quorum, errors.join("; ")),
            );
        }

        let mut rl = LockManager::new(uris);
        let opts = &req["options"];
        let count = opts.get("retry_count").and_then(Value::as_u64);
        let delay = opts.get("retry_delay_ms").and_then(Value::as_u64);
        if count.is_some() || delay.is_some() {
            rl.set_retry(
                count.map(|c| c as u32).unwrap_or(DEFAULT_RETRY_COUNT),
                Duration::from_millis(delay.unwrap_or(DEFAULT_RETRY_DELAY_MS)),
            );
        }
        self.rl = Some(rl);
        json!({"id": id, "type": "ok", "library": "rslock", "version": RSLOCK_VERSION,
               "token": null, "capabilities": ["release", "renew", "check"]})
    }

    fn acquire(&mut self, id: &Value) -> Value {
        let rl = self.rl.clone().expect("init first");
        let (resource, ttl) = (self.resource.clone(), self.ttl);
        match self.run(async move { rl.lock(resource.as_str(), ttl).await }) {
            Ok(Ok(lock)) => {
                let lease = format!("{}:{}", String::from_utf8_lossy(&lock.resource), hex(&lock.val));
                eprintln!("rslock-adapter: acquired {} validity_time {} ms", lease, lock.validity_time);
                self.lock = Some(lock);
                json!({"id": id, "type": "ok", "lease": lease})
            }
            Ok(Err(e)) => lock_error(id, "LockManager::lock", &e),
            Err(p) => json!({"id": id, "type": "info", "error": format!("LockManager::lock panicked: {}", p), "exception": true}),
        }
    }

    fn release(&mut self, id: &Value) -> Value {
        let rl = self.rl.clone().expect("init first");
        let lock = match self.lock.take() {
            Some(l) => l,
            None => return with_error(reply(id, "fail"), "release: no acquisition held".into()),
        };
        // unlock returns (): best effort, no word on whether the key was still ours.
        match self.run(async { rl.unlock(&lock).await }) {
            Ok(()) => reply(id, "ok"),
            Err(p) => json!({"id": id, "type": "info", "error": format!("LockManager::unlock panicked: {}", p), "exception": true}),
        }
    }

    fn renew(&mut self, id: &Value) -> Value {
        let rl = self.rl.clone().expect("init first");
        let ttl = self.ttl;
        let lock = match self.lock.as_ref() {
            Some(l) => l,
            None => return with_error(reply(id, "fail"), "renew: no acquisition held".into()),
        };
        let res = panic::catch_unwind(AssertUnwindSafe(|| self.rt.block_on(rl.extend(lock, ttl))));
        match res {
            Ok(Ok(extended)) => {
                let valid_ms = extended.validity_time;
                self.lock = Some(extended);
                json!({"id": id, "type": "ok", "valid_ms": valid_ms})
            }
            Ok(Err(e)) => lock_error(id, "LockManager::extend", &e),
            Err(_) => json!({"id": id, "type": "info", "error": "LockManager::extend panicked", "exception": true}),
        }
    }

    fn check(&mut self, id: &Value) -> Value {
        let rl = self.rl.clone().expect("init first");
        let lock = match self.lock.as_ref() {
            Some(l) => l,
            None => return json!({"id": id, "type": "ok", "held": false}),
        };
        match self.run(rl.is_freed(lock)) {
            Ok(Ok(freed)) => json!({"id": id, "type": "ok", "held": !freed}),
            Ok(Err(e @ (LockError::RedisKeyNotFound | LockError::RedisKeyMismatch))) => {
                json!({"id": id, "type": "ok", "held": false, "error": format!("LockManager::is_freed: {:?}", e)})
            }
            Ok(Err(e)) => lock_error(id, "LockManager::is_freed", &e),
            Err(p) => json!({"id": id, "type": "info", "error": format!("LockManager::is_freed panicked: {}", p), "exception": true}),
        }
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut a = Adapter { rt, rl: None, resource: String::new(), ttl: Duration::from_secs(2), lock: None };
    let stdin = io::stdin();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(l) => l,
            Err(_) => break,
        };
        if line.trim().is_empty() {
            continue;
        }
        let req: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("rslock-adapter: not JSON: {}: {}", e, line);
                continue;
            }
        };
        let id = req["id"].clone();
        let op = req["op"].as_str().unwrap_or("");
        let out = match op {
            "init" => a.init(&id, &req),
            _ if a.rl.is_none() => with_error(reply(&id, "fail"), format!("{} before init", op)),
            "acquire" => a.acquire(&id),
            "release" => a.release(&id),
            "renew" => a.renew(&id),
            "check" => a.check(&id),
            _ => with_error(reply(&id, "fail"), format!("unsupported op {:?}", op)),
        };
        send(&out);
    }
}
