//! `concurrent-holders`: two acquisitions' certain hold intervals overlap in time. Reported but,
//! by default, not failing: under pauses a lease cannot prevent it; only fencing limits the harm.
//! Sound by construction of [`HoldBook`]: only certain holds (acquire `ok`) count, so an `info`
//! acquire that may have happened never produces a report.

use crate::checker::{Checker, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::holds::HoldBook;
use results::{AnomalyKind, EventRef, Evidence};
use serde_json::json;

/// See the module doc.
#[derive(Debug, Default)]
pub struct ConcurrentHolders {
    book: HoldBook,
    acquisitions: u64,
}

impl Checker for ConcurrentHolders {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::ConcurrentHolders
    }

    fn interests(&self) -> Interests {
        Interests::ACQUIRE
            | Interests::RELEASE
            | Interests::LEASE_LOST
            | Interests::EXIT
            | Interests::ANY_INFO
    }

    fn event(&mut self, e: &EventRef<'_>, out: &mut Findings) {
        let acquisitions = &mut self.acquisitions;
        self.book.apply(e, |others, new| {
            *acquisitions += 1;
            for old in others.iter().filter(|h| h.process != new.process) {
                let summary = format!(
                    "lock {} held by process {} (lease {}, token {}) since index {} when process {} \
                     acquired it (lease {}, token {}) at index {}",
                    new.lock,
                    old.process,
                    old.lease.as_deref().unwrap_or("-"),
                    fmt_token(old.token),
                    old.index,
                    new.process,
                    new.lease.as_deref().unwrap_or("-"),
                    fmt_token(new.token),
                    new.index
                );
                let mut evidence = Evidence {
                    lock: Some(new.lock.to_string()),
                    owner: new.owner.as_ref().map(ToString::to_string),
                    lease: new.lease.as_ref().map(ToString::to_string),
                    token: new.token,
                    indices: vec![old.index, new.index],
                    times: vec![old.time, new.time],
                    ..Default::default()
                };
                evidence.other.insert("process".into(), json!(new.process));
                evidence.other.insert("other_process".into(), json!(old.process));
                evidence.other.insert("other_owner".into(), json!(old.owner));
                evidence.other.insert("other_lease".into(), json!(old.lease));
                evidence.other.insert("other_token".into(), json!(old.token));
                let obs = format!(
                    "two certain holds of {} overlap from t={}ns: process {} had not released, \
                     lost its lease or exited when process {} acquired",
                    new.lock, new.time, old.process, new.process
                );
                out.push(summary, evidence, diagnosis::concurrent_holders(obs));
            }
        });
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
