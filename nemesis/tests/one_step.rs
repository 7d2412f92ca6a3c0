//! The executor one fault at a time, specified against the in-memory control: a struck fault is
//! recorded under the names its caller gives and lifted exactly, a fault left standing is never
//! undone by the heal, and two cuts struck together stand together.

use nemesis::fake::{Call, FakeControl, StaticTopology};
use nemesis::{FaultKind, Grudge, Nemesis, OneStep, Resolved, Signal};
use results::jsonl::HistoryWriter;
use results::RunClock;
use std::path::PathBuf;

fn history(name: &str) -> (HistoryWriter, PathBuf) {
    let dir = std::env::temp_dir().join(format!("nemesis-one-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("history.jsonl");
    (HistoryWriter::create(&path).expect("history file"), path)
}

#[tokio::test]
async fn a_struck_pause_is_lifted_and_a_left_kill_is_never_restarted() {
    let (history, path) = history("pause-kill");
    let (control, topology) = (FakeControl::new(), StaticTopology::new(2, 3));
    let nemesis = Nemesis::new(&control, &topology, &history, RunClock::start());
    let one: &dyn OneStep = &nemesis;
    let w = one.workers();
    let paused = one
        .strike(
            FaultKind::PauseWorker.into(),
            Resolved::Signal(Signal::Stop, vec![w[0].clone()]),
            Some(vec!["A".into()]),
            vec![("delay_ms", 5.into())],
        )
        .await
        .expect("pause struck");
    assert!(control.stopped().contains(&w[0]));
    one.lift(paused).await.expect("pause lifted");
    assert!(!control.stopped().contains(&w[0]));
    let killed = one
        .strike(
            FaultKind::KillWorker.into(),
            Resolved::Signal(Signal::Kill, vec![w[1].clone()]),
            None,
            vec![],
        )
        .await
        .expect("kill struck");
    one.leave(killed).expect("kill left");
    one.heal_all().await.expect("healed");
    history.sync().expect("synced");
    let calls = control.calls();
    assert!(!calls.contains(&Call::Restart(w[1].clone())), "{calls:?}");
    assert!(
        !calls.contains(&Call::Signal(w[1].clone(), Signal::Cont)),
        "{calls:?}"
    );
    assert!(control.dead().contains(&w[1]));
    let text = std::fs::read_to_string(&path).expect("history");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].contains("start-pause-worker") && lines[0].contains(r#"["A"]"#));
    assert!(lines[0].contains(r#""delay_ms":5"#), "{}", lines[0]);
    assert!(lines[1].contains("stop-pause-worker") && !lines[1].contains("error"));
    assert!(lines[3].contains("stop-kill-worker") && lines[3].contains(&w[1]));
}

#[tokio::test]
async fn two_struck_cuts_stand_together_and_the_last_lift_heals() {
    let (history, _) = history("cuts");
    let (control, topology) = (FakeControl::new(), StaticTopology::new(2, 3));
    let nemesis = Nemesis::new(&control, &topology, &history, RunClock::start());
    let one: &dyn OneStep = &nemesis;
    let (w, n) = (one.workers(), one.nodes());
    let cut = |i: usize| Grudge::cut(std::slice::from_ref(&w[i]), &n);
    let isolate = |i: usize| {
        one.strike(
            FaultKind::IsolateWorker.into(),
            Resolved::Partition(cut(i), vec![w[i].clone()]),
            None,
            vec![],
        )
    };
    let a = isolate(0).await.expect("first cut");
    let b = isolate(1).await.expect("second cut");
    assert_eq!(control.grudge(), Grudge::union([&cut(0), &cut(1)]));
    one.lift(a).await.expect("first lifted");
    assert_eq!(control.grudge(), cut(1));
    one.lift(b).await.expect("second lifted");
    assert_eq!(control.grudge(), Grudge::none());
    assert_eq!(control.calls().last(), Some(&Call::HealNetwork));
}

#[tokio::test]
async fn a_lift_after_the_final_heal_does_nothing() {
    let (history, path) = history("healed");
    let (control, topology) = (FakeControl::new(), StaticTopology::new(1, 3));
    let nemesis = Nemesis::new(&control, &topology, &history, RunClock::start());
    let one: &dyn OneStep = &nemesis;
    let node = one.nodes()[0].clone();
    let starved = one
        .strike(
            FaultKind::StarveNode.into(),
            Resolved::Starve(nemesis::STARVED_CPUS, vec![node.clone()]),
            None,
            vec![],
        )
        .await
        .expect("starved");
    one.heal_all().await.expect("healed");
    one.lift(starved).await.expect("nothing to lift");
    history.sync().expect("synced");
    let text = std::fs::read_to_string(&path).expect("history");
    assert_eq!(text.matches("stop-starve-node").count(), 1, "{text}");
    assert!(text.contains("stopped by the final heal"));
    assert!(control.throttled().is_empty());
}
