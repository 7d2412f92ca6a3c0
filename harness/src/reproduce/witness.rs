//! What the lock service's own record said of the same acquisitions, carried into the
//! scenario. A run's verdict may hold, beside the anomaly reproduced, anomalies judged from the
//! service's record (`service.jsonl`) that name the same grants by the time the anomaly became
//! true: the release that freed B's lock also deleted B's key there, the client that answered
//! held had its key gone. A replay records the service as a run does and judges the same
//! kinds, so the scenario expects them too, and says in its header what the record showed.

use super::actors::Actor;
use super::Stored;
use results::Anomaly;

/// The anomalies of the stored run judged from the service's record that name one of `cast`'s
/// acquisitions (by its grant's history index or its lease) no later than `anomaly` became true,
/// in the verdict's order; `anomaly` itself is never among them.
pub fn beside<'a>(stored: &'a Stored, anomaly: &Anomaly, cast: &[Actor]) -> Vec<&'a Anomaly> {
    let until = super::until(anomaly);
    (stored.verdict.anomalies.iter())
        .filter(|w| w.kind.judged_from_service_record() && w.kind != anomaly.kind)
        .filter(|w| w.when().is_none_or(|t| t <= until))
        .filter(|w| cast.iter().any(|a| names(w, a)))
        .collect()
}

/// Whether `w`'s evidence names `actor`'s acquisition: its grant's index, or its lease as the
/// evidence's or one of its `*_lease` facts.
fn names(w: &Anomaly, actor: &Actor) -> bool {
    let e = &w.evidence;
    e.indices.contains(&actor.granted.0)
        || e.lease.as_deref() == Some(actor.lease.as_str())
        || (e.other.iter()).any(|(k, v)| k.ends_with("_lease") && v == actor.lease.as_str())
}
