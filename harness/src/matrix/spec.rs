//! The matrix file: a grid of tests (cells), each repeated over the seeds, each with what the
//! nightly job expects of it — `safe` (no failing anomaly on any seed) or `unsafe: <kind>` (the
//! contrast must keep showing its anomaly on at least `min_rate` of the seeds). A cell that stops
//! meeting its expectation fails the matrix (exit 1): a recipe regressed, or a contrast stopped
//! demonstrating its harm.
//!
//! ```yaml
//! name: nightly
//! seeds: [1, 2, 3]
//! defaults: { workers: 5, ttl: 1s, time_limit: 20s }
//! cells:
//!   - { recipe: etcd-lease, resource: strict, nemesis: [pause-holder], expect: safe }
//!   - { recipe: etcd-lease, resource: none, nemesis: [pause-holder], expect: "unsafe: stale-accepted-write" }
//! ```

use crate::config::{self, RawTest, TestPlan};
use results::AnomalyKind;
use serde::Deserialize;

/// What a cell must show.
#[derive(Debug, Clone, PartialEq)]
pub enum Expectation {
    /// No failing anomaly on any seed.
    Safe,
    /// This anomaly on at least `min_rate` of the seeds.
    Unsafe { kind: AnomalyKind, min_rate: f64 },
    /// Recorded but not judged.
    Observe,
}

/// One validated cell: a test per seed and its expectation.
#[derive(Debug, Clone)]
pub struct Cell {
    pub label: String,
    pub plans: Vec<TestPlan>,
    pub expect: Expectation,
}

/// A validated matrix.
#[derive(Debug, Clone)]
pub struct Matrix {
    pub name: String,
    pub seeds: Vec<u64>,
    pub cells: Vec<Cell>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatrix {
    name: String,
    seeds: Vec<u64>,
    #[serde(default)]
    defaults: RawTest,
    #[serde(default = "default_min_rate")]
    min_rate: f64,
    cells: Vec<RawCell>,
}

fn default_min_rate() -> f64 {
    0.9
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCell {
    #[serde(default)]
    expect: Option<String>,
    #[serde(flatten)]
    test: RawTest,
}

/// Parses and validates a matrix file's text; errors name the cell (1-based) and the field.
pub fn parse(text: &str) -> anyhow::Result<Matrix> {
    let raw: RawMatrix = serde_saphyr::from_str(text)?;
    if raw.seeds.is_empty() {
        anyhow::bail!("seeds: list at least one seed, e.g. seeds: [1, 2, 3]");
    }
    if !(0.0..=1.0).contains(&raw.min_rate) {
        anyhow::bail!("min_rate: {} is not a fraction; use e.g. 0.9", raw.min_rate);
    }
    let mut cells = Vec::new();
    for (i, cell) in raw.cells.into_iter().enumerate() {
        let n = i + 1;
        let expect = match cell.expect.as_deref().map(str::trim) {
            None | Some("observe") => Expectation::Observe,
            Some("safe") => Expectation::Safe,
            Some(e) => {
                let kind = e
                    .strip_prefix("unsafe:")
                    .map(str::trim)
                    .and_then(AnomalyKind::parse)
                    .ok_or_else(|| anyhow::anyhow!("cell {n}: expect {e:?}: use safe, observe or \"unsafe: <anomaly kind>\""))?;
                Expectation::Unsafe {
                    kind,
                    min_rate: raw.min_rate,
                }
            }
        };
        let base = raw.defaults.clone().overlay(cell.test);
        let plans = raw
            .seeds
            .iter()
            .map(|&seed| {
                config::validate(
                    RawTest {
                        seed: Some(seed),
                        ..base.clone()
                    },
                    seed,
                )
                .map_err(|e| anyhow::anyhow!("cell {n}: {e}"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let label = plans.first().map(|p| p.name.clone()).unwrap_or_default();
        if cells.iter().any(|c: &Cell| c.label == label) {
            anyhow::bail!("cell {n}: {label} appears twice; give one a `name:`");
        }
        cells.push(Cell {
            label,
            plans,
            expect,
        });
    }
    if cells.is_empty() {
        anyhow::bail!("cells: the matrix has no cells");
    }
    Ok(Matrix {
        name: raw.name,
        seeds: raw.seeds,
        cells,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: &str = "name: nightly
seeds: [1, 2]
defaults: { workers: 3, ttl: 1s, time_limit: 10s }
cells:
  - { recipe: etcd-lease, resource: strict, nemesis: [pause-holder], expect: safe }
  - { recipe: etcd-lease, resource: none, nemesis: [pause-holder], expect: \"unsafe: stale-accepted-write\" }
";

    #[test]
    fn cells_expand_over_seeds_with_defaults_and_expectations() {
        let m = parse(M).unwrap();
        assert_eq!(m.cells.len(), 2);
        assert_eq!(m.cells[0].plans.len(), 2);
        assert_eq!(m.cells[0].plans[1].seed, 2);
        assert_eq!(m.cells[0].plans[0].workers, 3);
        assert_eq!(m.cells[0].expect, Expectation::Safe);
        assert_eq!(
            m.cells[1].expect,
            Expectation::Unsafe {
                kind: AnomalyKind::StaleAcceptedWrite,
                min_rate: 0.9
            }
        );
    }

    #[test]
    fn bad_cells_are_named() {
        let e = parse(&M.replace("resource: none", "resource: s3"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("cell 2: resource"), "{e}");
        let e = parse(&M.replace("\"unsafe: stale-accepted-write\"", "risky"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cell 2: expect"), "{e}");
        assert!(parse(&M.replace("seeds: [1, 2]", "seeds: []")).is_err());
    }

    #[test]
    fn a_typo_in_a_cell_is_an_error() {
        let m = M.replace(
            "recipe: etcd-lease, resource: strict",
            "recipy: etcd-lease, resource: strict",
        );
        assert!(parse(&m).is_err());
    }
}
