//! `duplicate-effect`: the resource accepted two writes with the same `op_id` (idempotency key).
//! The resource log is the ground truth, so an `info` write counts if the log shows it accepted.
//!
//! Memory: a duplicate can arrive at any later time, so every accepted op_id must be
//! remembered; [`Applied`] keeps them as per-process runs of the workers' `<process>-<n>`
//! numbering, so memory follows processes and gaps (rejected writes), not the number of writes.

use crate::applied::{Applied, FirstSeen};
use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::kinds::resource_presence::Presence;
use results::{AnomalyKind, EventRef, Evidence, ResourceRef};
use serde_json::json;

/// See the module doc.
#[derive(Debug, Default)]
pub struct DuplicateEffect {
    presence: Presence,
    applied: Applied,
}

impl Checker for DuplicateEffect {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::DuplicateEffect
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
        if !r.result.is_accepted() {
            return;
        }
        let Some(first) = self.applied.accept(&r.op_id, r.seq) else {
            return;
        };
        let (seqs, where_first) = match first {
            FirstSeen::Seq(seq) => (vec![seq, r.seq], format!("seq {seq}")),
            FirstSeen::Earlier => (
                vec![r.seq],
                "an earlier seq (not kept; search resource.jsonl for the op_id)".to_string(),
            ),
        };
        let mut evidence = Evidence {
            key: Some(r.key.to_string()),
            owner: Some(r.owner.to_string()),
            lease: Some(r.lease.to_string()),
            token: r.token,
            highest_before: r.highest_before,
            result: Some(r.result.as_str().into()),
            seqs,
            times: vec![r.time],
            ..Default::default()
        };
        evidence.other.insert("op_id".into(), json!(r.op_id));
        evidence.other.insert("process".into(), json!(r.process));
        let summary = format!(
            "op_id {} accepted twice on key {}: {where_first} and seq {}",
            r.op_id, r.key, r.seq
        );
        let obs = format!(
            "the resource applied operation {} at {where_first} and again at seq {}",
            r.op_id, r.seq
        );
        out.push(r.time, summary, evidence, diagnosis::duplicate_effect(obs));
    }

    fn finish(&mut self, end: &End, _out: &mut Findings) -> Outcome {
        self.presence.outcome(end, false)
    }
}
