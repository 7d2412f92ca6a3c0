//! The acquisitions an anomaly's evidence names, as the scenario's workers: the lease of the
//! evidence itself, every `*_lease` of its other facts (the newer holder, the current holder,
//! the other or earlier acquisition), and the acquisitions behind the history indices and
//! resource seqs it cites. Each becomes one worker (A, B, ... in grant order), standing for one
//! acquisition of one run worker: the scenario's actors are the run's acquisitions, not its
//! containers.

use super::{Refusal, Stored};
use results::{Anomaly, Event, OpType, Process, F};

/// One acquisition of the run, cast as a scenario worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// The scenario's name for it (`A`, `B`, ...).
    pub name: String,
    pub process: u32,
    /// The run worker it was (`worker-3`): the name faults on it are recorded under.
    pub owner: String,
    pub lease: String,
    pub token: Option<u64>,
    /// History index and time of its acquire `ok`.
    pub granted: (u64, u64),
}

impl Actor {
    /// One line of the scenario's header: who stands for what.
    pub fn describe(&self) -> String {
        let token = self
            .token
            .map_or_else(|| "no token".to_string(), |t| format!("token {t}"));
        format!(
            "{} = {} (process {}, lease {}, {token}, granted at index {})",
            self.name, self.owner, self.process, self.lease, self.granted.0
        )
    }
}

/// The actors of `anomaly`, in grant order. Refused when the evidence names no acquisition the
/// history shows granted (nothing to replay).
pub fn cast(stored: &Stored, anomaly: &Anomaly) -> Result<Vec<Actor>, Refusal> {
    let until = super::until(anomaly);
    let mut leases: Vec<String> = Vec::new();
    let mut add = |l: &str| {
        if !l.is_empty() && !leases.iter().any(|x| x == l) {
            leases.push(l.to_string());
        }
    };
    let e = &anomaly.evidence;
    if let Some(l) = &e.lease {
        add(l);
    }
    for (key, value) in &e.other {
        if let (true, Some(l)) = (key.ends_with("_lease"), value.as_str()) {
            add(l);
        }
    }
    for &i in &e.indices {
        if let Some(l) = lease_at(&stored.history, i) {
            add(&l);
        }
    }
    for &s in &e.seqs {
        if let Some(r) = stored.resource.iter().find(|r| r.seq == s) {
            add(&r.lease);
        }
    }
    let mut actors: Vec<Actor> = leases
        .iter()
        .filter_map(|l| granted(&stored.history, l, until))
        .collect();
    actors.sort_by_key(|a| a.granted);
    if actors.is_empty() {
        return Err(Refusal::new(format!(
            "the evidence of this {} names no acquisition the history shows granted (no acquire \
             `ok` with its lease), so there is nobody to cast in a scenario",
            anomaly.kind
        )));
    }
    for (i, a) in actors.iter_mut().enumerate() {
        a.name = name(i);
    }
    Ok(actors)
}

/// `A`, `B`, ... `Z`, then `A2` ...
pub fn name(i: usize) -> String {
    let letter = (b'A' + (i % 26) as u8) as char;
    match i / 26 {
        0 => letter.to_string(),
        n => format!("{letter}{}", n + 1),
    }
}

/// The lease of the acquisition behind history event `index`: its own lease, or for an acquire
/// without one (an invoke), the lease its process was granted next.
fn lease_at(history: &[Event], index: u64) -> Option<String> {
    let pos = history.iter().position(|e| e.index == index)?;
    let e = &history[pos];
    let Process::Worker(p) = e.process else {
        return None;
    };
    if let Some(l) = &e.lease {
        return Some(l.clone());
    }
    if e.f != F::Acquire {
        return None;
    }
    history[pos..]
        .iter()
        .find(|x| x.process == Process::Worker(p) && x.f == F::Acquire && x.is_completion())
        .filter(|x| x.kind == OpType::Ok)
        .and_then(|x| x.lease.clone())
}

/// The latest acquire `ok` of `lease` at or before `until` (a lease string may come back).
fn granted(history: &[Event], lease: &str, until: u64) -> Option<Actor> {
    history
        .iter()
        .rev()
        .filter(|e| {
            e.f == F::Acquire
                && e.kind == OpType::Ok
                && e.time <= until
                && e.lease.as_deref() == Some(lease)
        })
        .find_map(|e| {
            let Process::Worker(p) = e.process else {
                return None;
            };
            Some(Actor {
                name: String::new(),
                process: p,
                owner: e.owner.clone().unwrap_or_else(|| format!("process {p}")),
                lease: lease.to_string(),
                token: e.token,
                granted: (e.index, e.time),
            })
        })
}
