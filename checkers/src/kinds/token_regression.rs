//! `token-regression`: acquisition X completed before acquisition Y was invoked (same lock) and
//! Y got a *lower* token. An *equal* token from a different lease is reported once, as
//! `duplicate-token`, not twice. Not applicable when the recipe issues no tokens (Redlock).
//! Memory: none of its own: the shared hold book keeps each lock's highest completed token and,
//! with each pending acquire, the one it was when the acquire was invoked.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::holds::Acquisition;
use crate::name::text;
use results::{AnomalyKind, EventRef, Evidence, OpType, Process, F};
use serde_json::json;

/// See the module doc.
#[derive(Debug, Default)]
pub struct TokenRegression {
    with_token: u64,
    without_token: u64,
}

impl Checker for TokenRegression {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::TokenRegression
    }

    fn interests(&self) -> Interests {
        // What the lock's highest token was at the invoke, the shared hold book says: visited
        // for the invokes, fails and exits too, this checker kept its own copy of that at a
        // cost of 2% of the engine's instructions on vs_porcupine's histories.
        Interests::ACQUIRE.only(OpType::Ok)
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        let (Process::Worker(p), F::Acquire, OpType::Ok) = (e.process, &e.f, e.kind) else {
            return;
        };
        match (e.token, cx.acquired) {
            (Some(t), Some(now)) => {
                self.with_token += 1;
                if let Some(x) = cx.holds.highest_at_invoke(p).filter(|x| t < x.fence()) {
                    report(cx.locks.name(now.lock), x, now, out);
                }
            }
            _ => self.without_token += 1,
        }
    }

    fn finish(&mut self, _end: &End, _out: &mut Findings) -> Outcome {
        token_outcome(self.with_token, self.without_token)
    }
}

pub(crate) fn token_outcome(with_token: u64, without_token: u64) -> Outcome {
    match (with_token, without_token) {
        (0, 0) => Outcome::NotApplicable("no acquisition succeeded".into()),
        (0, _) => Outcome::NotApplicable(
            "the recipe issues no fence token (acquisitions have no token)".into(),
        ),
        _ => Outcome::Checked,
    }
}

fn report(lock: &str, x: &Acquisition, y: &Acquisition, out: &mut Findings) {
    let summary = format!(
        "lock {lock}: process {} got token {} at index {} after process {} had completed with \
         token {} at index {}",
        y.process,
        y.fence(),
        y.index,
        x.process,
        x.fence(),
        x.index
    );
    let mut evidence = Evidence {
        lock: Some(lock.to_string()),
        owner: text(y.owner()),
        lease: text(y.lease()),
        token: y.token,
        indices: vec![x.index, y.index],
        times: vec![x.time, y.time],
        ..Default::default()
    };
    evidence
        .other
        .insert("earlier_process".into(), json!(x.process));
    evidence
        .other
        .insert("earlier_lease".into(), json!(x.lease()));
    evidence
        .other
        .insert("earlier_token".into(), json!(x.fence()));
    let obs = format!(
        "token {} was issued after token {} had been issued and returned: tokens went backwards",
        y.fence(),
        x.fence()
    );
    out.push(y.time, summary, evidence, diagnosis::token_regression(obs));
}
