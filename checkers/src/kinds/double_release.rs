//! `double-release`: a release returned `released` although the acquisition it released no
//! longer owned the lock — either another acquisition had completed after it and was still
//! certainly held when the release was invoked and completed (a stale owner removed someone
//! else's lock), or the same acquisition had already been released.
//!
//! A release rejected as not-owner is the correct behaviour and never reported. Memory: the
//! open holds, plus each live process's latest acquisition per lock and its pending release.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::holds::{Acquisition, Hold};
use crate::kinds::concurrent_holders::fmt_token;
use crate::locks::LockId;
use crate::name::text;
use crate::procs::PerProcess;
use results::{AnomalyKind, EventRef, Evidence, OpResult, OpType, Process, F};
use serde_json::json;

#[derive(Debug, Clone)]
struct Acq {
    acq: Hold,
    released_at: Option<u64>,
}

#[derive(Debug, Clone)]
struct PendingRelease {
    lock: LockId,
    index: u64,
    time: u64,
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct DoubleRelease {
    /// Per live process: its latest acquisition of each lock.
    acqs: PerProcess<Vec<Acq>>,
    pending: PerProcess<PendingRelease>,
    releases: u64,
}

impl Checker for DoubleRelease {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::DoubleRelease
    }

    fn interests(&self) -> Interests {
        // An acquire counts once it completed; a lease-lost event changes nothing here.
        Interests::ACQUIRE.only(OpType::Ok)
            | Interests::RELEASE
            | Interests::EXIT
            | Interests::ANY_INFO
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        if let Process::Worker(p) = e.process {
            match (&e.f, e.kind) {
                (F::Acquire, OpType::Ok) => {
                    if let Some(now) = cx.acquired {
                        let list = self.acqs.at(p);
                        let acq = Acq {
                            acq: now.clone(),
                            released_at: None,
                        };
                        match list.iter_mut().find(|a| a.acq.lock == now.lock) {
                            Some(a) => *a = acq,
                            None => list.push(acq),
                        }
                    }
                }
                (F::Release, OpType::Invoke) => {
                    if let Some(lock) = cx.lock {
                        let rel = PendingRelease {
                            lock,
                            index: e.index,
                            time: e.time,
                        };
                        self.pending.insert(p, rel);
                    }
                }
                (F::Release, OpType::Ok) if e.result != Some(OpResult::ReleaseRejectedNotOwner) => {
                    self.releases += 1;
                    if let Some(rel) = self.pending.remove(p) {
                        self.released(p, rel, (e, cx), out);
                    }
                }
                (F::Release, _) => drop(self.pending.remove(p)),
                // A worker that noticed its lease is gone is still the same process, and it
                // may still send the release it holds the old handle for: exactly the stale
                // release this checker exists to catch. Only a death or an indeterminate
                // outcome (which retires the process id) forgets its acquisitions.
                (F::LeaseLost, _) => {}
                (F::Exit, _) | (_, OpType::Info) => {
                    self.acqs.remove(p);
                    self.pending.remove(p);
                }
                _ => {}
            }
        }
    }

    fn finish(&mut self, _end: &End, _out: &mut Findings) -> Outcome {
        if self.releases == 0 {
            Outcome::NotApplicable("no release succeeded".into())
        } else {
            Outcome::Checked
        }
    }
}

impl DoubleRelease {
    fn released(
        &mut self,
        p: u32,
        rel: PendingRelease,
        (e, cx): (&EventRef<'_>, &Context<'_>),
        out: &mut Findings,
    ) {
        let Some(acq) = self
            .acqs
            .get_mut(p)
            .and_then(|l| l.iter_mut().find(|a| a.acq.lock == rel.lock))
        else {
            return; // a release of nothing this process certainly acquired
        };
        // Built only for a report: a release that is fine must not cost allocations.
        let (rel_index, rel_time) = (rel.index, rel.time);
        let lock = cx.locks.name(rel.lock);
        let (released_at, acq) = (&mut acq.released_at, &*acq.acq);
        let evidence = |acq: &Acquisition| {
            let mut evidence = Evidence {
                lock: Some(lock.to_string()),
                owner: text(acq.owner()),
                lease: text(acq.lease()),
                token: acq.token,
                result: Some(OpResult::Released.as_str().into()),
                ..Default::default()
            };
            evidence.other.insert("process".into(), json!(p));
            evidence
        };
        if let Some(first) = *released_at {
            let mut evidence = evidence(acq);
            evidence.indices = vec![acq.index, first, rel_index, e.index];
            evidence.times = vec![acq.time, rel_time, e.time];
            let summary = format!(
                "process {p} released lock {lock} (lease {}) twice: first at index {first}, again at index {}",
                acq.lease().unwrap_or("-"),
                e.index
            );
            let obs = format!(
                "the acquisition at index {} was released at index {first} and its second \
                 release at index {} also returned released",
                acq.index, e.index
            );
            out.push(summary, evidence, diagnosis::double_release_twice(obs));
        } else if let Some(h) = cx
            .holds
            .open(acq.lock)
            .iter()
            .find(|h| h.process != p && h.index > acq.index && h.index < rel_index)
        {
            let mut evidence = evidence(acq);
            evidence.indices = vec![acq.index, h.index, rel_index, e.index];
            evidence.times = vec![acq.time, h.time, rel_time, e.time];
            evidence
                .other
                .insert("holder_process".into(), json!(h.process));
            evidence
                .other
                .insert("holder_owner".into(), json!(h.owner()));
            evidence
                .other
                .insert("holder_lease".into(), json!(h.lease()));
            evidence.other.insert("holder_token".into(), json!(h.token));
            let summary = format!(
                "stale owner process {p} (lease {}, token {}) released lock {lock} at index {} while \
                 process {} held it (lease {}, token {}, acquired at index {})",
                acq.lease().unwrap_or("-"),
                fmt_token(acq.token),
                e.index,
                h.process,
                h.lease().unwrap_or("-"),
                fmt_token(h.token),
                h.index
            );
            let obs = format!(
                "a release with the old handle {} returned released while lease {} was the \
                 current holder of {lock}",
                acq.lease().unwrap_or("-"),
                h.lease().unwrap_or("-"),
            );
            out.push(summary, evidence, diagnosis::double_release_stale(obs));
        }
        *released_at = Some(e.index);
    }
}
