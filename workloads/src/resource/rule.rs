//! The fencing rule as a pure function, and its inverse: an audit that re-decides every entry of
//! a `resource.jsonl` from the log's own order and reports the first entry where the logged
//! decision or `highest_before` disagrees. The register backend decides with this very function;
//! the real backends decide inside their stores, and the audit is how tests prove they agree.

use results::{ResourceEntry, WriteResult};
use std::collections::{HashMap, HashSet};

/// How strictly a resource checks writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Reject a token lower than the highest accepted for the key (`rejected-stale-fence`).
    Strict,
    /// `Strict`, and also reject an `op_id` already applied to the key (`rejected-duplicate`).
    StrictIdempotent,
    /// Accept everything: the unfenced contrast.
    None,
}

impl Mode {
    pub fn as_str(&self) -> &'static str {
        match self {
            Mode::Strict => "strict",
            Mode::StrictIdempotent => "strict-idempotent",
            Mode::None => "none",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "strict" => Ok(Mode::Strict),
            "strict-idempotent" => Ok(Mode::StrictIdempotent),
            "none" => Ok(Mode::None),
            _ => Err(format!(
                "unknown resource mode {s:?}: expected strict, strict-idempotent or none"
            )),
        }
    }
}

/// A backend's decision on one write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub result: WriteResult,
    /// Highest token accepted for the key before this decision (None: none yet).
    pub highest_before: Option<u64>,
    /// The store's own order of decisions where it has one (etcd revision, PostgreSQL/Redis
    /// per-key decision counter); lets tests confirm that log order is the store's order.
    pub store_order: Option<u64>,
}

/// What the rule remembers about one key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeyState {
    pub highest: Option<u64>,
    pub value: Option<serde_json::Value>,
    pub applied: HashSet<String>,
}

/// Decides one write against a key's state and applies it if accepted. A missing token is
/// stale under a strict mode (the caller should have refused it earlier; see `check_token`).
pub fn decide(
    mode: Mode,
    state: &mut KeyState,
    token: Option<u64>,
    op_id: &str,
    value: &serde_json::Value,
) -> (WriteResult, Option<u64>) {
    let highest_before = state.highest;
    let result = match mode {
        Mode::None => WriteResult::Accepted,
        Mode::StrictIdempotent if state.applied.contains(op_id) => WriteResult::RejectedDuplicate,
        Mode::Strict | Mode::StrictIdempotent => match (token, highest_before) {
            (None, _) => WriteResult::RejectedStaleFence,
            (Some(t), Some(h)) if t < h => WriteResult::RejectedStaleFence,
            _ => WriteResult::Accepted,
        },
    };
    if result.is_accepted() {
        state.highest = highest_before.max(token);
        state.value = Some(value.clone());
        if mode == Mode::StrictIdempotent {
            state.applied.insert(op_id.to_string());
        }
    }
    (result, highest_before)
}

/// A strict mode cannot decide a write without a token: refuse it before anything is logged.
pub fn check_token(mode: Mode, token: Option<u64>) -> Result<(), String> {
    match (mode, token) {
        (Mode::Strict | Mode::StrictIdempotent, None) => Err(format!(
            "mode {} needs a fence token; tokenless recipes (redlock) can only write to mode none",
            mode.as_str()
        )),
        _ => Ok(()),
    }
}

/// How the audit re-decides: by the fencing rule itself, or only by the safety it implies (a
/// guard such as etcd's "lock key still has my create revision" may reject a write the token
/// rule would accept — a lock that expired with nobody holding it — but never the reverse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audit {
    Exact(Mode),
    /// Accepted ⇒ token ≥ highest_before; token < highest_before ⇒ rejected.
    Guard,
}

/// Re-decides each entry in log order; `Err` names the first seq where the log disagrees with
/// itself (wrong decision, wrong `highest_before`, or seqs not 0.. in file order).
pub fn audit(entries: &[ResourceEntry], how: Audit) -> Result<(), String> {
    let mut keys: HashMap<&str, KeyState> = HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        if e.seq != i as u64 {
            return Err(format!("line {} has seq {}, expected {i}", i + 1, e.seq));
        }
        let state = keys.entry(&e.key).or_default();
        if e.highest_before != state.highest {
            return Err(format!(
                "seq {}: highest_before {:?} but the log's accepted writes to {:?} give {:?}",
                e.seq, e.highest_before, e.key, state.highest
            ));
        }
        match how {
            Audit::Exact(mode) => {
                let (result, _) = decide(mode, state, e.token, &e.op_id, &e.value);
                if result != e.result {
                    return Err(format!(
                        "seq {}: logged {} but re-deciding gives {} (token {:?}, highest_before {:?})",
                        e.seq, e.result.as_str(), result.as_str(), e.token, e.highest_before
                    ));
                }
            }
            Audit::Guard => {
                let stale = matches!((e.token, state.highest), (Some(t), Some(h)) if t < h);
                if stale && e.result.is_accepted() {
                    return Err(format!(
                        "seq {}: accepted stale token {:?} < {:?}",
                        e.seq, e.token, state.highest
                    ));
                }
                if e.result.is_accepted() {
                    state.highest = state.highest.max(e.token);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(mode: Mode, writes: &[(Option<u64>, &str)]) -> Vec<(WriteResult, Option<u64>)> {
        let mut s = KeyState::default();
        writes
            .iter()
            .map(|(t, op)| decide(mode, &mut s, *t, op, &json!(0)))
            .collect()
    }

    #[test]
    fn strict_rejects_lower_tokens_and_accepts_equal_or_higher() {
        use WriteResult::*;
        let r = run(
            Mode::Strict,
            &[
                (Some(2), "a"),
                (Some(1), "b"),
                (Some(2), "c"),
                (Some(3), "d"),
            ],
        );
        assert_eq!(
            r,
            vec![
                (Accepted, None),
                (RejectedStaleFence, Some(2)),
                (Accepted, Some(2)),
                (Accepted, Some(2))
            ]
        );
    }

    #[test]
    fn idempotent_rejects_a_replayed_op_id_first() {
        use WriteResult::*;
        let r = run(
            Mode::StrictIdempotent,
            &[(Some(2), "a"), (Some(3), "a"), (Some(1), "b")],
        );
        assert_eq!(
            r,
            vec![
                (Accepted, None),
                (RejectedDuplicate, Some(2)),
                (RejectedStaleFence, Some(2))
            ]
        );
    }

    #[test]
    fn none_accepts_everything_and_tracks_the_highest() {
        use WriteResult::*;
        let r = run(
            Mode::None,
            &[(Some(5), "a"), (Some(1), "b"), (None, "c"), (Some(2), "d")],
        );
        assert_eq!(
            r,
            vec![
                (Accepted, None),
                (Accepted, Some(5)),
                (Accepted, Some(5)),
                (Accepted, Some(5))
            ]
        );
    }

    #[test]
    fn the_audit_catches_a_stale_acceptance_and_a_wrong_highest_before() {
        let e = |seq, token, hb, result| ResourceEntry {
            seq,
            time: 0,
            key: "k".into(),
            process: 1,
            owner: "o".into(),
            lease: "l".into(),
            token: Some(token),
            op_id: format!("op{seq}"),
            value: json!(seq),
            highest_before: hb,
            result,
        };
        let good = vec![
            e(0, 2, None, WriteResult::Accepted),
            e(1, 1, Some(2), WriteResult::RejectedStaleFence),
        ];
        assert_eq!(audit(&good, Audit::Exact(Mode::Strict)), Ok(()));
        assert_eq!(audit(&good, Audit::Guard), Ok(()));
        let stale = vec![
            e(0, 2, None, WriteResult::Accepted),
            e(1, 1, Some(2), WriteResult::Accepted),
        ];
        assert!(audit(&stale, Audit::Guard)
            .unwrap_err()
            .contains("seq 1: accepted stale"));
        let wrong_hb = vec![
            e(0, 2, None, WriteResult::Accepted),
            e(1, 3, Some(1), WriteResult::Accepted),
        ];
        assert!(audit(&wrong_hb, Audit::Exact(Mode::Strict))
            .unwrap_err()
            .contains("highest_before"));
    }
}
