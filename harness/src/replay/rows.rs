//! The rows of the step table: what each step did, what was expected, whether it held. Built
//! by [`super::steps`]; printed by [`super::table`].

use super::scenario::{Expect, Step};

/// One line of the step table.
#[derive(Debug, Clone)]
pub struct Row {
    /// 1-based step number.
    pub step: usize,
    pub line: u32,
    /// The worker, `wait` or `nemesis`.
    pub who: String,
    pub action: String,
    pub token: Option<u64>,
    pub highest_before: Option<u64>,
    pub result: String,
    pub expect: Option<Expect>,
    /// `None`: nothing expected (or not decided yet).
    pub held: Option<bool>,
    pub why: Option<String>,
}

impl Row {
    pub(super) fn new(step: usize, s: &Step) -> Row {
        let (line, who, action, expect) = match s {
            Step::Worker {
                worker,
                action,
                expect,
                line,
            } => (*line, worker.clone(), action.to_string(), expect.clone()),
            Step::Control {
                control,
                expect,
                line,
            } => (
                *line,
                control.who().to_string(),
                control.to_string(),
                expect.clone(),
            ),
        };
        Row {
            step,
            line,
            who,
            action,
            token: None,
            highest_before: None,
            result: String::new(),
            expect,
            held: None,
            why: None,
        }
    }
}

/// How an expectation reads in the table: as in the scenario file.
pub fn expect_text(e: &Expect) -> String {
    e.to_string()
}
