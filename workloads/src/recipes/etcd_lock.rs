//! `etcd-lock`: etcd's own Lock RPC (the v3lock service), always with the worker's own
//! kept-alive lease — without one the server invents a 60 s lease nobody renews (docs/design.md, "Platform facts").
//! The fence token is the create revision of the key Lock returns; release checks that the key
//! is still the one we created, then Unlocks and revokes the lease.

use super::etcd_keeper::{self, KeptLease};
use crate::client::{within, Client, Completion, Grant, NOT_OWNER};
use crate::config::RecipeConfig;
use etcd_client::LockOptions;
use futures::future::BoxFuture;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

struct Held {
    lease: KeptLease,
    key: Vec<u8>,
}

pub struct EtcdLock {
    client: etcd_client::Client,
    owner: String,
    cfg: RecipeConfig,
    held: Mutex<Option<Held>>,
}

impl EtcdLock {
    pub async fn connect(
        endpoints: &[String],
        owner: &str,
        cfg: RecipeConfig,
    ) -> Result<Self, String> {
        Ok(Self {
            client: etcd_keeper::connect(endpoints, cfg.op_timeout).await?,
            owner: owner.to_string(),
            cfg,
            held: Mutex::new(None),
        })
    }

    /// Waits for the Lock RPC while keeping our lease alive (Lock may block longer than the ttl).
    /// Returns the key and the send time of the last confirmation of the lease.
    async fn lock_keeping_alive(
        &self,
        name: &str,
        kept: &mut KeptLease,
        mut confirmed: Instant,
    ) -> Result<(Vec<u8>, Instant), String> {
        let mut c = self.client.clone();
        let opts = LockOptions::new().with_lease(kept.id);
        let lock = c.lock(format!("/fencecheck/elock/{name}"), Some(opts));
        tokio::pin!(lock);
        let deadline = tokio::time::Instant::now() + self.cfg.acquire_timeout;
        loop {
            let tick = tokio::time::sleep(self.cfg.renew_interval);
            tokio::select! {
                r = &mut lock => return r.map(|r| (r.key().to_vec(), confirmed)).map_err(|e| format!("lock: {e}")),
                _ = tick => {
                    if tokio::time::Instant::now() >= deadline {
                        return Err("acquire timeout: Lock did not return".into());
                    }
                    let at = Instant::now();
                    if kept.renew(&self.client, self.cfg.op_timeout).await.is_ok() {
                        confirmed = at;
                    }
                }
            }
        }
    }

    async fn create_revision(&self, key: &[u8]) -> Completion<Option<i64>> {
        let mut c = self.client.clone();
        within(self.cfg.op_timeout, "get lock key", async {
            match c.get(key, None).await {
                Ok(r) => Completion::Ok(r.kvs().first().map(|kv| kv.create_revision())),
                Err(e) => Completion::info(format!("get lock key: {e}")),
            }
        })
        .await
    }
}

impl Client for EtcdLock {
    fn acquire<'a>(&'a self, lock: &'a str) -> BoxFuture<'a, Completion<Grant>> {
        Box::pin(async move {
            let sent = Instant::now();
            let mut kept =
                match etcd_keeper::grant(&self.client, self.cfg.ttl, self.cfg.op_timeout).await {
                    Completion::Ok(k) => k,
                    Completion::Fail(e) | Completion::Info(e) | Completion::Exception(e) => {
                        return Completion::Fail(e)
                    }
                };
            let (key, confirmed) = match self.lock_keeping_alive(lock, &mut kept, sent).await {
                Ok(k) => k,
                Err(e) => {
                    // Lock may have been granted server-side: revoking our lease takes it back.
                    let gone =
                        etcd_keeper::revoke(&self.client, kept.id, self.cfg.op_timeout).await;
                    return if gone {
                        Completion::Fail(format!("{e}; lease revoked"))
                    } else {
                        Completion::info(e)
                    };
                }
            };
            let rev = match self.create_revision(&key).await {
                Completion::Ok(Some(rev)) => rev,
                other => {
                    let e = match other {
                        Completion::Fail(e) | Completion::Info(e) | Completion::Exception(e) => e,
                        _ => "lock key vanished right after Lock (lease expired?)".to_string(),
                    };
                    let gone =
                        etcd_keeper::revoke(&self.client, kept.id, self.cfg.op_timeout).await;
                    return if gone {
                        Completion::Fail(format!("{e}; lease revoked"))
                    } else {
                        Completion::Info(e)
                    };
                }
            };
            let hold = Grant {
                lock: lock.to_string(),
                owner: self.owner.clone(),
                lease: format!("{:x}", kept.id),
                lock_key: Some(String::from_utf8_lossy(&key).into_owned()),
                read_back: None,
                token: Some(rev as u64),
                valid_until: confirmed + self.cfg.ttl,
            };
            *self.held.lock().await = Some(Held { lease: kept, key });
            Completion::Ok(hold)
        })
    }

    fn renew<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<Duration>> {
        Box::pin(async move {
            let mut guard = self.held.lock().await;
            match guard.as_mut() {
                Some(h) if format!("{:x}", h.lease.id) == hold.lease => {
                    h.lease.renew(&self.client, self.cfg.op_timeout).await
                }
                _ => Completion::fail("no such hold"),
            }
        })
    }

    fn release<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<()>> {
        Box::pin(async move {
            let Some(held) = self.held.lock().await.take() else {
                return Completion::fail(NOT_OWNER);
            };
            let outcome = match self.create_revision(&held.key).await {
                Completion::Ok(Some(rev)) if Some(rev as u64) == hold.token => {
                    let mut c = self.client.clone();
                    within(self.cfg.op_timeout, "unlock", async {
                        match c.unlock(held.key.clone()).await {
                            Ok(_) => Completion::Ok(()),
                            Err(e) => Completion::info(format!("unlock: {e}")),
                        }
                    })
                    .await
                }
                Completion::Ok(_) => Completion::fail(NOT_OWNER),
                Completion::Fail(e) | Completion::Info(e) | Completion::Exception(e) => {
                    Completion::Info(e)
                }
            };
            etcd_keeper::revoke(&self.client, held.lease.id, self.cfg.op_timeout).await;
            outcome
        })
    }

    fn abandon(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Some(mut h) = self.held.lock().await.take() {
                h.lease.abandon();
            }
        })
    }
}
