//! `token-regression`: acquisition X completed before acquisition Y was invoked (same lock) and
//! Y got a *lower* token. An *equal* token from a different lease is reported once, as
//! `duplicate-token`, not twice. Not applicable when the recipe issues no tokens (Redlock).
//!
//! Judged by the duplicate-token checker ([`super::duplicate_token`]), which compares each grant's
//! token with the lock's highest when the acquire was invoked anyway: equal (another lease) is a
//! duplicate, lower a regression, so one comparison sorts both kinds. A checker of its own,
//! visited for every acquire `ok` to make the same comparison, cost 2% of the engine's
//! instructions on vs_porcupine's histories. This file keeps the kind's outcome and evidence.
//! Memory: none: the shared hold book keeps each lock's highest completed token and, with each
//! pending acquire, the one it was when the acquire was invoked.

use crate::checker::{Findings, Outcome};
use crate::diagnosis;
use crate::holds::Acquisition;
use crate::name::text;
use results::Evidence;
use serde_json::json;

/// A token kind's outcome from the grants it saw with and without a token.
pub(crate) fn token_outcome(with_token: u64, without_token: u64) -> Outcome {
    match (with_token, without_token) {
        (0, 0) => Outcome::NotApplicable("no acquisition succeeded".into()),
        (0, _) => Outcome::NotApplicable(
            "the recipe issues no fence token (acquisitions have no token)".into(),
        ),
        _ => Outcome::Checked,
    }
}

/// Y (`y`) got a lower token than X (`x`), the lock's highest when Y's acquire was invoked.
pub(crate) fn report(lock: &str, x: &Acquisition, y: &Acquisition, out: &mut Findings) {
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
