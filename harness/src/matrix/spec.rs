//! The matrix file: a grid of tests (cells), each repeated over the seeds, each with what the
//! nightly job expects of it — `safe` (no failing anomaly on any seed), `unsafe: <kind>` (the
//! contrast must keep showing its anomaly on at least `min_rate` of the seeds), `safe, shows:
//! <kind>` (both: two holders observed, the fence kept them harmless), `unknown` (the system
//! under test fails before anything can be judged) or `observe`. A cell that stops
//! meeting its expectation fails the matrix (exit 1): a recipe regressed, or a contrast stopped
//! demonstrating its harm.
//!
//! A cell may sweep: `versions:` of its client's library (a shipped adapter's), `with_versions:`
//! of a dependency of that library (`{redis: [5.0.8, 8.1.0]}`), a list of `client_options:`
//! maps, a list of `app:` profiles. Each combination is one row (and one set of seeds),
//! labelled by the values it takes (`kazoo@2.10.0-...`, `python-redis-lock+redis@5.0.8-...`,
//! `pottery+style=with-...`, `kazoo-...-job` (the profile ends the test's name); [`super::sweep`]), so the table answers
//! "from which release did this change?".
//!
//! ```yaml
//! name: nightly
//! seeds: [1, 2, 3]
//! defaults: { workers: 5, ttl: 2s, time_limit: 20s }
//! cells:
//!   - { recipe: etcd-lease, resource: strict, nemesis: [pause-holder], expect: safe }
//!   - { recipe: etcd-lease, resource: none, nemesis: [pause-holder], expect: "unsafe: stale-accepted-write" }
//! ```

use super::sweep::{self, Axes, Row};
use crate::config::{self, RawTest, TestPlan};
use results::AnomalyKind;
use serde::Deserialize;
use std::collections::BTreeMap;

/// What a cell must show.
#[derive(Debug, Clone, PartialEq)]
pub enum Expectation {
    /// No failing anomaly on any seed.
    Safe,
    /// This anomaly on at least `min_rate` of the seeds.
    Unsafe { kind: AnomalyKind, min_rate: f64 },
    /// No failing anomaly on any seed, and this (non-failing) anomaly on at least `min_rate` of
    /// the seeds: the harm is observed and shown harmless (e.g. two holders, fenced).
    SafeShowing { kind: AnomalyKind, min_rate: f64 },
    /// Every seed ends unknown and none shows a failing anomaly: the run cannot be judged
    /// because the system under test fails first (a library raising an error it does not
    /// document). A seed that comes out valid fails the cell too: the library changed, and the
    /// cell's expectation must be revisited.
    Unknown,
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
    /// This cell's own `min_rate` (a contrast whose harm shows only when the fault catches
    /// the holder mid-work, say).
    #[serde(default)]
    min_rate: Option<f64>,
    /// Releases of the cell's client to run, one row each (`client: kazoo`, `versions: [2.10.0,
    /// 2.11.0]`).
    #[serde(default)]
    versions: Vec<String>,
    /// Releases of dependencies of the client's library, one row each, pinned as `with` pins
    /// (`with_versions: {redis: [5.0.8, 8.1.0]}`).
    #[serde(default)]
    with_versions: BTreeMap<String, Vec<String>>,
    /// The adapter's options: a map, or a list of maps to sweep.
    #[serde(default)]
    client_options: Option<serde_json::Value>,
    /// The application profile: a name, or a list of names to sweep.
    #[serde(default)]
    app: Option<serde_json::Value>,
    #[serde(flatten)]
    test: RawTest,
}

/// `safe` | `observe` | `unsafe: <kind>` | `safe, shows: <kind>` (absent: observe).
fn parse_expect(e: Option<&str>, min_rate: f64) -> anyhow::Result<Expectation> {
    let kind = |k: &str| {
        AnomalyKind::parse(k.trim()).ok_or_else(|| {
            let names: Vec<&str> = AnomalyKind::ALL.iter().map(|k| k.as_str()).collect();
            anyhow::anyhow!(
                "expect: unknown anomaly kind {:?}; use one of {}",
                k.trim(),
                names.join(", ")
            )
        })
    };
    Ok(match e.map(str::trim) {
        None | Some("observe") => Expectation::Observe,
        Some("safe") => Expectation::Safe,
        Some("unknown") => Expectation::Unknown,
        Some(e) => {
            if let Some(k) = e.strip_prefix("unsafe:") {
                Expectation::Unsafe {
                    kind: kind(k)?,
                    min_rate,
                }
            } else if let Some(k) = e
                .strip_prefix("safe,")
                .and_then(|rest| rest.trim().strip_prefix("shows:"))
            {
                Expectation::SafeShowing {
                    kind: kind(k)?,
                    min_rate,
                }
            } else {
                anyhow::bail!(
                    "expect {e:?}: use safe, observe, unknown, \"unsafe: <anomaly kind>\" or \"safe, shows: <anomaly kind>\""
                )
            }
        }
    })
}

/// Parses and validates a matrix file's text; errors name the cell (1-based) and the field.
pub fn parse(text: &str) -> anyhow::Result<Matrix> {
    let raw: RawMatrix = serde_saphyr::from_str(text)?;
    if raw.name.is_empty() || raw.name.contains(['/', '\\']) || raw.name.starts_with('.') {
        anyhow::bail!(
            "name: {:?} must be a plain file name (it names the matrix's directory)",
            raw.name
        );
    }
    if raw.seeds.is_empty() {
        anyhow::bail!("seeds: list at least one seed, e.g. seeds: [1, 2, 3]");
    }
    if !(0.0..=1.0).contains(&raw.min_rate) {
        anyhow::bail!("min_rate: {} is not a fraction; use e.g. 0.9", raw.min_rate);
    }
    let mut cells = Vec::new();
    for (i, cell) in raw.cells.into_iter().enumerate() {
        let n = i + 1;
        let min_rate = cell.min_rate.unwrap_or(raw.min_rate);
        if !(0.0..=1.0).contains(&min_rate) {
            anyhow::bail!("cell {n}: min_rate: {min_rate} is not a fraction; use e.g. 0.6");
        }
        let expect = parse_expect(cell.expect.as_deref(), min_rate)
            .map_err(|e| anyhow::anyhow!("cell {n}: {e}"))?;
        let base = raw.defaults.clone().overlay(cell.test);
        let axes = Axes {
            versions: cell.versions,
            with_versions: cell.with_versions,
            client_options: cell.client_options,
            app: cell.app,
        };
        let rows = sweep::rows(base, axes).map_err(|e| anyhow::anyhow!("cell {n}: {e}"))?;
        for row in rows {
            let cell = validate_cell(n, &raw.name, &raw.seeds, row, expect.clone())?;
            if cells.iter().any(|c: &Cell| c.label == cell.label) {
                anyhow::bail!("cell {n}: {} appears twice; give one a `name:`", cell.label);
            }
            cells.push(cell);
        }
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

/// One row: the test validated for each seed, labelled by its test name (with the values the
/// cell sweeps after the client's name).
fn validate_cell(
    n: usize,
    matrix: &str,
    seeds: &[u64],
    row: Row,
    expect: Expectation,
) -> anyhow::Result<Cell> {
    let plans = seeds
        .iter()
        .map(|&seed| {
            config::validate(
                RawTest {
                    seed: Some(seed),
                    ..row.test.clone()
                },
                seed,
            )
            .map_err(|e| anyhow::anyhow!("cell {n}: {e}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let label = match plans.first() {
        Some(p) => row.label(&p.name, p.client.name()),
        None => String::new(),
    };
    // Runs are named (and their containers labelled) `<matrix>-<cell>`: a matrix's runs are
    // grouped in the store, and never share a Docker run id with an ad-hoc run of the same test
    // (a run sweeps leftovers of its own id at start).
    let plans = plans
        .into_iter()
        .map(|p| TestPlan {
            name: format!("{matrix}-{label}"),
            ..p
        })
        .collect();
    Ok(Cell {
        label,
        plans,
        expect,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: &str = "name: nightly
seeds: [1, 2]
defaults: { workers: 3, ttl: 2s, time_limit: 10s }
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
    fn runs_are_named_after_the_matrix_and_the_cell() {
        let m = parse(M).unwrap();
        assert_eq!(m.cells[0].label, "etcd-lease-strict-pause-holder");
        assert_eq!(
            m.cells[0].plans[0].name,
            "nightly-etcd-lease-strict-pause-holder"
        );
        assert!(parse(&M.replace("name: nightly", "name: a/b")).is_err());
    }

    #[test]
    fn safe_showing_a_harmless_anomaly() {
        let m = parse(&M.replace(
            "expect: safe",
            "expect: \"safe, shows: concurrent-holders\"",
        ))
        .unwrap();
        assert_eq!(
            m.cells[0].expect,
            Expectation::SafeShowing {
                kind: AnomalyKind::ConcurrentHolders,
                min_rate: 0.9
            }
        );
        let e = parse(&M.replace("expect: safe", "expect: \"safe, shows: ghosts\""))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cell 1: expect: unknown anomaly kind \"ghosts\""),
            "{e}"
        );
    }

    #[test]
    fn a_cell_with_versions_is_one_row_per_release() {
        let m = parse(
            "name: v
seeds: [1]
cells:
  - { client: kazoo, versions: [2.10.0, 2.11.0], resource: strict, nemesis: [pause-holder], expect: safe }
",
        )
        .unwrap();
        let labels: Vec<&str> = m.cells.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "kazoo@2.10.0-strict-pause-holder",
                "kazoo@2.11.0-strict-pause-holder"
            ]
        );
        assert_eq!(
            m.cells[1].plans[0].name,
            "v-kazoo@2.11.0-strict-pause-holder"
        );
        let release = |c: &Cell| {
            c.plans[0]
                .client
                .built_release()
                .map(|(_, r)| r.version.clone())
        };
        assert_eq!(release(&m.cells[0]).as_deref(), Some("2.10.0"));
        assert_eq!(m.cells[1].expect, Expectation::Safe);
        let e = parse("name: v\nseeds: [1]\ncells:\n  - { recipe: zk-lock, versions: [1] }\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("cell 1: versions: list releases"), "{e}");
        let e = parse(
            "name: v\nseeds: [1]\ncells:\n  - { client: kazoo@2.10.0, versions: [2.11.0] }\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("already names a release"), "{e}");
    }

    #[test]
    fn a_cell_sweeps_dependency_versions_options_and_profiles_across_its_seeds() {
        let m = parse(
            "name: deps
seeds: [1, 2]
cells:
  - { client: python-redis-lock, with_versions: { redis: [5.0.8, 8.1.0] }, resource: none, nemesis: [pause-holder], expect: observe }
  - { client: pottery, client_options: [{}, {style: with}], app: [short, job], resource: none, nemesis: [none] }
",
        )
        .unwrap();
        let labels: Vec<&str> = m.cells.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "python-redis-lock+redis@5.0.8-none-pause-holder",
                "python-redis-lock+redis@8.1.0-none-pause-holder",
                "pottery-none-no-faults",
                "pottery-none-no-faults-job",
                "pottery+style=with-none-no-faults",
                "pottery+style=with-none-no-faults-job",
            ]
        );
        let first = &m.cells[0].plans;
        assert_eq!(first.len(), 2);
        assert_eq!(first[1].client.pins(), ["redis==5.0.8"]);
        assert_eq!(
            first[0].name,
            "deps-python-redis-lock+redis@5.0.8-none-pause-holder"
        );
        assert_eq!(
            m.cells[4].plans[0].client.adapter().map(|a| &a.options),
            Some(&serde_json::json!({"style": "with"}))
        );
        assert_eq!(m.cells[3].expect, Expectation::Observe);
    }

    #[test]
    fn a_sweep_that_cannot_run_names_its_cell_and_axis() {
        let cell = |text: &str| {
            parse(&format!("name: x\nseeds: [1]\ncells:\n  - {text}\n"))
                .unwrap_err()
                .to_string()
        };
        let e = cell("{ recipe: redis-lock, resource: none, with_versions: { redis: [5.0.8] } }");
        assert!(e.starts_with("cell 1: with: pins a dependency"), "{e}");
        let e = cell("{ client: pottery, resource: none, with_versions: { redis: [5=0] } }");
        assert!(e.starts_with("cell 1: with_versions: redis:"), "{e}");
        let e = cell("{ client: pottery, resource: none, client_options: [style] }");
        assert!(
            e.starts_with("cell 1: client_options: a list sweeps"),
            "{e}"
        );
        let e = cell("{ client: pottery, resource: none, with: [redis] }");
        assert!(e.contains("`redis` names no version"), "{e}");
    }

    #[test]
    fn a_typo_in_a_cell_is_an_error() {
        let m = M.replace(
            "recipe: etcd-lease, resource: strict",
            "recipy: etcd-lease, resource: strict",
        );
        assert!(parse(&m).is_err());
    }

    #[test]
    fn the_shipped_matrix_files_parse_and_name_their_cells_by_client() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../matrix");
        for file in [
            "nightly.yaml",
            "published.yaml",
            "libraries.yaml",
            "versions.yaml",
            "protocol.yaml",
            "hunt.yaml",
        ] {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            let m = parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(!m.cells.is_empty(), "{file}");
        }
        let text = std::fs::read_to_string(root.join("libraries.yaml")).unwrap();
        let m = parse(&text).unwrap();
        assert_eq!(m.cells.len(), 135);
        let labels: Vec<&str> = m.cells.iter().map(|c| c.label.as_str()).collect();
        for label in [
            "kazoo-none-isolate-holder",
            "python-redis-lock-none-no-faults",
            "python-redis-lock-none-pause-holder",
            "pottery-none-pause-holder",
            "pottery+style=with-none-pause-holder",
            "portalocker+style=with-strict-no-faults",
            "tooz+style=with-none-no-faults",
        ] {
            assert!(labels.contains(&label), "{label} not in {labels:?}");
        }
        assert!(m.cells.iter().any(|c| c.expect == Expectation::Unknown));
        // The hunt: 13 adapters x 5 faults x the four application profiles, each its own row.
        let text = std::fs::read_to_string(root.join("hunt.yaml")).unwrap();
        let m = parse(&text).unwrap();
        assert_eq!(m.cells.len(), 260);
        for label in [
            "kazoo-strict-pause-holder",
            "kazoo-strict-pause-holder-job",
            "kazoo-strict-pause-holder-job-keep",
            "kazoo-strict-pause-holder-daemon",
        ] {
            assert!(m.cells.iter().any(|c| c.label == label), "{label}");
        }
        let text = std::fs::read_to_string(root.join("versions.yaml")).unwrap();
        let m = parse(&text).unwrap();
        assert!(m
            .cells
            .iter()
            .any(|c| c.label == "redis-py@4.3.4-none-pause-holder"));
        assert!(m
            .cells
            .iter()
            .any(|c| c.label == "portalocker@4.1.0-unfenced-pause-holder"));
    }
}
