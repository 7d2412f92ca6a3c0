//! `pg-advisory`: the PostgreSQL advisory lock as teams use it, fencecheck's baseline for the
//! lock many applications already have. A session-level `pg_try_advisory_lock` on a connection
//! of the worker's own, polled until granted; in the same statement, a `nextval` of one
//! sequence is the fence token. That token is sound: holds of one key are exclusive on the
//! server, and each holder draws its value inside its hold, so a later grant draws a larger one.
//!
//! There is no lease: the lock lasts as long as the session, which the server ends only when
//! the connection closes (or TCP keep-alive gives up, after hours by default). So a paused
//! holder keeps the lock (nobody else is granted it), while a holder cut off from the server
//! leaves it held until the server notices: the faults show what that costs. Renew asks
//! `pg_locks` whether this session still holds the key; release is `pg_advisory_unlock`,
//! which answers false for a key the session does not hold. Abandoning a hold closes the
//! session, as a crashed client's socket would.

use crate::client::{within, Client, Completion, Grant, NOT_OWNER};
use crate::config::RecipeConfig;
use futures::future::BoxFuture;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio_postgres::{Client as Session, NoTls};

const WAIT_STEP: Duration = Duration::from_millis(10);

/// Creates the token sequence; run by every worker at its first connection (two at once may
/// both try, and the loser's error is harmless: see [`setup`]).
const SETUP: &str = "CREATE SEQUENCE IF NOT EXISTS fencecheck_fence";

/// Takes the lock if free, and draws the token in the same statement: 0 when not granted.
const TRY_LOCK: &str = "SELECT CASE WHEN pg_try_advisory_lock(hashtextextended($1, 0)) \
                        THEN nextval('fencecheck_fence') ELSE 0 END";

/// Whether this session still holds the key (a 64-bit advisory key is classid:objid in
/// pg_locks, objsubid 1).
const STILL_HELD: &str = "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' \
                          AND pid = pg_backend_pid() AND granted AND objsubid = 1 \
                          AND ((classid::bigint << 32) | objid::bigint) = \
                          hashtextextended($1, 0))";

const UNLOCK: &str = "SELECT pg_advisory_unlock(hashtextextended($1, 0))";

/// One worker's session: opened by an acquire when there is none, closed on abandon.
pub struct PgAdvisory {
    target: String,
    owner: String,
    cfg: RecipeConfig,
    session: Mutex<Option<Open>>,
}

/// An open session and the task that drives its connection (aborted to close the socket).
#[derive(Clone)]
struct Open {
    client: Arc<Session>,
    pid: i32,
    driver: Arc<tokio::task::JoinHandle<()>>,
}

impl PgAdvisory {
    /// A client of the server at `endpoint` (`host:port`); the session opens at the first
    /// acquire, so a worker that never acquires holds no connection.
    pub fn new(endpoint: &str, owner: &str, cfg: RecipeConfig) -> Result<PgAdvisory, String> {
        let (host, port) = endpoint
            .rsplit_once(':')
            .ok_or_else(|| format!("recipe pg-advisory: endpoint {endpoint:?} is not host:port"))?;
        Ok(PgAdvisory {
            target: format!("host={host} port={port} user=postgres dbname=postgres"),
            owner: owner.to_string(),
            cfg,
            session: Mutex::new(None),
        })
    }

    fn current(&self) -> Option<Open> {
        self.session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .filter(|s| !s.client.is_closed())
    }

    /// The open session, or a new one (only an acquire may open one: a new session holds
    /// nothing, so renew and release must ask the old one).
    async fn session(&self) -> Completion<Open> {
        if let Some(s) = self.current() {
            return Completion::Ok(s);
        }
        let opened = within(self.cfg.op_timeout, "connect", async {
            match tokio_postgres::connect(&self.target, NoTls).await {
                Ok((client, conn)) => {
                    let driver = tokio::spawn(async move {
                        let _ = conn.await;
                    });
                    Completion::Ok((client, driver))
                }
                Err(e) => Completion::fail(format!("connect: {e}")),
            }
        })
        .await;
        let (client, driver) = match opened {
            Completion::Ok(c) => c,
            Completion::Fail(e) | Completion::Info(e) | Completion::Exception(e) => {
                return Completion::fail(e)
            }
        };
        let setup = within(self.cfg.op_timeout, "session setup", async {
            match setup(&client).await {
                Ok(pid) => Completion::Ok(pid),
                Err(e) => Completion::fail(e),
            }
        })
        .await;
        let pid = match setup {
            Completion::Ok(pid) => pid,
            Completion::Fail(e) | Completion::Info(e) | Completion::Exception(e) => {
                driver.abort();
                return Completion::fail(e);
            }
        };
        let open = Open {
            client: Arc::new(client),
            pid,
            driver: Arc::new(driver),
        };
        *self.session.lock().unwrap_or_else(PoisonError::into_inner) = Some(open.clone());
        Completion::Ok(open)
    }

    /// Closes the session: the server frees its locks once it sees the socket close.
    fn close(&self) {
        if let Some(s) = self
            .session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            s.driver.abort();
        }
    }

    /// One statement answering one value, within the operation timeout.
    async fn one<T>(&self, s: &Open, what: &str, sql: &str, lock: &str) -> Completion<T>
    where
        T: for<'r> tokio_postgres::types::FromSql<'r>,
    {
        within(self.cfg.op_timeout, what, async {
            match s.client.query_one(sql, &[&lock]).await {
                Ok(row) => match row.try_get::<_, T>(0) {
                    Ok(v) => Completion::Ok(v),
                    Err(e) => Completion::exception(format!("{what}: {e}")),
                },
                Err(e) if e.is_closed() => Completion::info(format!("{what}: connection closed")),
                Err(e) => Completion::info(format!("{what}: {}", described(&e))),
            }
        })
        .await
    }
}

/// Creates the sequence (a concurrent creation's duplicate error is fine) and asks the
/// backend's process id, which names the session in the lease.
async fn setup(client: &Session) -> Result<i32, String> {
    if let Err(e) = client.batch_execute(SETUP).await {
        let duplicate = e
            .code()
            .is_some_and(|c| c.code() == "23505" || c.code() == "42P07");
        if !duplicate {
            return Err(format!("creating the token sequence: {}", described(&e)));
        }
    }
    client
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .map(|r| r.get(0))
        .map_err(|e| format!("pg_backend_pid(): {}", described(&e)))
}

/// tokio-postgres prints only "db error"; the server's message is in the source.
fn described(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => e.to_string(),
    }
}

impl Client for PgAdvisory {
    fn acquire<'a>(&'a self, lock: &'a str) -> BoxFuture<'a, Completion<Grant>> {
        Box::pin(async move {
            let deadline = Instant::now() + self.cfg.acquire_timeout;
            loop {
                let session = match self.session().await {
                    Completion::Ok(s) => s,
                    // Not connected: nothing was asked of the server.
                    Completion::Fail(e) | Completion::Info(e) | Completion::Exception(e) => {
                        return Completion::Fail(e)
                    }
                };
                let sent = Instant::now();
                match self
                    .one::<i64>(&session, "pg_try_advisory_lock", TRY_LOCK, lock)
                    .await
                {
                    Completion::Ok(0) => {}
                    Completion::Ok(token) => {
                        return Completion::Ok(Grant {
                            lock: lock.to_string(),
                            owner: self.owner.clone(),
                            lease: format!("pid {} key {lock}", session.pid),
                            lock_key: None,
                            read_back: None,
                            token: Some(token as u64),
                            // No lease: the session holds it while the server keeps the
                            // session; renew confirms it every renew interval.
                            valid_until: sent + self.cfg.ttl,
                        });
                    }
                    // The statement may have run: this session may hold the key.
                    Completion::Fail(e) | Completion::Info(e) => return Completion::Info(e),
                    Completion::Exception(e) => return Completion::Exception(e),
                }
                if Instant::now() >= deadline {
                    return Completion::fail("acquire timeout: another session held the key");
                }
                tokio::time::sleep(WAIT_STEP).await;
            }
        })
    }

    fn renew<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<Duration>> {
        Box::pin(async move {
            let Some(session) = self.current() else {
                return Completion::fail("the session that held the key is closed");
            };
            match self
                .one::<bool>(&session, "pg_locks", STILL_HELD, &hold.lock)
                .await
            {
                Completion::Ok(true) => Completion::Ok(self.cfg.ttl),
                Completion::Ok(false) => Completion::fail("the session no longer holds the key"),
                other => other.map(|_| Duration::ZERO),
            }
        })
    }

    fn release<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<()>> {
        Box::pin(async move {
            let Some(session) = self.current() else {
                return Completion::info("the session that held the key is closed");
            };
            match self
                .one::<bool>(&session, "pg_advisory_unlock", UNLOCK, &hold.lock)
                .await
            {
                Completion::Ok(true) => Completion::Ok(()),
                Completion::Ok(false) => Completion::fail(NOT_OWNER),
                other => other.map(|_| ()),
            }
        })
    }

    fn abandon(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move { self.close() })
    }
}
