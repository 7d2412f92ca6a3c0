//! The client clock faults move the wall clock the worker's lock client reads, through the
//! whole pipeline on real containers: `client-clock-jump` moves a recipe's worker clock and not
//! the server's, and under it a Python adapter's interpreter reads the moved `time.time()` while
//! its `time.sleep()` still sleeps (Debian's libfaketime 0.9.10 alone fails every such sleep
//! with EINVAL; the fake clock's shim, `containers/shim/monotonic_sleep.c`, undoes that), so
//! the library under test is never broken by the harness. Each run leaves nothing behind.

use crate::support::infra::{fresh_root, labelled_containers};
use results::Event;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// The worker a client clock jump struck, and how far its clock went (seconds, signed).
fn struck(start: &Event) -> (String, f64) {
    let value = start.value.as_ref().expect("a nemesis value");
    let target = value["targets"][0].as_str().expect("a target").to_string();
    let ahead = value["clock"]["ahead"]["secs"].as_f64().expect("ahead");
    (target, ahead)
}

/// Starts `fencecheck run` over `yaml` (a test with one client clock jump) in the background.
fn start_run(root: &Path, yaml: &str) -> Child {
    let config = root.join("test.yaml");
    std::fs::write(&config, yaml).expect("test.yaml");
    Command::new(env!("CARGO_BIN_EXE_fencecheck"))
        .args(["run", "--quiet", "--config"])
        .arg(&config)
        .arg("--runs")
        .arg(root.join("runs"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("fencecheck runs")
}

/// The jump's start line, once the run under `root` has written it.
fn the_jump(root: &Path) -> Event {
    // The run's directory appears once it starts.
    let began = Instant::now();
    loop {
        assert!(
            began.elapsed() < Duration::from_secs(240),
            "no clock jump started"
        );
        std::thread::sleep(Duration::from_millis(200));
        let Ok(dir) = std::fs::canonicalize(root.join("runs/latest")) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(dir.join("history.jsonl")) else {
            continue;
        };
        if let Some(line) = text
            .lines()
            .find(|l| l.contains("\"start-client-clock-jump\""))
        {
            return serde_json::from_str::<Event>(line).expect("its line");
        }
    }
}

/// The Docker run id of the test `name`.
fn run_id(name: &str) -> String {
    use harness::run::deploy::{after_prefix, checkout_prefix};
    after_prefix(&checkout_prefix(), name)
}

/// Seconds since the epoch, now, on the host.
fn host_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64()
}

/// `docker <args>`'s stdout; a failure names the arguments.
fn docker(args: &[&str]) -> String {
    let out = Command::new("docker").args(args).output().expect("docker");
    assert!(
        out.status.success(),
        "docker {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// `cmd` run by bash in `container` with the environment of its first process (the worker's,
/// the fake clock's preload included); its stdout.
fn exec_as_worker(container: &str, cmd: &str) -> String {
    let script = format!(r#"mapfile -d '' e < /proc/1/environ; exec env "${{e[@]}}" {cmd}"#);
    docker(&["exec", container, "bash", "-c", &script])
}

/// The wall clock a process with the worker's own environment reads, and the Redis server's,
/// in seconds since the epoch, and the host's between them.
fn clocks(worker: &str, server: &str) -> (f64, f64, f64) {
    let worker = exec_as_worker(worker, "date +%s.%N");
    let host = host_now();
    let server = docker(&["exec", server, "redis-cli", "TIME"]);
    let secs: f64 = server
        .lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .expect("TIME");
    (worker.trim().parse().expect("date +%s.%N"), host, secs)
}

/// The name of run `run_id`'s container whose short name is `short`.
fn container_ending(run_id: &str, short: &str) -> String {
    let label = format!("label=fencecheck.run={run_id}");
    docker(&["ps", "--format", "{{.Names}}", "--filter", &label])
        .lines()
        .find(|n| n.ends_with(&format!("-{short}")))
        .unwrap_or_else(|| panic!("no container {short} of run {run_id}"))
        .to_string()
}

#[test]
fn client_clock_jump_moves_the_lock_client_s_wall_clock_and_not_the_server_s() {
    let root = fresh_root("run", "client-clock");
    let mut run = start_run(
        &root,
        "name: t-client-clock\nrecipe: redis-lock\ntime_limit: 12s\nnemesis_timeline:\n  \
         - at 2s start client-clock-jump for 6s pick 0\n",
    );
    let (start, run_id) = (the_jump(&root), run_id("t-client-clock"));
    let (target, ahead) = struck(&start);
    assert_eq!(ahead, 10.0, "5 x ttl, forward for an even pick");
    let (worker, host, server) = clocks(
        &container_ending(&run_id, &target),
        &container_ending(&run_id, "redis-1"),
    );
    eprintln!(
        "client-clock-jump: {target} reads {:+.3} s, redis-1 {:+.3} s against the host",
        worker - host,
        server - host
    );
    assert!(
        (worker - host - ahead).abs() < 2.0,
        "the worker's clock is {ahead} s ahead"
    );
    assert!((server - host).abs() < 2.0, "the server's clock is real");
    let status = run.wait().expect("the run ends");
    assert!(
        matches!(status.code(), Some(0..=2)),
        "a verdict: {status:?}"
    );
    let dir = std::fs::canonicalize(root.join("runs/latest")).expect("run dir");
    real_again_and_gone(&dir, &target, "t-client-clock");
}

#[test]
fn a_python_adapter_reads_the_moved_wall_clock_and_still_sleeps() {
    let root = fresh_root("run", "client-clock-py");
    // Pick 1: backward, 10 s (5 x ttl).
    let mut run = start_run(
        &root,
        "name: t-client-clock-py\nclient: redis-py\nresource: none\ntime_limit: 12s\n\
         nemesis_timeline:\n  - at 2s start client-clock-jump for 6s pick 1\n",
    );
    let (start, run_id) = (the_jump(&root), run_id("t-client-clock-py"));
    let (target, ahead) = struck(&start);
    assert_eq!(ahead, -10.0, "5 x ttl, backward for an odd pick");
    // The adapter's interpreter, with the worker's environment: its wall clock, and how long
    // a 200 ms sleep took by its monotonic clock (an EINVAL would fail the command).
    let probe = "/venv/bin/python3 -c 'import time; w = time.time(); m = time.monotonic(); \
                 time.sleep(0.2); print(w, time.monotonic() - m)'";
    let host = host_now();
    let out = exec_as_worker(&container_ending(&run_id, &target), probe);
    let mut words = out
        .split_whitespace()
        .map(|w| w.parse::<f64>().expect("a number"));
    let (wall, slept) = (
        words.next().expect("time.time()"),
        words.next().expect("slept"),
    );
    eprintln!(
        "client-clock-jump: python on {target} reads {:+.3} s against the host, slept {slept:.3} s",
        wall - host
    );
    assert!(
        (wall - host - ahead).abs() < 2.0,
        "time.time() is {ahead} s off: {out}"
    );
    assert!((0.2..5.0).contains(&slept), "time.sleep(0.2) slept: {out}");
    let status = run.wait().expect("the run ends");
    assert!(
        matches!(status.code(), Some(0..=2)),
        "a verdict: {status:?}"
    );
    // The library itself slept under the fault too (redis-py's blocking acquire sleeps between
    // tries, 5 workers contend): nothing it raised came from the fake clock.
    let dir = std::fs::canonicalize(root.join("runs/latest")).expect("run dir");
    let history = std::fs::read_to_string(dir.join("history.jsonl")).expect("history");
    assert!(
        !history.contains("Invalid argument"),
        "a library call failed with EINVAL under the fake clock"
    );
    real_again_and_gone(&dir, &target, "t-client-clock-py");
}

/// After the run: the worker's clock file says real time again, and no container of the test
/// is left.
fn real_again_and_gone(dir: &std::path::Path, target: &str, test: &str) {
    let clock = std::fs::read_to_string(dir.join(format!("clocks/{target}/faketime")))
        .expect("the worker's clock file");
    assert_eq!(clock.trim(), "+0.000", "the clock is real after the run");
    assert_eq!(labelled_containers(test), "", "containers left behind");
}
