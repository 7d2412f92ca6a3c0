//! From a red matrix cell to the smallest test, over the in-process memory provider (no
//! Docker, seconds): a cell expected safe whose lock service hands out tokens that go back
//! fails the matrix, `matrix.md` and `matrix.html` name `fencecheck shrink` on its first
//! failing seed, and that very command runs (a tiny budget), prints its steps, and writes a
//! smaller test that still shows the kind.

use std::path::PathBuf;
use std::process::Command;

const GRID: &str = "name: t-shrink-mem
seeds: [3]
defaults: { provider: memory, workers: 4, ttl: 300ms, time_limit: 2s, recovery: 1s, recovery_slack: 1s }
cells:
  - { name: red, memory_bugs: [tokens-not-monotonic], expect: safe }
";

#[test]
fn a_red_cell_names_its_shrink_and_the_shrink_writes_a_smaller_failing_test() {
    let root = std::env::temp_dir().join(format!("fc-shrink-memory-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let config = root.join("matrix.yaml");
    std::fs::write(&config, GRID).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .args(["matrix", "--config"])
        .arg(&config)
        .arg("--runs")
        .arg(root.join("runs"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.contains("its first failing seed (3)"))
        .unwrap_or_else(|| panic!("no shrink line in: {stdout}"));
    let command = line
        .split('`')
        .nth(1)
        .expect("the command in backquotes")
        .to_string();
    let dir = PathBuf::from(command.strip_prefix("fencecheck shrink ").expect(&command));
    assert!(dir.join("results.json").is_file(), "{}", dir.display());
    let matrix_dir = std::fs::canonicalize(root.join("runs/matrix/t-shrink-mem/latest")).unwrap();
    let html = std::fs::read_to_string(matrix_dir.join("matrix.html")).unwrap();
    assert!(
        html.contains("<code class=shrink>fencecheck shrink "),
        "{html}"
    );

    let out = Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .arg("shrink")
        .arg(&dir)
        .args(["--tries", "1", "--confirm", "2", "--max-runs", "5"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("for duplicate-token"), "{stdout}");
    assert!(
        stdout.contains("| 1 | the stored test | 3: yes | kept |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| 2 | workers 4 -> 3 | 3: yes | kept |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("runs: 5,"),
        "the budget of 5 runs: {stdout}"
    );
    let shrunk = std::fs::read_to_string(dir.join("shrunk.yaml")).unwrap();
    assert!(shrunk.contains("workers: 2\n"), "{shrunk}");
    assert!(shrunk.contains("of its last tries"), "{shrunk}");
    // The written test runs as it is, and still fails that way.
    let out = Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .args(["run", "--quiet", "--config"])
        .arg(dir.join("shrunk.yaml"))
        .arg("--runs")
        .arg(root.join("again"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("duplicate-token"), "{stdout}");
    let _ = std::fs::remove_dir_all(&root);
}
