//! Raw test → validated [`TestPlan`] (ripgrep's LowArgs → HiArgs): each concern in its own
//! file turns its raw fields into typed pieces, in an order where later pieces may depend on
//! earlier ones (the recipe's rules need the ttl, the faults need the provider and the time
//! limit). Every rejection names the field and says what to write instead; nothing downstream
//! checks again.
//!
//! - [`lock`]: provider and lock client (recipe or adapter), with [`pins`]: the `with` pins of
//!   its library's dependencies;
//! - [`timing`]: ttl, renewal, timeouts, time limit, work, recovery;
//! - [`writes`]: resource, workload and counter store, writes per hold;
//! - [`faults`]: the drawn faults or the explicit schedule, as the nemesis plan;
//! - [`naming`]: test name, lock name, discipline, application profile, `fail_on`, planted bugs.

mod faults;
mod lock;
mod naming;
mod pins;
mod timing;
mod writes;

#[cfg(test)]
mod tests;

use super::plan::TestPlan;
use super::raw::RawTest;
use containers::image::version::Holder;
use results::fault::{Mechanism, Shaping};
use results::persistence::Persistence;
use results::Provider;

/// A rejected test description.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// The YAML key / flag at fault.
    pub field: String,
    pub message: String,
}

pub(super) fn err(field: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        field: field.to_string(),
        message: message.into(),
    }
}

/// The Redis servers' persistence: only a provider whose lock servers are Redis takes one.
/// `cut_reply_to`: a command of the provider's protocol, where the link proxy can read it (RESP,
/// ZooKeeper's frames); ZooKeeper's operations by their names, in any case.
pub fn cut_reply_to(
    given: Option<&str>,
    provider: Provider,
) -> Result<Option<String>, ConfigError> {
    let Some(given) = given else {
        return Ok(None);
    };
    let field = |why: String| err("cut_reply_to", why);
    match provider {
        Provider::Redis | Provider::Redlock | Provider::RedisSentinel => {
            if given.is_empty()
                || !given
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'.')
            {
                return Err(field(format!(
                    "{given:?} is not a Redis command: write one such as EVALSHA, SET or DEL"
                )));
            }
            Ok(Some(given.to_ascii_uppercase()))
        }
        Provider::Zookeeper => {
            let ops = workloads::proxy::frames::ZK_OPS;
            match ops.iter().find(|(n, _)| n.eq_ignore_ascii_case(given)) {
                Some((name, _)) => Ok(Some(name.to_string())),
                None => Err(field(format!(
                    "{given:?} is not a ZooKeeper operation: use one of {}",
                    ops.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                ))),
            }
        }
        other => Err(field(format!(
            "{other} is not read by command (the link proxy reads RESP and ZooKeeper's frames; \
             a cut there is of the next reply): leave cut_reply_to out"
        ))),
    }
}

fn persistence(raw: &RawTest, provider: Provider) -> Result<Persistence, ConfigError> {
    let Some(given) = &raw.persistence else {
        return Ok(Persistence::None);
    };
    let p: Persistence = given
        .parse()
        .map_err(|e: results::persistence::UnknownPersistence| err("persistence", e.to_string()))?;
    if !provider.takes_persistence() {
        return Err(err(
            "persistence",
            format!(
                "sets how Redis servers persist; {provider}'s servers are not Redis (give \
                 provider: redis, redlock or redis-sentinel)"
            ),
        ));
    }
    Ok(p)
}

/// How long a test's workload runs when it names no time limit.
pub const DEFAULT_TIME_LIMIT: super::Dur = super::Dur(std::time::Duration::from_secs(60));

/// Validates a raw test (file overlaid with flags) into a plan. `random_seed` is used when the
/// test names no seed (the caller draws it, so validation itself stays deterministic).
pub fn validate(raw: RawTest, random_seed: u64) -> Result<TestPlan, ConfigError> {
    let seed = raw.seed.unwrap_or(random_seed);
    let (provider, client) = lock::provider_and_client(&raw)?;
    let app = naming::app(&raw)?;
    let timing = timing::timing(&raw, client.rules(), app)?;
    let (resource, workload, writes_per_hold) = writes::writes(&raw, provider, &client, app)?;
    let faults = faults::faults(&raw, provider, workload, &timing, seed)?;
    faults::refuse_unreachable_clock(&faults, &client)?;
    let names = naming::naming(&raw, provider, &client, resource, &faults, app)?;
    let persistence = persistence(&raw, provider)?;
    let cut_reply_to = cut_reply_to(raw.cut_reply_to.as_deref(), provider)?;
    let cuts = faults
        .plan
        .steps
        .iter()
        .any(|s| s.fault.mechanism() == Mechanism::Link(Shaping::CutReply));
    if cut_reply_to.is_some() && !cuts {
        return Err(err(
            "cut_reply_to",
            "it names the reply a cut-acquire-reply, cut-release-reply or cut-renew-reply fault \
             strikes, and this test's plan has none",
        ));
    }
    // A PyPI release's image is known only once its wheels are fetched: the run prepares it
    // (`run::release::prepare`) before any container starts.
    let client_image = (client.needs_client_image() && !client.image_made_at_start()).then(|| {
        raw.client_image
            .clone()
            .unwrap_or_else(containers::image::client_image_tag)
    });
    match (&raw.client_image, client.built_release()) {
        (Some(_), Some((Holder::Shipped(name), _))) => {
            return Err(err(
                "client_image",
                format!(
                    "runs the adapter in an image of yours, with its python3: name \
                     client: {name}@debian with it, or drop client_image to run a PyPI release"
                ),
            ))
        }
        (Some(_), _) if client.crate_release().is_some() => {
            return Err(err(
                "client_image",
                "a Rust adapter runs in the image of its crate's release, built here: drop \
                 client_image",
            ))
        }
        (Some(_), _) if client.own_crate().is_some() => {
            return Err(err(
                "client_image",
                "your adapter folder's Cargo.toml builds its own image: drop one of the two",
            ))
        }
        (Some(_), Some((Holder::Own, _))) => {
            return Err(err(
                "client_image",
                "your adapter folder's requirements.txt builds its own image: drop one of the two",
            ))
        }
        _ => {}
    }
    if raw.client_image.is_some() && client_image.is_none() {
        return Err(err(
            "client_image",
            "is the image adapter workers run in: give client or client_cmd too",
        ));
    }
    Ok(TestPlan {
        name: names.name,
        provider,
        client,
        resource,
        workload,
        workers: lock::workers(&raw)?,
        client_timing: timing.client,
        discipline: names.discipline,
        app,
        time_limit: timing.time_limit,
        work: timing.work,
        writes_per_hold,
        lock: names.lock,
        seed,
        fail_on: names.fail_on,
        recovery_slack: timing.recovery_slack,
        recovery: timing.recovery,
        image: raw.image.unwrap_or_else(containers::image::node_image_tag),
        client_image,
        memory_bugs: names.memory_bugs,
        docker_slot: None,
        fake_clocks: faults.plan.steps.iter().any(|s| s.fault.is_clock()),
        fake_client_clocks: faults.plan.steps.iter().any(|s| s.fault.is_client_clock()),
        persistence,
        cut_reply_to,
        link_proxy: faults.plan.steps.iter().any(|s| s.fault.is_link()),
        empties_data: faults
            .plan
            .steps
            .iter()
            .any(|s| s.fault.mechanism() == nemesis::fault::Mechanism::KillEmpty),
        faults,
    })
}
