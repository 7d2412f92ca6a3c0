//! The executor's contract, specified against the in-memory control: faults start and stop at
//! their times, hit what they name, are recorded as nemesis events, and are always healed.

use nemesis::fake::{Call, FakeControl, StaticTopology};
use nemesis::{Context, Nemesis, Plan, Schedule, Signal};
use results::jsonl::{HistoryWriter, JsonlReader};
use results::{Event, OpType, Process, Provider, RunClock, F};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn history(name: &str) -> (HistoryWriter, PathBuf) {
    let dir = std::env::temp_dir().join(format!("nemesis-exec-{}-{name}", std::process::id()));
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

fn never() -> std::future::Pending<()> {
    std::future::pending()
}

#[tokio::test]
async fn faults_start_and_stop_in_order_and_are_recorded_with_their_targets() {
    let (writer, path) = history("order");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(3, 3));
    let plan = plan(
        "- at 10ms start pause-holder for 40ms\n- at 60ms isolate-leader for 30ms\n",
        Provider::Etcd,
    );
    let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
    let summary = nemesis.run(&plan, never()).await.unwrap();
    assert_eq!(
        (summary.started, summary.skipped, summary.cancelled),
        (2, 0, false)
    );

    let ev = events(&path);
    let fs: Vec<String> = ev.iter().map(|e| e.f.to_string()).collect();
    assert_eq!(
        fs,
        [
            "start-pause-holder",
            "stop-pause-holder",
            "start-isolate-leader",
            "stop-isolate-leader"
        ]
    );
    assert!(ev
        .iter()
        .all(|e| e.process == Process::Nemesis && e.kind == OpType::Info));
    assert_eq!(
        ev[0].value.as_ref().unwrap()["targets"],
        serde_json::json!(["worker-1"])
    );
    assert_eq!(ev[0].value.as_ref().unwrap()["fault"], "pause-holder");
    assert_eq!(
        ev[2].value.as_ref().unwrap()["targets"],
        serde_json::json!(["n1"])
    );
    assert_eq!(
        ev[2].value.as_ref().unwrap()["grudge"]["n1"],
        serde_json::json!(["n2", "n3"])
    );
    let pause = ev[1].time - ev[0].time;
    assert!(pause >= 35_000_000, "the pause lasted {pause} ns");

    let calls = control.calls();
    assert_eq!(calls[0], Call::Signal("worker-1".into(), Signal::Stop));
    assert_eq!(calls[1], Call::Signal("worker-1".into(), Signal::Cont));
    assert!(matches!(calls[2], Call::Partition(_)));
    assert_eq!(calls[3], Call::HealNetwork);
    assert!(control.stopped().is_empty() && control.grudge().is_empty());
}

#[tokio::test]
async fn cancelling_mid_fault_heals_everything_and_records_the_stop() {
    let (writer, path) = history("cancel");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(3, 3));
    let plan = plan(
        "- at 0s pause-holder for 10s\n- at 0s halves for 10s\n- at 0s kill-node for 10s\n",
        Provider::Zookeeper,
    );
    let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
    // Cancelled once all three are in force (a holder freeze asks after 100 ms whether its
    // target still holds).
    let summary = nemesis
        .run(&plan, tokio::time::sleep(Duration::from_millis(300)))
        .await
        .unwrap();
    assert!(summary.cancelled);
    assert_eq!(summary.started, 3);
    assert!(control.stopped().is_empty(), "{:?}", control.stopped());
    assert!(control.dead().is_empty(), "{:?}", control.dead());
    assert!(control.grudge().is_empty());
    let stops: Vec<Event> = events(&path)
        .into_iter()
        .filter(|e| matches!(e.f, F::Stop(_)))
        .collect();
    assert_eq!(stops.len(), 3);
    assert!(stops
        .iter()
        .all(|e| e.error.as_deref() == Some("stopped by the final heal")));
}

#[tokio::test]
async fn a_control_error_aborts_but_still_heals() {
    let (writer, _) = history("error");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(3, 3));
    control.fail_on("n1");
    let plan = plan(
        "- at 0s pause-holder for 10s\n- at 20ms pause-leader for 10s\n",
        Provider::Etcd,
    );
    let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
    let err = nemesis.run(&plan, never()).await.unwrap_err();
    assert!(
        err.to_string().contains("signal n1: no such container"),
        "{err}"
    );
    assert!(
        !control.stopped().contains("worker-1"),
        "the holder was resumed"
    );
    assert!(control.calls().contains(&Call::HealNetwork));
}

#[tokio::test]
async fn a_partition_that_fails_is_healed_and_leaves_no_orphan_stop_event() {
    let (writer, path) = history("partition-error");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(2, 3));
    control.fail_on("n3");
    let plan = plan("- at 0s halves for 10s\n", Provider::Etcd);
    let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
    let err = nemesis.run(&plan, never()).await.unwrap_err();
    assert!(err.to_string().contains("partition n3"), "{err}");
    assert_eq!(control.calls().last(), Some(&Call::HealNetwork));
    assert!(events(&path).is_empty(), "{:?}", events(&path));
}

#[tokio::test]
async fn a_fault_without_a_target_is_recorded_as_skipped() {
    let (writer, path) = history("skip");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(2, 3));
    *topo.holder.lock().unwrap() = None;
    let plan = plan("- at 0s kill-holder for 10ms\n", Provider::Etcd);
    let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
    let summary = nemesis.run(&plan, never()).await.unwrap();
    assert_eq!(summary.skipped, 1);
    let ev = events(&path);
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].f, F::Start("kill-holder".into()));
    assert!(ev[0]
        .error
        .as_deref()
        .unwrap()
        .contains("no worker holds the lock"));
}

/// Runs `timeline` (etcd) while nobody holds the lock until `ms` in, then worker-2 does.
async fn holder_appears_after(
    ms: u64,
    name: &str,
    timeline: &str,
    end: Option<Duration>,
) -> (FakeControl, PathBuf, nemesis::Summary) {
    let (writer, path) = history(name);
    let (control, topo) = (FakeControl::new(), StaticTopology::new(2, 3));
    *topo.holder.lock().unwrap() = None;
    let plan = plan(timeline, Provider::Etcd);
    let summary = {
        let mut nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
        if let Some(end) = end {
            nemesis = nemesis.ending_at(end);
        }
        let acquire_later = async {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            *topo.holder.lock().unwrap() = Some("worker-2".into());
            std::future::pending::<()>().await
        };
        tokio::select! {
            s = nemesis.run(&plan, never()) => s.unwrap(),
            () = acquire_later => unreachable!("pending"),
        }
    };
    (control, path, summary)
}

#[tokio::test]
async fn a_holder_fault_waits_for_the_next_holder_instead_of_skipping() {
    let (control, path, summary) =
        holder_appears_after(60, "wait-holder", "- at 0s pause-holder for 400ms\n", None).await;
    assert_eq!((summary.started, summary.skipped), (1, 0));
    assert_eq!(
        control.calls()[..2],
        [
            Call::Signal("worker-2".into(), Signal::Stop),
            Call::Signal("worker-2".into(), Signal::Cont)
        ]
    );
    let ev = events(&path);
    assert_eq!(ev[0].f, F::Start("pause-holder".into()));
    assert!(ev[0].time >= 60_000_000, "started at {} ns", ev[0].time);
    // Nothing else is planned: it keeps its full 400 ms although it started late.
    assert_eq!(ev[1].f, F::Stop("pause-holder".into()));
    let paused = ev[1].time - ev[0].time;
    assert!(paused >= 390_000_000, "paused for {paused} ns");
}

/// The live history learns of a release only from its reply: a worker frozen just after it let
/// go shows up as the holder, then as nobody. Such a freeze is thawed and aimed again.
#[tokio::test]
async fn a_holder_freeze_that_reached_a_worker_which_had_let_go_is_aimed_again() {
    let (writer, path) = history("aimed-again");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(2, 3));
    let plan = plan("- at 10ms start pause-holder for 800ms\n", Provider::Etcd);
    let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
    let summary = {
        // worker-1's release reply arrives 30 ms after the freeze; worker-2 acquires next.
        let releases_late = async {
            tokio::time::sleep(Duration::from_millis(40)).await;
            *topo.holder.lock().unwrap() = None;
            tokio::time::sleep(Duration::from_millis(30)).await;
            *topo.holder.lock().unwrap() = Some("worker-2".into());
            std::future::pending::<()>().await
        };
        tokio::select! {
            s = nemesis.run(&plan, never()) => s.unwrap(),
            () = releases_late => unreachable!("pending"),
        }
    };
    assert_eq!((summary.started, summary.skipped), (1, 0));
    assert_eq!(
        control.calls()[..4],
        [
            Call::Signal("worker-1".into(), Signal::Stop),
            Call::Signal("worker-1".into(), Signal::Cont),
            Call::Signal("worker-2".into(), Signal::Stop),
            Call::Signal("worker-2".into(), Signal::Cont),
        ]
    );
    let ev = events(&path);
    let fs: Vec<String> = ev.iter().map(|e| e.f.to_string()).collect();
    assert_eq!(
        fs,
        [
            "start-pause-holder",
            "stop-pause-holder",
            "start-pause-holder",
            "stop-pause-holder"
        ]
    );
    assert!(ev[1]
        .error
        .as_deref()
        .is_some_and(|e| e.starts_with(results::fault::AIMED_AGAIN) && e.contains("worker-1")));
    assert_eq!((ev[2].error.as_ref(), ev[3].error.as_ref()), (None, None));
    assert_eq!(
        ev[2].value.as_ref().unwrap()["targets"],
        serde_json::json!(["worker-2"])
    );
}

/// A holder freeze that keeps finding its target gone gives up at half its length: skipped.
#[tokio::test]
async fn a_holder_freeze_that_keeps_missing_is_skipped_at_its_deadline() {
    let (writer, path) = history("aimed-out");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(2, 3));
    let plan = plan("- at 10ms start pause-holder for 200ms\n", Provider::Etcd);
    let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
    let summary = {
        // Every worker the nemesis freezes as the holder has already let go.
        let forgets = async {
            loop {
                if let Some(w) = control.stopped().iter().next() {
                    let other = if w == "worker-1" {
                        "worker-2"
                    } else {
                        "worker-1"
                    };
                    *topo.holder.lock().unwrap() = Some(other.into());
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        };
        tokio::select! {
            s = nemesis.run(&plan, never()) => s.unwrap(),
            () = forgets => unreachable!("loops"),
        }
    };
    assert_eq!((summary.started, summary.skipped), (0, 1));
    assert!(
        control.stopped().is_empty(),
        "every missed freeze was thawed"
    );
    let ev = events(&path);
    let last = ev.last().unwrap();
    assert_eq!(last.f, F::Stop("pause-holder".into()));
    assert!(last
        .error
        .as_deref()
        .is_some_and(|e| e.starts_with(results::fault::HOLDER_MISSED)));
}

#[tokio::test]
async fn a_late_holder_fault_is_lengthened_only_up_to_the_next_step() {
    // The holder appears at 60 ms, well before the wait gives up (100 ms).
    let (_, path, summary) = holder_appears_after(
        60,
        "late-bounded",
        "- at 0s pause-holder for 200ms\n- at 250ms pause-leader for 50ms\n",
        None,
    )
    .await;
    assert_eq!((summary.started, summary.skipped), (2, 0));
    let ev = events(&path);
    let names: Vec<String> = ev.iter().map(|e| e.f.to_string()).collect();
    assert_eq!(
        names[..3],
        [
            "start-pause-holder",
            "stop-pause-holder",
            "start-pause-leader"
        ],
        "the lengthened pause still ends before the next step"
    );
    // Planned to stop at 200 ms; it started 60–80 ms late, so it stops at the next step
    // (250 ms), not at 260–280 ms.
    assert!(ev[1].time >= 245_000_000, "stopped at {} ns", ev[1].time);
}

#[tokio::test]
async fn a_late_last_holder_fault_is_not_lengthened_past_the_end_of_the_fault_window() {
    // The run's fault window ends at 650 ms; the pause, planned for 0–600 ms, starts about
    // 200 ms late (it may wait up to 300 ms): it runs to 650 ms, not to 800 ms (that is the
    // recovery time).
    let (_, path, summary) = holder_appears_after(
        200,
        "late-last",
        "- at 0s pause-holder for 600ms\n",
        Some(Duration::from_millis(650)),
    )
    .await;
    assert_eq!((summary.started, summary.skipped), (1, 0));
    let ev = events(&path);
    assert_eq!(ev[1].f, F::Stop("pause-holder".into()));
    let stopped = ev[1].time;
    assert!(
        (640_000_000..760_000_000).contains(&stopped),
        "stopped at {stopped} ns"
    );
}

#[tokio::test]
async fn a_holder_fault_waiting_for_a_holder_never_delays_the_next_step() {
    let (writer, path) = history("wait-bounded");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(2, 3));
    *topo.holder.lock().unwrap() = None;
    let plan = plan(
        "- at 0s pause-leader for 100ms\n- at 50ms pause-holder for 1s\n",
        Provider::Etcd,
    );
    let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
    let summary = nemesis.run(&plan, never()).await.unwrap();
    assert_eq!((summary.started, summary.skipped), (1, 1));
    let ev = events(&path);
    let at = |f: &str| ev.iter().find(|e| e.f.to_string() == f).map(|e| e.time);
    let (skipped, resumed) = (at("start-pause-holder").unwrap(), at("stop-pause-leader"));
    // The holder fault gave up at the leader's planned stop (100 ms), not after its own 500 ms.
    assert!(skipped < 300_000_000, "skip recorded at {skipped} ns");
    assert!(
        resumed.unwrap() < 300_000_000,
        "leader resumed at {resumed:?} ns"
    );
}

#[tokio::test]
async fn a_killed_node_is_restarted_when_its_fault_stops() {
    let (writer, _) = history("kill");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(2, 3));
    let plan = plan("- at 0s kill-node for 20ms pick 4\n", Provider::Etcd);
    Nemesis::new(&control, &topo, &writer, RunClock::start())
        .run(&plan, never())
        .await
        .unwrap();
    // pick 4 of the sorted [n1, n2, n3] is n2.
    assert_eq!(
        control.calls()[..2],
        [
            Call::Signal("n2".into(), Signal::Kill),
            Call::Restart("n2".into())
        ]
    );
    assert!(control.dead().is_empty());
}

#[tokio::test]
async fn the_same_seed_hits_the_same_targets() {
    let generator = nemesis::Generator {
        faults: vec![nemesis::FaultKind::PauseWorker, nemesis::FaultKind::Halves],
        interval: Duration::from_millis(5),
        durations: Some((Duration::from_millis(5), Duration::from_millis(15))),
        ttl: Duration::from_millis(10),
        time_limit: Duration::from_millis(150),
    };
    let mut runs = Vec::new();
    for round in 0..2 {
        let (writer, _) = history(&format!("seed{round}"));
        let (control, topo) = (FakeControl::new(), StaticTopology::new(5, 5));
        Nemesis::new(&control, &topo, &writer, RunClock::start())
            .run(&generator.plan(99), never())
            .await
            .unwrap();
        runs.push(control.calls());
    }
    assert!(runs[0].len() > 4);
    assert_eq!(runs[0], runs[1]);
}

#[tokio::test]
async fn a_clock_jump_waits_for_a_fresh_holder_and_every_clock_is_real_after_the_run() {
    let (writer, path) = history("clock");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(3, 5));
    let plan = plan(
        "- at 0ms start clock-jump for 30ms\n- at 40ms start clock-skew for 30ms\n",
        Provider::Redlock,
    );
    let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
    let hand_over = async {
        tokio::time::sleep(Duration::from_millis(8)).await;
        *topo.holder.lock().unwrap() = Some("worker-2".into());
    };
    let (summary, ()) = tokio::join!(nemesis.run(&plan, never()), hand_over);
    assert_eq!(summary.unwrap().started, 2);
    let ev = events(&path);
    let jump = ev
        .iter()
        .find(|e| e.f.to_string() == "start-clock-jump")
        .unwrap();
    assert!(
        jump.time >= 8_000_000,
        "the jump waited for worker-2's fresh hold (at {} ns)",
        jump.time
    );
    let value = jump.value.as_ref().unwrap();
    assert_eq!(
        value["targets"].as_array().unwrap().len(),
        3,
        "a majority of 5"
    );
    assert!(value["clock"]["ahead"]["secs"].as_f64().unwrap() > 0.0);
    let sets: Vec<Call> = control
        .calls()
        .into_iter()
        .filter(|c| matches!(c, Call::SetClock(..)))
        .collect();
    assert!(sets
        .iter()
        .any(|c| matches!(c, Call::SetClock(_, s) if s.starts_with("fast"))));
    assert!(
        control.clocks().is_empty(),
        "every clock real after the run: {sets:?}"
    );
}

#[tokio::test]
async fn a_one_way_cut_is_applied_inbound_and_recorded_with_its_direction() {
    let (writer, path) = history("oneway");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(3, 3));
    let plan = plan("- at 0ms start mute-holder for 20ms\n", Provider::Etcd);
    let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
    nemesis.run(&plan, never()).await.unwrap();
    assert!(control
        .calls()
        .iter()
        .any(|c| matches!(c, Call::PartitionInbound(g) if g.drops("n1", "worker-1") && !g.drops("worker-1", "n1"))));
    let ev = events(&path);
    assert_eq!(ev[0].value.as_ref().unwrap()["direction"], "inbound");
    assert!(control.grudge().is_empty(), "healed");
}

#[tokio::test]
async fn hang_work_hangs_the_holder_and_resumes_it_at_its_stop_and_at_a_cancel() {
    let (writer, path) = history("hang");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(3, 3));
    let plan = plan(
        "- at 0s start hang-work for 30ms\n- at 40ms start hang-work for 10s\n",
        Provider::Etcd,
    );
    let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
    let summary = nemesis
        .run(&plan, tokio::time::sleep(Duration::from_millis(80)))
        .await
        .unwrap();
    assert!(summary.cancelled);
    assert_eq!(summary.started, 2);
    let hangs: Vec<Call> = control
        .calls()
        .into_iter()
        .filter(|c| matches!(c, Call::HangWork(..)))
        .collect();
    assert_eq!(
        hangs,
        [
            Call::HangWork("worker-1".into(), true),
            Call::HangWork("worker-1".into(), false),
            Call::HangWork("worker-1".into(), true),
            Call::HangWork("worker-1".into(), false),
        ],
        "the holder hung and resumed twice, the second time by the final heal"
    );
    assert!(control.hung().is_empty(), "{:?}", control.hung());
    let fs: Vec<String> = events(&path).iter().map(|e| e.f.to_string()).collect();
    assert_eq!(
        fs,
        [
            "start-hang-work",
            "stop-hang-work",
            "start-hang-work",
            "stop-hang-work"
        ]
    );
}

#[tokio::test]
async fn restart_empty_kills_empties_the_dead_node_and_restarts_it_at_the_stop() {
    let (writer, _) = history("empty");
    let (control, topo) = (FakeControl::new(), StaticTopology::new(3, 1));
    let plan = plan(
        "- at 0s start restart-empty-leader for 30ms\n",
        Provider::Redis,
    );
    let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
    nemesis.run(&plan, never()).await.unwrap();
    let node: Vec<Call> = control
        .calls()
        .into_iter()
        .filter(|c| !matches!(c, Call::Signal(_, Signal::Cont) | Call::HealNetwork))
        .filter(|c| !matches!(c, Call::ShapeLinks(..) | Call::SetClock(..)))
        .collect();
    assert_eq!(
        node,
        [
            Call::Signal("n1".into(), Signal::Kill),
            Call::EmptyData("n1".into()),
            Call::Restart("n1".into()),
        ]
    );
    assert!(control.dead().is_empty());
}

/// A cut of the next reply asks at its stop whether a reply spent it: one that struck nothing
/// says so on its stop line (and the run counts it as not landed); one that struck says nothing.
#[tokio::test]
async fn a_cut_no_reply_spent_says_so_on_its_stop_line() {
    for spent in [false, true] {
        let (writer, path) = history(if spent { "cut-spent" } else { "cut-unspent" });
        let (control, topo) = (FakeControl::new(), StaticTopology::new(3, 3));
        control.cut_answer(spent);
        let plan = plan("- at 0ms start cut-renew-reply for 20ms\n", Provider::Redis);
        let nemesis = Nemesis::new(&control, &topo, &writer, RunClock::start());
        nemesis.run(&plan, never()).await.unwrap();
        let ev = events(&path);
        let stop = ev
            .iter()
            .find(|e| e.f == results::F::Stop("cut-renew-reply".into()))
            .expect("a stop line");
        let unspent = stop
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with(results::fault::CUT_UNSPENT));
        assert_eq!(unspent, !spent, "{stop:?}");
    }
}
