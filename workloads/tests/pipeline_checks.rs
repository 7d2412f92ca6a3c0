//! The keep-alive's `check` lines: a worker whose lock client keeps its lease alive
//! itself and offers `check` (an adapter with `check` and no `renew`, as kazoo and Curator)
//! asks it every renew interval, and the history records each question and answer as `f =
//! check` through the one writer, stamped in the worker — without changing any hold.

#![allow(clippy::unwrap_used)] // a test helper panics with the error, which is the point

use checkers::fold::hold_spans;
use results::jsonl::{HistoryWriter, JsonlReader};
use results::{Event, OpType, RunClock, F};
use std::sync::Arc;
use std::time::Duration;
use workloads::adapter::{AdapterClient, InProcessAdapter, Init, INIT_DEADLINE, PROTOCOL};
use workloads::client::Client;
use workloads::config::{Discipline, RawRecipeConfig, RecipeKind};
use workloads::driver::{run_workload, Deadline, Recorder, WorkerConn, WorkloadSpec};
use workloads::fenced_write::{MemoryMode, MemoryResource};
use workloads::recipes::{MemoryKnobs, MemoryLockService};
use workloads::worker::{spawn_local, Worker};

#[tokio::test]
async fn a_checking_adapters_keep_alive_questions_are_recorded_and_change_no_hold() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.jsonl");
    let clock = RunClock::start();
    let rec = Recorder::new(Arc::new(HistoryWriter::create(&path).unwrap()), clock);
    let cfg = RawRecipeConfig {
        ttl: Some(Duration::from_millis(300)),
        renew_interval: Some(Duration::from_millis(20)),
        acquire_timeout: Some(Duration::from_millis(300)),
        ..Default::default()
    }
    .validate(RecipeKind::Memory)
    .unwrap();
    let service = MemoryLockService::new(MemoryKnobs::default());
    let resource = MemoryResource::new(MemoryMode::Strict, clock);
    let mut conns = vec![];
    for i in 0..3 {
        let name = format!("worker-{i}");
        let (service, ttl, wait) = (service.clone(), cfg.ttl, cfg.acquire_timeout);
        let who = name.clone();
        let launch = InProcessAdapter::checking(move || -> Arc<dyn Client> {
            Arc::new(service.client(&who, ttl, wait))
        });
        let init = Init {
            protocol: PROTOCOL,
            worker: name.clone(),
            lock: "l".into(),
            provider: "memory".into(),
            endpoints: vec![],
            ttl_ms: 300,
            acquire_timeout_ms: 300,
            op_timeout_ms: 300,
            options: serde_json::json!({}),
        };
        let client =
            AdapterClient::start(&name, Box::new(launch), init, INIT_DEADLINE, cfg.clone())
                .await
                .unwrap();
        assert!(client.described().capabilities.check);
        let discipline: Discipline = "stop".parse().unwrap();
        let w = Worker::new(
            &name,
            Arc::new(client),
            Box::new(resource.clone()),
            cfg.clone(),
            discipline,
        )
        .with_clock(clock);
        conns.push(WorkerConn::over(spawn_local(w), rec.clone()).await.unwrap());
    }
    let spec = WorkloadSpec {
        lock: "l".into(),
        key: "k".into(),
        work: Duration::from_millis(40)..=Duration::from_millis(60),
        writes_per_hold: 2,
        app: workloads::App::Short,
        between: Duration::ZERO..=Duration::from_millis(2),
        until: Deadline::at(600_000_000),
        seed: 7,
    };
    run_workload(conns, &spec, &rec).await.unwrap();
    let events: Vec<Event> = JsonlReader::<Event>::open(&path)
        .unwrap()
        .map(|r| r.unwrap().1)
        .collect();
    let checks: Vec<&Event> = events.iter().filter(|e| e.f == F::Check).collect();
    assert!(
        !checks.is_empty(),
        "holds of 40-60 ms with a check every 20 ms"
    );
    // Each question is followed by its answer: an invoke, then `ok` with held.
    for pair in checks.chunks(2) {
        let (ask, answer) = (pair[0], pair[1]);
        assert_eq!((ask.kind, answer.kind), (OpType::Invoke, OpType::Ok));
        assert_eq!(answer.index, ask.index + 1);
        assert_eq!((ask.process, &ask.lease), (answer.process, &answer.lease));
        assert!(ask.time <= answer.time);
        assert_eq!(answer.held, Some(true), "nothing took the lock: {answer:?}");
        assert_eq!(ask.lock.as_deref(), Some("l"));
    }
    // Asked about a hold its process had: the check names the lease of one of its acquisitions.
    let spans = hold_spans(&events);
    for ask in checks.iter().filter(|e| e.kind == OpType::Invoke) {
        let results::Process::Worker(p) = ask.process else {
            panic!("a check of the nemesis: {ask:?}")
        };
        assert!(
            spans
                .iter()
                .any(|s| s.hold.process == p && s.hold.lease() == ask.lease.as_deref()),
            "{ask:?}"
        );
    }
    // The holds are those of the history without its check lines.
    let without: Vec<Event> = events.iter().filter(|e| e.f != F::Check).cloned().collect();
    let ends = |h: &[Event]| {
        hold_spans(h)
            .into_iter()
            .map(|s| (s.hold.lease().map(str::to_string), s.end, s.ended_by))
            .collect::<Vec<_>>()
    };
    assert_eq!(ends(&events), ends(&without));
    // And the check lines read back through the fast parsers as they were written.
    for line in std::fs::read_to_string(&path).unwrap().lines() {
        let e = results::EventRef::parse(line).unwrap();
        if e.f == F::Check && e.kind == OpType::Ok {
            assert_eq!(e.held, Some(true));
        }
    }
    let v = checkers::check(
        &events,
        Some(&resource.log()),
        &checkers::CheckConfig::default(),
    );
    assert_eq!(v.stats["held-after-loss"]["status"], "checked");
    assert_eq!(v.valid, results::Validity::Valid, "{:#?}", v.anomalies);
}
