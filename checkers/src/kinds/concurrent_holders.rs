//! `concurrent-holders`: two acquisitions' certain hold intervals overlap in time. Reported but,
//! by default, not failing: under pauses a lease cannot prevent it; only fencing limits the harm.
//! Sound by construction of [`crate::holds::HoldBook`]: only certain holds (acquire `ok`) count, so an `info`
//! acquire that may have happened never produces a report.
//!
//! Its diagnosis says why the older holder lost its lease, as far as the history tells: after a
//! fault that stopped it or the service (a pause, a partition, a clock jump: the literature's
//! case), or without any — the older hold was at least a lease old and no fault touched its
//! worker or the lock service for a whole lease before the other grant, so the lease lapsed
//! while nothing stopped its renewal: the renewal itself failed. The second needs the test's
//! `ttl`; without it the diagnosis stays the general one.

use super::disturbances::Disturbances;
use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::holds::Hold;
use results::{AnomalyKind, Diagnosis, EventRef, Evidence, OpType, Process};
use serde_json::json;
use std::time::Duration;

/// See the module doc.
#[derive(Debug, Default)]
pub struct ConcurrentHolders {
    acquisitions: u64,
    /// The lease's length (ns), when the test gives one.
    ttl: Option<u64>,
    disturbances: Disturbances,
}

impl ConcurrentHolders {
    pub fn new(ttl: Option<Duration>) -> ConcurrentHolders {
        ConcurrentHolders {
            ttl: ttl.map(|t| t.as_nanos() as u64),
            ..ConcurrentHolders::default()
        }
    }

    /// Why `old` lost its lock by `now`, as the faults tell, in the evidence and the diagnosis.
    fn why_lost(&self, old: &Hold, now: u64, evidence: &mut Evidence, obs: String) -> Diagnosis {
        let owner = old.owner();
        let quiet = self.ttl.filter(|&ttl| {
            now.saturating_sub(old.time) >= ttl
                && !self
                    .disturbances
                    .disturbed_since(owner, now.saturating_sub(ttl))
        });
        if let Some(ttl) = quiet {
            evidence.other.insert("cause".into(), json!("none"));
            let obs = format!(
                "{obs}; no fault touched process {}'s worker or the lock service in the {} ms \
                 (a whole lease) before",
                old.process,
                ttl / 1_000_000
            );
            return diagnosis::concurrent_holders_renewal_failed(obs);
        }
        let since_grant = self.disturbances.disturbed_since(owner, old.time);
        let obs = match self.disturbances.latest(owner).filter(|_| since_grant) {
            Some(c) => {
                let what = if c.on_holder {
                    format!("process {}'s worker", old.process)
                } else {
                    "the lock service".to_string()
                };
                evidence.other.insert("cause".into(), json!(c.fault));
                format!(
                    "{obs}; the latest fault on {what} was {} at t={}ns",
                    c.fault, c.at
                )
            }
            None => obs,
        };
        diagnosis::concurrent_holders(obs)
    }
}

impl Checker for ConcurrentHolders {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::ConcurrentHolders
    }

    fn interests(&self) -> Interests {
        // Only a completed acquisition (`cx.acquired`) is judged; the faults say why.
        Interests::ACQUIRE.only(OpType::Ok) | Interests::NEMESIS
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        if e.process == Process::Nemesis {
            self.disturbances.nemesis(e, &mut []);
            return;
        }
        let Some(now) = cx.acquired else {
            return;
        };
        let (p, lock, others) = (
            now.process,
            cx.locks.name(now.lock),
            cx.holds.open(now.lock),
        );
        self.acquisitions += 1;
        self.overlaps(e, p, lock, others, out);
    }

    fn finish(&mut self, _end: &End, _out: &mut Findings) -> Outcome {
        if self.acquisitions == 0 {
            Outcome::NotApplicable("no acquisition succeeded".into())
        } else {
            Outcome::Checked
        }
    }
}

impl ConcurrentHolders {
    /// The event when it is a grant of a lock no other process holds (most are), counted;
    /// false for anything else, which [`Checker::event`] then judges. Called inline by the
    /// engine: the call of `event` for every grant cost more than this check (4% of the
    /// engine's instructions on vs_porcupine's histories).
    #[inline]
    pub(crate) fn unopposed(&mut self, e: &EventRef<'_>, cx: &Context<'_>) -> bool {
        let Some(now) = cx.acquired.filter(|_| e.process != Process::Nemesis) else {
            return false;
        };
        let alone = cx
            .holds
            .open(now.lock)
            .iter()
            .all(|h| h.process == now.process);
        self.acquisitions += u64::from(alone);
        alone
    }

    /// Reports each hold of another process still open when `p` acquired.
    fn overlaps(&self, e: &EventRef<'_>, p: u32, lock: &str, others: &[Hold], out: &mut Findings) {
        let lease = e.lease.as_deref();
        for old in others.iter().filter(|h| h.process != p) {
            let summary = format!(
                "lock {lock} held by process {} (lease {}, token {}) since index {} when process \
                 {p} acquired it (lease {}, token {}) at index {}",
                old.process,
                old.lease().unwrap_or("-"),
                fmt_token(old.token),
                old.index,
                lease.unwrap_or("-"),
                fmt_token(e.token),
                e.index
            );
            let mut evidence = Evidence {
                lock: Some(lock.to_string()),
                owner: e.owner.as_deref().map(str::to_string),
                lease: lease.map(str::to_string),
                token: e.token,
                indices: vec![old.index, e.index],
                times: vec![old.time, e.time],
                ..Default::default()
            };
            evidence.other.insert("process".into(), json!(p));
            evidence
                .other
                .insert("other_process".into(), json!(old.process));
            evidence
                .other
                .insert("other_owner".into(), json!(old.owner()));
            evidence
                .other
                .insert("other_lease".into(), json!(old.lease()));
            evidence
                .other
                .insert("other_token".into(), json!(old.token));
            let obs = format!(
                "two certain holds of {lock} overlap from t={}ns: process {} had not released, \
                 lost its lease or exited when process {p} acquired",
                e.time, old.process
            );
            let diagnosis = self.why_lost(old, e.time, &mut evidence, obs);
            out.push(e.time, summary, evidence, diagnosis);
        }
    }
}

pub(crate) fn fmt_token(t: Option<u64>) -> String {
    t.map_or_else(|| "none".into(), |t| t.to_string())
}
