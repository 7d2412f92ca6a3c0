//! How the timeline model is derived: one pass over the history (holds from the checkers' own
//! fold, so a bar ends where a hold ends (docs/design.md, "Holds"): release invoke, lease-lost, any `info` of
//! its process, its exit; nemesis start/stop paired by fault name; writes paired invoke →
//! completion), then the resource log laid over the writes as ground truth, then every anomaly
//! placed when it became true (the stale write accepted, the second holder's acquire, the
//! harmful release).

use std::collections::HashMap;

use super::timeline::*;
use super::ReportInput;
use checkers::fold::{HoldFold, HoldSpan};
use results::{Event, OpResult, OpType, Process, F};

mod marks;
mod service;

/// What a fault hit, read by the data model's one rule, so the report draws the targets the
/// checkers judged.
fn fault_targets(e: &Event) -> Vec<String> {
    results::nemesis_event::targets(e.value.as_ref())
        .into_iter()
        .map(std::borrow::Cow::into_owned)
        .collect()
}

fn outcome_of(e: &Event) -> WriteOutcome {
    match (e.kind, e.result) {
        (OpType::Ok, _) => WriteOutcome::Accepted,
        (OpType::Fail, Some(OpResult::RejectedStaleFence)) => WriteOutcome::RejectedStale,
        (OpType::Fail, Some(OpResult::RejectedDuplicate)) => WriteOutcome::RejectedDuplicate,
        (OpType::Fail, _) => WriteOutcome::Failed,
        _ => WriteOutcome::Unknown,
    }
}

impl Timeline {
    /// Derives the model from what a report shows.
    pub fn build(input: &ReportInput<'_>) -> Timeline {
        Builder::new(input).build()
    }
}

pub(super) struct Builder<'i, 'a> {
    input: &'i ReportInput<'a>,
    lanes: Vec<Lane>,
    lane_of: HashMap<u32, usize>,
    by_index: HashMap<u64, Vec<usize>>,
    by_seq: HashMap<u64, Vec<usize>>,
}

impl<'i, 'a> Builder<'i, 'a> {
    pub(super) fn new(input: &'i ReportInput<'a>) -> Self {
        let (lanes, lane_of) = super::lanes::lanes(input);
        let (mut by_index, mut by_seq) = (HashMap::new(), HashMap::new());
        for (n, a) in input.verdict.anomalies.iter().enumerate() {
            for i in &a.evidence.indices {
                by_index.entry(*i).or_insert_with(Vec::new).push(n);
            }
            for s in &a.evidence.seqs {
                by_seq.entry(*s).or_insert_with(Vec::new).push(n);
            }
        }
        Builder {
            input,
            lanes,
            lane_of,
            by_index,
            by_seq,
        }
    }

    fn evidence_of(&self, indices: &[u64], seq: Option<u64>) -> Vec<usize> {
        let mut out: Vec<usize> = indices
            .iter()
            .filter_map(|i| self.by_index.get(i))
            .chain(seq.and_then(|s| self.by_seq.get(&s)))
            .flatten()
            .copied()
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    pub(super) fn build(mut self) -> Timeline {
        let input = self.input;
        let end = input
            .history
            .iter()
            .map(|e| e.time)
            .chain(input.resource.iter().map(|r| r.time))
            .max()
            .unwrap_or(0)
            .max(input.run_end.unwrap_or(0))
            .max(1);
        let mut faults: Vec<Fault> = Vec::new();
        let mut open_faults: Vec<(String, usize)> = Vec::new();
        let mut holds = HoldFold::default();
        let mut pending: HashMap<(u32, &'static str), &Event> = HashMap::new();
        let mut history_writes: Vec<(&Event, Option<&Event>)> = Vec::new();
        let mut closed: Vec<HoldSpan> = Vec::new();

        for e in input.history {
            let p = match e.process {
                Process::Nemesis => {
                    match &e.f {
                        // A start the nemesis skipped (no target) carries its reason as
                        // `error` and has no stop: nothing was applied, so nothing is drawn.
                        F::Start(_) if e.error.is_some() => {}
                        F::Start(name) => {
                            open_faults.push((name.to_string(), faults.len()));
                            faults.push(Fault {
                                name: name.to_string(),
                                start: e.time,
                                end,
                                targets: fault_targets(e),
                            });
                        }
                        F::Stop(name) => {
                            if let Some(pos) = open_faults.iter().position(|(n, _)| **n == **name) {
                                let (_, at) = open_faults.remove(pos);
                                faults[at].end = e.time;
                            }
                        }
                        _ => {}
                    }
                    continue;
                }
                Process::Worker(p) => p,
            };
            holds.event(&e.as_ref(), |span| closed.push(span));
            let lane = self.lane_of[&p];
            match (&e.f, e.kind) {
                (F::Acquire, OpType::Invoke) => {
                    pending.insert((p, "acquire"), e);
                }
                (F::Acquire, kind) => {
                    if let Some(inv) = pending.remove(&(p, "acquire")) {
                        self.lanes[lane].waits.push(Span {
                            start: inv.time,
                            end: e.time,
                            label: format!("acquire → {}", kind_str(kind)),
                        });
                    }
                }
                (F::Write, OpType::Invoke) => {
                    if let Some(prev) = pending.insert((p, "write"), e) {
                        history_writes.push((prev, None));
                    }
                }
                (F::Write, _) => {
                    let inv = pending.remove(&(p, "write"));
                    history_writes.push((inv.unwrap_or(e), Some(e)));
                }
                (F::Release, OpType::Invoke) => {
                    pending.insert((p, "release"), e);
                }
                (F::Release, kind) => {
                    let inv = pending.remove(&(p, "release"));
                    let mark_kind = match (kind, e.result) {
                        (OpType::Ok, _) => MarkKind::Released,
                        (OpType::Fail, _) => MarkKind::ReleaseRejected,
                        _ => MarkKind::ReleaseUnknown,
                    };
                    let indices: Vec<u64> =
                        inv.map(|i| i.index).into_iter().chain([e.index]).collect();
                    let detail = format!(
                        "release {} · token {} · lease {}",
                        e.result.map(|r| r.as_str()).unwrap_or(kind_str(kind)),
                        opt(e.token.or(inv.and_then(|i| i.token))),
                        e.lease
                            .as_deref()
                            .or(inv.and_then(|i| i.lease.as_deref()))
                            .unwrap_or("—")
                    );
                    let anomalies = self.evidence_of(&indices, None);
                    self.lanes[lane].marks.push(Mark {
                        time: e.time,
                        kind: mark_kind,
                        index: e.index,
                        detail,
                        anomalies,
                    });
                }
                (F::LeaseLost, _) => {
                    let detail =
                        format!("lease-lost · lease {}", e.lease.as_deref().unwrap_or("—"));
                    let anomalies = self.evidence_of(&[e.index], None);
                    self.lanes[lane].marks.push(Mark {
                        time: e.time,
                        kind: MarkKind::LeaseLost,
                        index: e.index,
                        detail,
                        anomalies,
                    });
                }
                (F::Exit, _) => {
                    if let Some(inv) = pending.remove(&(p, "acquire")) {
                        self.lanes[lane].waits.push(Span {
                            start: inv.time,
                            end: e.time,
                            label: "acquire → process exited".into(),
                        });
                    }
                    let detail = format!(
                        "process {p} exited{}",
                        e.error
                            .as_deref()
                            .map(|m| format!(": {m}"))
                            .unwrap_or_default()
                    );
                    let anomalies = self.evidence_of(&[e.index], None);
                    self.lanes[lane].marks.push(Mark {
                        time: e.time,
                        kind: MarkKind::Exit,
                        index: e.index,
                        detail,
                        anomalies,
                    });
                }
                _ => {}
            }
        }
        for ((p, f), inv) in pending {
            match f {
                "write" => history_writes.push((inv, None)),
                // Still trying when the history ends: the wait runs to the end.
                "acquire" => self.lanes[self.lane_of[&p]].waits.push(Span {
                    start: inv.time,
                    end,
                    label: "acquire → no answer before the end".into(),
                }),
                _ => {}
            }
        }
        for lane in &mut self.lanes {
            lane.waits.sort_by_key(|w| w.start);
        }
        closed.extend(holds.finish());
        for span in closed {
            let Some(&lane) = self.lane_of.get(&span.hold.process) else {
                continue;
            };
            self.lanes[lane].holds.push(bar(span, end));
        }
        self.add_writes(history_writes);
        for fault in &faults {
            for lane in &mut self.lanes {
                let hit = fault.targets.iter().any(|t| {
                    *t == lane.name || t.parse::<u32>().is_ok_and(|p| lane.processes.contains(&p))
                });
                if hit {
                    lane.faulted.push(Span {
                        start: fault.start,
                        end: fault.end,
                        label: fault.name.clone(),
                    });
                }
            }
        }
        for lane in &mut self.lanes {
            lane.holds.sort_by_key(|h| h.start);
            lane.writes.sort_by_key(|w| w.time);
        }
        let anomalies = self.anomaly_marks();
        let service = service::lane(input, &self.lanes, end);
        Timeline {
            end,
            lanes: self.lanes,
            service,
            faults,
            anomalies,
        }
    }
}

/// A hold as its bar: one still open when the history ended runs to the end of the drawing.
fn bar(span: HoldSpan, end: u64) -> HoldBar {
    let h = &span.hold;
    HoldBar {
        start: h.time,
        end: if span.ended_by == HoldEnd::HistoryEnd {
            end
        } else {
            span.end
        },
        ended_by: span.ended_by,
        process: h.process,
        lock: Some(span.lock.clone()),
        owner: h.owner().map(str::to_string),
        lease: h.lease().map(str::to_string),
        token: h.token,
        index: h.index,
    }
}

fn kind_str(k: OpType) -> &'static str {
    match k {
        OpType::Invoke => "invoke",
        OpType::Ok => "ok",
        OpType::Fail => "fail",
        OpType::Info => "info",
    }
}

#[cfg(test)]
mod tests;
