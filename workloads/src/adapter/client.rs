//! A client library under test, as a [`Client`]: each call is one request to its adapter,
//! answered with Jepsen's outcomes. What the adapter cannot vouch for is `info`; a timeout is
//! `info` and the adapter is killed and started again before the next call (so a late reply
//! can never be taken for a new one; the same when the worker's own deadline cancelled a call);
//! a line that is not protocol, a reply to another request or an adapter that died is `info`
//! marked as a library exception, naming the adapter. After an `info` the application profile
//! decides: it abandons the hold and the adapter is killed, as if the client had crashed, and a
//! fresh one (a new session) serves the next acquire; or it forgets the hold and the same
//! adapter, with its library's session and objects, goes on. An acquire the library granted is
//! a grant, whatever the adapter's own read-back found (that finding travels beside it).

use super::link::{Broken, Launch, LeaseWatch, Link};
use super::wire::{Capabilities, Init, Reply, ReplyType};
use crate::client::{checked_renewal, Belief, Client, Completion, Grant, NOT_OWNER};
use crate::config::RecipeConfig;
use futures::future::BoxFuture;
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long an adapter may take to answer `init` (it connects to the lock service there).
pub const INIT_DEADLINE: Duration = Duration::from_secs(30);

/// What the adapter said of itself in its `init` reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described {
    pub library: String,
    pub version: String,
    /// Where the token comes from; `None` when the library gives none.
    pub token: Option<String>,
    pub capabilities: Capabilities,
}

/// One adapter, started (and restarted) by this worker.
pub struct AdapterClient {
    name: String,
    launch: Box<dyn Launch>,
    init: Init,
    init_deadline: Duration,
    cfg: RecipeConfig,
    link: tokio::sync::Mutex<Option<Link>>,
    described: Described,
    watch: Arc<LeaseWatch>,
    /// The lease watch's `lost` count when the current grant was made.
    lost_at_grant: AtomicU64,
}

impl std::fmt::Debug for AdapterClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdapterClient")
            .field("name", &self.name)
            .field("described", &self.described)
            .finish()
    }
}

impl AdapterClient {
    /// Starts the adapter and shakes hands, allowing it `init_deadline` to answer (normally
    /// [`INIT_DEADLINE`]); the error names the adapter and what went wrong.
    pub async fn start(
        name: &str,
        launch: Box<dyn Launch>,
        init: Init,
        init_deadline: Duration,
        cfg: RecipeConfig,
    ) -> Result<AdapterClient, String> {
        let watch = Arc::new(LeaseWatch::default());
        let (link, reply) = handshake(name, launch.as_ref(), &init, init_deadline, &watch).await?;
        let described = Described {
            library: reply.library.clone().unwrap_or_else(|| "unnamed".into()),
            version: reply.version.clone().unwrap_or_else(|| "unknown".into()),
            token: reply.token_source(),
            capabilities: reply.capabilities(),
        };
        Ok(AdapterClient {
            name: name.to_string(),
            launch,
            init,
            init_deadline,
            cfg,
            link: tokio::sync::Mutex::new(Some(link)),
            described,
            watch,
            lost_at_grant: AtomicU64::new(0),
        })
    }

    /// What the adapter said of itself.
    pub fn described(&self) -> &Described {
        &self.described
    }

    /// One request, on a running adapter (started again first if it was killed).
    async fn call(&self, op: serde_json::Value, deadline: Duration) -> Completion<Reply> {
        let mut guard = self.link.lock().await;
        // A call its caller gave up on (the worker's own deadline) may still be answered:
        // that adapter is killed, as after a timeout, and a fresh one serves this call.
        if guard.as_ref().is_some_and(Link::abandoned) {
            *guard = None;
        }
        if guard.is_none() {
            let started = handshake(
                &self.name,
                self.launch.as_ref(),
                &self.init,
                self.init_deadline,
                &self.watch,
            );
            match started.await {
                Ok((link, _)) => *guard = Some(link),
                Err(e) => return Completion::info(e),
            }
        }
        let Some(link) = guard.as_mut() else {
            return Completion::info(format!("adapter {} is not running", self.name));
        };
        let what = op["op"].as_str().unwrap_or("request").to_string();
        match link.call(op, deadline).await {
            Ok(reply) => Completion::Ok(reply),
            Err(broken) => {
                *guard = None; // killed: the next call starts it afresh
                let name = &self.name;
                match broken {
                    Broken::Timeout(d) => Completion::info(format!(
                        "adapter {name} did not answer {what} within {d:?} (killed, started again for the next operation)"
                    )),
                    Broken::Protocol(why) => {
                        Completion::exception(format!("adapter {name} broke the protocol: {why}"))
                    }
                    Broken::Exited(why) => {
                        Completion::exception(format!("adapter {name} exited during {what}: {why}"))
                    }
                }
            }
        }
    }

    /// The adapter's `fail` or `info` reply as a completion (its exception flag kept).
    fn not_ok<T>(&self, r: &Reply) -> Completion<T> {
        let why = r.error.clone().unwrap_or_else(|| "no error given".into());
        match r.kind {
            ReplyType::Fail => Completion::fail(why),
            _ if r.exception => Completion::exception(format!("{}: {why}", self.described.library)),
            _ => Completion::info(why),
        }
    }

    /// The adapter's `check`: whether the library says it still holds the lock (and what the
    /// adapter's own read of the service said, where it made one).
    async fn ask_check(&self) -> Completion<Belief> {
        let reply = self.call(json!({"op": "check"}), self.cfg.op_timeout).await;
        reply.and_then(|r| match (r.kind, r.held) {
            (ReplyType::Ok, Some(held)) => Completion::Ok(Belief {
                held,
                server_held: r.server_held,
            }),
            (ReplyType::Ok, None) => {
                Completion::exception(format!("adapter {} answered check without held", self.name))
            }
            _ => self.not_ok(&r),
        })
    }

    async fn kill(&self) {
        *self.link.lock().await = None;
    }
}

/// Launches the adapter and sends `init`; the link once it answered `ok`.
async fn handshake(
    name: &str,
    launch: &dyn Launch,
    init: &Init,
    deadline: Duration,
    watch: &Arc<LeaseWatch>,
) -> Result<(Link, Reply), String> {
    let launched = launch
        .launch()
        .map_err(|e| format!("adapter {name}: cannot start it: {e}"))?;
    let mut link = Link::start(launched, name, watch.clone());
    let mut op = serde_json::to_value(init).map_err(|e| e.to_string())?;
    op["op"] = json!("init");
    match link.call(op, deadline).await {
        Ok(r) if r.kind == ReplyType::Ok => Ok((link, r)),
        Ok(r) => Err(format!(
            "adapter {name}: init answered {:?}: {}",
            r.kind,
            r.error.as_deref().unwrap_or("no error given")
        )),
        Err(Broken::Timeout(d)) => Err(format!("adapter {name}: no init reply within {d:?}")),
        Err(Broken::Protocol(why)) => Err(format!("adapter {name}: during init, {why}")),
        Err(Broken::Exited(why)) => Err(format!("adapter {name}: exited during init: {why}")),
    }
}

impl Client for AdapterClient {
    fn acquire<'a>(&'a self, lock: &'a str) -> BoxFuture<'a, Completion<Grant>> {
        Box::pin(async move {
            if lock != self.init.lock {
                return Completion::fail(format!(
                    "not sent: adapter {} was started for lock {}",
                    self.name, self.init.lock
                ));
            }
            let deadline = self.cfg.acquire_timeout + self.cfg.op_timeout;
            let lost_before = self.watch.lost_count();
            let r = match self
                .call(json!({"op": "acquire"}), deadline)
                .await
                .into_result()
            {
                Ok(r) => r,
                Err(not_ok) => return not_ok.into(),
            };
            if r.kind != ReplyType::Ok {
                return self.not_ok(&r);
            }
            let token = match (r.token_value(), &self.described.token) {
                (Ok(Some(t)), Some(_)) => Some(t),
                (Ok(None), None) => None,
                // The read-back that reads the token found the node or key gone.
                (Ok(None), Some(_)) if r.read_back.is_some() => None,
                (Ok(t), source) => {
                    return Completion::exception(format!(
                        "adapter {} said its token is {source:?} but acquire reported {t:?}",
                        self.name
                    ))
                }
                (Err(why), _) => {
                    return Completion::exception(format!("adapter {}: {why}", self.name))
                }
            };
            let Some(lease) = r.lease.clone().filter(|l| !l.is_empty()) else {
                return Completion::exception(format!(
                    "adapter {} acquired without naming its lease",
                    self.name
                ));
            };
            self.lost_at_grant.store(lost_before, Ordering::SeqCst);
            Completion::Ok(Grant {
                lock: lock.to_string(),
                owner: self.init.worker.clone(),
                lease,
                lock_key: None,
                token,
                read_back: r.read_back.clone(),
                // The library's word: its session or lease was alive when it answered (an
                // acquire may have waited long for the lock, its session kept alive meanwhile),
                // so the hold counts from the reply. Whether the library was right is what the
                // resource's log and the checkers decide, not this bound.
                valid_until: Instant::now() + self.cfg.ttl,
            })
        })
    }

    fn renew<'a>(&'a self, _grant: &'a Grant) -> BoxFuture<'a, Completion<Duration>> {
        Box::pin(async move {
            if self.watch.lost_count() > self.lost_at_grant.load(Ordering::SeqCst) {
                let detail = self.watch.last_detail().unwrap_or_default();
                return Completion::fail(format!("the library reported the lock lost: {detail}"));
            }
            let caps = self.described.capabilities;
            if caps.renew {
                let reply = self.call(json!({"op": "renew"}), self.cfg.op_timeout).await;
                return reply.and_then(|r| match (r.kind, r.valid_ms) {
                    (ReplyType::Ok, Some(ms)) => Completion::Ok(Duration::from_millis(ms)),
                    (ReplyType::Ok, None) => Completion::exception(format!(
                        "adapter {} renewed without valid_ms",
                        self.name
                    )),
                    _ => self.not_ok(&r),
                });
            }
            if caps.check {
                return checked_renewal(self.ask_check().await, self.cfg.ttl);
            }
            // The library keeps its own session or lease alive and has not reported it lost.
            Completion::Ok(self.cfg.ttl)
        })
    }

    fn check<'a>(&'a self, _grant: &'a Grant) -> Option<BoxFuture<'a, Completion<Belief>>> {
        let caps = self.described.capabilities;
        // A loss the library already reported is answered by `renew` without asking.
        let lost = self.watch.lost_count() > self.lost_at_grant.load(Ordering::SeqCst);
        (caps.check && !caps.renew && !lost).then(|| Box::pin(self.ask_check()) as BoxFuture<'a, _>)
    }

    fn ask<'a>(&'a self, _grant: &'a Grant) -> Option<BoxFuture<'a, Completion<Belief>>> {
        let caps = self.described.capabilities;
        caps.check
            .then(|| Box::pin(self.ask_check()) as BoxFuture<'a, _>)
    }

    fn judges_its_own_hold(&self) -> bool {
        true
    }

    fn release<'a>(&'a self, _grant: &'a Grant) -> BoxFuture<'a, Completion<()>> {
        Box::pin(async move {
            if !self.described.capabilities.release {
                return Completion::fail(format!("not sent: adapter {} cannot release", self.name));
            }
            let reply = self
                .call(json!({"op": "release"}), self.cfg.op_timeout)
                .await;
            reply.and_then(|r| match r.kind {
                ReplyType::Ok => Completion::Ok(()),
                ReplyType::Fail if r.reason.as_deref() == Some("not-owner") => {
                    Completion::fail(NOT_OWNER)
                }
                _ => self.not_ok(&r),
            })
        })
    }

    fn abandon(&self) -> BoxFuture<'_, ()> {
        // As if the client had crashed: the library's session dies with the adapter.
        Box::pin(self.kill())
    }
}

#[cfg(test)]
mod tests;
