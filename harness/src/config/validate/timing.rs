//! How long everything lasts: the lease (ttl) and its renewal, the timeouts, the recipe's own
//! rules about them (etcd leases are whole seconds), the time limit, the work a holder does
//! and the recovery window after the final heal.

use super::{err, ConfigError, DEFAULT_TIME_LIMIT};
use crate::config::duration::Dur;
use crate::config::plan::RecipeKind;
use crate::config::raw::RawTest;
use workloads::app::{App, HoldLength};
use workloads::config::{ConfigError as RecipeError, RawRecipeConfig, RecipeConfig};

/// The validated durations of a test.
#[derive(Debug, Clone)]
pub struct Timing {
    pub ttl: Dur,
    /// The lock client's timing, validated by the recipe's own rules: kept whole, it is what
    /// every worker is launched with.
    pub client: RecipeConfig,
    pub time_limit: Dur,
    pub work: Dur,
    pub recovery_slack: Dur,
    pub recovery: Dur,
}

pub fn timing(raw: &RawTest, recipe: RecipeKind, app: App) -> Result<Timing, ConfigError> {
    let ttl = raw.ttl.unwrap_or(Dur::secs(2));
    if ttl.get().is_zero() {
        return Err(err(
            "ttl",
            "ttl 0 means the lock is never held; use e.g. 2s",
        ));
    }
    if ttl.get().as_millis() < 100 {
        return Err(err(
            "ttl",
            format!("ttl {ttl} is below what any provider honours; use at least 100ms"),
        ));
    }
    let a_third = Dur::from_millis((ttl.get().as_millis() / 3) as u64);
    let renew_interval = raw.renew_interval.unwrap_or(a_third);
    if renew_interval.get() * 2 >= ttl.get() || renew_interval.get().is_zero() {
        return Err(err(
            "renew_interval",
            format!(
                "renew interval {renew_interval} must be positive and under half the ttl ({ttl}); use at most {a_third}"
            ),
        ));
    }
    let session_timeout = raw.session_timeout.unwrap_or(ttl);
    let default_op_timeout = Dur((ttl.get() / 2).min(std::time::Duration::from_secs(2)));
    let op_timeout = raw.op_timeout.unwrap_or(default_op_timeout);
    if op_timeout.get().is_zero() || op_timeout.get() >= ttl.get() {
        return Err(err(
            "op_timeout",
            format!(
                "operation timeout {op_timeout} must be positive and under the ttl ({ttl}): a request that may outlive its lease cannot be trusted; use e.g. {default_op_timeout}"
            ),
        ));
    }
    let acquire_timeout = raw.acquire_timeout;
    if acquire_timeout.is_some_and(|d| d.get().is_zero()) {
        return Err(err(
            "acquire_timeout",
            "an acquire timeout of 0 never waits for the lock; use e.g. 1s",
        ));
    }
    // The recipe's own rules (etcd leases are whole seconds, ...), checked here so that a worker
    // never refuses its launch after the containers started.
    let client = RawRecipeConfig {
        ttl: Some(ttl.get()),
        renew_interval: Some(renew_interval.get()),
        session_timeout: Some(session_timeout.get()),
        op_timeout: Some(op_timeout.get()),
        acquire_timeout: acquire_timeout.map(Dur::get),
    }
    .validate(recipe)
    .map_err(|e| match e {
        RecipeError::Invalid { field, rule, got } => {
            err(field, format!("{rule} (got {got}) for recipe {recipe}"))
        }
    })?;
    let time_limit = raw.time_limit.unwrap_or(DEFAULT_TIME_LIMIT);
    if time_limit.get().is_zero() {
        return Err(err(
            "time_limit",
            "a time limit of 0 runs nothing; use e.g. 60s",
        ));
    }
    // A short critical section works a quarter of the lease; a job several leases, so that it
    // lives on the library's renewal.
    let work = raw.work.unwrap_or(match app.hold() {
        HoldLength::Short => Dur::from_millis((ttl.get().as_millis() / 4) as u64),
        HoldLength::Job => Dur(ttl.get() * 3),
    });
    let recovery_slack = raw
        .recovery_slack
        .unwrap_or(results::store::DEFAULT_RECOVERY_SLACK);
    let recovery = raw
        .recovery
        .unwrap_or(Dur(ttl.get() * 2 + recovery_slack.get()));
    Ok(Timing {
        ttl,
        client,
        time_limit,
        work,
        recovery_slack,
        recovery,
    })
}
