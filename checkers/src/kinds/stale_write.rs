//! `stale-accepted-write`: the resource accepted a write for key K with token t after it had
//! accepted a write for K with a token greater than t. The resource log is the ground truth: an
//! `info` write (the worker never learned the outcome) that the log shows accepted still counts,
//! and a stale token the resource *rejected* is fencing working, never an anomaly.
//! Memory: the highest accepted write per key.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::hashing::FastMap;
use crate::kinds::resource_presence::Presence;
use results::{AnomalyKind, EventRef, Evidence, ResourceRef};
use serde_json::json;

#[derive(Debug)]
struct Highest {
    token: u64,
    seq: u64,
    time: u64,
    owner: String,
    lease: String,
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct StaleAcceptedWrite {
    presence: Presence,
    highest: FastMap<String, Highest>,
}

impl Checker for StaleAcceptedWrite {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::StaleAcceptedWrite
    }

    fn uses_shared(&self) -> bool {
        false
    }

    fn interests(&self) -> Interests {
        Interests::WRITE
    }

    fn event(&mut self, e: &EventRef<'_>, _cx: &Context<'_>, _out: &mut Findings) {
        self.presence.event(e);
    }

    fn resource(&mut self, r: &ResourceRef<'_>, out: &mut Findings) {
        self.presence.entries += 1;
        let Some(t) = r.token else { return };
        self.presence.with_token += 1;
        if !r.result.is_accepted() {
            return;
        }
        let h = self.highest.get(r.key.as_ref());
        let known = h.map(|h| h.token).filter(|&h| h > t);
        // The resource's own record of what it had is evidence too (the log may be partial).
        let admitted = r.highest_before.filter(|&h| h > t);
        if known.is_some() || admitted.is_some() {
            let newer = known.max(admitted).unwrap_or(t);
            let mut evidence = Evidence {
                key: Some(r.key.to_string()),
                owner: Some(r.owner.to_string()),
                lease: Some(r.lease.to_string()),
                token: Some(t),
                highest_before: r.highest_before,
                result: Some(r.result.as_str().into()),
                ..Default::default()
            };
            if let Some(h) = h.filter(|h| h.token > t) {
                evidence.seqs = vec![h.seq, r.seq];
                evidence.times = vec![h.time, r.time];
                evidence.other.insert("newer_owner".into(), json!(h.owner));
                evidence.other.insert("newer_lease".into(), json!(h.lease));
                evidence.other.insert("newer_token".into(), json!(h.token));
            } else {
                evidence.seqs = vec![r.seq];
                evidence.times = vec![r.time];
            }
            evidence.other.insert("process".into(), json!(r.process));
            evidence.other.insert("op_id".into(), json!(r.op_id));
            let summary = format!(
                "key {}: token {t} from {} (lease {}) accepted at seq {} after token {newer} had been accepted",
                r.key, r.owner, r.lease, r.seq
            );
            let obs = format!(
                "token {t} arrived after accepted token {newer} on key {} and was accepted: both \
                 generations' writes took effect",
                r.key
            );
            out.push(summary, evidence, diagnosis::stale_accepted_write(obs));
            return;
        }
        match self.highest.get_mut(r.key.as_ref()) {
            // Updated in place: a new highest token per hold must not cost allocations.
            Some(h) if t > h.token => {
                (h.token, h.seq, h.time) = (t, r.seq, r.time);
                h.owner.clear();
                h.owner.push_str(&r.owner);
                h.lease.clear();
                h.lease.push_str(&r.lease);
            }
            Some(_) => {}
            None => {
                let h = Highest {
                    token: t,
                    seq: r.seq,
                    time: r.time,
                    owner: r.owner.to_string(),
                    lease: r.lease.to_string(),
                };
                self.highest.insert(r.key.to_string(), h);
            }
        }
    }

    fn finish(&mut self, end: &End, _out: &mut Findings) -> Outcome {
        self.presence.outcome(end, true)
    }
}
