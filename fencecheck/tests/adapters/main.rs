//! The shipped client adapters against real clusters, in the client image: each library runs a
//! clean test as its documentation says to use it; a broken adapter in a container stops the run
//! with exit 3 naming it; the example of docs/adapters.md runs as written; a replay names the
//! library its actors use. One test binary per area: they link once.

#[path = "../support/mod.rs"]
mod support;

mod broken;
mod clean;
mod versions;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Once;

/// Builds the client image once per test binary (minutes on a fresh machine, then reused), so
/// concurrent tests do not build it twice.
pub fn client_image() {
    static BUILT: Once = Once::new();
    BUILT.call_once(|| {
        containers::image::build_client(false).expect("building the client image");
    });
}

/// `fencecheck <args> --quiet --runs <root>/runs` from the repository's root (relative paths in
/// the docs' commands resolve there).
pub fn fencecheck(root: &Path, args: &[&str]) -> Output {
    client_image();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::process::Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .current_dir(repo)
        .args(args)
        .arg("--runs")
        .arg(root.join("runs"))
        .output()
        .unwrap()
}

pub fn explain(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The newest run directory under `root/runs` (any test name).
pub fn latest_run(root: &Path) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("runs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .flat_map(|test| std::fs::read_dir(test).unwrap().flatten().map(|e| e.path()))
        .filter(|p| p.is_dir() && p.join("history.jsonl").is_file())
        .collect();
    dirs.sort();
    dirs.pop().expect("a run directory")
}

pub fn history(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("history.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn results(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap()
}
