//! The search: the stored test first (its own seed first), then, round after round, the time
//! limit halved while that keeps the kind, each fault removed in turn (the last first), and one
//! worker fewer while that keeps it; a reduction is kept when one of its tries (up to
//! `tries`, seeds counted up from the test's) shows the kind. It stops when a round keeps
//! nothing, or before the budget of runs or time would be spent, keeping enough of it to run
//! the smallest test `confirm` more times: its reproduction rate.

use super::{Candidate, Tried, Tries};
use results::AnomalyKind;
use std::time::{Duration, Instant};

/// How much the search may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Runs in all, the confirmation's included.
    pub runs: usize,
    pub time: Duration,
    /// Tries per candidate (kept at the first that shows the kind).
    pub tries: usize,
    /// Runs of the smallest test at the end, for its reproduction rate.
    pub confirm: usize,
}

/// One step of the search, as printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub number: usize,
    /// What this step changed (`the stored test`, `time limit 30s -> 15s` ...).
    pub change: String,
    pub tries: Vec<Tried>,
    pub kept: bool,
    /// The test after this step (kept or not).
    pub test: String,
}

/// What the search found.
#[derive(Debug, Clone, PartialEq)]
pub struct Shrunk {
    pub kind: AnomalyKind,
    pub steps: Vec<Step>,
    /// The smallest test that showed the kind (the stored one when nothing could go).
    pub best: Candidate,
    /// The confirmation's tries of `best`.
    pub confirm: Vec<Tried>,
    pub runs: usize,
    pub wall: Duration,
    /// Why it stopped.
    pub stopped: String,
}

impl Shrunk {
    /// How many of the confirmation's tries showed the kind.
    pub fn rate(&self) -> (usize, usize) {
        let shown = self.confirm.iter().filter(|t| t.shows(self.kind)).count();
        (shown, self.confirm.len())
    }

    /// Whether the stored test showed the kind at all (else nothing was shrunk).
    pub fn reproduced(&self) -> bool {
        self.steps.first().is_some_and(|s| s.kept)
    }

    /// A run of the smallest test that showed the kind: what `reproduce` works from.
    pub fn showing_run(&self) -> Option<&std::path::Path> {
        let mine = self.confirm.iter().chain(
            self.steps
                .iter()
                .rev()
                .filter(|s| s.kept)
                .flat_map(|s| &s.tries),
        );
        mine.filter(|t| t.shows(self.kind))
            .find_map(|t| t.dir.as_deref())
    }
}

struct Search<'a> {
    kind: AnomalyKind,
    budget: Budget,
    tries: &'a mut dyn Tries,
    on_step: &'a mut dyn FnMut(&Step),
    start: Instant,
    runs: usize,
    steps: Vec<Step>,
    /// The slowest try so far: the time one more try may take.
    slowest: Duration,
    /// A step got fewer than `tries` tries: the budget, not the test, decided it.
    cut_short: bool,
}

impl Search<'_> {
    /// Whether `n` more runs fit, the confirmation's kept aside.
    fn affords(&self, n: usize) -> bool {
        let runs = self.runs + n + self.budget.confirm <= self.budget.runs;
        let time = self.start.elapsed() + self.slowest * (n + self.budget.confirm) as u32
            <= self.budget.time;
        runs && time
    }

    fn attempt(&mut self, c: &Candidate, change: String) -> anyhow::Result<Option<bool>> {
        if !self.affords(1) {
            return Ok(None);
        }
        let number = self.steps.len() + 1;
        let base = c.plan.seed;
        let mut tries = Vec::new();
        let mut kept = false;
        for t in 0..self.budget.tries {
            if t > 0 && !self.affords(1) {
                self.cut_short = true;
                break;
            }
            let name = format!("{}-shrink{number}", base_name(&c.plan.name));
            let tried = self.tries.run(&c.for_try(&name, base + t as u64))?;
            self.runs += 1;
            self.slowest = self.slowest.max(tried.wall);
            kept = tried.shows(self.kind);
            tries.push(tried);
            if kept {
                break;
            }
        }
        let step = Step {
            number,
            change,
            tries,
            kept,
            test: c.summary(),
        };
        (self.on_step)(&step);
        self.steps.push(step);
        Ok(Some(kept))
    }
}

/// The name a shrink's tries are named after (a shrunk test shrunk again keeps one suffix).
fn base_name(name: &str) -> &str {
    match name.rfind("-shrink") {
        Some(i) if name[i + 7..].chars().all(|c| c.is_ascii_digit()) => &name[..i],
        _ => name,
    }
}

/// Shrinks `stored` for `kind`; `on_step` sees each step as it ends.
pub fn search(
    stored: Candidate,
    kind: AnomalyKind,
    budget: Budget,
    tries: &mut dyn Tries,
    on_step: &mut dyn FnMut(&Step),
) -> anyhow::Result<Shrunk> {
    let mut s = Search {
        kind,
        budget,
        tries,
        on_step,
        start: Instant::now(),
        runs: 0,
        steps: Vec::new(),
        slowest: Duration::ZERO,
        cut_short: false,
    };
    let mut best = stored.clone();
    let stopped = 'search: {
        match s.attempt(&stored, "the stored test".into())? {
            None => break 'search "the budget does not allow one run".to_string(),
            Some(false) => {
                break 'search format!(
                    "the stored test did not show {kind} in {} tries: nothing to shrink from",
                    budget.tries
                )
            }
            Some(true) => {}
        }
        loop {
            let mut kept_any = false;
            while let Some((c, what)) = best.halved() {
                match s.attempt(&c, what)? {
                    None => break 'search "the budget is spent".to_string(),
                    Some(true) => (best, kept_any) = (c, true),
                    Some(false) => break,
                }
            }
            for i in (0..best.faults().steps.len()).rev() {
                let Some((c, what)) = best.without_fault(i) else {
                    continue;
                };
                match s.attempt(&c, what)? {
                    None => break 'search "the budget is spent".to_string(),
                    Some(true) => (best, kept_any) = (c, true),
                    Some(false) => {}
                }
            }
            while let Some((c, what)) = best.fewer_workers() {
                match s.attempt(&c, what)? {
                    None => break 'search "the budget is spent".to_string(),
                    Some(true) => (best, kept_any) = (c, true),
                    Some(false) => break,
                }
            }
            if s.cut_short {
                break 'search "the budget is spent (its last steps had fewer tries)".to_string();
            }
            if !kept_any {
                break 'search "a whole round kept nothing: no smaller test showed it".to_string();
            }
        }
    };
    let mut confirm = Vec::new();
    if s.steps.first().is_some_and(|x| x.kept) {
        let name = format!("{}-confirm", base_name(&best.plan.name));
        for t in 0..budget.confirm {
            let tried = s
                .tries
                .run(&best.for_try(&name, best.plan.seed + t as u64))?;
            s.runs += 1;
            confirm.push(tried);
        }
    }
    Ok(Shrunk {
        kind,
        steps: s.steps,
        best,
        confirm,
        runs: s.runs,
        wall: s.start.elapsed(),
        stopped,
    })
}

#[cfg(test)]
mod tests;
