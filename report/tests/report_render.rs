//! The report as a specification, without a browser: what a 60 s / 5-worker run with a paused
//! holder, a stale write and a double release puts into report.html, the plots and junit.xml.

mod common;

use std::collections::BTreeMap;
use std::time::Instant;

use report::timeline::{HoldEnd, MarkKind, Timeline, WriteOutcome};
use report::{junit_xml, render_html, write_run_report, ReportInput};
use results::AnomalyKind;

fn input<'a>(run: &'a common::Run, config: &'a serde_json::Value) -> ReportInput<'a> {
    ReportInput {
        test_name: "etcd-lease-pause-holder",
        config,
        seed: 42,
        rerun: "fencecheck run --provider etcd --recipe etcd-lease --resource none --seed 42",
        started: Some("2026-11-29T09:04:42Z"),
        run_end: Some(60_000_000_000),
        history: &run.history,
        resource: &run.resource,
        service: &[],
        verdict: &run.verdict,
        checked: &run.checked,
        process_workers: BTreeMap::new(),
        clients: &[],
    }
}

fn config() -> serde_json::Value {
    serde_json::json!({"provider": "etcd", "recipe": "etcd-lease", "resource": "none", "workers": 5, "ttl": "2s", "time_limit": "60s", "nemesis": {"faults": ["pause-holder", "kill"]}, "seed": 42})
}

#[test]
fn lanes_follow_workers_across_a_retired_process_id() {
    let run = common::generate(&common::Scenario::default());
    let cfg = config();
    let model = Timeline::build(&input(&run, &cfg));
    let names: Vec<&str> = model.lanes.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(
        names,
        ["worker-1", "worker-2", "worker-3", "worker-4", "worker-5"]
    );
    let killed = model
        .lanes
        .iter()
        .find(|l| l.processes.len() == 2)
        .expect("the killed worker's lane holds its old and new process ids");
    assert_eq!(killed.processes[1], 6);
    assert!(killed.holds.iter().any(|h| h.ended_by == HoldEnd::Exit));
    assert!(killed.marks.iter().any(|m| m.kind == MarkKind::Exit));
    assert_eq!(model.faults.len(), 3, "two pauses and a kill");
    let paused: usize = model.lanes.iter().map(|l| l.faulted.len()).sum();
    assert_eq!(
        paused, 3,
        "each fault shades the lane of the worker it targeted"
    );
    let all_writes = model.lanes.iter().flat_map(|l| &l.writes);
    assert_eq!(
        all_writes.clone().count(),
        run.resource.len(),
        "every resource decision is on the timeline"
    );
    assert!(
        all_writes
            .clone()
            .any(|w| !w.anomalies.is_empty() && w.outcome == WriteOutcome::Accepted),
        "the stale accepted write is marked as evidence"
    );
    assert!(model
        .lanes
        .iter()
        .flat_map(|l| &l.holds)
        .any(|h| h.ended_by == HoldEnd::LeaseLost));
    assert!(
        model
            .lanes
            .iter()
            .flat_map(|l| &l.waits)
            .any(|w| w.end == model.end),
        "a worker still trying at the end waits until the end"
    );
    assert_eq!(
        model.anomalies.len(),
        run.verdict.anomalies.len(),
        "every anomaly has a place on the timeline"
    );

    // A process that never acquired has no owner to name its worker: the harness can say.
    let mut silent = run.clone();
    silent.history.retain(|e| {
        e.process != results::Process::Worker(6)
            || e.kind == results::OpType::Invoke && e.f == results::F::Acquire
    });
    silent.resource.retain(|r| r.process != 6);
    let mut hinted = input(&silent, &cfg);
    assert!(Timeline::build(&hinted)
        .lanes
        .iter()
        .any(|l| l.name == "process 6"));
    hinted.process_workers.insert(6, killed.name.clone());
    assert_eq!(Timeline::build(&hinted).lanes.len(), 5);
}

#[test]
fn the_page_is_self_contained_and_shows_verdict_config_timeline_and_evidence() {
    let run = common::generate(&common::Scenario::default());
    let cfg = config();
    let started = Instant::now();
    let html = render_html(&input(&run, &cfg));
    let took = started.elapsed();
    eprintln!(
        "rendered {} events / {} decisions into {} KB in {took:?}",
        run.history.len(),
        run.resource.len(),
        html.len() / 1024
    );
    assert!(
        took.as_millis() < 2000,
        "a 60 s run must render fast, took {took:?}"
    );
    for needle in [
        r#"id="verdict">INVALID"#,
        "etcd-lease-pause-holder",
        "nemesis.faults",
        "pause-holder, kill",
        r#"id="tl-plot""#,
        ">worker-5<",
        r#"id="anomaly-1""#,
        r#"id="tl-anomaly-1""#,
        r##"href="#anomaly-1""##,
        "stale-accepted-write",
        "double-release",
        "Likely boundary",
        "compare-and-delete",
        r#"id="latency""#,
        r#"id="throughput""#,
        "fencecheck run --provider etcd",
    ] {
        assert!(html.contains(needle), "report lacks {needle:?}");
    }
    for external in [
        "<script src",
        "<link",
        "@import",
        "url(http",
        "src=\"http",
        "href=\"http",
    ] {
        assert!(
            !html.contains(external),
            "report must open offline, found {external:?}"
        );
    }
}

#[test]
fn a_fenced_run_shows_the_stale_write_rejected_and_fails_only_on_the_double_release() {
    let run = common::generate(&common::Scenario {
        fenced: true,
        ..Default::default()
    });
    assert!(run
        .verdict
        .anomalies
        .iter()
        .all(|a| a.kind != AnomalyKind::StaleAcceptedWrite));
    let cfg = config();
    let model = Timeline::build(&input(&run, &cfg));
    let rejected = model
        .lanes
        .iter()
        .flat_map(|l| &l.writes)
        .filter(|w| w.outcome == WriteOutcome::RejectedStale)
        .count();
    assert_eq!(rejected, 2, "both woken holders' writes were rejected");
    let xml = junit_xml(&input(&run, &cfg));
    assert!(xml.contains(r#"<testcase classname="fencecheck.etcd-lease-pause-holder" name="stale-accepted-write" time="60.000"></testcase>"#), "{xml}");
    assert!(xml.contains(r#"<failure type="double-release""#));
    assert!(xml.contains("<system-out>2 observed (not in fail_on)"));
}

#[test]
fn junit_has_one_case_per_checked_kind_with_escaped_evidence() {
    let mut run = common::generate(&common::Scenario::default());
    run.verdict.anomalies[0].summary = r#"owner "<worker-3>" & 'friends']]>"#.into();
    run.verdict.anomalies[0].fails = true;
    let cfg = config();
    let xml = junit_xml(&input(&run, &cfg));
    assert_eq!(xml.matches("<testcase ").count(), run.checked.len());
    let tests = format!(r#"tests="{}" failures="3" errors="0""#, run.checked.len());
    assert!(xml.contains(&tests), "{xml}");
    assert!(
        xml.contains("&lt;worker-3&gt;"),
        "summary is escaped: {xml}"
    );
    assert!(!xml.contains("<worker-3>") && !xml.contains("]]>"));
    assert!(
        xml.contains("resource seqs: "),
        "failures carry the evidence"
    );
    assert!(xml.contains("next action: add resource-side fencing"));
    assert!(xml.contains(r#"<property name="rerun" value="fencecheck run --provider etcd"#));

    // The checkers' per-kind stats turn kinds that do not apply into skipped cases and
    // undecided ones into errors.
    run.verdict.stats.insert("duplicate-token".into(), serde_json::json!({"status": "not applicable", "count": 0, "fails_run": true, "note": "recipe has no fence token"}));
    run.verdict.stats.insert("stuck-lock".into(), serde_json::json!({"status": "unknown", "count": 0, "fails_run": true, "note": "history ends while the lock is held"}));
    let xml = junit_xml(&input(&run, &cfg));
    assert!(xml.contains(r#"name="duplicate-token" time="60.000"><skipped message="recipe has no fence token"/></testcase>"#), "{xml}");
    assert!(
        xml.contains(r#"<error type="unknown" message="history ends while the lock is held">"#),
        "{xml}"
    );
    let tests = format!(
        r#"tests="{}" failures="3" errors="1" skipped="1""#,
        run.checked.len()
    );
    assert!(xml.contains(&tests), "{xml}");
}

#[test]
fn writes_report_plots_and_junit_into_the_run_directory() {
    let run = common::generate(&common::Scenario::default());
    let cfg = config();
    let dir = tempfile::tempdir().unwrap();
    let files = write_run_report(dir.path(), &input(&run, &cfg)).unwrap();
    for name in [
        "report.html",
        "junit.xml",
        "timeline.svg",
        "latency.svg",
        "throughput.svg",
    ] {
        let len = std::fs::metadata(dir.path().join(name))
            .map(|m| m.len())
            .unwrap_or(0);
        assert!(len > 500, "{name} written ({len} bytes)");
    }
    assert_eq!(files.plots.len(), 3);
    let svg = std::fs::read_to_string(dir.path().join("timeline.svg")).unwrap();
    assert!(svg.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg""#));
    let err = write_run_report(&dir.path().join("missing"), &input(&run, &cfg)).unwrap_err();
    assert!(err.to_string().contains("missing/report.html"), "{err}");
}

#[test]
fn an_empty_undecided_run_still_renders_and_says_why() {
    let verdict = results::Verdict {
        valid: results::Validity::Unknown,
        anomalies: vec![],
        unknown_reasons: vec!["history ends mid-run: harness killed (no exit events)".into()],
        stats: BTreeMap::new(),
    };
    let cfg = serde_json::Value::Null;
    let input = ReportInput {
        test_name: "empty",
        config: &cfg,
        seed: 1,
        rerun: "fencecheck run --seed 1",
        started: None,
        run_end: None,
        history: &[],
        resource: &[],
        service: &[],
        verdict: &verdict,
        checked: &[AnomalyKind::StaleAcceptedWrite],
        process_workers: BTreeMap::new(),
        clients: &[],
    };
    let html = render_html(&input);
    assert!(html.contains(r#"id="verdict">UNKNOWN"#));
    assert!(html.contains("harness killed"));
    assert!(html.contains("No anomaly was found."));
    let xml = junit_xml(&input);
    assert!(
        xml.contains(r#"tests="2" failures="0" errors="1""#),
        "{xml}"
    );
    assert!(xml.contains(r#"<error type="unknown""#));
}

#[test]
fn a_ten_minute_ten_worker_run_renders_in_well_under_a_second() {
    let run = common::generate(&common::Scenario {
        workers: 10,
        duration: 600_000_000_000,
        ..Default::default()
    });
    let cfg = config();
    let started = Instant::now();
    let html = render_html(&input(&run, &cfg));
    let xml = junit_xml(&input(&run, &cfg));
    let took = started.elapsed();
    eprintln!(
        "600 s / 10 workers: {} events, {} decisions → {} KB html in {took:?}",
        run.history.len(),
        run.resource.len(),
        html.len() / 1024
    );
    assert!(xml.contains("<testsuite "));
    assert!(took.as_millis() < 3000, "took {took:?}");
}

#[test]
fn a_stored_run_directory_renders_the_same_report_again() {
    let run = common::generate(&common::Scenario::default());
    let dir = tempfile::tempdir().unwrap();
    common::store(&run, dir.path(), common::TEST_YAML);
    let stored = report::stored::StoredRun::load(dir.path()).unwrap();
    assert_eq!(stored.history, run.history);
    assert_eq!(stored.resource, run.resource);
    assert_eq!(stored.test_name, "etcd-lease-pause-holder");
    assert_eq!(stored.seed, 42);
    assert!(stored.rerun.starts_with("fencecheck run --provider etcd"));
    let html = render_html(&stored.input());
    assert!(html.contains("nemesis.faults") && html.contains("pause-holder, kill"));
    assert!(html.contains(r#"id="anomaly-5""#));

    std::fs::remove_file(dir.path().join("results.json")).unwrap();
    let err = report::stored::StoredRun::load(dir.path()).unwrap_err();
    assert!(err.to_string().contains("results.json"), "{err}");
}

#[test]
fn nemesis_events_as_the_executor_records_them() {
    use results::{Event, OpType, Process, F};
    let nemesis = |t: u64, f: F, value: serde_json::Value, error: Option<&str>| {
        let mut e = Event::new(t * 1_000_000_000, Process::Nemesis, OpType::Info, f);
        e.value = Some(value);
        e.error = error.map(str::to_string);
        e
    };
    let mut acquire = Event::new(500_000_000, Process::Worker(2), OpType::Ok, F::Acquire);
    acquire.owner = Some("worker-2".into());
    acquire.lock = Some("l".into());
    let mut history = vec![
        acquire,
        nemesis(
            2,
            F::Start("halves".into()),
            serde_json::json!({"fault": "halves", "targets": ["etcd-1"], "grudge": {"etcd-1": ["etcd-2", "etcd-3"]}}),
            None,
        ),
        nemesis(
            3,
            F::Start("pause-leader".into()),
            serde_json::json!({"fault": "pause-leader", "targets": []}),
            Some("skipped: no leader"),
        ),
        nemesis(
            5,
            F::Stop("halves".into()),
            serde_json::json!({"fault": "halves", "targets": ["etcd-1"]}),
            None,
        ),
        nemesis(
            6,
            F::Start("isolate-worker".into()),
            serde_json::json!({"fault": "isolate-worker", "targets": ["worker-2"]}),
            None,
        ),
        nemesis(
            9,
            F::Stop("isolate-worker".into()),
            serde_json::json!({"fault": "isolate-worker", "targets": ["worker-2"]}),
            Some("stopped by the final heal"),
        ),
    ];
    for (i, e) in history.iter_mut().enumerate() {
        e.index = i as u64;
    }
    let verdict = results::Verdict {
        valid: results::Validity::Valid,
        anomalies: vec![],
        unknown_reasons: vec![],
        stats: BTreeMap::new(),
    };
    let cfg = serde_json::Value::Null;
    let input = ReportInput {
        test_name: "n",
        config: &cfg,
        seed: 0,
        rerun: "",
        started: None,
        run_end: Some(10_000_000_000),
        history: &history,
        resource: &[],
        service: &[],
        verdict: &verdict,
        checked: &[],
        process_workers: BTreeMap::new(),
        clients: &[],
    };
    let model = Timeline::build(&input);
    let faults: Vec<(&str, u64, u64)> = model
        .faults
        .iter()
        .map(|f| {
            (
                f.name.as_str(),
                f.start / 1_000_000_000,
                f.end / 1_000_000_000,
            )
        })
        .collect();
    assert_eq!(
        faults,
        [("halves", 2, 5), ("isolate-worker", 6, 9)],
        "a skipped start draws nothing"
    );
    assert_eq!(model.lanes.len(), 1);
    let shaded: Vec<&str> = model.lanes[0]
        .faulted
        .iter()
        .map(|s| s.label.as_str())
        .collect();
    assert_eq!(
        shaded,
        ["isolate-worker"],
        "only the fault naming the worker shades its lane"
    );
    assert_eq!(
        model.lanes[0].holds[0].end, 10_000_000_000,
        "an unreleased hold runs to the end of the run"
    );
    let html = render_html(&input);
    assert!(
        html.contains("url(#hatch-partition)"),
        "a partition is hatched in its own colour"
    );
}

#[test]
fn a_valid_run_with_observations_says_none_fails() {
    let mut run = common::generate(&common::Scenario {
        fenced: true,
        ..Default::default()
    });
    run.verdict.anomalies.retain(|a| !a.fails);
    run.verdict.valid = results::Validity::Valid;
    let cfg = config();
    let html = render_html(&input(&run, &cfg));
    assert!(html.contains(r#"id="verdict">VALID"#));
    assert!(
        html.contains("2 observed (concurrent-holders); none fails the run"),
        "header says what was observed"
    );
    let xml = junit_xml(&input(&run, &cfg));
    assert!(xml.contains(r#"failures="0" errors="0""#), "{xml}");
}

/// The report ends a hold where the checkers do. After an indeterminate
/// write its process is retired and certainly holds nothing any more; the bar used to run to
/// the end of the run.
#[test]
fn a_hold_bar_ends_at_an_info_of_its_process_as_the_checkers_hold_does() {
    use checkers::testkit::*;
    let history = history([
        invoke(1, Acquire).lock("l").at_ms(1_000),
        ok(1, Acquire)
            .lock("l")
            .owner("worker-1")
            .lease("L1")
            .token(1)
            .at_ms(1_010),
        invoke(1, Write).key("k").op_id("1-0").token(1).at_ms(1_100),
        info(1, Write).key("k").op_id("1-0").token(1).at_ms(3_000),
        invoke(7, Read).key("c").at_ms(9_000),
    ]);
    let verdict = checkers::check(&history, Some(&[]), &checkers::CheckConfig::default());
    let cfg = serde_json::Value::Null;
    let input = ReportInput {
        test_name: "t",
        config: &cfg,
        seed: 0,
        rerun: "",
        started: None,
        run_end: Some(10_000_000_000),
        history: &history,
        resource: &[],
        service: &[],
        verdict: &verdict,
        checked: &[],
        process_workers: BTreeMap::from([(1, "worker-1".into()), (7, "worker-2".into())]),
        clients: &[],
    };
    let model = Timeline::build(&input);
    let bars: Vec<_> = model.lanes.iter().flat_map(|l| &l.holds).collect();
    assert_eq!(bars.len(), 1);
    assert_eq!(bars[0].end, 3_000_000_000, "the write's info ended it");
    assert_eq!(bars[0].ended_by, HoldEnd::Retired);
    let spans = checkers::fold::hold_spans(&history);
    assert_eq!(
        (spans[0].end, spans[0].ended_by),
        (bars[0].end, bars[0].ended_by)
    );
}

/// The lock service's lane: every key of the lock as the service held it, green where a
/// worker's grant names it and amber where none does, a sentinel's failover where one came, and
/// no lane without a record.
#[test]
fn the_service_lane_shows_each_key_and_whether_a_grant_names_it() {
    use results::service_log::{ServiceEntry, ServiceWhat};
    let run = common::generate(&common::Scenario::default());
    let cfg = config();
    let bare = Timeline::build(&input(&run, &cfg));
    assert!(bare.service.is_none());
    assert!(!report::timeline_svg::standalone(&bare).contains("lock service"));
    let hold = bare.lanes[0].holds[0].clone();
    let lock = hold.lock.clone().expect("a hold names its lock");
    let key = format!("/fencecheck/lock/{lock}");
    let line = |ms: u64, what: ServiceWhat, owner: Option<&str>| {
        let mut e = ServiceEntry::new(ms, what);
        e.key = Some(key.clone());
        e.owner = owner.map(str::to_string);
        e
    };
    let record = vec![
        ServiceEntry::new(0, ServiceWhat::Watching),
        line(hold.start, ServiceWhat::Put, hold.lease.as_deref()),
        line(hold.end, ServiceWhat::Delete, None),
        line(hold.end + 1, ServiceWhat::Put, Some("nobody's")),
        {
            let mut switch = ServiceEntry::new(hold.end + 2, ServiceWhat::Master);
            switch.node = Some("sentinel-2".into());
            switch.value = Some("redis-3".into());
            switch
        },
        // Written as the run ended, after the last event the drawing spans.
        ServiceEntry::new(u64::MAX / 2, ServiceWhat::Gap),
    ];
    let mut with = input(&run, &cfg);
    with.service = &record;
    let model = Timeline::build(&with);
    let service = model.service.as_ref().expect("a lane for the record");
    assert_eq!(service.keys.len(), 2, "{:?}", service.keys);
    assert_eq!(service.keys[0].lane, Some(0));
    assert_eq!(service.keys[0].ended, "deleted");
    assert_eq!(service.keys[1].lane, None);
    assert_eq!(service.keys[1].ended, "still there");
    let svg = report::timeline_svg::standalone(&model);
    assert!(svg.contains("lock service") && svg.contains("no grant names it"));
    assert!(svg.contains("granted to worker-1"));
    assert_eq!(service.masters.len(), 1);
    assert!(svg.contains("sentinel-2 now calls redis-3 the master"));
}
