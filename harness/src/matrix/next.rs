//! What to run next for a cell that broke its expectation: `fencecheck shrink` on its first
//! failing seed's run (the smallest test that still fails that way), which then offers
//! `fencecheck reproduce` (docs/reproduce.md). `matrix.md` prints it under the cells that did
//! not pass; `matrix.html` shows it beside the cell, linked to that seed's report.

use super::judge::{CellSummary, Status};
use std::path::Path;

/// The first failing seed of a cell that broke its expectation, and its run directory: the
/// first seed (in the cell's order) whose run reported an anomaly that fails the run. A cell
/// that failed for want of an expected kind has no such seed.
pub fn first_failing(c: &CellSummary) -> Option<(u64, &Path)> {
    if c.status != Status::Fail {
        return None;
    }
    c.runs
        .iter()
        .filter(|r| r.failed_anomaly())
        .find_map(|r| r.dir.as_deref().map(|d| (r.seed, d)))
}

/// `fencecheck shrink <run dir>` for [`first_failing`].
pub fn shrink_command(c: &CellSummary) -> Option<(u64, String)> {
    first_failing(c).map(|(seed, dir)| (seed, format!("fencecheck shrink {}", dir.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::judge::summarise;
    use crate::matrix::outcome::RunOutcome;
    use crate::matrix::spec::Expectation;
    use results::{AnomalyKind, Validity};
    use std::path::PathBuf;

    fn run(seed: u64, failing: bool) -> RunOutcome {
        let mut r = RunOutcome::failed(
            seed,
            Some(PathBuf::from(format!("runs/t/s{seed}"))),
            String::new(),
            1.0,
        );
        r.error = None;
        r.validity = Some(if failing {
            Validity::Invalid
        } else {
            Validity::Valid
        });
        if failing {
            r.kinds.insert(
                AnomalyKind::StaleAcceptedWrite,
                crate::matrix::outcome::KindSeen {
                    count: 1,
                    fails: true,
                    first_ns: Some(1),
                },
            );
        }
        r
    }

    #[test]
    fn a_safe_cell_that_failed_names_the_shrink_of_its_first_failing_seed() {
        let c = summarise(
            "t",
            &Expectation::Safe,
            vec![run(1, false), run(2, true), run(3, true)],
        );
        assert_eq!(c.status, Status::Fail);
        assert_eq!(
            shrink_command(&c),
            Some((2, "fencecheck shrink runs/t/s2".to_string()))
        );
    }

    #[test]
    fn a_cell_that_kept_its_expectation_names_nothing() {
        let c = summarise("t", &Expectation::Safe, vec![run(1, false)]);
        assert_eq!(c.status, Status::Pass);
        assert_eq!(shrink_command(&c), None);
    }
}
