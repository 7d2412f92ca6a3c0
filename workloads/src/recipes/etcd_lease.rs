//! `etcd-lease`: the lease lock most etcd users write by hand. Grant a lease and keep it alive;
//! take the lock with one txn "create the key with my lease if its create_revision is 0"; the
//! fence token is the key's create revision. Release deletes the key only if its create revision
//! is still mine, then revokes the lease.

use super::etcd_keeper::{self, KeptLease};
use crate::client::{within, Client, Completion, Grant, NOT_OWNER};
use crate::config::RecipeConfig;
use etcd_client::{Compare, CompareOp, PutOptions, Txn, TxnOp, TxnOpResponse};
use futures::future::BoxFuture;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// Poll interval while another holder has the key.
const WAIT_STEP: Duration = Duration::from_millis(10);

pub struct EtcdLease {
    client: etcd_client::Client,
    owner: String,
    cfg: RecipeConfig,
    lease: Mutex<Option<KeptLease>>,
}

impl EtcdLease {
    pub async fn connect(
        endpoints: &[String],
        owner: &str,
        cfg: RecipeConfig,
    ) -> Result<Self, String> {
        Ok(Self {
            client: etcd_keeper::connect(endpoints, cfg.op_timeout).await?,
            owner: owner.to_string(),
            cfg,
            lease: Mutex::new(None),
        })
    }

    fn key(lock: &str) -> String {
        format!("/fencecheck/lock/{lock}")
    }

    /// One attempt: `Ok(Some(create_revision))` created, `Ok(None)` someone else holds it.
    async fn try_create(&self, key: &str, lease: i64) -> Completion<Option<i64>> {
        let txn = Txn::new()
            .when([Compare::create_revision(key, CompareOp::Equal, 0)])
            .and_then([
                TxnOp::put(
                    key,
                    self.owner.as_bytes(),
                    Some(PutOptions::new().with_lease(lease)),
                ),
                TxnOp::get(key, None),
            ])
            .or_else([]);
        let mut c = self.client.clone();
        within(self.cfg.op_timeout, "lock txn", async {
            match c.txn(txn).await {
                Err(e) => Completion::info(format!("lock txn: {e}")),
                Ok(r) if !r.succeeded() => Completion::Ok(None),
                Ok(r) => match r.op_responses().into_iter().find_map(|op| match op {
                    TxnOpResponse::Get(g) => g.kvs().first().map(|kv| kv.create_revision()),
                    _ => None,
                }) {
                    Some(rev) => Completion::Ok(Some(rev)),
                    None => Completion::info("lock txn succeeded without returning the key"),
                },
            }
        })
        .await
    }
}

impl Client for EtcdLease {
    fn acquire<'a>(&'a self, lock: &'a str) -> BoxFuture<'a, Completion<Grant>> {
        Box::pin(async move {
            let key = Self::key(lock);
            let sent = Instant::now();
            let mut kept =
                match etcd_keeper::grant(&self.client, self.cfg.ttl, self.cfg.op_timeout).await {
                    Completion::Ok(k) => k,
                    Completion::Fail(e) | Completion::Info(e) | Completion::Exception(e) => {
                        return Completion::Fail(e)
                    }
                };
            let deadline = sent + self.cfg.acquire_timeout;
            // The lease is certainly alive for ttl from the last keep-alive sent (or the grant).
            let mut last_keep_alive = sent;
            loop {
                match self.try_create(&key, kept.id).await {
                    Completion::Ok(Some(rev)) => {
                        let hold = Grant {
                            lock: lock.to_string(),
                            owner: self.owner.clone(),
                            lease: format!("{:x}", kept.id),
                            lock_key: Some(key.clone()),
                            read_back: None,
                            token: Some(rev as u64),
                            valid_until: last_keep_alive + self.cfg.ttl,
                        };
                        *self.lease.lock().await = Some(kept);
                        return Completion::Ok(hold);
                    }
                    Completion::Ok(None) => {}
                    Completion::Fail(e) | Completion::Info(e) | Completion::Exception(e) => {
                        // The txn may have applied: revoking the lease removes the key if it did.
                        let gone =
                            etcd_keeper::revoke(&self.client, kept.id, self.cfg.op_timeout).await;
                        return if gone {
                            Completion::Fail(format!("{e}; lease revoked"))
                        } else {
                            Completion::Info(e)
                        };
                    }
                }
                if Instant::now() >= deadline {
                    etcd_keeper::revoke(&self.client, kept.id, self.cfg.op_timeout).await;
                    return Completion::fail(
                        "acquire timeout: the key stayed held by another lease",
                    );
                }
                if last_keep_alive.elapsed() >= self.cfg.renew_interval {
                    let at = Instant::now();
                    if kept.renew(&self.client, self.cfg.op_timeout).await.is_ok() {
                        last_keep_alive = at;
                    }
                }
                tokio::time::sleep(WAIT_STEP).await;
            }
        })
    }

    fn renew<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<Duration>> {
        Box::pin(async move {
            let mut guard = self.lease.lock().await;
            match guard.as_mut() {
                Some(k) if format!("{:x}", k.id) == hold.lease => {
                    k.renew(&self.client, self.cfg.op_timeout).await
                }
                _ => Completion::fail("no such hold"),
            }
        })
    }

    fn release<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<()>> {
        Box::pin(async move {
            let kept = self.lease.lock().await.take();
            let key = Self::key(&hold.lock);
            let rev = hold.token.unwrap_or(0) as i64;
            let txn = Txn::new()
                .when([Compare::create_revision(
                    key.as_str(),
                    CompareOp::Equal,
                    rev,
                )])
                .and_then([TxnOp::delete(key.as_str(), None)])
                .or_else([]);
            let mut c = self.client.clone();
            let outcome = within(self.cfg.op_timeout, "release txn", async {
                match c.txn(txn).await {
                    Ok(r) if r.succeeded() => Completion::Ok(()),
                    Ok(_) => Completion::fail(NOT_OWNER),
                    Err(e) => Completion::info(format!("release txn: {e}")),
                }
            })
            .await;
            if let Some(k) = kept {
                etcd_keeper::revoke(&self.client, k.id, self.cfg.op_timeout).await;
            }
            outcome
        })
    }

    fn abandon(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Some(mut k) = self.lease.lock().await.take() {
                k.abandon();
            }
        })
    }
}
