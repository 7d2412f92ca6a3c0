//! The specifications of `scenario`.

use super::*;
use results::fault::FaultKind;

const STALE: &str = "name: stale-fence
providers: [etcd]
resource: strict
ttl: 2s
workers: [A, B]
steps:
  - A: acquire
  - A: pause
  - wait: lease-expired A
  - B: acquire
    expect: token > A.token
  - B: write v2
    expect: accepted
  - A: resume
  - A: write v1
    expect: rejected-stale-fence
  - A: release
    expect: release-rejected-not-owner
";

#[test]
fn parses_the_stale_fence_timeline() {
    let s = parse(STALE).unwrap();
    assert_eq!(s.workers, vec!["A", "B"]);
    assert_eq!(s.steps.len(), 8);
    assert_eq!(
        s.steps[3],
        Step::Worker {
            worker: "B".into(),
            action: Action::Acquire,
            expect: Some(Expect::Token {
                op: Cmp::Gt,
                other: "A".into()
            }),
            line: 10
        }
    );
    assert!(
        matches!(&s.steps[2], Step::Control { control: Control::LeaseExpired(w), .. } if w == "A")
    );
}

#[test]
fn malformed_scenarios_name_their_line() {
    let unknown_worker = STALE.replace("  - B: write v2", "  - C: write v2");
    let e = parse(&unknown_worker).unwrap_err();
    assert_eq!(e.line, 12, "{e}");
    assert!(e.message.contains("unknown worker \"C\""), "{e}");

    let before_acquire = STALE.replace("  - A: acquire\n", "  - A: write v0\n");
    let e = parse(&before_acquire).unwrap_err();
    assert_eq!(e.line, 7, "{e}");
    assert!(e.message.contains("before its first acquire"), "{e}");

    let unknown_action = STALE.replace("  - A: pause", "  - A: nap");
    let e = parse(&unknown_action).unwrap_err();
    assert_eq!(e.line, 8);
    assert!(e.message.contains("unknown action \"nap\""), "{e}");

    let bad_expect = STALE.replace("expect: accepted", "expect: fine");
    assert!(parse(&bad_expect)
        .unwrap_err()
        .message
        .contains("unknown expectation"));
}

#[test]
fn nemesis_and_wait_steps_for_failover_and_the_options_of_a_replay() {
    let text = "name: failover
provider: redis-sentinel
renewal: inline
acquire_timeout: 300ms
recovery_slack: 1s
workers: [A, B]
steps:
  - nemesis: cut-replication
  - A: acquire
    expect: acquired
  - nemesis: pause master
  - wait: failover
  - B: acquire
    expect: token == A.token
  - nemesis: resume redis-1
expect_anomalies: [duplicate-token]
";
    let s = parse(text).unwrap();
    assert_eq!(s.providers, vec!["redis-sentinel"]);
    assert_eq!(s.renewal.as_deref(), Some("inline"));
    assert_eq!(s.acquire_timeout, Some(Dur::from_millis(300)));
    assert_eq!(s.recovery_slack, Some(Dur::secs(1)));
    let controls: Vec<_> = s
        .steps
        .iter()
        .filter_map(|st| match st {
            Step::Control { control, .. } => Some(control.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        controls,
        vec![
            Control::CutReplication,
            Control::PauseNode("master".into()),
            Control::Failover,
            Control::ResumeNode("redis-1".into())
        ]
    );
    assert!(matches!(
        &s.steps[1],
        Step::Worker {
            expect: Some(Expect::Acquired),
            ..
        }
    ));

    let e = parse(&text.replace("pause master", "pause")).unwrap_err();
    assert_eq!(e.line, 11, "{e}");
    let e = parse(&text.replace(
        "  - wait: failover",
        "  - wait: failover\n    expect: accepted",
    ))
    .unwrap_err();
    assert_eq!(e.line, 12, "{e}");
    assert!(e.message.contains("only an anomaly kind"), "{e}");
    let e = parse(&text.replace("workers: [A, B]", "workers: [A, a]")).unwrap_err();
    assert!(e.message.contains("named twice"), "{e}");
}

#[test]
fn begin_sends_an_operation_without_waiting_and_only_an_operation() {
    let text = STALE.replace("  - B: acquire\n", "  - B: begin acquire\n");
    let s = parse(&text).unwrap();
    assert!(matches!(
        &s.steps[3],
        Step::Worker { action: Action::Begin(inner), .. } if **inner == Action::Acquire
    ));
    assert_eq!(
        Action::Begin(Box::new(Action::Release)).operation(),
        &Action::Release
    );
    let e = parse(&STALE.replace("  - A: pause", "  - A: begin pause")).unwrap_err();
    assert_eq!(e.line, 8, "{e}");
    assert!(e.message.contains("only an operation can be begun"), "{e}");
    // A begun write is still a write: not before the worker's first acquire.
    let e = parse(&STALE.replace("  - A: acquire\n", "  - A: begin write v0\n")).unwrap_err();
    assert!(e.message.contains("before its first acquire"), "{e}");
}

#[test]
fn a_scenario_carries_the_client_settings_of_a_test_file() {
    let text = STALE.replace(
        "ttl: 2s\n",
        "ttl: 2s\nrenew_interval: 500ms\nsession_timeout: 3s\nop_timeout: 1s\nclient_options: {\"fencing\": false}\n",
    );
    let s = parse(&text).unwrap();
    assert_eq!(s.renew_interval, Some(Dur::from_millis(500)));
    assert_eq!(s.session_timeout, Some(Dur::secs(3)));
    assert_eq!(s.op_timeout, Some(Dur::secs(1)));
    assert_eq!(
        s.client_options,
        Some(serde_json::json!({"fencing": false}))
    );
}

#[test]
fn a_client_may_name_its_release() {
    let text = STALE.replace("providers: [etcd]\n", "client: kazoo@2.11.0\n");
    let s = parse(&text).unwrap();
    assert_eq!(s.client.as_deref(), Some("kazoo@2.11.0"));
    assert_eq!(s.providers, vec!["zookeeper"]);
}

#[test]
fn a_client_may_pin_its_librarys_dependencies_and_a_recipe_may_not() {
    let text = STALE.replace(
        "providers: [etcd]\n",
        "client: python-redis-lock\nwith: [redis==5.0.8]\n",
    );
    let s = parse(&text.replace("resource: strict", "resource: none")).unwrap();
    assert_eq!(s.with, [Pin::parse("redis==5.0.8").unwrap()]);
    let plan = crate::replay::execute::plan_for(&s, "redis").unwrap();
    assert_eq!(plan.client.pins(), ["redis==5.0.8"]);
    let e = parse(&STALE.replace("ttl: 2s\n", "ttl: 2s\nwith: [redis==5.0.8]\n")).unwrap_err();
    assert!(
        e.message
            .contains("with pins dependencies of the actors' client"),
        "{e}"
    );
    let e = parse(&text.replace("redis==5.0.8", "redis=5")).unwrap_err();
    assert!(e.message.contains("`redis=5` is not a pin"), "{e}");
}

/// The text of a scenario in the repository's `scenarios/`.
fn shipped_scenario(file: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    std::fs::read_to_string(dir.join(file)).unwrap()
}

/// A stall of the service (or its leader) is one step with its length; a stall
/// without a length, or of none, names its line.
#[test]
fn a_stall_of_the_service_or_its_leader_is_one_step_with_its_length() {
    let text = shipped_scenario("stall-service.yaml");
    let s = parse(&text).unwrap();
    assert!(s.steps.iter().any(|st| matches!(
        st,
        Step::Control {
            control: Control::Stall { leader: false, length },
            ..
        } if *length == Dur::from_millis(700)
    )));
    let leader = text.replace("stall-service 700ms", "stall-leader 1s");
    assert!(parse(&leader).unwrap().steps.iter().any(|st| matches!(
        st,
        Step::Control {
            control: Control::Stall { leader: true, .. },
            ..
        }
    )));
    for bad in ["stall-service", "stall-service soon", "stall-leader 0s"] {
        let e = parse(&text.replace("stall-service 700ms", bad)).unwrap_err();
        assert!(e.line > 1 && e.message.contains("stall"), "{bad}: {e}");
    }
}

/// A worker frozen with its acquire or release in flight is one step; its
/// operation stays open until it is resumed.
#[test]
fn pause_acquiring_and_pause_releasing_are_worker_steps_with_a_delay() {
    let text = shipped_scenario("pause-acquiring.yaml");
    let s = parse(&text).unwrap();
    assert!(matches!(
        &s.steps[0],
        Step::Worker { action: Action::PauseAcquiring(d), .. } if *d == Dur::from_millis(2)
    ));
    let releasing = text.replace("  - B: release\n", "  - B: pause-releasing\n");
    let s = parse(&releasing).unwrap();
    assert!(s.steps.iter().any(|st| matches!(
        st,
        Step::Worker { action: Action::PauseReleasing(d), .. } if d.get().is_zero()
    )));
    let early = text.replace("A: pause-acquiring after 2ms", "A: pause-releasing");
    assert!(parse(&early)
        .unwrap_err()
        .message
        .contains("before its first acquire"));
    let bad = text.replace("after 2ms", "later");
    assert!(parse(&bad)
        .unwrap_err()
        .message
        .contains("pause-acquiring after 5ms"));
}

/// A worker killed, or a waiter frozen, with its acquire in flight, and a worker cut
/// off with its release in flight, are worker steps with a delay; each needs what its moment
/// needs (a waiter another worker's lock, a release an earlier acquire), or names its line.
#[test]
fn kill_acquiring_pause_waiter_and_isolate_releasing_are_worker_steps_with_a_delay() {
    let text = shipped_scenario("kill-acquiring.yaml");
    let s = parse(&text).unwrap();
    assert!(matches!(
        &s.steps[0],
        Step::Worker { worker, action: Action::KillAcquiring(d), line: 14, .. }
            if worker == "A" && *d == Dur::from_millis(2)
    ));
    // The killed acquire counts as A's first: A may write or release after it.
    let s = parse(&text.replace(
        "  - B: release\n",
        "  - B: release\n  - A: isolate-releasing after 1ms\n  - A: heal\n",
    ))
    .unwrap();
    assert!(s.steps.iter().any(|st| matches!(
        st,
        Step::Worker { action: Action::IsolateReleasing(d), .. } if *d == Dur::from_millis(1)
    )));
    // A waiter waits behind A's lock.
    let waiter = text.replace("  - B: acquire\n", "  - B: pause-waiter after 300ms\n");
    let s = parse(&waiter).unwrap();
    assert!(matches!(
        &s.steps[1],
        Step::Worker { action: Action::PauseWaiter(d), .. } if *d == Dur::from_millis(300)
    ));
    let alone = text.replace("  - A: kill-acquiring after 2ms\n", "  - A: pause-waiter\n");
    let e = parse(&alone).unwrap_err();
    assert_eq!(e.line, 14, "{e}");
    assert!(e.message.contains("cannot be a waiter here"), "{e}");
    let early = text.replace("  - B: acquire\n", "  - B: isolate-releasing\n");
    let e = parse(&early).unwrap_err();
    assert_eq!(e.line, 15, "{e}");
    assert!(e.message.contains("before its first acquire"), "{e}");
    for (verb, bad) in [
        ("kill-acquiring", "kill-acquiring soon"),
        ("pause-waiter", "pause-waiter after a while"),
        ("isolate-releasing", "isolate-releasing 5ms"),
    ] {
        let e = parse(&waiter.replace("B: pause-waiter after 300ms", &format!("B: {bad}")))
            .unwrap_err();
        assert_eq!(e.line, 15, "{bad}: {e}");
        assert!(
            e.message.contains(&format!("`{verb} after 5ms`")),
            "{bad}: {e}"
        );
    }
}

/// `slow-reply` holds back the service's replies to one worker, by a length or (none
/// given) the run's twice the operation timeout; a length of nothing names its line.
#[test]
fn slow_reply_is_a_worker_step_with_an_optional_length() {
    let text = STALE.replace("  - A: pause\n", "  - A: slow-reply 3s\n");
    let s = parse(&text).unwrap();
    assert_eq!(
        s.steps[1],
        Step::Worker {
            worker: "A".into(),
            action: Action::SlowReply(Some(Dur::secs(3))),
            expect: None,
            line: 8
        }
    );
    let s = parse(&STALE.replace("  - A: pause\n", "  - A: slow-reply\n")).unwrap();
    assert!(matches!(
        &s.steps[1],
        Step::Worker {
            action: Action::SlowReply(None),
            ..
        }
    ));
    for bad in ["slow-reply 0s", "slow-reply later"] {
        let e = parse(&STALE.replace("  - A: pause\n", &format!("  - A: {bad}\n"))).unwrap_err();
        assert_eq!(e.line, 8, "{bad}: {e}");
        assert!(e.message.contains("`slow-reply 2s`"), "{bad}: {e}");
    }
}

/// The worker's own wall clock jumps forward or backward, or runs fast or slow, as
/// one step; the run's fault names and clock settings come from it; nonsense names its line.
#[test]
fn client_clock_steps_move_the_worker_s_wall_clock_either_way() {
    let text = shipped_scenario("client-clock-jump.yaml");
    let s = parse(&text).unwrap();
    let moves: Vec<ClientClock> = s
        .steps
        .iter()
        .filter_map(|st| match st {
            Step::Worker {
                action: Action::ClientClock(how),
                ..
            } => Some(*how),
            _ => None,
        })
        .collect();
    assert_eq!(
        moves,
        vec![
            ClientClock::Jump { millis: 10_000 },
            ClientClock::Jump { millis: -10_000 }
        ]
    );
    assert_eq!(
        moves[1].setting(),
        nemesis::ClockSetting::Ahead { secs: -10.0 }
    );
    assert_eq!(moves[0].fault(), FaultKind::ClientClockJump);
    for (step, want) in [
        (
            "client-clock-jump +1500ms",
            ClientClock::Jump { millis: 1500 },
        ),
        (
            "client-clock-skew 3x",
            ClientClock::Skew { per_mille: 3000 },
        ),
        (
            "client-clock-skew 0.333x",
            ClientClock::Skew { per_mille: 333 },
        ),
    ] {
        let s = parse(&text.replace("client-clock-jump 10s", step)).unwrap();
        assert!(
            s.steps.iter().any(|st| matches!(
                st,
                Step::Worker { action: Action::ClientClock(how), .. } if *how == want
            )),
            "{step}"
        );
    }
    let fast = ClientClock::Skew { per_mille: 3000 };
    assert_eq!(fast.fault(), FaultKind::ClientClockSkew);
    assert_eq!(fast.setting(), nemesis::ClockSetting::Fast { factor: 3.0 });
    for bad in [
        "client-clock-jump",
        "client-clock-jump 0s",
        "client-clock-jump ahead",
        "client-clock-skew 3",
        "client-clock-skew 1x",
        "client-clock-skew 0x",
        "client-clock-skew -2x",
    ] {
        let e = parse(&text.replace("client-clock-jump 10s", bad)).unwrap_err();
        assert_eq!(e.line, 18, "{bad}: {e}");
        assert!(e.message.contains("client-clock-"), "{bad}: {e}");
    }
}

#[test]
fn a_scenario_names_the_application_its_actors_model() {
    let with_app = STALE.replace("workers: [A, B]", "app: job-keep\nworkers: [A, B]");
    assert_eq!(parse(&with_app).unwrap().app.as_deref(), Some("job-keep"));
    assert_eq!(parse(STALE).unwrap().app, None);
}

/// The cut replies and a starved worker are worker steps; a starved node and a node restarted
/// without its data are nemesis steps undone by their own step; each reads back as written,
/// and a word after a step that takes none names its line.
#[test]
fn cuts_starvation_and_emptied_nodes_are_steps_that_read_back_as_written() {
    let steps = "  - A: cut-release-reply after 3ms
  - B: cut-acquire-reply
  - A: cut-renew-reply
  - A: starve
  - A: heal
  - nemesis: starve leader
  - nemesis: unstarve leader
  - nemesis: restart-empty redis-1
  - nemesis: restart redis-1
";
    let text = STALE.replace(
        "  - A: pause\n",
        &format!("  - A: pause\n  - A: resume\n{steps}"),
    );
    let s = parse(&text).unwrap();
    let actions: Vec<&Action> = s.steps[3..8]
        .iter()
        .filter_map(|st| match st {
            Step::Worker { action, .. } => Some(action),
            _ => None,
        })
        .collect();
    assert_eq!(
        actions,
        [
            &Action::CutReleaseReply("3ms".parse().unwrap()),
            &Action::CutAcquireReply(Dur::from_millis(0)),
            &Action::CutRenewReply,
            &Action::Starve,
            &Action::Heal,
        ]
    );
    let controls: Vec<&Control> = s.steps[8..12]
        .iter()
        .filter_map(|st| match st {
            Step::Control { control, .. } => Some(control),
            _ => None,
        })
        .collect();
    assert_eq!(
        controls,
        [
            &Control::StarveNode("leader".into()),
            &Control::UnstarveNode("leader".into()),
            &Control::RestartEmpty("redis-1".into()),
            &Control::Restart("redis-1".into()),
        ]
    );
    for bad in ["A: starve 5%", "A: cut-renew-reply now"] {
        let e = parse(&STALE.replace("  - A: pause\n", &format!("  - {bad}\n"))).unwrap_err();
        assert_eq!(e.line, 8, "{bad}: {e}");
        assert!(e.message.contains("takes nothing after it"), "{bad}: {e}");
    }
    let e = parse(&STALE.replace("  - A: pause\n", "  - nemesis: restart-empty\n")).unwrap_err();
    assert_eq!(e.line, 8, "{e}");
}

/// Every action, wait, nemesis step and expectation is written (`Display`) as the scenario file
/// reads it: what `reproduce` writes parses back to the value it wrote.
#[test]
fn every_step_is_written_as_it_is_read() {
    let actions = [
        "acquire",
        "write v1",
        "release",
        "pause",
        "resume",
        "kill",
        "isolate",
        "heal",
        "begin acquire",
        "pause-acquiring after 5ms",
        "pause-releasing after 0s",
        "kill-acquiring after 2ms",
        "isolate-releasing after 7ms",
        "cut-acquire-reply",
        "cut-release-reply after 3ms",
        "cut-renew-reply",
        "starve",
        "slow-reply",
        "slow-reply 2s",
        "client-clock-jump -10s",
        "client-clock-jump 250ms",
        "client-clock-skew 3x",
        "client-clock-skew 0.333x",
    ];
    for text in actions {
        let a = lines::parse_action(text, 1).unwrap();
        assert_eq!(a.to_string(), text);
        assert_eq!(lines::parse_action(&a.to_string(), 1).unwrap(), a);
    }
    let nemesis = [
        "heal",
        "pause leader",
        "resume redis-1",
        "starve master",
        "unstarve master",
        "restart-empty zk-2",
        "restart zk-2",
        "cut-replication",
        "clock-jump 10s on redis-1,redis-2",
        "clock-real",
        "stall-service 786ms",
        "stall-leader 1s",
    ];
    for text in nemesis {
        let c = lines::parse_nemesis(text, 1).unwrap();
        assert_eq!((c.who(), c.to_string()), ("nemesis", text.to_string()));
    }
    let workers = ["A".to_string(), "B".to_string()];
    for text in ["lease-expired A", "failover", "3s"] {
        let c = lines::parse_wait(text, &workers, 1).unwrap();
        assert_eq!((c.who(), c.to_string()), ("wait", text.to_string()));
    }
    for text in [
        "acquired",
        "lock-held",
        "accepted",
        "rejected-stale-fence",
        "released",
        "token > A.token",
        "token == B.token",
        "duplicate-token",
    ] {
        let e = lines::parse_expect(text, &workers, 1).unwrap();
        assert_eq!(e.to_string(), text);
    }
}
