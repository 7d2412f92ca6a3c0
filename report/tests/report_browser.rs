//! The report opened in a real headless browser (Chromium from Debian's packages): the rendered
//! DOM has the timeline, an anomaly and its evidence, the zoom script ran without error, the SVG
//! plots parse as standalone XML, and a screenshot lands in the run directory for a human to see.
//!
//! Needs `chromium` on PATH (or `FENCECHECK_CHROMIUM=<path>`); without it this test FAILS with a
//! message saying how to install it — it never passes silently. CI's `.ci/run` installs it.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use report::{write_run_report, ReportInput};

fn chromium() -> PathBuf {
    if let Ok(p) = std::env::var("FENCECHECK_CHROMIUM") {
        return PathBuf::from(p);
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        let found = std::env::var_os("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .map(|d| d.join(name))
            .find(|p| p.is_file());
        if let Some(p) = found {
            return p;
        }
    }
    panic!("chromium is not installed, and the report's browser test needs it: run `sudo apt-get install -y chromium` (Debian/Ubuntu), or set FENCECHECK_CHROMIUM=/path/to/chrome");
}

/// Runs headless Chromium with `args`, killing it after a minute; returns stdout.
fn run_chromium(profile: &Path, args: &[String]) -> String {
    let mut cmd = Command::new(chromium());
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(args)
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    let child = cmd.spawn().expect("chromium starts");
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(out) => {
            let out = out.expect("chromium runs");
            assert!(
                out.status.success(),
                "chromium {args:?} failed: {:?}",
                out.status
            );
            String::from_utf8_lossy(&out.stdout).into_owned()
        }
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
            panic!("chromium {args:?} did not finish within 60 s");
        }
    }
}

fn run_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("report-browser")
        .join("etcd-lease-pause-holder");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("run directory");
    dir
}

#[test]
fn chromium_renders_the_timeline_an_anomaly_and_its_evidence_and_saves_a_screenshot() {
    let run = common::generate(&common::Scenario::default());
    let config = serde_json::json!({"provider": "etcd", "recipe": "etcd-lease", "resource": "none", "workers": 5, "ttl": "2s", "recovery_slack": "5s", "time_limit": "60s", "nemesis": {"faults": ["pause-holder", "kill"], "interval": "15s"}, "image": "fencecheck-node:aaa6d39320ef", "seed": 42});
    let input = ReportInput {
        test_name: "etcd-lease-pause-holder",
        config: &config,
        seed: 42,
        rerun: "fencecheck run --provider etcd --recipe etcd-lease --resource none --nemesis pause-holder,kill --seed 42",
        started: Some("2026-11-29T09:04:42Z"),
        run_end: Some(60_000_000_000),
        history: &run.history,
        resource: &run.resource,
        service: &[],
        verdict: &run.verdict,
        checked: &run.checked,
        process_workers: BTreeMap::new(),
        clients: &[],
    };
    let dir = run_dir();
    // A complete run directory (the logs and verdict beside the report), as the harness leaves it.
    common::store(&run, &dir, common::TEST_YAML);
    write_run_report(&dir, &input).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.join("report.html").display());

    let started = Instant::now();
    let dom = run_chromium(profile.path(), &["--dump-dom".into(), url.clone()]);
    eprintln!("chromium --dump-dom took {:?}", started.elapsed());
    for needle in [
        r#"id="tl-plot""#,
        ">worker-1<",
        ">worker-5<",
        r#"class="tl-hold""#,
        r#"id="tl-anomaly-1""#,
        r#"id="anomaly-1""#,
        "stale-accepted-write",
        "Evidence packet",
        "highest_before",
        "resource seq",
        "Next action",
        r#"id="verdict">INVALID"#,
    ] {
        assert!(dom.contains(needle), "rendered DOM lacks {needle:?}");
    }
    // The zoom script re-laid the timeline on load (it sets display on every bar label).
    assert!(
        dom.contains(r#"display="inline""#),
        "the inline script did not run"
    );

    // Following an anomaly's link zooms the timeline in around its flag.
    let zoomed = run_chromium(
        profile.path(),
        &["--dump-dom".into(), format!("{url}#tl-anomaly-2")],
    );
    assert!(
        zoomed.contains(r#"id="tl-zoom-val">8.0×"#),
        "the link to a flag zooms the timeline"
    );

    // The plots and the JUnit file parse as standalone XML (Chromium's XML parser is strict).
    for (file, root) in [
        ("timeline.svg", "<svg"),
        ("latency.svg", "<svg"),
        ("throughput.svg", "<svg"),
        ("junit.xml", "testsuite"),
    ] {
        let dom = run_chromium(
            profile.path(),
            &[
                "--dump-dom".into(),
                format!("file://{}", dir.join(file).display()),
            ],
        );
        assert!(
            !dom.contains("This page contains the following errors") && dom.contains(root),
            "{file} is not well-formed XML: {}",
            &dom[..dom.len().min(600)]
        );
    }

    let shot = dir.join("report.png");
    run_chromium(
        profile.path(),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1400,1000".into(),
            url.clone(),
        ],
    );
    let png = std::fs::read(&shot).expect("screenshot saved in the run directory");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "screenshot looks empty ({} bytes)",
        png.len()
    );
    let tall = dir.join("report-full.png");
    run_chromium(
        profile.path(),
        &[
            format!("--screenshot={}", tall.display()),
            "--window-size=1400,3600".into(),
            url,
        ],
    );
    eprintln!("report and screenshots in {}", dir.display());
}
