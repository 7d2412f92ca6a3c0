//! Which of a run's planned faults landed: per fault, how many starts the plan had and how many
//! struck (a start that found nothing to strike, or could not be applied, carries an error);
//! where a pause of an operation in flight landed, before or after its completion, its start
//! line says (`landed`). A run that asked for faults and had none land tested
//! none of what it asked (docs/design.md, "What a verdict may claim"); the summary, the report,
//! JUnit and the matrix say how many landed. Stored in `results.json` as `stats.faults`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The counts of one fault, or of all of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub planned: u64,
    pub landed: u64,
}

/// A run's planned fault starts, in all and per fault.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Landing {
    pub planned: u64,
    pub landed: u64,
    #[serde(default)]
    pub by_fault: BTreeMap<String, Counts>,
}

impl Landing {
    /// One planned start of `fault`: whether it struck.
    pub fn see(&mut self, fault: &str, struck: bool) {
        self.planned += 1;
        self.landed += u64::from(struck);
        let c = self.by_fault.entry(fault.to_string()).or_default();
        c.planned += 1;
        c.landed += u64::from(struck);
    }

    /// A start of `fault` counted as landed that its stop showed struck nothing (a cut no reply
    /// spent).
    pub fn unland(&mut self, fault: &str) {
        if let Some(c) = self.by_fault.get_mut(fault).filter(|c| c.landed > 0) {
            c.landed -= 1;
            self.landed = self.landed.saturating_sub(1);
        }
    }

    /// What a run's `results.json` says of its faults, if it planned any.
    pub fn of(verdict: &crate::Verdict) -> Option<Landing> {
        serde_json::from_value(verdict.stats.get("faults")?.clone()).ok()
    }

    /// A start of `fault` counted as landed that its stop withdrew (a freeze aimed again): it
    /// was no planned start of its own.
    pub fn withdraw(&mut self, fault: &str) {
        self.unland(fault);
        if let Some(c) = self.by_fault.get_mut(fault).filter(|c| c.planned > 0) {
            c.planned -= 1;
            self.planned = self.planned.saturating_sub(1);
        }
    }

    /// The sum of several runs' (a matrix cell's seeds).
    pub fn sum<'a>(all: impl IntoIterator<Item = &'a Landing>) -> Landing {
        let mut total = Landing::default();
        for l in all {
            total.planned += l.planned;
            total.landed += l.landed;
            for (fault, c) in &l.by_fault {
                let t = total.by_fault.entry(fault.clone()).or_default();
                t.planned += c.planned;
                t.landed += c.landed;
            }
        }
        total
    }

    /// `landed/planned`, for a table.
    pub fn rate(&self) -> String {
        format!("{}/{}", self.landed, self.planned)
    }

    /// One line for the summary and the report: `3 of 4 planned faults landed: pause-holder
    /// 2/2, pause-acquiring 1/2`.
    pub fn line(&self) -> String {
        let each: Vec<String> = self
            .by_fault
            .iter()
            .map(|(fault, c)| format!("{fault} {}/{}", c.landed, c.planned))
            .collect();
        format!(
            "{} of {} planned fault{} landed: {}",
            self.landed,
            self.planned,
            if self.planned == 1 { "" } else { "s" },
            each.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_fault_read_back_and_sum_over_runs() {
        let mut a = Landing::default();
        a.see("pause-holder", true);
        a.see("pause-acquiring", true);
        a.see("pause-acquiring", false);
        assert_eq!(
            a.line(),
            "2 of 3 planned faults landed: pause-acquiring 1/2, pause-holder 1/1"
        );
        let mut b = Landing::default();
        b.see("pause-acquiring", true);
        let total = Landing::sum([&a, &b]);
        assert_eq!(total.rate(), "3/4");
        assert_eq!(total.by_fault["pause-acquiring"].landed, 2);
        let text = serde_json::to_value(&a).expect("json");
        assert_eq!(text["planned"], 3);
        let back: Landing = serde_json::from_value(text).expect("reads back");
        assert_eq!(back, a);
    }
}
