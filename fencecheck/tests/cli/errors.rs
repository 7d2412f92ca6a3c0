//! Bad input exits 3 with a message that says what to do, never a panic: an unknown provider (or
//! one that cannot serve there: memory has no cluster, postgres is no lock provider), no
//! Docker engine (DOCKER_HOST at a dead socket), a failed image build. And the good path of
//! `image build` (an image whose tag is present is reused, not rebuilt). Faults that cannot act
//! on the provider, a missing shard and a bad `--shard` are refused the same way, and so is a
//! malformed `--with` pin or one for a client that installs nothing from PyPI.

use std::process::{Command, Output};

const FENCECHECK: &str = env!("CARGO_BIN_EXE_fencecheck");

fn fencecheck(args: &[&str], docker_host: Option<&str>) -> Output {
    let mut command = Command::new(FENCECHECK);
    command.args(args);
    if let Some(host) = docker_host {
        command.env("DOCKER_HOST", host);
    }
    command.output().expect("run fencecheck")
}

fn assert_exit_3(out: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "{needle:?} not in: {stderr}");
    }
}

#[test]
fn an_unknown_system_lists_the_valid_ones() {
    let out = fencecheck(&["cluster", "up", "etdc"], None);
    assert_exit_3(
        &out,
        &[
            "etdc",
            "etcd, zookeeper, redis, redlock, redis-sentinel, postgres",
        ],
    );
    let out = fencecheck(&["bench", "startup", "--systems", "etcd,mongo"], None);
    assert_exit_3(&out, &["mongo", "expected one of"]);
    let out = fencecheck(&["cluster", "up", "memory"], None);
    assert_exit_3(&out, &["memory", "harness's process"]);
    // postgres is a lock provider too (advisory locks): an unknown one lists it.
    let out = fencecheck(&["run", "--provider", "consul"], None);
    assert_exit_3(
        &out,
        &[
            "consul",
            "etcd, zookeeper, redis, redlock, redis-sentinel, postgres, memory",
        ],
    );
}

#[test]
fn a_malformed_or_misplaced_pin_names_the_flag_and_what_to_write() {
    let out = fencecheck(
        &["run", "--client", "python-redis-lock", "--with", "redis=5"],
        None,
    );
    assert_exit_3(&out, &["--with", "`redis=5` is not a pin: write redis==5"]);
    let out = fencecheck(
        &["run", "--client", "pottery", "--with", "mmh3==5.3.1,redis"],
        None,
    );
    assert_exit_3(&out, &["--with", "`redis` names no version"]);
    let out = fencecheck(&["run", "--with", "--index-url=https://mirror"], None);
    assert_exit_3(&out, &["--with", "is an option, not a pin"]);
    let out = fencecheck(&["run", "--with", "redis==5.0.8"], None);
    assert_exit_3(&out, &["--with: pins a dependency", "etcd-lease"]);
    let out = fencecheck(
        &[
            "run",
            "--client",
            "redis-py@debian",
            "--with",
            "async-timeout==4.0.3",
        ],
        None,
    );
    assert_exit_3(&out, &["--with: redis-py@debian is Debian's build"]);
}

#[test]
fn faults_that_cannot_act_are_refused_before_anything_starts() {
    let out = fencecheck(
        &["run", "--recipe", "etcd-lease", "--nemesis", "clock-jump"],
        None,
    );
    assert_exit_3(&out, &["clock-jump", "Go programs", "libfaketime"]);
    let out = fencecheck(
        &[
            "run",
            "--recipe",
            "redlock",
            "--resource",
            "none",
            "--nemesis",
            "deafen-follower",
        ],
        None,
    );
    assert_exit_3(&out, &["deafen-follower", "no leader"]);
    let out = fencecheck(&["matrix", "merge", "/nonexistent/shard"], None);
    assert_exit_3(&out, &["/nonexistent/shard/matrix.json"]);
    let out = fencecheck(&["matrix", "--shard", "3/2"], None);
    assert_exit_3(&out, &["--shard", "1 ≤ I ≤ N"]);
}

#[test]
fn a_missing_docker_engine_says_how_to_start_one() {
    let dead = format!(
        "unix:///tmp/fencecheck-no-docker-{}.sock",
        std::process::id()
    );
    for args in [
        &["cluster", "up", "etcd", "--run", "t-infra-nodocker"][..],
        &["clean", "--run", "t-infra-nodocker"],
        &["image", "status"],
        &["image", "build"],
        &["bench", "startup", "--runs", "1", "--systems", "redis"],
    ] {
        let out = fencecheck(args, Some(&dead));
        assert_exit_3(
            &out,
            &["cannot reach the Docker engine", &dead, "DOCKER_HOST"],
        );
    }
}

#[test]
fn a_failed_image_build_exits_3_with_what_to_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    let list = dir.path().join("packages.txt");
    let unique = format!(
        "# t-infra-badimage {}\nno-such-package-fencecheck\n",
        std::process::id()
    );
    std::fs::write(&list, unique).expect("write list");
    let out = fencecheck(
        &[
            "image",
            "build",
            "--packages",
            list.to_str().expect("utf-8 path"),
            "--base-image",
            "fencecheck-no-such-base:none",
            "--mirror",
            "http://127.0.0.1:9/debian",
        ],
        None,
    );
    assert_exit_3(
        &out,
        &[
            "could not build fencecheck-node:",
            "Dockerfile",
            "debootstrap",
            "fencecheck image build",
        ],
    );
}

#[test]
fn image_build_reuses_the_present_node_image_and_status_lists_versions() {
    let out = fencecheck(&["image", "build"], None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        stdout.contains("fencecheck-node:") && stdout.contains("present, reused"),
        "{stdout}"
    );
    let out = fencecheck(&["image", "status"], None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(": present ("), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.trim_start().starts_with("etcd-server") && l.contains("3.4")),
        "{stdout}"
    );
}
