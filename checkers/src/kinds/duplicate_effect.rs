//! `duplicate-effect`: the resource accepted two writes with the same `op_id` (idempotency key).
//! The resource log is the ground truth, so an `info` write counts if the log shows it accepted.
//!
//! Memory: this is the one checker whose memory grows with the run — a duplicate can arrive at
//! any later time, so every accepted op_id must be remembered. It keeps a 128-bit fingerprint
//! plus the first seq/time/token (40 bytes per accepted write, no strings); two different op_ids
//! colliding is about 2^-128 per pair, far below any other error in the pipeline.

use crate::checker::{Checker, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::hashing::FastMap;
use crate::kinds::resource_presence::Presence;
use results::{AnomalyKind, EventRef, Evidence, ResourceRef};
use serde_json::json;
use std::hash::{DefaultHasher, Hash, Hasher};

fn fingerprint(op_id: &str) -> u128 {
    let mut a = DefaultHasher::new();
    op_id.hash(&mut a);
    let mut b = DefaultHasher::new();
    0x9e37_79b9_7f4a_7c15u64.hash(&mut b);
    op_id.hash(&mut b);
    (u128::from(a.finish()) << 64) | u128::from(b.finish())
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct DuplicateEffect {
    presence: Presence,
    /// fingerprint(op_id) -> (seq, time, token) of its first accepted write.
    applied: FastMap<u128, (u64, u64, Option<u64>)>,
}

impl Checker for DuplicateEffect {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::DuplicateEffect
    }

    fn interests(&self) -> Interests {
        Interests::WRITE
    }

    fn event(&mut self, e: &EventRef<'_>, _out: &mut Findings) {
        self.presence.event(e);
    }

    fn resource(&mut self, r: &ResourceRef<'_>, out: &mut Findings) {
        self.presence.entries += 1;
        if !r.result.is_accepted() {
            return;
        }
        let fp = fingerprint(&r.op_id);
        let Some(&(seq, time, token)) = self.applied.get(&fp) else {
            self.applied.insert(fp, (r.seq, r.time, r.token));
            return;
        };
        let mut evidence = Evidence {
            key: Some(r.key.to_string()),
            owner: Some(r.owner.to_string()),
            lease: Some(r.lease.to_string()),
            token: r.token,
            highest_before: r.highest_before,
            result: Some(r.result.as_str().into()),
            seqs: vec![seq, r.seq],
            times: vec![time, r.time],
            ..Default::default()
        };
        evidence.other.insert("op_id".into(), json!(r.op_id));
        evidence.other.insert("first_token".into(), json!(token));
        evidence.other.insert("process".into(), json!(r.process));
        let summary = format!(
            "op_id {} accepted twice on key {}: seq {seq} and seq {}",
            r.op_id, r.key, r.seq
        );
        let obs = format!(
            "the resource applied operation {} at seq {seq} and again at seq {}",
            r.op_id, r.seq
        );
        out.push(summary, evidence, diagnosis::duplicate_effect(obs));
    }

    fn finish(&mut self, end: &End, _out: &mut Findings) -> Outcome {
        self.presence.outcome(end, false)
    }
}
