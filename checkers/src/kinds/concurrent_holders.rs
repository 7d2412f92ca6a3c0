//! `concurrent-holders`: two acquisitions' certain hold intervals overlap in time. Reported but,
//! by default, not failing: under pauses a lease cannot prevent it; only fencing limits the harm.
//! Sound by construction of [`crate::holds::HoldBook`]: only certain holds (acquire `ok`) count, so an `info`
//! acquire that may have happened never produces a report.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::diagnosis;
use results::{AnomalyKind, EventRef, Evidence, OpType};
use serde_json::json;

/// See the module doc.
#[derive(Debug, Default)]
pub struct ConcurrentHolders {
    acquisitions: u64,
}

impl Checker for ConcurrentHolders {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::ConcurrentHolders
    }

    fn interests(&self) -> Interests {
        // Only a completed acquisition (`cx.acquired`) is judged.
        Interests::ACQUIRE.only(OpType::Ok)
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        let Some(now) = cx.acquired else {
            return;
        };
        let (p, lock, others) = (
            now.process,
            cx.locks.name(now.lock),
            cx.holds.open(now.lock),
        );
        self.acquisitions += 1;
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
            out.push(
                e.time,
                summary,
                evidence,
                diagnosis::concurrent_holders(obs),
            );
        }
    }

    fn finish(&mut self, _end: &End, _out: &mut Findings) -> Outcome {
        if self.acquisitions == 0 {
            Outcome::NotApplicable("no acquisition succeeded".into())
        } else {
            Outcome::Checked
        }
    }
}

pub(crate) fn fmt_token(t: Option<u64>) -> String {
    t.map_or_else(|| "none".into(), |t| t.to_string())
}
