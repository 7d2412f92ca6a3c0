//! `fencecheck matrix --jobs 2` over two Redis cells whose faults touch only their own workers:
//! both runs share one Redis server, each under a lock name of its own, each judged as alone
//! (the fenced cell passes, the plain-DEL cell shows its double release), the table says how
//! many runs shared, and nothing is left behind, the shared cluster included.

use crate::support::infra::containers_labelled;
use std::path::Path;
use std::process::Command;

const GRID: &str = "name: t-matrix-shared
seeds: [1]
defaults: { workers: 4, ttl: 1s, time_limit: 8s }
cells:
  - { recipe: redis-lock, resource: strict, nemesis: [pause-holder], expect: safe }
  - { recipe: redis-lock-del, resource: strict, nemesis: [pause-holder], expect: \"unsafe: double-release\" }
";

fn lock_of(run: &Path) -> String {
    let text = std::fs::read_to_string(run.join("test.yaml")).expect("test.yaml");
    text.lines()
        .find_map(|l| l.strip_prefix("lock: "))
        .expect("a lock line")
        .trim()
        .to_string()
}

#[test]
fn two_cells_share_one_redis_and_are_judged_apart() {
    let root = crate::support::infra::fresh_root("matrix-shared", "grid");
    let config = root.join("matrix.yaml");
    std::fs::write(&config, GRID).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .args(["matrix", "--jobs", "2", "--config"])
        .arg(&config)
        .arg("--runs")
        .arg(root.join("runs"))
        .output()
        .unwrap();
    let explain = format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{explain}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Clusters: 2 of 2 runs on 1 shared cluster(s)"),
        "{explain}"
    );
    let dir = std::fs::canonicalize(root.join("runs/matrix/t-matrix-shared/latest")).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("matrix.json")).unwrap()).unwrap();
    let runs: Vec<&serde_json::Value> = json["cells"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["runs"].as_array().unwrap())
        .collect();
    assert_eq!(runs.len(), 2);
    let cluster = runs[0]["cluster"].as_str().expect("a shared cluster id");
    assert_eq!(runs[1]["cluster"].as_str(), Some(cluster), "one cluster");
    let locks: Vec<String> = runs
        .iter()
        .map(|r| lock_of(Path::new(r["dir"].as_str().unwrap())))
        .collect();
    assert_ne!(locks[0], locks[1], "a lock name each: {locks:?}");
    assert!(
        containers_labelled(cluster).is_empty(),
        "the shared cluster is gone"
    );
    let _ = std::fs::remove_dir_all(&root);
}
