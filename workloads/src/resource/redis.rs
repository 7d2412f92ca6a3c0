//! `redis-fenced`: one Lua script compares the stored highest token with the write's and sets the
//! value only if the write is not stale. Redis runs a script atomically, so the compare and the
//! set cannot be split by another client. The script also returns the highest token it saw and
//! bumps a per-key decision counter (`store_order`), and in `strict-idempotent` keeps a set of
//! applied op_ids, and records `<attempt>:<result>` of the last decision for recovery (see
//! [`super::doubt`]). Tokens are stored zero-padded to 20 digits and compared as strings, because
//! Lua numbers are doubles and lose precision above 2^53.
//!
//! Keys carry a hash tag (`fc:{<key>}:...`) so that the script's keys share a cluster slot.

use futures::future::BoxFuture;
use redis::aio::ConnectionManager;
use redis::Script;
use results::WriteResult;

use super::etcd::pad;
use super::rule::{check_token, Decision, Mode};
use super::{Resource, ResourceError, WriteRequest};

const NAME: &str = "redis-fenced";

/// KEYS: value, fence, decision counter, applied set, last decision. ARGV: value, padded token
/// or "", op_id, mode, attempt.
/// Returns {result, highest before ("" = none), decision number}.
pub const SCRIPT: &str = r#"
local hb = redis.call('GET', KEYS[2])
local n = redis.call('INCR', KEYS[3])
local t, op, mode = ARGV[2], ARGV[3], ARGV[4]
local result = 'accepted'
if mode == 'strict-idempotent' and redis.call('SISMEMBER', KEYS[4], op) == 1 then
  result = 'rejected-duplicate'
elseif mode ~= 'none' and hb and t < hb then
  result = 'rejected-stale-fence'
end
if result == 'accepted' then
  redis.call('SET', KEYS[1], ARGV[1])
  if t ~= '' and ((not hb) or t > hb) then redis.call('SET', KEYS[2], t) end
  if mode == 'strict-idempotent' then redis.call('SADD', KEYS[4], op) end
end
redis.call('SET', KEYS[5], ARGV[5] .. ':' .. result)
return {result, hb or '', n}
"#;

pub struct RedisFenced {
    /// Reconnects by itself after Redis restarts (a write in flight then is in doubt).
    conn: ConnectionManager,
    script: Script,
    mode: Mode,
}

impl std::fmt::Debug for RedisFenced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisFenced")
            .field("mode", &self.mode)
            .finish()
    }
}

impl RedisFenced {
    /// Connects to `url` (`redis://host:port`).
    pub async fn connect(url: &str, mode: Mode) -> Result<Self, ResourceError> {
        let client = redis::Client::open(url)
            .map_err(|e| ResourceError::backend(NAME, format!("{url}: {e}")))?;
        let conn = client
            .get_connection_manager()
            .await
            .map_err(|e| ResourceError::backend(NAME, format!("connect {url}: {e}")))?;
        Ok(Self {
            conn,
            script: Script::new(SCRIPT),
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
            format!("script returned {other:?}"),
        )),
    }
}

impl Resource for RedisFenced {
    fn decide<'a>(
        &'a self,
        w: &'a WriteRequest,
        attempt: u64,
    ) -> BoxFuture<'a, Result<Decision, ResourceError>> {
        Box::pin(async move {
            check_token(self.mode, w.token).map_err(ResourceError::Invalid)?;
            let k = |part: &str| format!("fc:{{{}}}:{part}", w.key);
            let mut conn = self.conn.clone();
            let (result, hb, n): (String, String, i64) = self
                .script
                .key(k("value"))
                .key(k("fence"))
                .key(k("n"))
                .key(k("ops"))
                .key(k("last"))
                .arg(w.value.to_string())
                .arg(w.token.map(pad).unwrap_or_default())
                .arg(&w.op_id)
                .arg(self.mode.as_str())
                .arg(attempt)
                .invoke_async(&mut conn)
                .await
                .map_err(|e| ResourceError::backend(NAME, e))?;
            let highest_before = if hb.is_empty() {
                None
            } else {
                Some(hb.parse::<u64>().map_err(|_| {
                    ResourceError::backend(NAME, format!("fence {hb:?} is not a token"))
                })?)
            };
            Ok(Decision {
                result: parse_result(&result)?,
                highest_before,
                store_order: Some(n as u64),
            })
        })
    }

    /// The script sets `last = <attempt>:<result>` with every decision.
    fn resolve<'a>(
        &'a self,
        w: &'a WriteRequest,
        attempt: u64,
    ) -> BoxFuture<'a, Result<Option<WriteResult>, ResourceError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let last: Option<String> = redis::cmd("GET")
                .arg(format!("fc:{{{}}}:last", w.key))
                .query_async(&mut conn)
                .await
                .map_err(|e| ResourceError::backend(NAME, e))?;
            match last.as_deref().and_then(|l| l.split_once(':')) {
                Some((a, result)) if a == attempt.to_string() => parse_result(result).map(Some),
                _ => Ok(None),
            }
        })
    }

    fn name(&self) -> &'static str {
        NAME
    }
}
