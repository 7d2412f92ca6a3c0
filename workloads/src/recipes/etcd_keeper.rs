//! The kept-alive lease both etcd recipes hold: granted per acquisition, renewed one keep-alive
//! at a time (so each renewal's outcome is known), revoked on release. A keep-alive answered
//! with TTL 0 means the lease is gone for certain.

use crate::client::{within, Completion};
use etcd_client::{LeaseKeepAliveStream, LeaseKeeper};
use std::time::Duration;

/// An etcd lease with its keep-alive stream (re-opened after the stream breaks).
pub struct KeptLease {
    pub id: i64,
    stream: Option<(LeaseKeeper, LeaseKeepAliveStream)>,
}

impl std::fmt::Debug for KeptLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeptLease({:x})", self.id)
    }
}

/// Grants a lease of `ttl` and opens its keep-alive stream. An error means no lease is usable
/// (a lease granted without a stream is revoked, best effort).
pub async fn grant(
    client: &etcd_client::Client,
    ttl: Duration,
    op_timeout: Duration,
) -> Completion<KeptLease> {
    let mut c = client.clone();
    let grant = within(op_timeout, "lease grant", async {
        match c.lease_grant(ttl.as_secs() as i64, None).await {
            Ok(r) => Completion::Ok(r.id()),
            Err(e) => Completion::fail(format!("lease grant failed: {e}")),
        }
    })
    .await;
    let id = match grant {
        Completion::Ok(id) => id,
        // Without a lease id nothing can hold the lock: whatever happened, no lock was taken.
        Completion::Fail(e) | Completion::Info(e) | Completion::Exception(e) => {
            return Completion::Fail(e)
        }
    };
    let mut lease = KeptLease { id, stream: None };
    match lease.open(client, op_timeout).await {
        Ok(()) => Completion::Ok(lease),
        Err(e) => {
            revoke(client, id, op_timeout).await;
            Completion::fail(format!("keep-alive stream: {e}"))
        }
    }
}

impl KeptLease {
    async fn open(
        &mut self,
        client: &etcd_client::Client,
        op_timeout: Duration,
    ) -> Result<(), String> {
        let mut c = client.clone();
        match tokio::time::timeout(op_timeout, c.lease_keep_alive(self.id)).await {
            Ok(Ok(s)) => {
                self.stream = Some(s);
                Ok(())
            }
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("timed out after {op_timeout:?}")),
        }
    }

    /// One keep-alive: `Ok(ttl)` renewed, `Fail` the lease no longer exists, `Info` unknown.
    pub async fn renew(
        &mut self,
        client: &etcd_client::Client,
        op_timeout: Duration,
    ) -> Completion<Duration> {
        if self.stream.is_none() {
            if let Err(e) = self.open(client, op_timeout).await {
                return Completion::info(format!("keep-alive stream: {e}"));
            }
        }
        let Some((keeper, stream)) = self.stream.as_mut() else {
            return Completion::info("keep-alive stream missing");
        };
        let outcome = within(op_timeout, "keep-alive", async {
            if let Err(e) = keeper.keep_alive().await {
                return Completion::info(format!("keep-alive send: {e}"));
            }
            match stream.message().await {
                Ok(Some(r)) if r.ttl() > 0 => Completion::Ok(Duration::from_secs(r.ttl() as u64)),
                Ok(Some(_)) => {
                    Completion::fail(format!("lease {:x} expired (keep-alive TTL 0)", self.id))
                }
                Ok(None) => Completion::info("keep-alive stream closed"),
                Err(e) => Completion::info(format!("keep-alive: {e}")),
            }
        })
        .await;
        if matches!(outcome, Completion::Info(_)) {
            self.stream = None; // a reply may still be in flight; start a fresh stream next time
        }
        outcome
    }

    /// Stops keeping the lease alive (it expires on its own).
    pub fn abandon(&mut self) {
        self.stream = None;
    }
}

/// Revokes a lease, deleting every key attached to it. True if etcd confirmed.
pub async fn revoke(client: &etcd_client::Client, id: i64, op_timeout: Duration) -> bool {
    let mut c = client.clone();
    match tokio::time::timeout(op_timeout, c.lease_revoke(id)).await {
        Ok(Ok(_)) => true,
        // "requested lease not found": already gone, which is what revoking wants.
        Ok(Err(e)) => e.to_string().contains("not found"),
        Err(_) => false,
    }
}

/// Connects without a client-wide request timeout: etcd-client's timeout would also cut the
/// blocking Lock RPC (docs/design.md, "Platform facts"); every call is bounded with `within` instead.
pub async fn connect(
    endpoints: &[String],
    op_timeout: Duration,
) -> Result<etcd_client::Client, String> {
    let opts = etcd_client::ConnectOptions::new()
        .with_connect_timeout(op_timeout)
        .with_keep_alive(Duration::from_secs(1), op_timeout);
    etcd_client::Client::connect(endpoints, Some(opts))
        .await
        .map_err(|e| format!("etcd at {}: {e}", endpoints.join(",")))
}
