//! `concurrent-holders`: two acquisitions' certain hold intervals overlap in time. Reported but,
//! by default, not failing: under pauses a lease cannot prevent it; only fencing limits the harm.
//! Sound by construction of [`crate::holds::HoldBook`]: only certain holds (acquire `ok`) count, so an `info`
//! acquire that may have happened never produces a report.
//!
//! Its diagnosis says why the older holder lost its lease, as far as the history tells. A fault
//! on its worker or the lock service since its grant is a cause only if it can outlast the
//! lease ([`super::disturbances`]): a pause, an isolation or a stall at least a lease long, a
//! kill, a clock moved, a failover. That is the literature's case, and the cause is named. A
//! fault shorter than the lease that a correctly renewing lock survives by definition (a stall
//! of the service, a slow link, a short pause) explains nothing: when the older hold was at
//! least a lease old and nothing that outlasts a lease touched it, the lease lapsed because its
//! renewal failed, under the fault named if there was one. The second needs the test's `ttl`;
//! without it every fault counts as a cause and the diagnosis stays the general one.

use super::disturbances::{Disturbances, Occurrence};
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
        let ttl = ttl.map(|t| t.as_nanos() as u64);
        ConcurrentHolders {
            ttl,
            disturbances: Disturbances::with_ttl(ttl),
            ..ConcurrentHolders::default()
        }
    }

    /// Why `old` lost its lock by `now`, as the faults tell, in the evidence and the diagnosis.
    fn why_lost(&self, old: &Hold, now: u64, evidence: &mut Evidence, obs: String) -> Diagnosis {
        let read = self.disturbances.within(old.owner(), old.time, now);
        let on = |c: &Occurrence| {
            if c.on_holder {
                format!("process {}'s worker", old.process)
            } else {
                "the lock service".to_string()
            }
        };
        if let Some(c) = &read.cause {
            evidence.other.insert("cause".into(), json!(c.fault));
            let how = match (self.ttl, by_length(c)) {
                (Some(ttl), true) => format!(
                    " that can outlast a lease was {} of {}{}, at least the {} lease,",
                    c.fault,
                    secs(c.length),
                    still_on(c),
                    secs(ttl)
                ),
                (Some(_), false) => format!(
                    " that can outlast a lease was {}, which can end a lease whatever its length,",
                    c.fault
                ),
                (None, _) => format!(" was {}", c.fault),
            };
            let obs = format!(
                "{obs}; the latest fault on {}{how} from t={}ns",
                on(c),
                c.at
            );
            return diagnosis::concurrent_holders(obs);
        }
        let lease_old = self.ttl.filter(|&ttl| now.saturating_sub(old.time) >= ttl);
        let Some(ttl) = lease_old else {
            let obs = match &read.survived {
                Some(c) => format!(
                    "{obs}; the only fault on {} since its grant was {} of {}{}, one a lease \
                     survives, and the hold was younger than a lease",
                    on(c),
                    c.fault,
                    secs(c.length),
                    still_on(c)
                ),
                None => obs,
            };
            return diagnosis::concurrent_holders(obs);
        };
        evidence.other.insert("cause".into(), json!("none"));
        let obs = match &read.survived {
            Some(c) => {
                evidence.other.insert("under".into(), json!(c.fault));
                evidence
                    .other
                    .insert("under_ms".into(), json!(c.length / 1_000_000));
                format!(
                    "{obs}; process {} lost the lock without a cause that outlasts its lease: its \
                     renewal failed under {} of {}{}, shorter than the {} lease (on {})",
                    old.process,
                    c.fault,
                    secs(c.length),
                    still_on(c),
                    secs(ttl),
                    on(c)
                )
            }
            None => format!(
                "{obs}; no fault touched process {}'s worker or the lock service in the {} since \
                 its grant (a lease is {}): it lost the lock without a cause that outlasts its \
                 lease, so its renewal failed",
                old.process,
                secs(now.saturating_sub(old.time)),
                secs(ttl)
            ),
        };
        diagnosis::concurrent_holders_renewal_failed(obs)
    }
}

/// Whether a fault is one a lease survives while it is shorter (its length is then what made
/// it a cause).
fn by_length(c: &Occurrence) -> bool {
    super::disturbances::survived_while_shorter(&c.fault)
}

fn still_on(c: &Occurrence) -> &'static str {
    if c.ongoing {
        " (still on)"
    } else {
        ""
    }
}

/// Nanoseconds as seconds, to the millisecond and without trailing zeros ("1.2 s", "2 s").
pub(crate) fn secs(ns: u64) -> String {
    format!("{} s", (ns / 1_000_000) as f64 / 1_000.0)
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
            self.disturbances.nemesis(e, cx, &mut []);
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
