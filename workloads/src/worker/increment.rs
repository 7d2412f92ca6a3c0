//! The worker's side of the counter workload: one increment (read → work → write back, gated by
//! the hold like a write, guarded when the store can guard) and a plain read, each turned into a
//! history-shaped [`Outcome`]: `ok` with the value, `fail` when certainly not applied (the gate
//! refused, the read failed, the guard rejected the write), `info` when the write may have landed.

use crate::client::{within, Completion};
use crate::counter::CounterError;
use crate::counter_guard::{Counter, Guard, Written};
use crate::ownership::{Tracker, WriteGate};
use crate::protocol::Outcome;
use results::{OpResult, OpType};
use std::sync::Arc;
use std::time::Duration;

const NO_STORE: &str = "not sent: this worker has no counter store (start it with --counter-store)";

fn attempt<T>(r: Result<T, CounterError>) -> Completion<T> {
    match r {
        Ok(v) => Completion::Ok(v),
        Err(e) if e.may_have_applied() => Completion::info(e),
        Err(e) => Completion::fail(e),
    }
}

/// Reads, works for `work`, writes the value read plus one.
pub(super) async fn increment(
    counter: Option<&Arc<dyn Counter>>,
    hold: Option<&Tracker>,
    op_timeout: Duration,
    key: &str,
    work: Duration,
) -> Outcome {
    let Some(counter) = counter else {
        return Outcome::with_error(OpType::Fail, NO_STORE);
    };
    let Some(t) = hold else {
        return Outcome::with_error(OpType::Fail, "not sent: no hold");
    };
    if let WriteGate::Refuse(why) = t.gate_write().await {
        return Outcome::with_error(OpType::Fail, why);
    }
    let guard = Guard {
        lock_key: t.hold().lock_key.clone(),
        token: t.hold().token,
    };
    // A read changes nothing: whatever goes wrong with it, the increment certainly did not apply.
    let read = match within(op_timeout, "counter read", async {
        attempt(counter.read(key).await)
    })
    .await
    {
        Completion::Ok(v) => v,
        Completion::Fail(e) | Completion::Info(e) | Completion::Exception(e) => {
            return Outcome::with_error(OpType::Fail, format!("not written: {e}"))
        }
    };
    tokio::time::sleep(work).await;
    // The same check a careful client makes before it writes (still racy: that is the point).
    if let WriteGate::Refuse(why) = t.gate_write().await {
        return Outcome::with_error(OpType::Fail, format!("read {read}, then {why}"));
    }
    let wrote = read + 1;
    match within(op_timeout, "counter write", async {
        attempt(counter.write(key, wrote, &guard).await)
    })
    .await
    .into_result()
    {
        Ok(Written::Applied) => Outcome {
            result: Some(OpResult::Accepted),
            value: Some(wrote),
            ..Outcome::bare(OpType::Ok)
        },
        Ok(Written::Rejected) => Outcome {
            result: Some(OpResult::RejectedStaleFence),
            error: Some(format!(
                "{}: the lock key {} no longer has create revision {}",
                counter.name(),
                guard.lock_key.as_deref().unwrap_or("?"),
                guard.token.map_or("?".into(), |t| t.to_string())
            )),
            ..Outcome::bare(OpType::Fail)
        },
        Err(not_ok) => not_ok.into(),
    }
}

/// Reads the counter; a failed read is `fail` (reads change nothing).
pub(super) async fn read(
    counter: Option<&Arc<dyn Counter>>,
    op_timeout: Duration,
    key: &str,
) -> Outcome {
    let Some(counter) = counter else {
        return Outcome::with_error(OpType::Fail, NO_STORE);
    };
    match within(op_timeout, "counter read", async {
        attempt(counter.read(key).await)
    })
    .await
    {
        Completion::Ok(v) => Outcome {
            value: Some(v),
            ..Outcome::bare(OpType::Ok)
        },
        Completion::Fail(e) | Completion::Info(e) | Completion::Exception(e) => {
            Outcome::with_error(OpType::Fail, e)
        }
    }
}
