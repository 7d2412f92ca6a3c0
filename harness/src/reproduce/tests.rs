//! The specifications of `reproduce`: a stored run made by hand (a paused holder A, a newer
//! holder B, A's late write accepted after B's) becomes the scenario an engineer would write:
//! A acquires and is paused, A's lease expires (asked of the provider), B acquires with a
//! higher token and writes, A resumes and writes, and the anomaly is expected.

use super::*;
use crate::config::RawTest;
use crate::replay::scenario::{self, Action, Control, Expect, Step};
use results::{AnomalyKind, Event, ResourceEntry, Verdict};

fn events(lines: &[&str]) -> Vec<Event> {
    lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A holder paused past its lease whose late write the unfenced resource accepted after the
/// next holder's, with a third worker's grant in between that the evidence does not name.
fn stale_write_run() -> Stored {
    let history = events(&[
        r#"{"index":0,"time":100,"process":0,"type":"ok","f":"acquire","lock":"l","owner":"worker-1","lease":"a","token":5}"#,
        r#"{"index":1,"time":200,"process":"nemesis","type":"info","f":"start-pause-holder","value":{"targets":["worker-1"]}}"#,
        r#"{"index":2,"time":300,"process":2,"type":"ok","f":"acquire","lock":"l","owner":"worker-3","lease":"c","token":6}"#,
        r#"{"index":3,"time":400,"process":2,"type":"ok","f":"release","lock":"l","owner":"worker-3","lease":"c","token":6,"result":"released"}"#,
        r#"{"index":4,"time":500,"process":1,"type":"ok","f":"acquire","lock":"l","owner":"worker-2","lease":"b","token":7}"#,
        r#"{"index":5,"time":700,"process":"nemesis","type":"info","f":"stop-pause-holder","value":{"targets":["worker-1"]}}"#,
    ]);
    let resource: Vec<ResourceEntry> = [
        r#"{"seq":0,"time":600,"key":"k0","process":1,"owner":"worker-2","lease":"b","token":7,"op_id":"1-1","value":"1-1","highest_before":6,"result":"accepted"}"#,
        r#"{"seq":1,"time":690,"key":"k0","process":0,"owner":"worker-1","lease":"a","token":5,"op_id":"0-1","value":"0-1","highest_before":7,"result":"accepted"}"#,
    ]
    .iter()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    let verdict: Verdict = serde_json::from_str(
        r#"{"valid":false,"anomalies":[{"kind":"stale-accepted-write","fails":true,"summary":"token 5 after 7","at":690,"key":"k0","owner":"worker-1","lease":"a","token":5,"seqs":[0,1],"times":[600,690],"other":{"basis":"token","newer_lease":"b","process":0},"diagnosis":{"observation":"","likely_boundary":"","what_to_check":"","next_action":""}}],"stats":{}}"#,
    )
    .unwrap();
    Stored {
        dir: "runs/t/1".into(),
        test: RawTest {
            name: Some("t".into()),
            provider: Some("etcd".into()),
            recipe: Some("etcd-lease".into()),
            resource: Some("none".into()),
            ttl: Some(results::Dur::secs(2)),
            ..RawTest::default()
        },
        replay_of: None,
        verdict,
        history,
        resource,
    }
}

fn worker(s: &Step) -> Option<(&str, &Action, Option<&Expect>)> {
    match s {
        Step::Worker {
            worker,
            action,
            expect,
            ..
        } => Some((worker.as_str(), action, expect.as_ref())),
        _ => None,
    }
}

#[test]
fn a_stale_write_becomes_the_paused_holder_timeline() {
    let made = make(&stale_write_run(), 1, None).unwrap();
    let sc = scenario::parse(&made.text).unwrap();
    assert_eq!(sc.workers, vec!["A", "B"], "{}", made.text);
    assert_eq!(sc.expect_anomalies, vec![AnomalyKind::StaleAcceptedWrite]);
    assert_eq!(sc.providers, vec!["etcd"]);
    assert_eq!(sc.recipe.as_deref(), Some("etcd-lease"));
    assert_eq!(sc.resource, "none");
    let s = &sc.steps;
    assert_eq!(
        worker(&s[0]).map(|w| (w.0, w.1)),
        Some(("A", &Action::Acquire))
    );
    assert_eq!(
        worker(&s[1]).map(|w| (w.0, w.1)),
        Some(("A", &Action::Pause))
    );
    assert!(
        matches!(&s[2], Step::Control { control: Control::LeaseExpired(w), .. } if w == "A"),
        "{}",
        made.text
    );
    let b = worker(&s[3]).unwrap();
    assert_eq!((b.0, b.1), ("B", &Action::Acquire));
    assert!(matches!(b.2, Some(Expect::Token { other, .. }) if other == "A"));
    assert_eq!(worker(&s[4]).map(|w| w.0), Some("B"));
    // A's resume is recorded after its write was decided: it resumes first.
    assert_eq!(
        worker(&s[5]).map(|w| (w.0, w.1)),
        Some(("A", &Action::Resume))
    );
    let late = worker(&s[6]).unwrap();
    assert_eq!(late.1, &Action::Write("0-1".into()));
    assert_eq!(late.2, Some(&Expect::Result(results::OpResult::Accepted)));
    assert_eq!(s.len(), 7, "{}", made.text);
    assert!(made.text.contains("# seq 1, 0.000s"), "{}", made.text);
}

#[test]
fn a_rejection_another_worker_caused_is_not_expected_again() {
    let mut run = stale_write_run();
    // Strict resource: A's late write was rejected, but by B's token (an actor's): kept.
    run.resource[1].result = results::WriteResult::RejectedStaleFence;
    let made = make(&run, 1, None).unwrap();
    assert!(
        made.text.contains("expect: rejected-stale-fence"),
        "{}",
        made.text
    );
    // Rejected against a token only the third worker's write had: not an actor's answer.
    run.resource[0].result = results::WriteResult::RejectedStaleFence;
    let made = make(&run, 1, None).unwrap();
    assert!(
        made.text
            .contains("the run's rejected-stale-fence came from other workers' writes"),
        "{}",
        made.text
    );
}

#[test]
fn a_fault_a_step_cannot_express_is_refused_naming_it() {
    let mut run = stale_write_run();
    run.history[1] = serde_json::from_str(
        r#"{"index":1,"time":200,"process":"nemesis","type":"info","f":"start-halves","value":{"targets":["etcd-1"]}}"#,
    )
    .unwrap();
    let e = make(&run, 1, None).unwrap_err();
    assert!(
        e.0.contains("the anomaly followed halves (history index 1"),
        "{e}"
    );
}

#[test]
fn an_anomaly_naming_no_granted_acquisition_is_refused() {
    let mut run = stale_write_run();
    run.history.retain(|e| e.f != results::F::Acquire);
    let e = make(&run, 1, None).unwrap_err();
    assert!(
        e.0.contains("names no acquisition the history shows granted"),
        "{e}"
    );
}

/// The history lines of `run` with `lines` put in after index `after` (times must fit).
fn with_lines(mut run: Stored, lines: &[&str]) -> Stored {
    run.history.extend(events(lines));
    run.history.sort_by_key(|e| e.time);
    run
}

/// The actions of worker `who`'s steps, in order.
fn actions_of(sc: &scenario::Scenario, who: &str) -> Vec<Action> {
    sc.steps
        .iter()
        .filter_map(worker)
        .filter(|w| w.0 == who)
        .map(|w| w.1.clone())
        .collect()
}

fn controls(sc: &scenario::Scenario) -> Vec<&Control> {
    sc.steps
        .iter()
        .filter_map(|s| match s {
            Step::Control { control, .. } => Some(control),
            _ => None,
        })
        .collect()
}

/// A stall of the service (or its leader) in the anomaly's window becomes one
/// `nemesis: stall-service <length>` step with the run's drawn length; its stop line adds none.
#[test]
fn a_stall_of_the_service_becomes_one_step_with_the_runs_length() {
    let run = with_lines(
        stale_write_run(),
        &[
            r#"{"index":10,"time":250,"process":"nemesis","type":"info","f":"start-stall-leader","value":{"fault":"stall-leader","length_ms":786,"targets":["etcd-2"]}}"#,
            r#"{"index":11,"time":260,"process":"nemesis","type":"info","f":"stop-stall-leader","value":{"fault":"stall-leader","length_ms":786,"targets":["etcd-2"]}}"#,
        ],
    );
    let made = make(&run, 1, None).unwrap();
    assert!(
        made.text.contains("nemesis: stall-leader 786ms"),
        "{}",
        made.text
    );
    let sc = scenario::parse(&made.text).unwrap();
    let stalls: Vec<_> = controls(&sc)
        .into_iter()
        .filter(|c| matches!(c, Control::Stall { .. }))
        .collect();
    assert_eq!(
        stalls,
        [&Control::Stall {
            leader: true,
            length: "786ms".parse().unwrap()
        }],
        "{}",
        made.text
    );
}

/// Replies held back from an actor and its client's clock moved become its
/// `slow-reply <delay>` and `client-clock-jump <±delay>` / `client-clock-skew <f>x` steps, healed
/// by `heal` and `nemesis: clock-real` where the run's stop lines were.
#[test]
fn held_back_replies_and_a_moved_client_clock_become_the_actors_steps() {
    let run = with_lines(
        stale_write_run(),
        &[
            r#"{"index":10,"time":110,"process":"nemesis","type":"info","f":"start-slow-reply","value":{"fault":"slow-reply","links":{"delay_ms":2000,"jitter_ms":0,"loss":0.0,"replies_only":true},"targets":["worker-1"]}}"#,
            r#"{"index":11,"time":120,"process":"nemesis","type":"info","f":"stop-slow-reply","value":{"fault":"slow-reply","targets":["worker-1"]}}"#,
            r#"{"index":12,"time":130,"process":"nemesis","type":"info","f":"start-client-clock-jump","value":{"fault":"client-clock-jump","clock":{"ahead":{"secs":-10.0}},"targets":["worker-1"]}}"#,
            r#"{"index":13,"time":140,"process":"nemesis","type":"info","f":"stop-client-clock-jump","value":{"fault":"client-clock-jump","targets":["worker-1"]}}"#,
            r#"{"index":14,"time":550,"process":"nemesis","type":"info","f":"start-client-clock-skew","value":{"fault":"client-clock-skew","clock":{"fast":{"factor":0.3333333}},"targets":["worker-2"]}}"#,
        ],
    );
    let made = make(&run, 1, None).unwrap();
    for step in [
        "A: slow-reply 2s",
        "A: heal",
        "A: client-clock-jump -10s",
        "nemesis: clock-real",
        "B: client-clock-skew 0.333x",
    ] {
        assert!(made.text.contains(step), "{step} missing:\n{}", made.text);
    }
    let sc = scenario::parse(&made.text).unwrap();
    assert_eq!(
        &actions_of(&sc, "A")[..4],
        [
            Action::Acquire,
            Action::SlowReply(Some("2s".parse().unwrap())),
            Action::Heal,
            Action::ClientClock(scenario::ClientClock::Jump { millis: -10_000 }),
        ],
        "{}",
        made.text
    );
    assert!(
        controls(&sc).contains(&&Control::ClockReal),
        "{}",
        made.text
    );
}

/// A fault on an acquire in flight is refused, naming the step to write by hand with
/// the run's delay.
#[test]
fn a_fault_on_an_acquire_in_flight_is_refused_naming_the_step_to_write() {
    let run = with_lines(
        stale_write_run(),
        &[
            r#"{"index":10,"time":150,"process":"nemesis","type":"info","f":"start-pause-acquiring","value":{"fault":"pause-acquiring","delay_ms":12,"targets":["worker-1"]}}"#,
        ],
    );
    let e = make(&run, 1, None).unwrap_err();
    assert!(e.0.contains("`pause-acquiring after 12ms`"), "{e}");
    assert!(e.0.contains("the anomaly followed pause-acquiring"), "{e}");
}

/// A release struck in flight becomes that fault's step in place of the release, its
/// completion no step of its own, its resume where the run's stop line was.
#[test]
fn a_release_paused_in_flight_is_the_faults_step_in_place_of_the_release() {
    let run = with_lines(
        stale_write_run(),
        &[
            r#"{"index":10,"time":650,"process":"nemesis","type":"info","f":"start-pause-releasing","value":{"fault":"pause-releasing","invoke_index":9,"targets":["worker-2"]}}"#,
            r#"{"index":11,"time":660,"process":1,"type":"ok","f":"release","lock":"l","owner":"worker-2","lease":"b","token":7,"result":"released"}"#,
            r#"{"index":12,"time":670,"process":"nemesis","type":"info","f":"stop-pause-releasing","value":{"fault":"pause-releasing","targets":["worker-2"]}}"#,
        ],
    );
    let made = make(&run, 1, None).unwrap();
    let sc = scenario::parse(&made.text).unwrap();
    assert_eq!(
        actions_of(&sc, "B"),
        [
            Action::Acquire,
            Action::Write("1-1".into()),
            Action::PauseReleasing("0ms".parse().unwrap()),
            Action::Resume,
        ],
        "{}",
        made.text
    );
    // A delay the run recorded is kept; an isolation is healed where its stop was.
    let cut = with_lines(
        stale_write_run(),
        &[
            r#"{"index":10,"time":650,"process":"nemesis","type":"info","f":"start-isolate-releasing","value":{"fault":"isolate-releasing","delay_ms":7,"targets":["worker-2"]}}"#,
            r#"{"index":11,"time":660,"process":1,"type":"info","f":"release","lock":"l","owner":"worker-2","lease":"b","token":7}"#,
            r#"{"index":12,"time":670,"process":"nemesis","type":"info","f":"stop-isolate-releasing","value":{"fault":"isolate-releasing","targets":["worker-2"]}}"#,
        ],
    );
    let text = make(&cut, 1, None).unwrap().text;
    assert!(text.contains("B: isolate-releasing after 7ms"), "{text}");
    assert!(text.contains("B: heal"), "{text}");
    assert!(!text.contains("B: release"), "{text}");
}

/// A cut release reply becomes that fault's step in place of the release; a starved worker, a
/// cut renewal reply, a starved node and a node restarted without its data become their
/// steps, each undone where the run's stop line was; a cut acquire reply is refused naming
/// the step to write by hand.
#[test]
fn cuts_starvation_and_emptied_nodes_become_steps_where_the_run_had_them() {
    let run = with_lines(
        stale_write_run(),
        &[
            r#"{"index":10,"time":110,"process":"nemesis","type":"info","f":"start-starve-worker","value":{"fault":"starve-worker","cpus":0.05,"targets":["worker-1"]}}"#,
            r#"{"index":11,"time":120,"process":"nemesis","type":"info","f":"stop-starve-worker","value":{"fault":"starve-worker","targets":["worker-1"]}}"#,
            r#"{"index":12,"time":130,"process":"nemesis","type":"info","f":"start-cut-renew-reply","value":{"fault":"cut-renew-reply","links":{"cut_next_reply":true},"targets":["worker-1"]}}"#,
            r#"{"index":13,"time":140,"process":"nemesis","type":"info","f":"stop-cut-renew-reply","value":{"fault":"cut-renew-reply","targets":["worker-1"]}}"#,
            r#"{"index":14,"time":250,"process":"nemesis","type":"info","f":"start-starve-node","value":{"fault":"starve-node","cpus":0.05,"targets":["etcd-2"]}}"#,
            r#"{"index":15,"time":260,"process":"nemesis","type":"info","f":"stop-starve-node","value":{"fault":"starve-node","targets":["etcd-2"]}}"#,
            r#"{"index":16,"time":270,"process":"nemesis","type":"info","f":"start-restart-empty-leader","value":{"fault":"restart-empty-leader","targets":["etcd-1"]}}"#,
            r#"{"index":17,"time":280,"process":"nemesis","type":"info","f":"stop-restart-empty-leader","value":{"fault":"restart-empty-leader","targets":["etcd-1"]}}"#,
            r#"{"index":18,"time":650,"process":"nemesis","type":"info","f":"start-cut-release-reply","value":{"fault":"cut-release-reply","delay_ms":3,"links":{"cut_next_reply":true},"targets":["worker-2"]}}"#,
            r#"{"index":19,"time":660,"process":1,"type":"info","f":"release","lock":"l","owner":"worker-2","lease":"b","token":7,"error":"connection reset"}"#,
            r#"{"index":20,"time":670,"process":"nemesis","type":"info","f":"stop-cut-release-reply","value":{"fault":"cut-release-reply","targets":["worker-2"]}}"#,
        ],
    );
    let made = make(&run, 1, None).unwrap();
    let sc = scenario::parse(&made.text).unwrap();
    assert_eq!(
        &actions_of(&sc, "A")[..5],
        [
            Action::Acquire,
            Action::Starve,
            Action::Heal,
            Action::CutRenewReply,
            Action::Heal,
        ],
        "{}",
        made.text
    );
    assert_eq!(
        actions_of(&sc, "B"),
        [
            Action::Acquire,
            Action::Write("1-1".into()),
            Action::CutReleaseReply("3ms".parse().unwrap()),
            Action::Heal,
        ],
        "{}",
        made.text
    );
    let nodes: Vec<&Control> = controls(&sc)
        .into_iter()
        .filter(|c| !matches!(c, Control::LeaseExpired(_)))
        .collect();
    assert_eq!(
        nodes,
        [
            &Control::StarveNode("etcd-2".into()),
            &Control::UnstarveNode("etcd-2".into()),
            &Control::RestartEmpty("etcd-1".into()),
            &Control::Restart("etcd-1".into()),
        ],
        "{}",
        made.text
    );
    let acquire = with_lines(
        stale_write_run(),
        &[
            r#"{"index":10,"time":150,"process":"nemesis","type":"info","f":"start-cut-acquire-reply","value":{"fault":"cut-acquire-reply","delay_ms":5,"targets":["worker-1"]}}"#,
        ],
    );
    let e = make(&acquire, 1, None).unwrap_err();
    assert!(e.0.contains("`cut-acquire-reply after 5ms`"), "{e}");
}

#[test]
fn what_the_service_record_showed_of_the_same_acquisitions_is_expected_too() {
    let mut stored = stale_write_run();
    let service = |kind: &str, at: u64, lease: &str| -> results::Anomaly {
        serde_json::from_str(&format!(
            r#"{{"kind":"{kind}","fails":false,"summary":"{kind} of {lease}","at":{at},"lease":"{lease}","other":{{}},"diagnosis":{{"observation":"","likely_boundary":"","what_to_check":"","next_action":""}}}}"#
        ))
        .unwrap()
    };
    stored.verdict.anomalies.extend([
        // A's: named, before the stale write.
        service("held-against-service", 650, "a"),
        // worker-3's grant, which the evidence does not name.
        service("token-out-of-order", 650, "c"),
        // B's, after the anomaly became true.
        service("granted-gone", 900, "b"),
    ]);
    let made = make(&stored, 1, None).unwrap();
    let sc = scenario::parse(&made.text).unwrap();
    assert_eq!(
        sc.expect_anomalies,
        vec![
            AnomalyKind::StaleAcceptedWrite,
            AnomalyKind::HeldAgainstService
        ],
        "{}",
        made.text
    );
    assert!(
        made.text
            .contains("#   held-against-service: held-against-service of a"),
        "{}",
        made.text
    );
    // Without such anomalies, the header says nothing of the record.
    let plain = make(&stale_write_run(), 1, None).unwrap();
    assert!(!plain.text.contains("own record"), "{}", plain.text);
}
