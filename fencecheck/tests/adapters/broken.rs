//! Adapters that are not the shipped ones, in a real container: one that breaks the protocol
//! stops the run with exit 3 naming it and its line; one that reports no token where the
//! resource needs one is refused at its handshake; the example of docs/adapters.md runs as
//! written, and so does its Rust twin (built by the host's cargo); a replay runs its actors on
//! the library it names.

use super::{explain, fencecheck, history, latest_run};

#[test]
fn a_broken_or_tokenless_own_adapter_stops_the_run_with_exit_3_naming_it() {
    let root = crate::support::infra::fresh_root("adapters", "broken");
    let dir = root.join("noisy-lock");
    std::fs::create_dir_all(&dir).unwrap();
    let base = [
        "run",
        "--quiet",
        "--provider",
        "redis",
        "--nemesis",
        "none",
        "--time-limit",
        "5s",
    ];
    let mut args: Vec<&str> = base.to_vec();
    let dir_s = dir.to_str().unwrap();
    args.extend([
        "--client-cmd",
        "read l; echo hello-world; sleep 30",
        "--client-dir",
        dir_s,
    ]);
    let out = fencecheck(&root, &args);
    let text = explain(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(
        text.contains("adapter noisy-lock") && text.contains("line 1 of its output is not JSON"),
        "{text}"
    );
    let tokenless = r#"read l; echo '{"id":0,"type":"ok","library":"mine","version":"1","token":null,"capabilities":["release"]}'; sleep 30"#;
    let mut args: Vec<&str> = base.to_vec();
    args.extend(["--client-cmd", tokenless, "--client-dir", dir_s]);
    let out = fencecheck(&root, &args);
    let text = explain(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(
        text.contains("reports no fence token") && text.contains("resource none"),
        "{text}"
    );
}

#[test]
fn the_example_adapter_runs_as_the_docs_write_it() {
    let root = crate::support::infra::fresh_root("adapters", "example");
    let out = fencecheck(
        &root,
        &[
            "run",
            "--provider",
            "redis",
            "--client-cmd",
            "python3 my_lock.py",
            "--client-dir",
            "docs/example-adapter",
            "--quiet",
            "--nemesis",
            "none",
            "--time-limit",
            "8s",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    let acquired = history(&latest_run(&root))
        .iter()
        .filter(|e| e["f"] == "acquire" && e["type"] == "ok" && e["token"].is_u64())
        .count();
    assert!(acquired >= 10, "{acquired} acquisitions");
}

/// A user's own Rust adapter (docs/example-adapter-rust, a Cargo.toml naming the `redis` crate,
/// which no image has): the host's cargo builds it, its binary is on PATH in an image of its
/// own, and the run takes the lock through it.
#[test]
fn the_rust_example_adapter_is_built_by_the_host_s_cargo_and_runs() {
    let root = crate::support::infra::fresh_root("adapters", "example-rust");
    let out = fencecheck(
        &root,
        &[
            "run",
            "--provider",
            "redis",
            "--client-cmd",
            "my-lock-adapter",
            "--client-dir",
            "docs/example-adapter-rust",
            "--quiet",
            "--nemesis",
            "none",
            "--time-limit",
            "8s",
        ],
    );
    let text = explain(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("Cargo.toml: "), "{text}");
    let acquired = history(&latest_run(&root))
        .iter()
        .filter(|e| e["f"] == "acquire" && e["type"] == "ok" && e["token"].is_u64())
        .count();
    assert!(acquired >= 10, "{acquired} acquisitions");
}

#[test]
fn a_replay_runs_its_actors_on_the_library_it_names() {
    let root = crate::support::infra::fresh_root("adapters", "replay");
    let out = fencecheck(&root, &["replay", "scenarios/kazoo-stale-fence.yaml"]);
    let text = explain(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("== kazoo-stale-fence on zookeeper (kazoo) =="),
        "{text}"
    );
    assert!(text.contains("release-of-lost-lock"), "{text}");
}

/// The actors live as the scenario's application does: under `app: job-keep` the thawed holder
/// asks kazoo before its write, and kazoo's answer is recorded (held-after-loss when it still
/// says held).
#[test]
fn a_replay_asks_the_library_before_a_write_when_its_application_does() {
    let root = crate::support::infra::fresh_root("adapters", "replay-belief");
    let out = fencecheck(
        &root,
        &["replay", "scenarios/kazoo-belief-after-expiry.yaml"],
    );
    let text = explain(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let asked = history(&latest_run(&root))
        .iter()
        .filter(|e| e["f"] == "check" && e["type"] == "ok")
        .count();
    assert!(
        asked >= 1,
        "the thawed holder never asked its library: {text}"
    );
    assert!(text.contains("held-after-loss"), "{text}");
}
