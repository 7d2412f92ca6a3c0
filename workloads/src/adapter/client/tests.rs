//! Conformance with misbehaving adapters, each a few lines of `sh`: a line that is not JSON, no
//! handshake, a crash, a hang, a token that contradicts the handshake. Every one must end as a
//! start error or an outcome that names the adapter and what it did, never as a success.

use super::*;
use crate::adapter::link::Program;
use crate::client::EXCEPTION;
use crate::config::{RawRecipeConfig, RecipeKind};

const INIT_OK: &str = r#"{"id":0,"type":"ok","library":"shlib","version":"9","token":"a counter","capabilities":["release","events"]}"#;

fn cfg() -> RecipeConfig {
    RawRecipeConfig {
        ttl: Some(Duration::from_secs(2)),
        op_timeout: Some(Duration::from_millis(300)),
        acquire_timeout: Some(Duration::from_millis(300)),
        ..Default::default()
    }
    .validate(RecipeKind::Memory)
    .unwrap()
}

fn init() -> Init {
    Init {
        protocol: crate::adapter::PROTOCOL,
        worker: "worker-1".into(),
        lock: "l".into(),
        provider: "etcd".into(),
        endpoints: vec!["etcd-1:2379".into()],
        ttl_ms: 2000,
        acquire_timeout_ms: 300,
        op_timeout_ms: 300,
        options: json!({}),
    }
}

/// An adapter whose script answers `init` with [`INIT_OK`] and then runs `then`.
fn after_init(then: &str) -> String {
    format!("read l; printf '%s\\n' '{INIT_OK}'; {then}")
}

async fn start(script: &str) -> Result<AdapterClient, String> {
    let program = Program {
        command: script.to_string(),
        dir: None,
    };
    AdapterClient::start(
        "shy",
        Box::new(program),
        init(),
        Duration::from_millis(500),
        cfg(),
    )
    .await
}

fn info(c: Completion<Grant>) -> String {
    match c {
        Completion::Info(e) => e,
        other => panic!("expected info, got {other:?}"),
    }
}

fn exception(c: Completion<Grant>) -> String {
    match c {
        Completion::Exception(e) => e,
        other => panic!("expected a library exception, got {other:?}"),
    }
}

#[tokio::test]
async fn a_broken_handshake_is_a_start_error_naming_the_adapter_and_the_line_or_deadline() {
    let e = start("read l; echo garbage; sleep 5").await.unwrap_err();
    assert!(
        e.contains("adapter shy") && e.contains("line 1 of its output is not JSON"),
        "{e}"
    );
    assert!(e.contains("\"garbage\""), "{e}");
    let e = start("sleep 30").await.unwrap_err();
    assert!(e.contains("adapter shy: no init reply within 500ms"), "{e}");
    let e = start("exit 7").await.unwrap_err();
    assert!(e.contains("exited during init") && e.contains("7"), "{e}");
    let e = start(r#"read l; echo '{"id":0,"type":"fail","error":"no route to etcd-1"}'"#)
        .await
        .unwrap_err();
    assert!(e.contains("init answered Fail: no route to etcd-1"), "{e}");
}

#[tokio::test]
async fn a_hang_is_info_and_the_adapter_is_started_again_for_the_next_call() {
    let a = start(&after_init("read l; sleep 30")).await.unwrap();
    let e = info(a.acquire("l").await);
    assert!(
        e.starts_with("indeterminate: adapter shy did not answer acquire within"),
        "{e}"
    );
    assert!(!e.contains(EXCEPTION));
    // A fresh adapter (a second handshake) serves the next call, and hangs the same way.
    let e = info(a.acquire("l").await);
    assert!(e.contains("did not answer acquire"), "{e}");
}

#[tokio::test]
async fn a_crash_or_a_bad_line_mid_run_is_a_library_exception_naming_it() {
    let a = start(&after_init("read l; exit 3")).await.unwrap();
    let e = exception(a.acquire("l").await);
    assert!(
        e.starts_with(EXCEPTION) && e.contains("adapter shy exited during acquire"),
        "{e}"
    );
    let a = start(&after_init("read l; echo '{\"id\":1,'"))
        .await
        .unwrap();
    let e = exception(a.acquire("l").await);
    assert!(
        e.starts_with(EXCEPTION) && e.contains("line 2 of its output is not JSON"),
        "{e}"
    );
    let a = start(&after_init(
        r#"read l; echo '{"id":7,"type":"ok","lease":"x","token":1}'; sleep 5"#,
    ))
    .await
    .unwrap();
    let e = exception(a.acquire("l").await);
    assert!(
        e.contains("answered request 7 while request 1 was waiting"),
        "{e}"
    );
}

#[tokio::test]
async fn tokens_must_match_the_handshake_and_library_errors_keep_their_class() {
    let a = start(&after_init(
        r#"read l; echo '{"id":1,"type":"ok","lease":"x"}'; sleep 5"#,
    ))
    .await
    .unwrap();
    let e = exception(a.acquire("l").await);
    assert!(
        e.starts_with(EXCEPTION) && e.contains("acquire reported None"),
        "{e}"
    );
    let a = start(&after_init(concat!(
        r#"read l; echo '{"id":1,"type":"fail","error":"timed out waiting"}'; "#,
        r#"read l; echo '{"id":2,"type":"info","error":"TypeError: x","exception":true}'; sleep 5"#
    )))
    .await
    .unwrap();
    assert!(matches!(a.acquire("l").await, Completion::Fail(e) if e == "timed out waiting"));
    let e = exception(a.acquire("l").await);
    assert_eq!(e, format!("{EXCEPTION}shlib: TypeError: x"));
}

#[tokio::test]
async fn a_lost_event_ends_the_hold_and_a_not_owner_release_is_definite() {
    let a = start(&after_init(concat!(
        r#"read l; echo '{"id":1,"type":"ok","lease":"n1","token":5}'; "#,
        r#"echo '{"event":"lost","detail":"session expired"}'; "#,
        r#"read l; echo '{"id":2,"type":"fail","reason":"not-owner","error":"gone"}'; sleep 5"#
    )))
    .await
    .unwrap();
    let Completion::Ok(g) = a.acquire("l").await else {
        panic!("acquired")
    };
    assert_eq!((g.token, g.lease.as_str()), (Some(5), "n1"));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(matches!(a.renew(&g).await, Completion::Fail(e) if e.contains("session expired")));
    assert!(matches!(a.release(&g).await, Completion::Fail(e) if e == NOT_OWNER));
}

#[tokio::test]
async fn a_call_cancelled_by_its_caller_never_pairs_its_late_reply_with_the_next_request() {
    // Answers every request late (400 ms), so a caller that gives up at 100 ms leaves a reply
    // in flight; the next call must go to a fresh adapter, not read that reply.
    let a = start(&after_init(
        r#"while read l; do sleep 0.4; id=$(echo "$l" | sed 's/.*"id":\([0-9]*\).*/\1/'); echo "{\"id\":$id,\"type\":\"ok\",\"lease\":\"n$id\",\"token\":$id}"; done"#,
    ))
    .await
    .unwrap();
    let cut = tokio::time::timeout(Duration::from_millis(100), a.acquire("l")).await;
    assert!(cut.is_err(), "the caller gave up");
    let Completion::Ok(g) = a.acquire("l").await else {
        panic!("a fresh adapter answers")
    };
    // Request 1 of the fresh adapter (0 is its init), not the late reply to the cancelled one.
    assert_eq!(g.lease, "n1");
}

#[tokio::test]
async fn a_grant_whose_read_back_found_its_node_gone_is_still_the_librarys_grant() {
    // The library said "acquired"; the adapter's own read of the token found the node gone.
    let a = start(&after_init(
        r#"read l; echo '{"id":1,"type":"ok","lease":"/l/n7","read_back":"lock node /l/n7 gone"}'; sleep 5"#,
    ))
    .await
    .unwrap();
    let Completion::Ok(g) = a.acquire("l").await else {
        panic!("a grant, not an indeterminate acquire")
    };
    assert_eq!(g.lease, "/l/n7");
    assert_eq!(g.token, None, "no token could be read");
    assert_eq!(g.read_back.as_deref(), Some("lock node /l/n7 gone"));
}

#[tokio::test]
async fn a_kept_client_answers_the_next_call_itself_and_an_abandoned_one_is_started_afresh() {
    // Each adapter answers its first acquire `info` and every later one `ok`: a fresh adapter
    // shows itself by answering `info` again.
    let script = after_init(concat!(
        r#"read l; echo '{"id":1,"type":"info","error":"ConnectionError: reset"}'; "#,
        r#"while read l; do id=$(echo "$l" | sed 's/.*"id":\([0-9]*\).*/\1/'); "#,
        r#"echo "{\"id\":$id,\"type\":\"ok\",\"lease\":\"n$id\",\"token\":$id}"; done"#
    ));
    let kept = start(&script).await.unwrap();
    assert!(matches!(kept.acquire("l").await, Completion::Info(_)));
    kept.forget().await;
    let Completion::Ok(g) = kept.acquire("l").await else {
        panic!("the same library objects answer the next acquire")
    };
    assert_eq!(g.lease, "n2", "request 2 of the same adapter");
    let crashed = start(&script).await.unwrap();
    assert!(matches!(crashed.acquire("l").await, Completion::Info(_)));
    crashed.abandon().await;
    assert!(
        matches!(crashed.acquire("l").await, Completion::Info(_)),
        "a fresh adapter, as after a crash"
    );
}

#[tokio::test]
async fn the_application_may_ask_a_library_that_renews_and_hears_its_belief_and_the_servers() {
    let init_ok = r#"{"id":0,"type":"ok","library":"shlib","version":"9","token":null,"capabilities":["release","renew","check"]}"#;
    let script = format!(
        "read l; printf '%s\\n' '{init_ok}'; {}",
        concat!(
            r#"read l; echo '{"id":1,"type":"ok","lease":"n1"}'; "#,
            r#"read l; echo '{"id":2,"type":"ok","held":true,"server_held":false}'; sleep 5"#
        )
    );
    let a = start(&script).await.unwrap();
    let Completion::Ok(g) = a.acquire("l").await else {
        panic!("acquired")
    };
    assert!(a.check(&g).is_none(), "its keep-alive renews");
    assert!(a.judges_its_own_hold());
    let belief = a.ask(&g).expect("it can be asked").await;
    assert_eq!(
        belief,
        Completion::Ok(Belief {
            held: true,
            server_held: Some(false)
        })
    );
}
