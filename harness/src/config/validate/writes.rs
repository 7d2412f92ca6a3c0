//! Where the writes go: the protected resource, or the counter workload's store, and how many
//! writes a holder makes. A combination that cannot work (a tokenless recipe against a resource
//! that decides by token, a store bound to another provider) is refused here, naming what fits.

use super::{err, ConfigError};
use crate::config::clients::LockClient;
use crate::config::plan::{CounterStore, Provider, ResourceKind, Workload};
use crate::config::raw::RawTest;
use workloads::app::{App, HoldLength};

pub fn writes(
    raw: &RawTest,
    provider: Provider,
    client: &LockClient,
    app: App,
) -> Result<(ResourceKind, Workload, u32), ConfigError> {
    let resource = match raw.resource.as_deref() {
        Some(r) => r
            .parse::<ResourceKind>()
            .map_err(|e| err("resource", e.to_string()))?,
        None => ResourceKind::Strict,
    };
    if let Some(bound) = resource.bound_to().filter(|p| *p != provider) {
        return Err(err(
            "resource",
            format!(
                "{resource} guards writes with the {bound} lock key's revision, so it needs provider {bound}, not {provider}"
            ),
        ));
    }
    if provider == Provider::Memory && !resource.in_process() {
        return Err(err(
            "resource",
            "the memory provider writes to an in-process register: use strict or none",
        ));
    }
    let workload = workload(raw, provider)?;
    // A resource that compares tokens refuses every write of a recipe that has none: such a run
    // would record refusals, not a test. (A user's adapter says at its handshake; its worker
    // refuses to start then.)
    let tokenless = client.has_token() == Some(false);
    if workload == Workload::FencedWrite && tokenless && resource.needs_token() {
        let fitting: Vec<&str> = ResourceKind::ALL
            .into_iter()
            .filter(|r| !r.needs_token())
            .map(ResourceKind::as_str)
            .collect();
        return Err(err(
            "resource",
            format!(
                "{} {} hands out no fence token, and resource {resource} decides writes by \
                 their token: it would refuse every write. Use resource {} (stale writes are then \
                 judged by grant order), or a client with a token",
                kind_of(client),
                client.name(),
                fitting.join(" or ")
            ),
        ));
    }
    if workload == Workload::Counter(CounterStore::EtcdGuard) && client.adapter().is_some() {
        return Err(err(
            "counter_store",
            "etcd-guard guards increments with the lock key's revision, which only \
             fencecheck's etcd recipes expose: use counter_store redis or postgres with an adapter",
        ));
    }
    // A job writes as it goes: a write after each quarter of its work.
    let writes_per_hold = raw.writes_per_hold.unwrap_or(match app.hold() {
        HoldLength::Short => 1,
        HoldLength::Job => 4,
    });
    if !(1..=100).contains(&writes_per_hold) {
        return Err(err("writes_per_hold", "use 1 to 100 writes per hold"));
    }
    Ok((resource, workload, writes_per_hold))
}

fn workload(raw: &RawTest, provider: Provider) -> Result<Workload, ConfigError> {
    let counter = match raw.workload.as_deref().unwrap_or("fenced-write") {
        "fenced-write" => false,
        "counter" => true,
        w => {
            return Err(err(
                "workload",
                format!("unknown workload {w:?}; use fenced-write or counter"),
            ))
        }
    };
    let named = match raw.counter_store.as_deref() {
        Some(s) => Some(s.parse::<CounterStore>().map_err(|_| {
            err(
                "counter_store",
                format!("unknown store {s:?}; use redis, postgres or etcd-guard (provider etcd)"),
            )
        })?),
        None => None,
    };
    match (counter, named) {
        (false, Some(_)) => Err(err(
            "counter_store",
            "only the counter workload has a counter store; add workload: counter or remove it",
        )),
        (false, None) => Ok(Workload::FencedWrite),
        (true, None) => Ok(Workload::Counter(CounterStore::default_for(provider))),
        (true, Some(s)) if provider == Provider::Memory && s != CounterStore::Memory => Err(err(
            "counter_store",
            format!("the memory provider keeps its counter in-process: use memory, not {:?}", s.as_str()),
        )),
        (true, Some(CounterStore::Memory)) => Err(err(
            "counter_store",
            format!("the memory store lives in the harness's own process: only provider memory uses it, not {provider}; use redis or postgres"),
        )),
        (true, Some(s)) => match s.bound_to() {
            Some(bound) if bound != provider => Err(err(
                "counter_store",
                format!(
                    "{s} guards each increment with the {bound} lock key's revision, so it needs provider {bound}, not {provider}"
                ),
            )),
            _ => Ok(Workload::Counter(s)),
        },
    }
}

/// `recipe` or `client`, for messages.
fn kind_of(client: &LockClient) -> &'static str {
    match client {
        LockClient::Recipe(_) => "recipe",
        LockClient::Adapter(_) => "client",
    }
}
