//! What a replay cannot express, said before anything is made: a replay is a few workers doing
//! acquire, write and release one step at a time against a real provider, with the worker and
//! service faults its vocabulary has. An anomaly that lives elsewhere (a counter's arithmetic
//! over many clients, a retried write's op_id, a bug planted in the in-process provider) is
//! refused with the reason, and `fencecheck reproduce` exits 3.

use super::Stored;
use results::{Anomaly, AnomalyKind};

/// Why no scenario is made (the message is the whole reason, with what to do instead).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

impl Refusal {
    pub fn new(why: impl Into<String>) -> Refusal {
        Refusal(why.into())
    }
}

/// Refuses what no replay can show, whatever its evidence says.
pub fn check(stored: &Stored, anomaly: &Anomaly) -> Result<(), Refusal> {
    let kind = anomaly.kind;
    match kind {
        AnomalyKind::LostUpdate => return Err(Refusal::new(
            "lost-update is judged over a counter workload: many clients' read-increment-write \
                 cycles against the final value. A replay's steps are one worker's acquire, write \
                 and release on the fenced resource, so it cannot express a lost increment; \
                 `fencecheck shrink` makes the run itself smaller instead",
        )),
        AnomalyKind::DuplicateEffect => {
            return Err(Refusal::new(
                "duplicate-effect is the resource accepting one op_id twice (a retried write). \
                 Every write of a replay carries a fresh op_id, so its steps cannot send the same \
                 one again; `fencecheck shrink` makes the run itself smaller instead",
            ))
        }
        AnomalyKind::GrantedGone => {
            return Err(Refusal::new(
                "granted-gone sets a client's grant against the lock service's own record of its \
                 key: the key deleted (its session expired) while the client waited in the queue. \
                 A replay cannot expire a waiting client's session at the service; re-run the \
                 run's test.yaml (same seed) instead",
            ))
        }
        AnomalyKind::PhantomHolder => {
            return Err(Refusal::new(
                "phantom-holder sets an acquire's answer against the lock service's own record: \
                 the request took the lock and its answer said otherwise. A replay cannot make a \
                 library's request land and its answer fail; write a replay with a \
                 `cut-acquire-reply` step by hand, or re-run the run's test.yaml (same seed)",
            ))
        }
        AnomalyKind::DeletedAnothersKey => {
            return Err(Refusal::new(
                "deleted-anothers-key is the lock service's own record of a release removing \
                 another holder's key; the history's side of it is double-release, which \
                 `reproduce` scripts where the history shows the harm. Re-run the run's test.yaml \
                 (same seed), or replay scenarios/redis-lock-del.yaml",
            ))
        }
        AnomalyKind::HeldAgainstService => {
            return Err(Refusal::new(
                "held-against-service is a client's held answer set against the lock service's \
                 own record of its key; its history side is held-after-loss where another grant \
                 shows it. Re-run the run's test.yaml (same seed), or replay \
                 scenarios/kazoo-belief-after-expiry.yaml",
            ))
        }
        AnomalyKind::TokenOutOfOrder => {
            return Err(Refusal::new(
                "token-out-of-order orders two grants by the lock service's own record, which a \
                 replay's one-step-at-a-time acquires cannot interleave as the run did; its \
                 history side is token-regression. Re-run the run's test.yaml (same seed)",
            ))
        }
        AnomalyKind::LockedOutClient => {
            return Err(Refusal::new(
                "locked-out-client is one worker's acquires failing over a window longer than \
                 ttl + slack while others are granted: a client that can no longer take the \
                 lock. A replay scripts each acquire one step at a time, so it cannot show a \
                 client wedged by what its library did before; re-run the run's test.yaml \
                 (same seed) instead",
            ))
        }
        AnomalyKind::StaleAcceptedWrite
        | AnomalyKind::DuplicateToken
        | AnomalyKind::TokenRegression
        | AnomalyKind::DoubleRelease
        | AnomalyKind::ReleaseOfLostLock
        | AnomalyKind::ConcurrentHolders
        | AnomalyKind::StuckLock
        | AnomalyKind::HeldAfterLoss => {}
    }
    let test = &stored.test;
    if test.workload.as_deref() == Some("counter") {
        return Err(Refusal::new(format!(
            "the run's workload is a counter; a replay writes to the fenced resource only, so \
             its {kind} cannot be replayed as steps"
        )));
    }
    if let (Some(client), Some(provider)) = (&test.client, &test.provider) {
        let name = client.split('@').next().unwrap_or_default();
        let own = crate::config::clients::shipped_adapter(name).map(|a| a.provider);
        if own.is_some_and(|p| p.as_str() != provider) {
            return Err(Refusal::new(format!(
                "the run drove {name} over its {provider} backend; a replay scenario runs a \
                 client on its adapter's first backend only, so it would not run the same client"
            )));
        }
    }
    if test.client_cmd.is_some() {
        return Err(Refusal::new(
            "the run's workers used your own adapter (client_cmd); a replay's actors use a recipe \
             or a shipped adapter (`client:`), so the scenario could not run the same client",
        ));
    }
    Ok(())
}
