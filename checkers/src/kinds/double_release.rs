//! `double-release`: a release returned `released` although the acquisition it released no
//! longer owned the lock — either another acquisition had completed after it and was still
//! certainly held when the release was invoked and completed (a stale owner removed someone
//! else's lock), or the same acquisition had already been released.
//!
//! A release rejected as not-owner is the correct behaviour and never reported. Memory: the
//! open holds, plus each live process's latest acquisition per lock and its pending release.

use crate::checker::{Checker, End, Findings, Outcome};
use crate::diagnosis;
use crate::holds::HoldBook;
use crate::kinds::concurrent_holders::fmt_token;
use results::{AnomalyKind, EventRef, Evidence, OpResult, OpType, Process, F};
use serde_json::json;
use crate::hashing::FastMap;

#[derive(Debug, Clone)]
struct Acq {
    lock: String,
    owner: Option<String>,
    lease: Option<String>,
    token: Option<u64>,
    index: u64,
    time: u64,
    released_at: Option<u64>,
}

#[derive(Debug, Clone)]
struct PendingRelease {
    lock: String,
    index: u64,
    time: u64,
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct DoubleRelease {
    book: HoldBook,
    /// Per live process: its latest acquisition of each lock.
    acqs: FastMap<u32, Vec<Acq>>,
    pending: FastMap<u32, PendingRelease>,
    releases: u64,
}

impl Checker for DoubleRelease {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::DoubleRelease
    }

    fn event(&mut self, e: &EventRef<'_>, out: &mut Findings) {
        if let Process::Worker(p) = e.process {
            match (&e.f, e.kind) {
                (F::Acquire, OpType::Ok) => {
                    if let Some(lock) = self.book.acquire_lock(e).map(str::to_string) {
                        let list = self.acqs.entry(p).or_default();
                        list.retain(|a| a.lock != lock);
                        list.push(Acq {
                            lock,
                            owner: e.owner.as_deref().map(str::to_string),
                            lease: e.lease.as_deref().map(str::to_string),
                            token: e.token,
                            index: e.index,
                            time: e.time,
                            released_at: None,
                        });
                    }
                }
                (F::Release, OpType::Invoke) => {
                    if let Some(lock) = &e.lock {
                        self.pending.insert(
                            p,
                            PendingRelease {
                                lock: lock.to_string(),
                                index: e.index,
                                time: e.time,
                            },
                        );
                    }
                }
                (F::Release, OpType::Ok) if e.result != Some(OpResult::ReleaseRejectedNotOwner) => {
                    self.releases += 1;
                    if let Some(rel) = self.pending.remove(&p) {
                        self.released(p, rel, e, out);
                    }
                }
                (F::Release, _) => drop(self.pending.remove(&p)),
                (F::Exit, _) | (_, OpType::Info) => {
                    self.acqs.remove(&p);
                    self.pending.remove(&p);
                }
                _ => {}
            }
        }
        self.book.apply(e, |_, _| {});
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
    fn released(&mut self, p: u32, rel: PendingRelease, e: &EventRef<'_>, out: &mut Findings) {
        let Some(acq) = self
            .acqs
            .get_mut(&p)
            .and_then(|l| l.iter_mut().find(|a| a.lock == rel.lock))
        else {
            return; // a release of nothing this process certainly acquired
        };
        let mut evidence = Evidence {
            lock: Some(acq.lock.clone()),
            owner: acq.owner.clone(),
            lease: acq.lease.clone(),
            token: acq.token,
            result: Some(OpResult::Released.as_str().into()),
            ..Default::default()
        };
        evidence.other.insert("process".into(), json!(p));
        if let Some(first) = acq.released_at {
            evidence.indices = vec![acq.index, first, rel.index, e.index];
            evidence.times = vec![acq.time, rel.time, e.time];
            let summary = format!(
                "process {p} released lock {} (lease {}) twice: first at index {first}, again at index {}",
                acq.lock,
                acq.lease.as_deref().unwrap_or("-"),
                e.index
            );
            let obs = format!(
                "the acquisition at index {} was released at index {first} and its second \
                 release at index {} also returned released",
                acq.index, e.index
            );
            out.push(summary, evidence, diagnosis::double_release_twice(obs));
        } else if let Some(h) = self
            .book
            .open(&acq.lock)
            .iter()
            .find(|h| h.process != p && h.index > acq.index && h.index < rel.index)
        {
            evidence.indices = vec![acq.index, h.index, rel.index, e.index];
            evidence.times = vec![acq.time, h.time, rel.time, e.time];
            evidence
                .other
                .insert("holder_process".into(), json!(h.process));
            evidence.other.insert("holder_owner".into(), json!(h.owner));
            evidence.other.insert("holder_lease".into(), json!(h.lease));
            evidence.other.insert("holder_token".into(), json!(h.token));
            let summary = format!(
                "stale owner process {p} (lease {}, token {}) released lock {} at index {} while \
                 process {} held it (lease {}, token {}, acquired at index {})",
                acq.lease.as_deref().unwrap_or("-"),
                fmt_token(acq.token),
                acq.lock,
                e.index,
                h.process,
                h.lease.as_deref().unwrap_or("-"),
                fmt_token(h.token),
                h.index
            );
            let obs = format!(
                "a release with the old handle {} returned released while lease {} was the \
                 current holder of {}",
                acq.lease.as_deref().unwrap_or("-"),
                h.lease.as_deref().unwrap_or("-"),
                acq.lock
            );
            out.push(summary, evidence, diagnosis::double_release_stale(obs));
        }
        acq.released_at = Some(e.index);
    }
}
