//! `fencecheck matrix [--config matrix.yaml] [--runs DIR]`: runs a grid of tests (cells × seeds)
//! one at a time and writes one comparison table (`matrix.md`, `matrix.html`, `matrix.json`
//! under `<runs>/matrix/<name>/<UTC stamp>/`). Exit 0 every cell as expected, 1 a cell broke its
//! expectation, 2 only unknown verdicts, 3 a harness or configuration error (a bad file is named,
//! with the line where the YAML says it).

use harness::matrix;
use std::path::PathBuf;

/// Arguments of `fencecheck matrix`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The matrix file (YAML): name, seeds, defaults, min_rate, cells with expectations.
    #[arg(long, short = 'c', default_value = "matrix/nightly.yaml")]
    pub config: PathBuf,
    /// Where runs are stored (the matrix goes to <runs>/matrix/<name>/<UTC stamp>/).
    #[arg(long, default_value = "results/runs")]
    pub runs: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let path = &args.config;
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("{}: cannot read matrix file: {e}", path.display()))?;
    let m = matrix::spec::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e:#}", path.display()))?;
    eprintln!(
        "matrix {}: {} cells × {} seeds from {}",
        m.name,
        m.cells.len(),
        m.seeds.len(),
        path.display()
    );
    let report = matrix::execute(&m, &path.display().to_string(), &args.runs)?;
    print!("{}", matrix::table::render(&report));
    println!("matrix:  {}", report.dir.join("matrix.html").display());
    Ok(report.exit_code)
}
