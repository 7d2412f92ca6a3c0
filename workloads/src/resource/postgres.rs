//! `postgres`: the fenced write as a PostgreSQL user would write it — one transaction that moves
//! the highest token only forward (`UPDATE ... SET fence_token = t WHERE key = k AND fence_token
//! <= t`, zero rows = stale) and records the effect in the same transaction (a per-key decision
//! counter, a ledger row, and in `strict-idempotent` the applied op_id).
//!
//! The transaction is a PL/pgSQL function so that one write is one round trip: a function call
//! is one statement, and one statement is one transaction. It first takes the key's row lock
//! (`SELECT ... FOR UPDATE`), which makes `highest_before` exactly the value the UPDATE compares
//! against and gives every decision on a key its number `n` (reported as `store_order`; the
//! ledger `fence_ledger(key, n, ...)` is PostgreSQL's own record of the order it decided in).
//! The ledger also keeps each decision's `attempt`, so that a decision whose reply was lost can
//! be recovered (see [`super::doubt`]).

use crate::pg::Reconnecting;
use futures::future::BoxFuture;
use results::WriteResult;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::rule::{check_token, Decision, Mode};
use super::{Resource, ResourceError, WriteRequest};

const NAME: &str = "postgres";

/// Tables and the decision function; idempotent, run by every server at start.
pub const SCHEMA: &str = r#"
BEGIN;
SELECT pg_advisory_xact_lock(5541);
CREATE TABLE IF NOT EXISTS fence_resource (
    key text PRIMARY KEY,
    value jsonb,
    fence_token bigint NOT NULL DEFAULT -1,
    decisions bigint NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS fence_ledger (
    key text NOT NULL,
    n bigint NOT NULL,
    op_id text NOT NULL,
    token bigint,
    result text NOT NULL,
    highest_before bigint,
    PRIMARY KEY (key, n)
);
ALTER TABLE fence_ledger ADD COLUMN IF NOT EXISTS attempt bigint;
CREATE TABLE IF NOT EXISTS fence_applied (key text NOT NULL, op_id text NOT NULL, PRIMARY KEY (key, op_id));
CREATE OR REPLACE FUNCTION fence_write(k text, v jsonb, t bigint, op text, mode text, a bigint,
                                       OUT o_result text, OUT o_highest bigint, OUT o_n bigint)
LANGUAGE plpgsql AS $$
DECLARE
    updated int;
BEGIN
    INSERT INTO fence_resource (key) VALUES (k) ON CONFLICT (key) DO NOTHING;
    SELECT NULLIF(r.fence_token, -1), r.decisions + 1 INTO o_highest, o_n
        FROM fence_resource r WHERE r.key = k FOR UPDATE;
    IF mode = 'strict-idempotent'
       AND EXISTS (SELECT 1 FROM fence_applied a WHERE a.key = k AND a.op_id = op) THEN
        o_result := 'rejected-duplicate';
    ELSIF mode = 'none' THEN
        UPDATE fence_resource SET value = v, fence_token = GREATEST(fence_token, COALESCE(t, -1))
            WHERE key = k;
        o_result := 'accepted';
    ELSE
        UPDATE fence_resource SET value = v, fence_token = t WHERE key = k AND fence_token <= t;
        GET DIAGNOSTICS updated = ROW_COUNT;
        o_result := CASE WHEN updated = 1 THEN 'accepted' ELSE 'rejected-stale-fence' END;
    END IF;
    UPDATE fence_resource SET decisions = o_n WHERE key = k;
    INSERT INTO fence_ledger (key, n, op_id, token, result, highest_before, attempt)
        VALUES (k, o_n, op, t, o_result, o_highest, a);
    IF o_result = 'accepted' AND mode = 'strict-idempotent' THEN
        INSERT INTO fence_applied VALUES (k, op);
    END IF;
END
$$;
COMMIT;
"#;

/// A few connections used round-robin; each call is one statement, pipelined by the driver.
/// A connection PostgreSQL closed (a restart, a partition that broke it) is opened again for
/// the next write; a write in flight on it fails, and the server resolves it from the ledger.
pub struct Postgres {
    clients: Vec<Reconnecting>,
    next: AtomicUsize,
    mode: Mode,
}

impl std::fmt::Debug for Postgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Postgres")
            .field("connections", &self.clients.len())
            .field("mode", &self.mode)
            .finish()
    }
}

impl Postgres {
    /// Connects `connections` times with a libpq-style string (`host=.. port=.. user=..`, or a
    /// `postgresql://` URL) and installs the schema.
    pub async fn connect(
        config: &str,
        connections: usize,
        mode: Mode,
    ) -> Result<Self, ResourceError> {
        let mut clients = Vec::new();
        for _ in 0..connections.max(1) {
            let conn = Reconnecting::connect(config, "")
                .await
                .map_err(|e| ResourceError::backend(NAME, e))?;
            clients.push(conn);
        }
        clients[0]
            .client()
            .await
            .map_err(|e| ResourceError::backend(NAME, e))?
            .batch_execute(SCHEMA)
            .await
            .map_err(|e| ResourceError::backend(NAME, format!("installing the schema: {e}")))?;
        Ok(Self {
            clients,
            next: AtomicUsize::new(0),
            mode,
        })
    }
}

fn parse_result(s: &str) -> Result<WriteResult, ResourceError> {
    match s {
        "accepted" => Ok(WriteResult::Accepted),
        "rejected-stale-fence" => Ok(WriteResult::RejectedStaleFence),
        "rejected-duplicate" => Ok(WriteResult::RejectedDuplicate),
        other => Err(ResourceError::backend(
            NAME,
            format!("fence_write returned {other:?}"),
        )),
    }
}

impl Resource for Postgres {
    fn decide<'a>(
        &'a self,
        w: &'a WriteRequest,
        attempt: u64,
    ) -> BoxFuture<'a, Result<Decision, ResourceError>> {
        Box::pin(async move {
            check_token(self.mode, w.token).map_err(ResourceError::Invalid)?;
            let token = w
                .token
                .map(|t| {
                    i64::try_from(t).map_err(|_| {
                        ResourceError::Invalid(format!("token {t} exceeds PostgreSQL bigint"))
                    })
                })
                .transpose()?;
            let conn =
                &self.clients[self.next.fetch_add(1, Ordering::Relaxed) % self.clients.len()];
            let client = conn
                .client()
                .await
                .map_err(|e| ResourceError::backend(NAME, e))?;
            let row = client
                .query_one(
                    "SELECT o_result, o_highest, o_n FROM fence_write($1, $2::text::jsonb, $3, $4, $5, $6)",
                    &[
                        &w.key,
                        &w.value.to_string(),
                        &token,
                        &w.op_id,
                        &self.mode.as_str(),
                        &(attempt as i64),
                    ],
                )
                .await
                .map_err(|e| {
                    conn.failed(&client, &e);
                    ResourceError::backend(NAME, e)
                })?;
            let result = parse_result(row.get::<_, &str>(0))?;
            let highest_before = row.get::<_, Option<i64>>(1).map(|h| h as u64);
            Ok(Decision {
                result,
                highest_before,
                store_order: Some(row.get::<_, i64>(2) as u64),
            })
        })
    }

    /// Waits out a decision still in flight on the key (its transaction holds the row lock),
    /// then looks the attempt up in the ledger.
    fn resolve<'a>(
        &'a self,
        w: &'a WriteRequest,
        attempt: u64,
    ) -> BoxFuture<'a, Result<Option<WriteResult>, ResourceError>> {
        Box::pin(async move {
            let client = self.clients[0]
                .client()
                .await
                .map_err(|e| ResourceError::backend(NAME, e))?;
            client
                .query(
                    "SELECT 1 FROM fence_resource WHERE key = $1 FOR UPDATE",
                    &[&w.key],
                )
                .await
                .map_err(|e| ResourceError::backend(NAME, e))?;
            let row = client
                .query_opt(
                    "SELECT result FROM fence_ledger WHERE key = $1 AND attempt = $2 \
                     ORDER BY n DESC LIMIT 1",
                    &[&w.key, &(attempt as i64)],
                )
                .await
                .map_err(|e| ResourceError::backend(NAME, e))?;
            row.map(|r| parse_result(r.get::<_, &str>(0))).transpose()
        })
    }

    fn name(&self) -> &'static str {
        NAME
    }
}
