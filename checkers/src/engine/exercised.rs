//! What a run exercised, from the engine's counts: the operations line of the summary, and the
//! reasons a run that held nothing or had no write decided cannot vouch for anything.

use super::{route, Engine};
use crate::checker::{Interests, ResourceLog};
use results::OpType;
use serde_json::json;

impl Engine {
    /// How many acquires and writes completed ok, failed and stayed indeterminate: what the
    /// run exercised, in the summary's words.
    pub(super) fn operations(&self) -> serde_json::Value {
        let count = |op: Interests, kind: OpType| self.seen[route(op.only(kind))];
        let one = |op: Interests| {
            json!({
                "ok": count(op, OpType::Ok),
                "fail": count(op, OpType::Fail),
                "info": count(op, OpType::Info),
            })
        };
        json!({ "acquire": one(Interests::ACQUIRE), "write": one(Interests::WRITE) })
    }

    /// Why the run cannot vouch for anything (docs/design.md, "What a verdict may claim"): acquires
    /// were attempted and none succeeded, or writes were attempted and the resource decided
    /// none. A run that never held the lock or never had a write decided tested nothing.
    pub(super) fn exercised_nothing(&self) -> Vec<String> {
        let count = |op: Interests, kind: OpType| self.seen[route(op.only(kind))];
        let mut why = Vec::new();
        let (acquires, granted) = (
            count(Interests::ACQUIRE, OpType::Invoke),
            count(Interests::ACQUIRE, OpType::Ok),
        );
        if acquires > 0 && granted == 0 {
            why.push(format!(
                "{acquires} acquires were attempted and none succeeded: the run exercised no hold"
            ));
        }
        let writes = count(Interests::WRITE, OpType::Invoke);
        if writes > 0 && self.resource_entries == 0 && self.resource_log == ResourceLog::Present {
            why.push(format!(
                "{writes} writes were attempted and the resource decided none: the run exercised \
                 no fenced write"
            ));
        }
        why
    }
}
