//! `duplicate-effect`: the resource accepted two writes with the same `op_id` (idempotency key).
//! The resource log is the ground truth, so an `info` write counts if the log shows it accepted.
//!
//! Memory: this is the one checker whose memory grows with the run — a duplicate can arrive at
//! any later time, so every accepted op_id must be remembered. It keeps a 128-bit fingerprint
//! (two independent SipHashes) and the first write's seq: 24 bytes per accepted write, no
//! strings (about 100 MB at 1.5M accepted writes, with the hash table's slack). Two different
//! op_ids colliding is about 2^-128 per pair. The first write's time and token are then found at
//! its seq in `resource.jsonl`; the evidence carries that seq.

use crate::checker::{Checker, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::hashing::FastMap;
use crate::kinds::resource_presence::Presence;
use results::{AnomalyKind, EventRef, Evidence, ResourceRef};
use serde_json::json;
use std::hash::{DefaultHasher, Hash, Hasher};

fn fingerprint(op_id: &str) -> (u64, u64) {
    let mut a = DefaultHasher::new();
    op_id.hash(&mut a);
    let mut b = DefaultHasher::new();
    0x9e37_79b9_7f4a_7c15u64.hash(&mut b);
    op_id.hash(&mut b);
    (a.finish(), b.finish())
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct DuplicateEffect {
    presence: Presence,
    /// First half of fingerprint(op_id) -> (second half, seq of its first accepted write).
    applied: FastMap<u64, (u64, u64)>,
    /// Distinct op_ids whose first halves collided (about never): (first, second, seq).
    overflow: Vec<(u64, u64, u64)>,
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
        let (h1, h2) = fingerprint(&r.op_id);
        let seq = match self.applied.get(&h1) {
            Some(&(second, seq)) if second == h2 => seq,
            None => {
                self.applied.insert(h1, (h2, r.seq));
                return;
            }
            Some(_) => match self.overflow.iter().find(|o| o.0 == h1 && o.1 == h2) {
                Some(o) => o.2,
                None => {
                    self.overflow.push((h1, h2, r.seq));
                    return;
                }
            },
        };
        let mut evidence = Evidence {
            key: Some(r.key.to_string()),
            owner: Some(r.owner.to_string()),
            lease: Some(r.lease.to_string()),
            token: r.token,
            highest_before: r.highest_before,
            result: Some(r.result.as_str().into()),
            seqs: vec![seq, r.seq],
            times: vec![r.time],
            ..Default::default()
        };
        evidence.other.insert("op_id".into(), json!(r.op_id));
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
