//! The faults at a lock protocol's weak moments against the in-memory control: each strikes the moment it names (an
//! acquire, a release or a wait in flight, as the topology's live view shows them), records on
//! its start line what it drew (the delay, the length), and is healed like every other fault.

use nemesis::fake::{Call, FakeControl, StaticTopology};
use nemesis::{Context, InFlight, Nemesis, Plan, Schedule, Signal};
use results::jsonl::{HistoryWriter, JsonlReader};
use results::{Event, Provider, RunClock};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn history(name: &str) -> (HistoryWriter, PathBuf) {
    let dir = std::env::temp_dir().join(format!("nemesis-weak-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("history.jsonl");
    (HistoryWriter::create(&path).expect("history file"), path)
}

fn events(path: &Path) -> Vec<Event> {
    JsonlReader::<Event>::open(path)
        .expect("history readable")
        .map(|r| r.expect("history line").1)
        .collect()
}

/// A timeline with a 20 ms ttl (a stall then lasts 5-15 ms).
fn plan(yaml: &str, provider: Provider) -> Plan {
    Schedule::from_yaml(yaml)
        .expect("yaml")
        .validate(&Context {
            capabilities: provider.capabilities(),
            ttl: Duration::from_millis(20),
            time_limit: None,
        })
        .expect("valid timeline")
}

fn caught(worker: &str, index: u64, invoked_ns: u64, latency_ms: Option<u64>) -> InFlight {
    InFlight {
        worker: worker.into(),
        index,
        invoked_ns,
        acquire_latency: latency_ms.map(Duration::from_millis),
    }
}

fn value(e: &Event) -> &serde_json::Value {
    e.value.as_ref().expect("a nemesis value")
}

#[tokio::test]
async fn pause_acquiring_strikes_an_acquire_in_flight_after_a_delay_within_its_latency() {
    let (writer, path) = history("acquiring");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(3, 3));
    *topo.holder.lock().unwrap() = None;
    let clock = RunClock::start();
    let invoked = clock.now();
    *topo.acquiring.lock().unwrap() = vec![caught("worker-2", 7, invoked, Some(30))];
    let nemesis = Nemesis::new(&control, &topo, &writer, clock);
    let plan = plan("- at 0ms start pause-acquiring for 40ms\n", Provider::Etcd);
    let summary = nemesis.run(&plan, std::future::pending()).await.unwrap();
    assert_eq!(summary.started, 1);
    let ev = events(&path);
    assert_eq!(ev[0].f.to_string(), "start-pause-acquiring");
    let v = value(&ev[0]);
    assert_eq!(v["targets"], serde_json::json!(["worker-2"]));
    assert_eq!(v["invoke_index"], 7);
    assert_eq!(v["acquire_latency_ms"], 30.0);
    assert_eq!(v["landed"], "in-flight", "still acquiring after the freeze");
    let delay = v["delay_ms"].as_f64().expect("the drawn delay is recorded");
    assert!((0.0..=30.0).contains(&delay), "{delay}");
    assert!(
        ev[0].time >= invoked + (delay * 1e6) as u64,
        "struck no earlier than its delay after the invoke"
    );
    assert_eq!(
        control.calls()[0],
        Call::Signal("worker-2".into(), Signal::Stop)
    );
    assert!(control.stopped().is_empty(), "healed");
}

#[tokio::test]
async fn an_in_flight_fault_that_finds_no_such_moment_is_skipped_with_the_reason() {
    let (writer, path) = history("nobody");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(3, 3));
    let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
    let plan = plan(
        "- at 0ms start pause-releasing for 20ms\n- at 30ms start kill-acquiring for 20ms\n",
        Provider::Etcd,
    );
    let summary = nemesis.run(&plan, std::future::pending()).await.unwrap();
    assert_eq!((summary.started, summary.skipped), (0, 2));
    let ev = events(&path);
    let errors: Vec<&str> = ev.iter().filter_map(|e| e.error.as_deref()).collect();
    assert_eq!(
        errors,
        [
            "skipped: no worker's release was in flight",
            "skipped: no worker's acquire was in flight"
        ]
    );
    let struck = |c: &Call| matches!(c, Call::Signal(_, Signal::Stop | Signal::Kill));
    assert!(!control.calls().iter().any(struck), "nothing was struck");
}

#[tokio::test]
async fn pause_waiter_freezes_a_worker_waiting_for_the_held_lock_not_the_holder() {
    let (writer, path) = history("waiter");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(3, 3));
    let clock = RunClock::start();
    // worker-1 holds; its own re-acquire in flight would not be a wait.
    *topo.acquiring.lock().unwrap() = vec![
        caught("worker-1", 3, clock.now(), None),
        caught("worker-3", 5, clock.now(), None),
    ];
    let nemesis = Nemesis::new(&control, &topo, &writer, clock);
    let plan = plan(
        "- at 0ms start pause-waiter for 30ms pick 0\n",
        Provider::Zookeeper,
    );
    nemesis.run(&plan, std::future::pending()).await.unwrap();
    let ev = events(&path);
    let v = value(&ev[0]);
    assert_eq!(v["targets"], serde_json::json!(["worker-3"]));
    assert_eq!(v["holder"], "worker-1");
    assert_eq!(
        control.calls()[0],
        Call::Signal("worker-3".into(), Signal::Stop)
    );
}

#[tokio::test]
async fn isolate_releasing_cuts_the_releasing_worker_off_the_service() {
    let (writer, path) = history("releasing");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(3, 3));
    let clock = RunClock::start();
    *topo.releasing.lock().unwrap() = vec![caught("worker-2", 9, clock.now(), None)];
    let nemesis = Nemesis::new(&control, &topo, &writer, clock);
    let plan = plan(
        "- at 0ms start isolate-releasing for 20ms\n",
        Provider::Redis,
    );
    nemesis.run(&plan, std::future::pending()).await.unwrap();
    let ev = events(&path);
    assert_eq!(value(&ev[0])["invoke_index"], 9);
    match &control.calls()[0] {
        // The worker's rules cut both directions; no node holds one.
        Call::Partition(g) => assert!(g.drops("worker-2", "n1") && g.nodes().eq(["worker-2"])),
        other => panic!("a partition, not {other:?}"),
    }
    assert!(control.grudge().is_empty(), "healed");
}

#[tokio::test]
async fn stall_service_freezes_every_node_for_a_drawn_length_shorter_than_the_lease() {
    let (writer, path) = history("stall");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(2, 3));
    let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
    let plan = plan("- at 0ms start stall-service\n", Provider::Etcd);
    let length = plan.steps[0].duration;
    assert!(
        (Duration::from_millis(5)..=Duration::from_millis(15)).contains(&length),
        "ttl / 4 ..= 3 ttl / 4 of 20 ms: {length:?}"
    );
    nemesis.run(&plan, std::future::pending()).await.unwrap();
    let ev = events(&path);
    let v = value(&ev[0]);
    assert_eq!(v["targets"], serde_json::json!(["n1", "n2", "n3"]));
    assert_eq!(v["length_ms"], length.as_millis() as u64);
    let stops = control
        .calls()
        .into_iter()
        .filter(|c| matches!(c, Call::Signal(_, Signal::Stop)))
        .count();
    assert_eq!(stops, 3, "every node frozen");
    assert!(control.stopped().is_empty(), "every node thawed");
    assert!(ev[1].time - ev[0].time >= length.as_nanos() as u64 * 9 / 10);
}

#[tokio::test]
async fn client_clock_faults_move_the_holder_s_clock_forward_or_backward_by_the_pick() {
    let (writer, _path) = history("client-clock");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(3, 3));
    let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
    let plan = plan(
        "- at 0ms start client-clock-jump for 10ms pick 0\n\
         - at 20ms start client-clock-jump for 10ms pick 1\n\
         - at 40ms start client-clock-skew for 10ms pick 3\n",
        Provider::Redis,
    );
    nemesis.run(&plan, std::future::pending()).await.unwrap();
    let set: Vec<String> = control
        .calls()
        .into_iter()
        .filter_map(|c| match c {
            Call::SetClock(t, s) if s != "real" => Some(format!("{t} {s}")),
            _ => None,
        })
        .collect();
    let third = format!("worker-1 fast x{}", 1.0 / 3.0);
    assert_eq!(
        set,
        ["worker-1 ahead 10s", "worker-1 ahead -10s", third.as_str()]
    );
    assert!(control.clocks().is_empty(), "real again");
}

#[tokio::test]
async fn slow_reply_holds_back_only_the_replies_to_the_holder() {
    let (writer, _path) = history("slow-reply");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(3, 3));
    let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start()).with_clock_faults(
        nemesis::ClockFaults::for_timing(Duration::from_secs(2), Duration::from_millis(700)),
    );
    let plan = plan("- at 0ms start slow-reply for 10ms\n", Provider::Etcd);
    nemesis.run(&plan, std::future::pending()).await.unwrap();
    assert_eq!(
        control.calls()[0],
        Call::ShapeLinks("worker-1".into(), Some((1400, 0, "0 replies-only".into())))
    );
    assert!(control.shaped().is_empty(), "healed");
}
