//! The whole pipeline in-process: driver loop → protocol → worker → memory lock service →
//! memory resource, recorded to a real history file. Fast enough for every `cargo test`.

#![allow(clippy::unwrap_used)] // a test helper panics with the error, which is the point

use checkers::fold::{falling_tokens, hold_spans, overlaps};
use results::jsonl::{HistoryWriter, JsonlReader};
use results::{Event, OpType, RunClock, F};
use std::sync::Arc;
use std::time::Duration;
use workloads::client::Client;
use workloads::config::{Discipline, RawRecipeConfig, RecipeKind};
use workloads::driver::{run_workload, Deadline, Recorder, WorkerConn, WorkloadSpec};
use workloads::fenced_write::{MemoryMode, MemoryResource};
use workloads::recipes::{MemoryKnobs, MemoryLockService};
use workloads::worker::{spawn_local, Worker};

struct Run {
    events: Vec<Event>,
    resource: MemoryResource,
}

async fn run(knobs: MemoryKnobs, workers: usize, seconds: f64, ttl_ms: u64) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.jsonl");
    let clock = RunClock::start();
    let rec = Recorder::new(Arc::new(HistoryWriter::create(&path).unwrap()), clock);
    let cfg = RawRecipeConfig {
        ttl: Some(Duration::from_millis(ttl_ms)),
        acquire_timeout: Some(Duration::from_millis(300)),
        ..Default::default()
    }
    .validate(RecipeKind::Memory)
    .unwrap();
    let service = MemoryLockService::new(knobs);
    let resource = MemoryResource::new(MemoryMode::Strict, clock);
    let mut conns = vec![];
    for i in 0..workers {
        let name = format!("worker-{i}");
        let client: Arc<dyn Client> = Arc::new(service.client(&name, cfg.ttl, cfg.acquire_timeout));
        let discipline: Discipline = "stop".parse().unwrap();
        let w = Worker::new(
            &name,
            client,
            Box::new(resource.clone()),
            cfg.clone(),
            discipline,
        );
        conns.push(WorkerConn::over(spawn_local(w), rec.clone()).await.unwrap());
    }
    let spec = WorkloadSpec {
        lock: "l".into(),
        key: "k".into(),
        work: Duration::from_millis(1)..=Duration::from_millis(5),
        writes_per_hold: 2,
        app: workloads::App::Short,
        between: Duration::ZERO..=Duration::from_millis(2),
        until: Deadline::at((seconds * 1e9) as u64),
        seed: 42,
    };
    run_workload(conns, &spec, &rec).await.unwrap();
    let events = JsonlReader::<Event>::open(&path)
        .unwrap()
        .map(|r| r.unwrap().1)
        .collect();
    Run { events, resource }
}

#[tokio::test]
async fn five_workers_for_a_second_produce_an_exclusive_fenced_history() {
    let r = run(MemoryKnobs::default(), 5, 1.0, 500).await;
    let spans = hold_spans(&r.events);
    assert!(spans.len() > 20, "only {} holds in 1 s", spans.len());
    assert_eq!(overlaps(&spans, "l"), vec![]);
    assert_eq!(falling_tokens(&spans, "l"), vec![]);
    // Every invoke is closed, indexes are file order, times never go backwards.
    let invokes = r.events.iter().filter(|e| e.kind == OpType::Invoke).count();
    assert_eq!(invokes * 2, r.events.len());
    assert!(r
        .events
        .windows(2)
        .all(|w| w[0].index + 1 == w[1].index && w[0].time <= w[1].time));
    let accepted = r
        .events
        .iter()
        .filter(|e| e.f == F::Write && e.kind == OpType::Ok)
        .count();
    assert_eq!(
        accepted,
        r.resource.log().len(),
        "every write reached the resource once"
    );
    assert!(r.resource.log().iter().all(|e| e.result.is_accepted()));
}

#[tokio::test]
async fn early_expiry_shows_up_as_overlap_and_lease_lost_notices() {
    let knobs = MemoryKnobs {
        expires_early: Some(0.01),
        ..Default::default()
    };
    // Work lasts up to 5 ms and the service forgets a 200 ms lease after 2 ms: most holders
    // are still working when the next worker is granted the lock.
    let r = run(knobs, 3, 0.5, 200).await;
    let spans = hold_spans(&r.events);
    let lost = r
        .events
        .iter()
        .filter(|e| e.f == F::Release && e.kind == OpType::Fail)
        .count();
    assert!(
        lost > 0 || !overlaps(&spans, "l").is_empty(),
        "the bug left no trace"
    );
}

#[tokio::test]
async fn non_monotonic_tokens_show_up_as_regressions_and_stale_rejections() {
    let knobs = MemoryKnobs {
        tokens_not_monotonic: true,
        ..Default::default()
    };
    let r = run(knobs, 2, 0.3, 500).await;
    let spans = hold_spans(&r.events);
    assert!(!falling_tokens(&spans, "l").is_empty());
    assert!(r.resource.log().iter().any(|e| !e.result.is_accepted()));
}

/// One worker on a service that forgets leases early: its background renewal is refused, the
/// hold turns lost, and the next write shows the discipline (`stop`: lease-lost first and
/// nothing sent; `continue`: the write goes out anyway).
async fn early_loss(discipline: &str) -> (Vec<Event>, MemoryResource) {
    use workloads::driver::{ProcessIds, Session};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.jsonl");
    let clock = RunClock::start();
    let rec = Recorder::new(Arc::new(HistoryWriter::create(&path).unwrap()), clock);
    let cfg = RawRecipeConfig {
        ttl: Some(Duration::from_millis(300)),
        ..Default::default()
    }
    .validate(RecipeKind::Memory)
    .unwrap();
    let service = MemoryLockService::new(MemoryKnobs {
        expires_early: Some(0.1),
        ..Default::default()
    });
    let client: Arc<dyn Client> = Arc::new(service.client("w", cfg.ttl, cfg.acquire_timeout));
    let resource = MemoryResource::new(MemoryMode::Strict, clock);
    let w = Worker::new(
        "w",
        client,
        Box::new(resource.clone()),
        cfg,
        discipline.parse().unwrap(),
    );
    let conn = WorkerConn::over(spawn_local(w), rec.clone()).await.unwrap();
    let mut s = Session::new(conn, ProcessIds::of_worker(0, 1), rec);
    s.acquire("l").await.unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await; // past the first renewal (100 ms)
    s.write("k", 1).await.unwrap();
    s.release().await.unwrap();
    let events = JsonlReader::<Event>::open(&path)
        .unwrap()
        .map(|r| r.unwrap().1)
        .collect();
    (events, resource)
}

#[tokio::test]
async fn stop_records_lease_lost_before_the_write_and_sends_nothing() {
    let (events, resource) = early_loss("stop").await;
    let fs: Vec<_> = events.iter().map(|e| (e.f.clone(), e.kind)).collect();
    assert_eq!(
        fs,
        [
            (F::Acquire, OpType::Invoke),
            (F::Acquire, OpType::Ok),
            (F::LeaseLost, OpType::Info),
            (F::Write, OpType::Invoke),
            (F::Write, OpType::Fail),
            (F::Release, OpType::Invoke),
            (F::Release, OpType::Fail),
        ]
    );
    assert_eq!(events[4].result, None, "not sent");
    assert!(resource.log().is_empty());
}

#[tokio::test]
async fn continue_sends_the_write_after_losing_the_lease() {
    let (events, resource) = early_loss("continue").await;
    let write = events
        .iter()
        .find(|e| e.f == F::Write && e.kind != OpType::Invoke)
        .unwrap();
    assert_eq!(
        write.kind,
        OpType::Ok,
        "nobody else wrote: the strict resource accepts it"
    );
    assert!(events.iter().any(|e| e.f == F::LeaseLost));
    assert_eq!(resource.log().len(), 1);
}

#[tokio::test]
async fn a_worker_that_dies_while_holding_gets_an_exit_event_at_once() {
    use workloads::driver::{ProcessIds, Session, Step};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.jsonl");
    let rec = Recorder::new(
        Arc::new(HistoryWriter::create(&path).unwrap()),
        RunClock::start(),
    );
    let cfg = RawRecipeConfig::default()
        .validate(RecipeKind::Memory)
        .unwrap();
    let service = MemoryLockService::default();
    let client: Arc<dyn Client> = Arc::new(service.client("w", cfg.ttl, cfg.acquire_timeout));
    let resource = MemoryResource::new(MemoryMode::Strict, rec.clock);
    let mut w = Worker::new(
        "w",
        client,
        Box::new(resource),
        cfg,
        "stop".parse().unwrap(),
    );
    let (driver_end, worker_end) = tokio::io::duplex(4096);
    let task = tokio::spawn(async move { workloads::worker::serve_conn(&mut w, worker_end).await });
    let conn = WorkerConn::over(driver_end, rec.clone()).await.unwrap();
    let mut s = Session::new(conn, ProcessIds::of_worker(0, 1), rec);
    s.acquire("l").await.unwrap();
    task.abort(); // the worker process is killed while its holder works
    let started = std::time::Instant::now();
    assert_eq!(
        s.idle(Duration::from_secs(10)).await.unwrap(),
        Some(Step::Died)
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "noticed at once, not after the work"
    );
    assert_eq!(
        s.write("k", 1).await.unwrap(),
        Step::Died,
        "nothing is invoked on a dead worker"
    );
    let events: Vec<Event> = JsonlReader::<Event>::open(&path)
        .unwrap()
        .map(|r| r.unwrap().1)
        .collect();
    let fs: Vec<_> = events.iter().map(|e| (e.f.clone(), e.kind)).collect();
    assert_eq!(
        fs,
        [
            (F::Acquire, OpType::Invoke),
            (F::Acquire, OpType::Ok),
            (F::Exit, OpType::Info),
        ]
    );
}

#[tokio::test]
async fn inline_renewal_discovers_the_loss_at_the_write_and_still_records_it_first() {
    let (events, resource) = early_loss("stop,inline").await;
    let fs: Vec<_> = events.iter().map(|e| (e.f.clone(), e.kind)).collect();
    assert_eq!(
        fs,
        [
            (F::Acquire, OpType::Invoke),
            (F::Acquire, OpType::Ok),
            (F::Write, OpType::Invoke),
            (F::LeaseLost, OpType::Info),
            (F::Write, OpType::Fail),
            (F::Release, OpType::Invoke),
            (F::Release, OpType::Fail),
        ]
    );
    assert!(resource.log().is_empty());
}
