//! A PostgreSQL connection that is opened again once the server has closed it. A restarted
//! PostgreSQL, a terminated backend or a partition long enough to break the socket leaves a
//! `tokio_postgres::Client` closed for good: without a new connection every later write of the
//! run failed. The counter store and the `postgres` resource both use this.
//!
//! The client is shared (`Arc`), not locked across a query, so concurrent statements still
//! pipeline on one connection. A statement sent on a connection that then closed fails, and its
//! caller decides what that means (the resource treats the write as in doubt); the *next*
//! statement gets a fresh connection (callers report the failure with [`Reconnecting::failed`]).

use std::sync::{Arc, Mutex, PoisonError};
use tokio_postgres::{Client, NoTls};

/// One connection (see the module doc).
#[derive(Debug)]
pub struct Reconnecting {
    target: String,
    /// Run on every new connection before it is used (e.g. `CREATE TABLE IF NOT EXISTS`).
    setup: &'static str,
    client: Mutex<Option<Arc<Client>>>,
}

impl Reconnecting {
    /// Connects now, so a wrong target fails at start, not at the first statement.
    pub async fn connect(target: &str, setup: &'static str) -> Result<Reconnecting, String> {
        let client = open(target, setup).await?;
        Ok(Reconnecting {
            target: target.to_string(),
            setup,
            client: Mutex::new(Some(Arc::new(client))),
        })
    }

    /// The open connection, or a new one if the server closed it.
    pub async fn client(&self) -> Result<Arc<Client>, String> {
        if let Some(c) = self.current().filter(|c| !c.is_closed()) {
            return Ok(c);
        }
        let fresh = Arc::new(open(&self.target, self.setup).await?);
        let mut slot = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        // Another task may have reconnected meanwhile: keep its connection, drop ours.
        match slot.as_ref().filter(|c| !c.is_closed()) {
            Some(c) => Ok(c.clone()),
            None => {
                *slot = Some(fresh.clone());
                Ok(fresh)
            }
        }
    }

    /// A statement on `client` failed with `e`. When `e` ends the connection (it closed, or the
    /// server terminated or is shutting down its backend: SQLSTATE class 57), the next statement
    /// opens a new one at once, without waiting for the connection's task to notice — under
    /// load it noticed late, and every statement until then failed too.
    pub fn failed(&self, client: &Arc<Client>, e: &tokio_postgres::Error) {
        let fatal = e.is_closed() || e.code().is_some_and(|c| c.code().starts_with("57"));
        if !fatal {
            return;
        }
        let mut slot = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.as_ref().is_some_and(|c| Arc::ptr_eq(c, client)) {
            *slot = None;
        }
    }

    fn current(&self) -> Option<Arc<Client>> {
        self.client
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

async fn open(target: &str, setup: &str) -> Result<Client, String> {
    let (client, conn) = tokio_postgres::connect(target, NoTls)
        .await
        .map_err(|e| format!("connect {target:?}: {e}"))?;
    tokio::spawn(conn);
    if !setup.is_empty() {
        client
            .batch_execute(setup)
            .await
            .map_err(|e| format!("setting up the connection: {e}"))?;
    }
    Ok(client)
}
