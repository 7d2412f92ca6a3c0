//! The human and CI faces of a run: `report.html` (one self-contained page an engineer opens to
//! see who held the lock when, which write was stale and why), the SVG plots beside it, and
//! `junit.xml` for the nightly job. Everything here is a pure function of a [`ReportInput`] — no
//! Docker, no clock — except [`write_run_report`] and [`stored`], which write and read a run
//! directory.
//!
//! - [`timeline`]: history + resource log → lanes, holds, writes, marks, faults (a model;
//!   derived in `timeline_build`; [`lanes`]: which process ids are which worker).
//! - [`timeline_svg`]: that model drawn, in the shapes and colours of [`glyphs`].
//! - [`series`] + [`charts`]: latency percentiles and throughput over time, drawn in [`panel`]s.
//! - [`html`] + [`anomalies`]: the page; [`junit`]: the JUnit file; [`status`]: each kind's
//!   state (fail / observed / pass / unknown / n/a) for both; [`markup`]: escaping.
//! - [`stored`]: a run directory read back, to render its report again.

pub mod anomalies;
pub mod charts;
pub mod glyphs;
pub mod html;
pub mod junit;
pub mod lanes;
pub mod markup;
pub mod panel;
pub mod series;
pub mod status;
pub mod stored;
pub mod timeline;
mod timeline_build;
pub mod timeline_svg;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use results::{AnomalyKind, Event, ResourceEntry, Verdict};

pub use html::render_html;
pub use junit::junit_xml;

/// Everything a report shows. Borrowed, so the harness renders straight from what it checked.
#[derive(Debug, Clone)]
pub struct ReportInput<'a> {
    /// The test's name (the `results/runs/<test-name>/` directory).
    pub test_name: &'a str,
    /// The fully resolved test, as written to `test.yaml` (any serializable shape; shown flattened).
    pub config: &'a serde_json::Value,
    pub seed: u64,
    /// The command line that re-runs this test with the same seed.
    pub rerun: &'a str,
    /// When the run started, as the harness wants it printed (e.g. `2026-11-29T09:04:42Z`).
    pub started: Option<&'a str>,
    /// The end of the run (ns since start) when it is later than the last event.
    pub run_end: Option<u64>,
    pub history: &'a [Event],
    pub resource: &'a [ResourceEntry],
    /// The lock service's own record (`service.jsonl`); empty when the run has none.
    pub service: &'a [results::service_log::ServiceEntry],
    pub verdict: &'a Verdict,
    /// The anomaly kinds the checkers looked for (one JUnit test case each). The checkers'
    /// per-kind `stats` entries count as checked too (and say unknown / not applicable), so
    /// `&[]` is fine for a verdict from `checkers::Engine`.
    pub checked: &'a [AnomalyKind],
    /// Process id → worker name, when the harness knows it; otherwise lanes come from `owner`s.
    pub process_workers: BTreeMap<u32, String>,
    /// The lock libraries under test, as their adapters named themselves (`kazoo (kazoo
    /// 2.11.0)`); empty for fencecheck's own recipes.
    pub clients: &'a [String],
}

/// The files [`write_run_report`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportFiles {
    pub html: PathBuf,
    pub junit: PathBuf,
    pub plots: Vec<PathBuf>,
}

/// A report file that could not be written, naming it.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}: {source}")]
pub struct ReportError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// The standalone SVG plots: (file name, content). The page embeds the same drawings inline.
fn plots_drawn(model: &timeline::Timeline, s: &series::Series) -> Vec<(&'static str, String)> {
    vec![
        ("timeline.svg", timeline_svg::standalone(model)),
        ("latency.svg", charts::latency_svg(s, &model.faults)),
        ("throughput.svg", charts::throughput_svg(s, &model.faults)),
    ]
}

/// Writes `report.html`, the plots and `junit.xml` into `dir` (which must exist).
pub fn write_run_report(dir: &Path, input: &ReportInput<'_>) -> Result<ReportFiles, ReportError> {
    let write = |name: &str, content: &str| -> Result<PathBuf, ReportError> {
        let path = dir.join(name);
        std::fs::write(&path, content).map_err(|source| ReportError {
            path: path.clone(),
            source,
        })?;
        Ok(path)
    };
    // The timeline and series are built once, for the page and the plots alike.
    let model = timeline::Timeline::build(input);
    let series = series::Series::build(input.history, model.end);
    let html = write(
        "report.html",
        &html::render_html_drawn(input, &model, &series),
    )?;
    let junit = write("junit.xml", &junit_xml(input))?;
    let plots = plots_drawn(&model, &series)
        .iter()
        .map(|(name, svg)| write(name, svg))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ReportFiles { html, junit, plots })
}
