//! The writes and the anomalies laid over the model: every write from the resource log (the
//! ground truth) plus those it never decided, and each anomaly where it became true.

use super::{outcome_of, Builder};
use crate::timeline::{worker_of_owner, AnomalyMark, WriteMark, WriteOutcome};
use results::{Event, Process, WriteResult};
use std::collections::{HashMap, HashSet};

impl Builder<'_, '_> {
    /// Writes from the resource log (ground truth) plus those the resource never decided.
    pub(super) fn add_writes(&mut self, history_writes: Vec<(&Event, Option<&Event>)>) {
        let by_op: HashMap<&str, (&Event, Option<&Event>)> = history_writes
            .iter()
            .filter_map(|(i, c)| i.op_id.as_deref().map(|op| (op, (*i, *c))))
            .collect();
        let mut decided: HashSet<&str> = HashSet::new();
        for r in self.input.resource {
            decided.insert(r.op_id.as_str());
            let hist = by_op.get(r.op_id.as_str());
            let indices: Vec<u64> = hist
                .map(|(i, c)| std::iter::once(i.index).chain(c.map(|c| c.index)).collect())
                .unwrap_or_default();
            let outcome = match r.result {
                WriteResult::Accepted => WriteOutcome::Accepted,
                WriteResult::RejectedStaleFence => WriteOutcome::RejectedStale,
                WriteResult::RejectedDuplicate => WriteOutcome::RejectedDuplicate,
            };
            let anomalies = self.evidence_of(&indices, Some(r.seq));
            let lane = self.lane_of[&r.process];
            self.lanes[lane].writes.push(WriteMark {
                time: r.time,
                process: r.process,
                outcome,
                token: r.token,
                highest_before: r.highest_before,
                key: Some(r.key.clone()),
                op_id: Some(r.op_id.clone()),
                seq: Some(r.seq),
                index: indices.last().copied(),
                anomalies,
            });
        }
        for (inv, done) in history_writes {
            if inv.op_id.as_deref().is_some_and(|op| decided.contains(op)) {
                continue;
            }
            let last = done.unwrap_or(inv);
            let Process::Worker(p) = inv.process else {
                continue;
            };
            let outcome = done.map(outcome_of).unwrap_or(WriteOutcome::Unknown);
            let indices: Vec<u64> = std::iter::once(inv.index)
                .chain(done.map(|c| c.index))
                .collect();
            let anomalies = self.evidence_of(&indices, None);
            let lane = self.lane_of[&p];
            self.lanes[lane].writes.push(WriteMark {
                time: last.time,
                process: p,
                outcome,
                token: last.token.or(inv.token),
                highest_before: last.highest_before,
                key: inv.key.clone(),
                op_id: inv.op_id.clone(),
                seq: None,
                index: Some(last.index),
                anomalies,
            });
        }
    }

    pub(super) fn anomaly_marks(&self) -> Vec<AnomalyMark> {
        let input = self.input;
        let time_of_index: HashMap<u64, (u64, Process)> = input
            .history
            .iter()
            .map(|e| (e.index, (e.time, e.process)))
            .collect();
        let time_of_seq: HashMap<u64, (u64, u32)> = input
            .resource
            .iter()
            .map(|r| (r.seq, (r.time, r.process)))
            .collect();
        let mut out = Vec::new();
        for (number, a) in input.verdict.anomalies.iter().enumerate() {
            let ev = &a.evidence;
            let from_index = ev
                .indices
                .iter()
                .filter_map(|i| time_of_index.get(i))
                .map(|(t, _)| *t);
            let from_seq = ev
                .seqs
                .iter()
                .filter_map(|s| time_of_seq.get(s))
                .map(|(t, _)| *t);
            let Some(time) = a.when().or_else(|| from_index.chain(from_seq).max()) else {
                continue;
            };
            let by_owner = ev
                .owner
                .as_deref()
                .and_then(worker_of_owner)
                .and_then(|w| self.lanes.iter().position(|l| l.name == w));
            let by_process = ev
                .seqs
                .iter()
                .filter_map(|s| time_of_seq.get(s))
                .map(|(_, p)| *p)
                .chain(
                    ev.indices
                        .iter()
                        .filter_map(|i| match time_of_index.get(i) {
                            Some((_, Process::Worker(p))) => Some(*p),
                            _ => None,
                        }),
                )
                .find_map(|p| self.lane_of.get(&p).copied());
            out.push(AnomalyMark {
                number,
                time,
                kind: a.kind,
                fails: a.fails,
                lane: by_owner.or(by_process),
            });
        }
        out
    }
}
