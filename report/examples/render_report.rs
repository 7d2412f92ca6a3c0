//! Renders `report.html`, the plots and `junit.xml` again for a stored run directory:
//! `cargo run -p report --example render_report -- <run-dir>` (e.g. `results/runs/latest`).
//! (`fencecheck` does this itself after a run; this is for re-rendering old runs.)

use report::stored::StoredRun;
use report::write_run_report;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(dir) = std::env::args_os().nth(1).map(std::path::PathBuf::from) else {
        eprintln!("usage: render_report <run-dir>");
        std::process::exit(3);
    };
    let started = std::time::Instant::now();
    let run = StoredRun::load(&dir)?;
    let files = write_run_report(&dir, &run.input())?;
    eprintln!(
        "{} ({} events) in {:?}",
        files.html.display(),
        run.history.len(),
        started.elapsed()
    );
    Ok(())
}
