//! The faults of a test, built into the nemesis's own plan here: either drawn from the seed
//! (`nemesis:` kinds) or the test's explicit schedule (`nemesis_timeline:`), and in both cases
//! checked against what the provider supports and the time limit. A fault that cannot act on
//! this test (no leader to pause, no resource to cut off) is refused with the reason.

use super::timing::Timing;
use super::{err, ConfigError};
use crate::config::duration::Dur;
use crate::config::plan::{Faults, Provider, Workload};
use crate::config::raw::RawTest;
use nemesis::{Context, FaultKind, Generator, Plan};

pub fn faults(
    raw: &RawTest,
    provider: Provider,
    workload: Workload,
    timing: &Timing,
    seed: u64,
) -> Result<Faults, ConfigError> {
    let in_process = provider.capabilities().in_process;
    let named: Vec<&String> = raw
        .nemesis
        .iter()
        .flatten()
        .filter(|f| *f != "none")
        .collect();
    if !named.is_empty() && raw.nemesis_timeline.is_some() {
        return Err(err(
            "nemesis_timeline",
            "give either nemesis (faults drawn from the seed) or nemesis_timeline (an explicit schedule), not both",
        ));
    }
    let ctx = Context {
        capabilities: provider.capabilities(),
        ttl: timing.ttl.get(),
        time_limit: Some(timing.time_limit.get()),
    };
    let fault_duration = raw.fault_duration;
    if fault_duration.is_some_and(|d| d.get().is_zero()) {
        return Err(err(
            "fault_duration",
            "a fault of 0s does nothing; use e.g. 4s or remove it",
        ));
    }
    let interval = raw.nemesis_interval.unwrap_or(Dur(timing.ttl.get() * 2));
    if interval.get().is_zero() {
        return Err(err(
            "nemesis_interval",
            "faults need quiet time between them; use e.g. 4s",
        ));
    }
    let (drawn, explicit, plan, field) = match &raw.nemesis_timeline {
        Some(timeline) => {
            let plan = timeline
                .validate(&ctx)
                .map_err(|e| err("nemesis_timeline", e.to_string()))?;
            (Vec::new(), true, plan, "nemesis_timeline")
        }
        None => {
            let drawn = match &raw.nemesis {
                None if in_process => Vec::new(),
                None => vec![FaultKind::PauseHolder],
                Some(_) => kinds(&named, provider)?,
            };
            let plan = Generator {
                faults: drawn.clone(),
                interval: interval.get(),
                durations: fault_duration.map(|d| (d.get(), d.get())),
                ttl: timing.ttl.get(),
                time_limit: timing.time_limit.get(),
            }
            .plan(seed);
            plan.validate("the fault plan", &ctx)
                .map_err(|e| err("nemesis", e.to_string()))?;
            // Faults asked for and none fits: the run would test nothing it names.
            if let (Some(first), true) = (drawn.first(), plan.steps.is_empty()) {
                let lasts =
                    fault_duration.map_or(first.default_duration(timing.ttl.get()), Dur::get);
                return Err(err(
                    "nemesis",
                    format!(
                        "no {first} fits in time_limit {}: it starts after {} of quiet and lasts \
                         {}; raise time_limit or lower fault_duration",
                        timing.time_limit,
                        interval,
                        Dur(lasts)
                    ),
                ));
            }
            (drawn, false, plan, "nemesis")
        }
    };
    refuse_without_resource(&plan, workload, field)?;
    Ok(Faults {
        drawn,
        interval,
        duration: fault_duration,
        explicit,
        plan,
    })
}

/// The named kinds, each checked against what the provider offers.
fn kinds(named: &[&String], provider: Provider) -> Result<Vec<FaultKind>, ConfigError> {
    if named.is_empty() {
        return Ok(Vec::new());
    }
    let caps = provider.capabilities();
    named
        .iter()
        .map(|f| {
            let kind: FaultKind = f
                .parse()
                .map_err(|e: nemesis::UnknownFault| err("nemesis", format!("{e}, or none")))?;
            match kind.unsupported_because(&caps) {
                Some(why) => Err(err(
                    "nemesis",
                    format!("fault {f} does not apply to provider {provider}: {why}"),
                )),
                None => Ok(kind),
            }
        })
        .collect()
}

/// A fault on the lock client's wall clock needs a client that libfaketime reaches: a shipped
/// adapter whose library reads the clock past libc (Go) is refused, naming it and why.
pub fn refuse_unreachable_clock(
    faults: &Faults,
    client: &crate::config::clients::LockClient,
) -> Result<(), ConfigError> {
    let Some(step) = faults.plan.steps.iter().find(|s| s.fault.is_client_clock()) else {
        return Ok(());
    };
    match client.no_fake_clock() {
        Some(why) => Err(err(
            if faults.explicit {
                "nemesis_timeline"
            } else {
                "nemesis"
            },
            format!(
                "{} cannot act on client {}: {why}",
                step.fault,
                client.name()
            ),
        )),
        None => Ok(()),
    }
}

/// The counter workload writes to its store directly: there is no resource to cut off.
fn refuse_without_resource(
    plan: &Plan,
    workload: Workload,
    field: &str,
) -> Result<(), ConfigError> {
    let isolates_resource = plan
        .steps
        .iter()
        .any(|s| s.fault == FaultKind::IsolateResource);
    if matches!(workload, Workload::Counter(_)) && isolates_resource {
        return Err(err(
            field,
            "isolate-resource needs the fenced resource, and the counter workload has none (it \
             writes to its counter store); use another fault",
        ));
    }
    Ok(())
}
