//! `zk-lock`: the ZooKeeper lock recipe. An ephemeral-sequential node under the lock's
//! directory; the lowest sequence holds the lock; every other contender watches only its
//! predecessor (no herd effect). The fence token is my node's czxid, read with a stat because
//! ZooKeeper 3.8.0 returns czxid -1 from the create itself (docs/design.md, "Platform facts"). Ownership lives as
//! long as the session: release deletes my node only; a session that expired is rebuilt on the
//! next acquire.

use crate::client::{within, Client, Completion, Grant, NOT_OWNER};
use crate::config::RecipeConfig;
use futures::future::BoxFuture;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;
use zookeeper_client as zk;

pub struct ZkLock {
    endpoints: String,
    owner: String,
    cfg: RecipeConfig,
    session: Mutex<Option<zk::Client>>,
}

fn seq_of(name: &str) -> u64 {
    name.rsplit('-')
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(u64::MAX)
}

impl ZkLock {
    pub fn new(endpoints: &[String], owner: &str, cfg: RecipeConfig) -> Self {
        Self {
            endpoints: endpoints.join(","),
            owner: owner.to_string(),
            cfg,
            session: Mutex::new(None),
        }
    }

    /// Opens the session now, as a client connects before it locks, so the first acquire's
    /// deadline is not spent on the connection (a loaded machine took longer than
    /// acquire_timeout + op_timeout to connect). A failure is left to the first acquire, which
    /// connects again.
    pub async fn connect_now(&self) {
        if let Err(e) = self.client().await {
            tracing::warn!("zookeeper session at start: {e} (the first acquire tries again)");
        }
    }

    /// The live session, or a new one if there is none or it expired.
    async fn client(&self) -> Result<zk::Client, String> {
        let mut guard = self.session.lock().await;
        if let Some(c) = guard.as_ref().filter(|c| !c.state().is_terminated()) {
            return Ok(c.clone());
        }
        let connect = zk::Client::connector()
            .with_session_timeout(self.cfg.session_timeout)
            .with_connection_timeout(self.cfg.op_timeout)
            .connect(&self.endpoints);
        let c = tokio::time::timeout(self.cfg.op_timeout * 2, connect)
            .await
            .map_err(|_| format!("zookeeper {}: connect timed out", self.endpoints))?
            .map_err(|e| format!("zookeeper {}: {e}", self.endpoints))?;
        *guard = Some(c.clone());
        Ok(c)
    }

    async fn forget_session(&self) {
        *self.session.lock().await = None;
    }

    /// Waits until `me` is the lowest node in `dir`, watching only the predecessor. `Ok(Err)` is
    /// the deadline passed, naming the predecessor still there (node, owner session, age), so a
    /// stuck lock's evidence says which node blocked it.
    async fn wait_turn(
        &self,
        c: &zk::Client,
        dir: &str,
        me: &str,
        deadline: Instant,
    ) -> Result<Result<(), String>, zk::Error> {
        loop {
            let mut children = c.list_children(dir).await?;
            children.sort_by_key(|n| seq_of(n));
            let Some(i) = children.iter().position(|n| n == me) else {
                return Err(zk::Error::NoNode); // our node vanished: the session expired
            };
            if i == 0 {
                return Ok(Ok(()));
            }
            let pred = format!("{dir}/{}", children[i - 1]);
            let (stat, watcher) = c.check_and_watch_stat(&pred).await?;
            let Some(stat) = stat else {
                continue;
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || tokio::time::timeout(left, watcher.changed()).await.is_err() {
                let age_ms = unix_ms().saturating_sub(stat.ctime);
                return Ok(Err(format!(
                    "{pred} of session {:#x}, created {age_ms} ms ago, first of {}",
                    stat.ephemeral_owner, children[0]
                )));
            }
        }
    }

    async fn try_acquire(&self, c: &zk::Client, lock: &str) -> Completion<Grant> {
        let dir = format!("/fencecheck/locks/{lock}");
        let deadline = Instant::now() + self.cfg.acquire_timeout;
        let acl = zk::Acls::anyone_all();
        let persistent = zk::CreateMode::Persistent.with_acls(acl);
        if let Err(e) = within(self.cfg.op_timeout, "mkdir", async {
            match c.mkdir(&dir, &persistent).await {
                Ok(()) => Completion::Ok(()),
                Err(e) => Completion::info(e),
            }
        })
        .await
        .into_result()
        {
            return Completion::Fail(format!("lock directory {dir}: {e}"));
        }
        let ephemeral = zk::CreateMode::EphemeralSequential.with_acls(acl);
        let prefix = format!("{dir}/lock-");
        let created = tokio::time::timeout(
            self.cfg.op_timeout,
            c.create(&prefix, self.owner.as_bytes(), &ephemeral),
        )
        .await;
        let seq = match created {
            Ok(Ok((_stat, seq))) => seq,
            Ok(Err(e)) if e == zk::Error::SessionExpired => {
                return Completion::fail(format!("create: {e}"))
            }
            Ok(Err(e)) => return Completion::info(format!("create: {e}")),
            Err(_) => return Completion::info("create timed out"),
        };
        let name = format!("lock-{seq}");
        let path = format!("{dir}/{name}");
        match self.wait_turn(c, &dir, &name, deadline).await {
            Ok(Ok(())) => {}
            Ok(Err(pred)) => {
                return match c.delete(&path, None).await {
                    Ok(()) => Completion::fail(format!(
                        "acquire timeout: a predecessor still holds the lock ({pred})"
                    )),
                    Err(e) => Completion::info(format!(
                        "acquire timeout ({pred}), and deleting {path} failed: {e}"
                    )),
                };
            }
            Err(e) => return Completion::info(format!("waiting for predecessor: {e}")),
        }
        let sent = Instant::now();
        match tokio::time::timeout(self.cfg.op_timeout, c.check_stat(&path)).await {
            Ok(Ok(Some(stat))) if stat.czxid > 0 => Completion::Ok(Grant {
                lock: lock.to_string(),
                owner: self.owner.clone(),
                lock_key: Some(path.clone()),
                read_back: None,
                lease: path,
                token: Some(stat.czxid as u64),
                valid_until: sent + c.session_timeout(),
            }),
            Ok(Ok(Some(stat))) => Completion::info(format!("{path} has czxid {}", stat.czxid)),
            Ok(Ok(None)) => Completion::info(format!("{path} vanished after we got the lock")),
            Ok(Err(e)) => Completion::info(format!("stat {path}: {e}")),
            Err(_) => Completion::info("stat timed out"),
        }
    }
}

/// The wall clock in ms since the epoch, as ZooKeeper stamps a node's ctime (the servers and
/// the workers share the host's clock unless a clock fault moved one: then the age says so).
fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl Client for ZkLock {
    fn acquire<'a>(&'a self, lock: &'a str) -> BoxFuture<'a, Completion<Grant>> {
        Box::pin(async move {
            let c = match self.client().await {
                Ok(c) => c,
                Err(e) => return Completion::Fail(e),
            };
            let out = self.try_acquire(&c, lock).await;
            if matches!(out, Completion::Info(_)) {
                // An unknown node may linger in this session: drop the session so it expires.
                self.forget_session().await;
            }
            out
        })
    }

    fn renew<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<Duration>> {
        Box::pin(async move {
            let Some(c) = self.session.lock().await.clone() else {
                return Completion::fail("no session");
            };
            match c.state() {
                zk::SessionState::Expired
                | zk::SessionState::Closed
                | zk::SessionState::AuthFailed => {
                    return Completion::fail(format!("session {:?}", c.state()))
                }
                zk::SessionState::Disconnected => return Completion::info("session disconnected"),
                _ => {}
            }
            match c.check_stat(&hold.lease).await {
                Ok(Some(st)) if st.ephemeral_owner == c.session_id().0 => {
                    Completion::Ok(c.session_timeout())
                }
                Ok(_) => Completion::fail(format!("{} is gone or not ours", hold.lease)),
                Err(zk::Error::SessionExpired) => Completion::fail("session expired"),
                Err(e) => Completion::info(format!("stat {}: {e}", hold.lease)),
            }
        })
    }

    fn release<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<()>> {
        Box::pin(async move {
            let c = match self.client().await {
                Ok(c) => c,
                Err(e) => return Completion::info(e),
            };
            let session = c.session_id().0;
            // Delete only the node whose czxid is our token and whose owner is our session.
            let stat = match c.check_stat(&hold.lease).await {
                Err(zk::Error::SessionExpired) => return Completion::fail(NOT_OWNER),
                // The connection broke (after a pause the server has often closed it): whether
                // the node is still there is asked again on a fresh session, the old session's
                // id still naming who owns it.
                Err(e) => {
                    self.forget_session().await;
                    let fresh = match self.client().await {
                        Ok(f) => f,
                        Err(e2) => {
                            return Completion::info(format!("stat {}: {e}; {e2}", hold.lease))
                        }
                    };
                    match fresh.check_stat(&hold.lease).await {
                        Ok(st) => st,
                        Err(e2) => {
                            return Completion::info(format!("stat {}: {e}, then {e2}", hold.lease))
                        }
                    }
                }
                Ok(st) => st,
            };
            match stat {
                Some(st)
                    if Some(st.czxid as u64) == hold.token && st.ephemeral_owner == session => {}
                _ => return Completion::fail(NOT_OWNER),
            }
            let c = match self.client().await {
                Ok(c) => c,
                Err(e) => return Completion::info(e),
            };
            match c.delete(&hold.lease, None).await {
                Ok(()) => Completion::Ok(()),
                Err(zk::Error::NoNode) | Err(zk::Error::SessionExpired) => {
                    Completion::fail(NOT_OWNER)
                }
                Err(e) => Completion::info(format!("delete {}: {e}", hold.lease)),
            }
        })
    }

    fn abandon(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move { self.forget_session().await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contenders_sort_by_their_sequence_suffix() {
        let mut v = vec!["lock-0000000010", "lock-0000000002", "lock-0000000003"];
        v.sort_by_key(|n| seq_of(n));
        assert_eq!(v, ["lock-0000000002", "lock-0000000003", "lock-0000000010"]);
    }
}
