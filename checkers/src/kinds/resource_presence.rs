//! What the resource-log checkers say when they have nothing, or no log, to judge: a missing log
//! with writes in the history is unknown (the ground truth is gone), not valid.

use crate::checker::{End, Outcome, ResourceLog};
use results::{EventRef, OpType, F};

/// Counts what a resource-log checker needs to decide "not applicable" vs "unknown".
#[derive(Debug, Default)]
pub(crate) struct Presence {
    pub history_writes: u64,
    pub entries: u64,
    pub with_token: u64,
}

impl Presence {
    pub fn event(&mut self, e: &EventRef<'_>) {
        if e.f == F::Write && e.kind == OpType::Invoke {
            self.history_writes += 1;
        }
    }

    /// The outcome of a checker that needs tokens (`needs_token`) or only the log.
    pub fn outcome(&self, end: &End, needs_token: bool) -> Outcome {
        if let ResourceLog::Missing(why) = &end.resource_log {
            return if self.history_writes > 0 {
                Outcome::Unknown(format!(
                    "{why}: the history has {} writes but their ground truth is gone",
                    self.history_writes
                ))
            } else {
                Outcome::NotApplicable(format!("no writes ({why})"))
            };
        }
        if self.entries == 0 {
            Outcome::NotApplicable("the resource decided no writes".into())
        } else if needs_token && self.with_token == 0 {
            Outcome::NotApplicable("the writes carry no fence token".into())
        } else {
            Outcome::Checked
        }
    }
}
