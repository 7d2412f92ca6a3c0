//! The specifications of `deploy`.

use super::*;
use crate::config::{validate, RawTest};

#[test]
fn run_ids_are_docker_safe_test_names() {
    let plan = validate(
        RawTest {
            nemesis: Some(vec!["pause-holder".into(), "kill-worker".into()]),
            ..RawTest::default()
        },
        1,
    )
    .unwrap();
    assert_eq!(
        run_id_after("", &plan),
        "etcd-lease-strict-pause-holder-kill-work"
    );
    let prefixed = run_id_after("wt2", &plan);
    assert_eq!(prefixed, "wt2-etcd-lease-strict-pause-holder-kill-w");
    let slotted_prefixed = run_id_after(
        "wt2",
        &TestPlan {
            docker_slot: Some(3),
            ..plan.clone()
        },
    );
    assert!(
        slotted_prefixed.starts_with("wt2-") && slotted_prefixed.len() <= 42,
        "{slotted_prefixed}"
    );
    let slotted = |name: &str, slot| {
        run_id_after(
            "",
            &TestPlan {
                name: name.into(),
                docker_slot: Some(slot),
                ..plan.clone()
            },
        )
    };
    let a = slotted("libraries-kazoo-none-isolate-holder-a", 1);
    assert_ne!(a, slotted("libraries-kazoo-none-isolate-holder-b", 1));
    assert_ne!(a, slotted("libraries-kazoo-none-isolate-holder-a", 2));
    assert!(a.ends_with("-j1") && a.len() <= 42, "{a}");
    assert!(run_id_after("", &plan)
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-'));
}
