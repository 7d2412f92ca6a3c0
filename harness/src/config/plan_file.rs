//! The plan written out as `test.yaml`: the keys a user writes (so the file is itself a test
//! that `fencecheck run --config` repeats exactly), every default resolved, and the fault plan
//! drawn from the seed spelled out as timeline lines.

use super::clients::LockClient;
use super::duration::Dur;
use super::plan::{Discipline, Provider, TestPlan};
use serde::Serialize;
use workloads::config::{OnSuspect, Renewal};

/// `test.yaml`'s shape, in the order a reader expects.
#[derive(Serialize)]
struct PlanFile<'a> {
    name: &'a str,
    provider: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    recipe: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    with: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_cmd: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_dir: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_options: Option<&'a serde_json::Value>,
    resource: &'static str,
    workload: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    counter_store: Option<&'static str>,
    workers: u32,
    ttl: Dur,
    renew_interval: Dur,
    session_timeout: Dur,
    op_timeout: Dur,
    acquire_timeout: Dur,
    discipline: &'static str,
    app: &'static str,
    renewal: &'static str,
    time_limit: Dur,
    work: Dur,
    writes_per_hold: u32,
    lock: &'a str,
    nemesis: Vec<&'static str>,
    nemesis_interval: Dur,
    #[serde(skip_serializing_if = "Option::is_none")]
    fault_duration: Option<Dur>,
    seed: u64,
    fail_on: Vec<&'static str>,
    recovery_slack: Dur,
    recovery: Dur,
    image: &'a str,
    /// Written only where it applies (a Redis provider), so other tests read as before.
    #[serde(skip_serializing_if = "Option::is_none")]
    persistence: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cut_reply_to: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_image: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    memory_bugs: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nemesis_timeline: Option<Vec<String>>,
    /// What the run injects (drawn from the seed, or the schedule itself); read back, it
    /// changes nothing.
    fault_plan: Vec<String>,
}

/// The discipline's two `test.yaml` keys.
pub fn discipline_keys(d: Discipline) -> (&'static str, &'static str) {
    let suspect = match d.on_suspect {
        OnSuspect::Stop => "stop",
        OnSuspect::Continue => "continue",
    };
    let renewal = match d.renewal {
        Renewal::Background => "background",
        Renewal::Inline => "inline",
    };
    (suspect, renewal)
}

/// The plan as `test.yaml` text (without the header comment).
pub fn to_yaml(plan: &TestPlan) -> Result<String, String> {
    let (discipline, renewal) = discipline_keys(plan.discipline);
    let f = &plan.faults;
    let adapter = plan.client.adapter();
    let own = adapter.filter(|a| !a.shipped && a.provider != Provider::Memory);
    let file = PlanFile {
        name: &plan.name,
        provider: plan.provider.as_str(),
        recipe: match plan.client {
            LockClient::Recipe(r) => Some(r.as_str()),
            LockClient::Adapter(_) => None,
        },
        // A shipped adapter with the release that ran, so a re-run runs the same one.
        client: adapter.filter(|_| own.is_none()).map(|a| match &a.release {
            Some(r) => format!("{}@{}", a.name, r.label()),
            None => a.name.clone(),
        }),
        // And every pin installed with it, the adapter's own included.
        with: plan.client.pins().to_vec(),
        client_cmd: own.map(|a| a.command.as_str()),
        client_dir: own
            .and_then(|a| a.dir.as_ref())
            .map(|d| d.display().to_string()),
        client_options: adapter
            .map(|a| &a.options)
            .filter(|o| o.as_object().is_some_and(|m| !m.is_empty())),
        resource: plan.resource.as_str(),
        workload: plan.workload.as_str(),
        counter_store: plan.workload.counter_store().map(|s| s.as_str()),
        workers: plan.workers,
        ttl: plan.ttl(),
        renew_interval: Dur(plan.client_timing.renew_interval),
        session_timeout: Dur(plan.client_timing.session_timeout),
        op_timeout: Dur(plan.client_timing.op_timeout),
        acquire_timeout: Dur(plan.client_timing.acquire_timeout),
        discipline,
        app: plan.app.name(),
        renewal,
        time_limit: plan.time_limit,
        work: plan.work,
        writes_per_hold: plan.writes_per_hold,
        lock: &plan.lock,
        nemesis: f.drawn.iter().map(|k| k.name()).collect(),
        nemesis_interval: f.interval,
        fault_duration: f.duration,
        seed: plan.seed,
        fail_on: plan.fail_on.iter().map(|k| k.as_str()).collect(),
        recovery_slack: plan.recovery_slack,
        recovery: plan.recovery,
        image: &plan.image,
        persistence: plan
            .provider
            .takes_persistence()
            .then(|| plan.persistence.name()),
        cut_reply_to: plan.cut_reply_to.as_deref(),
        // A PyPI release's image (or an own folder's requirements') follows from what was
        // fetched (prepared again at the re-run).
        client_image: plan
            .client_image
            .as_deref()
            .filter(|_| !plan.client.image_made_at_start()),
        memory_bugs: plan.memory_bugs.iter().map(|b| b.as_str()).collect(),
        nemesis_timeline: f.explicit.then(|| f.plan.lines()),
        fault_plan: f.plan.lines(),
    };
    serde_saphyr::to_string(&file).map_err(|e| e.to_string())
}
