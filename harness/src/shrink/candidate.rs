//! A test being shrunk: the stored run's validated plan, whose fault plan is made explicit (its
//! timeline lines, so one fault can go without redrawing the others), and the reductions tried
//! on it. A candidate is written as an ordinary test file (`fencecheck run --config` runs it).

use crate::config::{plan_file, TestPlan};
use nemesis::Plan;
use std::time::Duration;

/// The shortest time limit a halving goes down to.
const SHORTEST: Duration = Duration::from_secs(4);

/// One test of the search.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub plan: TestPlan,
}

impl Candidate {
    /// The stored test, its fault plan as explicit timeline lines (the same faults at the same
    /// times: the seeded draw made them, the seed no longer needs to).
    pub fn from_plan(mut plan: TestPlan) -> Candidate {
        plan.faults.explicit = true;
        plan.faults.drawn.clear();
        plan.docker_slot = None;
        Candidate { plan }
    }

    /// What the test is now, in one line.
    pub fn summary(&self) -> String {
        let p = &self.plan;
        format!(
            "{} fault(s), {} worker(s), time limit {}",
            p.faults.plan.steps.len(),
            p.workers,
            p.time_limit
        )
    }

    /// The time limit halved (not under 4 s or the 2 x ttl a holder fault needs); the faults
    /// that would end after it go with it. `None` when it cannot be halved.
    pub fn halved(&self) -> Option<(Candidate, String)> {
        let old = self.plan.time_limit.get();
        let new = old / 2;
        if new < SHORTEST.max(self.plan.ttl().get() * 2) {
            return None;
        }
        let new = Duration::from_millis(new.as_millis() as u64);
        let mut c = self.clone();
        c.plan.time_limit = results::Dur(new);
        let before = c.plan.faults.plan.steps.len();
        c.plan.faults.plan.steps.retain(|s| s.end() <= new);
        let dropped = before - c.plan.faults.plan.steps.len();
        let what = format!(
            "time limit {} -> {}{}",
            results::Dur(old),
            results::Dur(new),
            match dropped {
                0 => String::new(),
                n => format!(" (drops {n} fault(s) past it)"),
            }
        );
        Some((c, what))
    }

    /// Without fault `i` of the plan.
    pub fn without_fault(&self, i: usize) -> Option<(Candidate, String)> {
        let step = *self.plan.faults.plan.steps.get(i)?;
        let mut c = self.clone();
        c.plan.faults.plan.steps.remove(i);
        Some((c, format!("without fault {}: {step}", i + 1)))
    }

    /// One worker fewer (not under 2: one worker alone cannot contend).
    pub fn fewer_workers(&self) -> Option<(Candidate, String)> {
        let n = self.plan.workers;
        if n <= 2 {
            return None;
        }
        let mut c = self.clone();
        c.plan.workers = n - 1;
        Some((c, format!("workers {n} -> {}", n - 1)))
    }

    /// This candidate with seed `seed`, named `name` (a try's run directory and run id).
    pub fn for_try(&self, name: &str, seed: u64) -> Candidate {
        let mut c = self.clone();
        c.plan.name = name.to_string();
        c.plan.seed = seed;
        c
    }

    /// The test file's text, with `header` as its leading comment lines.
    pub fn to_yaml(&self, header: &[String]) -> anyhow::Result<String> {
        let body = plan_file::to_yaml(&self.plan).map_err(|e| anyhow::anyhow!(e))?;
        let mut out: String = header.iter().map(|l| format!("# {l}\n")).collect();
        out.push_str(&body);
        Ok(out)
    }

    /// The fault plan (for tests and the report).
    pub fn faults(&self) -> &Plan {
        &self.plan.faults.plan
    }
}
