//! The verdicts on belief and write order as the page and junit.xml show them, judged by the real checkers on a
//! small history: a tokenless write stale in every order (its evidence naming both orders), an
//! overlap left undecided (the kind's note), and `held-after-loss` counted and shown like the
//! other observed kinds.

use std::collections::BTreeMap;

use checkers::testkit::*;
use report::{junit_xml, render_html, ReportInput};
use results::{AnomalyKind, Event, ResourceEntry, Verdict, WriteResult};

fn page(history: &[Event], resource: &[ResourceEntry], verdict: &Verdict) -> (String, String) {
    let config = serde_json::json!({"provider": "redlock", "recipe": "redlock"});
    let checked = AnomalyKind::ALL.to_vec();
    let input = ReportInput {
        test_name: "issue-27",
        config: &config,
        seed: 1,
        rerun: "fencecheck run --recipe redlock --resource none --nemesis clock-jump --seed 1",
        started: None,
        run_end: history.last().map(|e| e.time),
        history,
        resource,
        service: &[],
        verdict,
        checked: &checked,
        process_workers: BTreeMap::new(),
        clients: &[],
    };
    (render_html(&input), junit_xml(&input))
}

/// Two overlapping tokenless holds (w2's acquire sent before w1's grant completed) whose
/// writes to k alternate L1, L2, L1, and w1's keep-alive answered held after w3 was granted.
fn run(writes: &[&str]) -> (Vec<Event>, Vec<ResourceEntry>, Verdict) {
    let h = history([
        invoke(1, Acquire).lock("l").at_ms(1),
        invoke(2, Acquire).lock("l").at_ms(1),
        ok(1, Acquire).lock("l").owner("w1").lease("L1").at_ms(2),
        ok(2, Acquire).lock("l").owner("w2").lease("L2").at_ms(10),
        invoke(3, Acquire).lock("l").at_ms(20),
        ok(3, Acquire).lock("l").owner("w3").lease("L3").at_ms(30),
        invoke(1, Check).lock("l").lease("L1").at_ms(40),
        ok(1, Check).lock("l").lease("L1").held(true).at_ms(41),
    ]);
    let mut r = log(writes
        .iter()
        .map(|lease| res("k", None, lease, WriteResult::Accepted)));
    for (i, e) in r.iter_mut().enumerate() {
        e.time = (11 + i as u64) * 1_000_000;
        e.op_id = format!("op-{i}");
    }
    let v = checkers::check(&h, Some(&r), &checkers::CheckConfig::default());
    (h, r, v)
}

#[test]
fn the_page_shows_a_stale_write_in_every_order_with_both_orders_and_held_after_loss() {
    let (h, r, v) = run(&["L1", "L2", "L1"]);
    let (html, xml) = page(&h, &r, &v);
    assert!(html.contains("every-order"), "the basis is shown");
    assert!(
        html.contains(
            "<ul class=\"orders\"><li>if L1 was granted first, its write at seq 2 came after \
             the newer L2&#39;s at seq 1</li><li>if L2 was granted first, its write at seq 1 \
             came after the newer L1&#39;s at seq 0</li></ul>"
        ),
        "both orders, as sentences"
    );
    assert!(
        html.contains("<td>held-after-loss</td><td><span class=\"st observed\">observed</span>")
    );
    assert!(
        html.contains("held: true"),
        "the check's answer in the evidence packet"
    );
    // junit: one case per kind, the stale write failing, held-after-loss observed, passing.
    assert!(xml.contains(r#"name="held-after-loss""#), "{xml}");
    let case = &xml[xml.find(r#"name="held-after-loss""#).unwrap()..];
    assert!(
        case[..case.find("</testcase>").unwrap()].contains("1 observed (not in fail_on)"),
        "{xml}"
    );
    assert!(xml.contains(r#"failures="1""#), "{xml}");
}

#[test]
fn the_page_says_an_overlap_left_a_pair_undecided() {
    let (h, r, v) = run(&["L1", "L2"]);
    let (html, _) = page(&h, &r, &v);
    assert!(
        html.contains("the overlap left it undecided (not claimed)"),
        "the stale-accepted-write row carries the note"
    );
}

/// A worker whose acquires kept failing while the others took the lock (`locked-out-client`):
/// a row of its own on the page and a junit case, observed and passing like the other
/// observed kinds, its attempts in the evidence packet.
#[test]
fn the_page_and_junit_show_a_locked_out_client_as_observed() {
    let grant = |p: u32, lease: &str, at: u64| {
        [
            invoke(p, Acquire).lock("l").at_ms(at),
            ok(p, Acquire)
                .lock("l")
                .owner(&format!("w{p}"))
                .lease(lease)
                .at_ms(at + 1),
            invoke(p, Release).lock("l").lease(lease).at_ms(at + 100),
            ok(p, Release)
                .lock("l")
                .lease(lease)
                .result(Released)
                .at_ms(at + 101),
        ]
    };
    let failed = |at: u64| {
        [
            invoke(2, Acquire).lock("l").at_ms(at),
            fail(2, Acquire)
                .lock("l")
                .error("client is closed")
                .at_ms(at + 300),
        ]
    };
    let mut events: Vec<Event> = Vec::new();
    for (k, at) in [1_000u64, 2_000, 3_000, 4_000].into_iter().enumerate() {
        events.extend(failed(at));
        events.extend(grant(k as u32 % 2, &format!("L{k}"), at + 500));
    }
    let h = history(events);
    let cfg = checkers::CheckConfig {
        ttl: Some(std::time::Duration::from_secs(1)),
        recovery_slack: std::time::Duration::from_secs(1),
        workers: Some(3),
        ..checkers::CheckConfig::default()
    };
    let v = checkers::check(&h, Some(&[]), &cfg);
    assert_eq!(v.anomalies.len(), 1, "{:#?}", v.anomalies);
    let (html, xml) = page(&h, &[], &v);
    assert!(
        html.contains("<td>locked-out-client</td><td><span class=\"st observed\">observed</span>"),
        "the kind's row"
    );
    assert!(html.contains("client is closed"), "its attempts' errors");
    let case = &xml[xml.find(r#"name="locked-out-client""#).unwrap()..];
    assert!(
        case[..case.find("</testcase>").unwrap()].contains("1 observed (not in fail_on)"),
        "{xml}"
    );
}
