//! `lost-update` (counter workload): a read of the counter returned less than the number of
//! increments acknowledged before the read was invoked, or more than the increments attempted
//! (invoked and not certainly failed) before the read completed. Every read is checked, the
//! final one included. The counter starts at 0 and each increment adds exactly 1 (an
//! increment's own `value` is not used). `info` increments may or may not have happened, so they
//! widen the allowed range instead of narrowing it. Memory: three counters per key and one
//! pending read per process.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::hashing::FastMap;
use crate::name::Name;
use results::{AnomalyKind, EventRef, Evidence, OpType, Process, F};
use serde_json::json;

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    acked: u64,
    invoked: u64,
    failed: u64,
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct LostUpdate {
    /// Per key, in first-seen order; `index` finds a key, `last` is the one used last.
    keys: Vec<(Name, Counts)>,
    index: FastMap<Name, usize>,
    last: usize,
    /// process -> (acked increments of the key when the read was invoked, invoke index, time)
    reads: FastMap<u32, (u64, u64, u64)>,
    increments: u64,
    reads_checked: u64,
}

impl Checker for LostUpdate {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::LostUpdate
    }

    fn uses_shared(&self) -> bool {
        false
    }

    fn interests(&self) -> Interests {
        Interests::READ | Interests::INCREMENT | Interests::EXIT | Interests::ANY_INFO
    }

    fn event(&mut self, e: &EventRef<'_>, _cx: &Context<'_>, out: &mut Findings) {
        let Process::Worker(p) = e.process else {
            return;
        };
        let key = e.key.as_deref().unwrap_or("");
        match (&e.f, e.kind) {
            (F::Increment, kind) => {
                let c = self.counts(key);
                match kind {
                    OpType::Invoke => c.invoked += 1,
                    OpType::Ok => c.acked += 1,
                    OpType::Fail => c.failed += 1,
                    OpType::Info => {}
                }
                if kind == OpType::Invoke {
                    self.increments += 1;
                }
            }
            (F::Read, OpType::Invoke) => {
                let acked = self.counts(key).acked;
                self.reads.insert(p, (acked, e.index, e.time));
            }
            (F::Read, OpType::Ok) => {
                let Some((lower, inv_index, inv_time)) = self.reads.remove(&p) else {
                    return;
                };
                let Some(v) = e.int_value else { return };
                self.reads_checked += 1;
                let c = self.counts(key);
                let upper = c.invoked.saturating_sub(c.failed);
                let below = v < 0 || (v as u64) < lower;
                if !below && (v as u64) <= upper {
                    return;
                }
                let mut evidence = Evidence {
                    key: Some(key.to_string()),
                    indices: vec![inv_index, e.index],
                    times: vec![inv_time, e.time],
                    ..Default::default()
                };
                evidence.other.insert("process".into(), json!(p));
                evidence.other.insert("read_value".into(), json!(v));
                evidence
                    .other
                    .insert("acknowledged_before_read".into(), json!(lower));
                evidence
                    .other
                    .insert("attempted_before_read_returned".into(), json!(upper));
                if below {
                    let summary = format!(
                        "counter {key} read {v} at index {} but {lower} increments had been acknowledged before the read began",
                        e.index
                    );
                    let obs = format!(
                        "{} acknowledged increments are missing",
                        lower as i128 - v as i128
                    );
                    out.push(e.time, summary, evidence, diagnosis::lost_update_low(obs));
                } else {
                    let summary = format!(
                        "counter {key} read {v} at index {} but at most {upper} increments had been attempted",
                        e.index
                    );
                    let obs = format!(
                        "the counter is {} above every attempted increment",
                        v as i128 - upper as i128
                    );
                    out.push(e.time, summary, evidence, diagnosis::lost_update_high(obs));
                }
            }
            (F::Read, _) => drop(self.reads.remove(&p)),
            (F::Exit, _) => drop(self.reads.remove(&p)),
            _ => {}
        }
    }

    fn finish(&mut self, _end: &End, _out: &mut Findings) -> Outcome {
        if self.increments == 0 && self.reads_checked == 0 {
            Outcome::NotApplicable("no counter workload (no increments or reads)".into())
        } else if self.reads_checked == 0 {
            Outcome::NotApplicable("no counter read returned a value".into())
        } else {
            Outcome::Checked
        }
    }
}

impl LostUpdate {
    fn counts(&mut self, key: &str) -> &mut Counts {
        // A run counts one key, or a few: the key used last is found without hashing.
        if self.keys.get(self.last).is_none_or(|(k, _)| k != key) {
            self.last = match self.index.get(key) {
                Some(&i) => i,
                None => {
                    self.keys.push((Name::from(key), Counts::default()));
                    self.index.insert(Name::from(key), self.keys.len() - 1);
                    self.keys.len() - 1
                }
            };
        }
        &mut self.keys[self.last].1
    }
}
