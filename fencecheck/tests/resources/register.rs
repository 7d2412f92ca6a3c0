//! The built-in register resource over its real TCP protocol, in-process (no containers): the
//! fencing rule per mode, malformed input, 8 concurrent clients re-decided from the log, and a
//! restart that recovers its state from its own log.

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns: unwrap is how a test fails

use crate::support::resource::{check_log, hammer, read_log, run_dir, write, Chooser};
use rand::Rng;
use results::{RunClock, WriteResult};
use std::sync::Arc;
use std::time::Duration;
use workloads::resource::Audit;
use workloads::resource::{start_server, BackendKind, Endpoints, Mode, Reply, ResourceClient};

async fn register(
    mode: Mode,
    log: &std::path::Path,
) -> (
    Arc<workloads::resource::Server>,
    workloads::resource::ServerHandle,
) {
    start_server(
        BackendKind::Register,
        mode,
        &Endpoints::default(),
        log,
        RunClock::start(),
        "127.0.0.1:0",
        Duration::ZERO,
    )
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_mode_decides_stale_and_newer_tokens_and_logs_every_decision() {
    use WriteResult::*;
    let dir = run_dir("modes");
    let cases = [
        (
            Mode::Strict,
            [Accepted, RejectedStaleFence, Accepted, Accepted],
        ),
        (
            Mode::StrictIdempotent,
            [Accepted, RejectedStaleFence, Accepted, RejectedDuplicate],
        ),
        (Mode::None, [Accepted, Accepted, Accepted, Accepted]),
    ];
    for (mode, expected) in cases {
        let log = dir.join(format!("{}.jsonl", mode.as_str()));
        let (_server, handle) = register(mode, &log).await;
        let mut c = ResourceClient::connect(&handle.local_addr.to_string())
            .await
            .unwrap();
        // token 5, then stale 3, then newer 7, then a replay of the first op_id with token 9.
        let writes = [
            write("k", Some(5), "a"),
            write("k", Some(3), "b"),
            write("k", Some(7), "c"),
            write("k", Some(9), "a"),
        ];
        let mut got = Vec::new();
        for w in &writes {
            got.push(c.write(w).await.unwrap());
        }
        assert_eq!(
            got.iter().map(|r| r.result).collect::<Vec<_>>(),
            expected,
            "mode {}",
            mode.as_str()
        );
        assert_eq!(got[1].highest_before, Some(5));
        let entries = read_log(&log);
        assert_eq!(entries.len(), 4, "every request is in the log");
        for (i, (e, r)) in entries.iter().zip(&got).enumerate() {
            assert_eq!(
                (e.seq, e.result, e.highest_before, e.token),
                (i as u64, r.result, r.highest_before, writes[i].token)
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn malformed_requests_get_an_error_and_the_server_keeps_serving() {
    let log = run_dir("malformed").join("resource.jsonl");
    let (_server, handle) = register(Mode::Strict, &log).await;
    let mut c = ResourceClient::connect(&handle.local_addr.to_string())
        .await
        .unwrap();
    let long = format!(
        "{{\"op\":\"write\",\"pad\":\"{}\"}}",
        "x".repeat(workloads::resource::MAX_LINE + 10)
    );
    let bad: Vec<&[u8]> = vec![
        b"not json",
        b"{\"op\":\"write\",\"key\":\"k\"}",
        b"{\"op\":\"write\",\"lock\":\"l\",\"key\":\"k\",\"value\":1,\"token\":\"seven\",\"op_id\":\"x\",\"owner\":\"o\",\"lease\":\"x\",\"process\":1}",
        b"{\"op\":\"write\",\"lock\":\"l\",\"key\":\"k\",\"value\":1,\"token\":-1,\"op_id\":\"x\",\"owner\":\"o\",\"lease\":\"x\",\"process\":1}",
        b"{\"op\":\"explode\"}",
        b"\xff\xfe\x00 binary",
        b"[1,2,3]",
        // well-formed, but a strict resource cannot decide a write without a token
        b"{\"op\":\"write\",\"lock\":\"l\",\"key\":\"k\",\"value\":1,\"op_id\":\"x\",\"owner\":\"o\",\"lease\":\"x\",\"process\":1}",
        long.as_bytes(),
    ];
    for line in bad {
        match c.send_raw(line).await.unwrap() {
            // Nothing was decided or applied: a definite refusal, never an indeterminate error.
            Reply::Refused { message } => assert!(!message.is_empty()),
            other => panic!(
                "{:?} got {other:?}",
                String::from_utf8_lossy(&line[..line.len().min(60)])
            ),
        }
    }
    // The same connection, and a new one, still get decisions.
    assert_eq!(
        c.write(&write("k", Some(2), "ok-1")).await.unwrap().result,
        WriteResult::Accepted
    );
    let mut fresh = ResourceClient::connect(&handle.local_addr.to_string())
        .await
        .unwrap();
    fresh.ping().await.unwrap();
    assert_eq!(
        fresh
            .write(&write("k", Some(1), "ok-2"))
            .await
            .unwrap()
            .result,
        WriteResult::RejectedStaleFence
    );
    assert_eq!(read_log(&log).len(), 2, "nothing malformed was logged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_clients_with_random_tokens_re_decide_identically_from_the_log() {
    for mode in [Mode::Strict, Mode::StrictIdempotent, Mode::None] {
        let log = run_dir("hammer").join("resource.jsonl");
        let (_server, handle) = register(mode, &log).await;
        let choose: Chooser = Arc::new(|rng, _key| (Some(rng.random_range(1..=60)), None));
        let sent = hammer(
            &handle.local_addr.to_string(),
            8,
            2000,
            &["a", "b", "c"],
            7,
            choose,
        )
        .await;
        assert!(sent.iter().all(|s| s.reply.is_ok()));
        let entries = check_log(&log, &sent, Audit::Exact(mode));
        assert_eq!(entries.len(), 2000, "no request is missing from the log");
        let rejected = entries.iter().filter(|e| !e.result.is_accepted()).count();
        if mode == Mode::None {
            assert_eq!(rejected, 0);
        } else {
            assert!(
                rejected > 100,
                "random tokens must produce stale writes ({rejected})"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_restarted_register_recovers_its_state_and_seqs_from_its_log() {
    let log = run_dir("restart").join("resource.jsonl");
    {
        let (_server, handle) = register(Mode::StrictIdempotent, &log).await;
        let mut c = ResourceClient::connect(&handle.local_addr.to_string())
            .await
            .unwrap();
        c.write(&write("k", Some(5), "a")).await.unwrap();
        c.write(&write("k", Some(4), "b")).await.unwrap();
    }
    // A kill in the middle of a write leaves a torn line that was never acknowledged.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"{\"seq\":2,\"time\":1,\"ke"))
        .unwrap();
    let (server, handle) = register(Mode::StrictIdempotent, &log).await;
    assert_eq!(server.logged(), 2);
    let mut c = ResourceClient::connect(&handle.local_addr.to_string())
        .await
        .unwrap();
    let stale = c.write(&write("k", Some(3), "c")).await.unwrap();
    assert_eq!(
        (stale.result, stale.highest_before, stale.seq),
        (WriteResult::RejectedStaleFence, Some(5), 2)
    );
    assert_eq!(
        c.write(&write("k", Some(6), "a")).await.unwrap().result,
        WriteResult::RejectedDuplicate
    );
    assert_eq!(
        c.write(&write("k", Some(6), "d")).await.unwrap().result,
        WriteResult::Accepted
    );
    let entries = read_log(&log);
    assert_eq!(entries.len(), 5);
    workloads::resource::audit(&entries, Audit::Exact(Mode::StrictIdempotent)).unwrap();
}

/// A store that decides, then loses the reply for chosen op_ids (a timeout after commit).
struct LosesReplies {
    inner: workloads::resource::Register,
    lose: std::sync::Mutex<std::collections::HashSet<String>>,
    decided: std::sync::Mutex<std::collections::HashMap<(String, u64), WriteResult>>,
}

impl workloads::resource::Resource for LosesReplies {
    fn decide<'a>(
        &'a self,
        w: &'a workloads::resource::WriteRequest,
        attempt: u64,
    ) -> futures::future::BoxFuture<
        'a,
        Result<workloads::resource::Decision, workloads::resource::ResourceError>,
    > {
        Box::pin(async move {
            let d = self.inner.decide(w, attempt).await?;
            self.decided
                .lock()
                .unwrap()
                .insert((w.key.clone(), attempt), d.result);
            if self.lose.lock().unwrap().remove(&w.op_id) {
                return Err(workloads::resource::ResourceError::Backend {
                    backend: "fake",
                    message: "reply lost".into(),
                });
            }
            Ok(d)
        })
    }

    fn resolve<'a>(
        &'a self,
        w: &'a workloads::resource::WriteRequest,
        attempt: u64,
    ) -> futures::future::BoxFuture<
        'a,
        Result<Option<WriteResult>, workloads::resource::ResourceError>,
    > {
        let r = self
            .decided
            .lock()
            .unwrap()
            .get(&(w.key.clone(), attempt))
            .copied();
        Box::pin(async move { Ok(r) })
    }

    fn name(&self) -> &'static str {
        "loses-replies"
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_the_store_decided_but_whose_reply_was_lost_is_logged_before_the_next_decision() {
    use workloads::resource::start_with;
    let log = run_dir("doubt").join("resource.jsonl");
    let store = Arc::new(LosesReplies {
        inner: workloads::resource::Register::new(Mode::Strict),
        lose: std::sync::Mutex::new(["lost-9".to_string(), "lost-12".to_string()].into()),
        decided: Default::default(),
    });
    {
        let (_s, handle) = start_with(store.clone(), &log, RunClock::start(), "127.0.0.1:0")
            .await
            .unwrap();
        let mut c = ResourceClient::connect(&handle.local_addr.to_string())
            .await
            .unwrap();
        assert_eq!(
            c.write(&write("k", Some(5), "a")).await.unwrap().result,
            WriteResult::Accepted
        );
        assert!(
            c.write(&write("k", Some(9), "lost-9")).await.is_err(),
            "the reply was lost"
        );
        // The store accepted 9: a 7 must be stale, with highest_before 9, and the log must say why.
        let r = c.write(&write("k", Some(7), "b")).await.unwrap();
        assert_eq!(
            (r.result, r.highest_before, r.seq),
            (WriteResult::RejectedStaleFence, Some(9), 2)
        );
        // Lost again, and this time the resource dies before anyone asks.
        assert!(c.write(&write("k", Some(12), "lost-12")).await.is_err());
    }
    let (_s, handle) = start_with(store.clone(), &log, RunClock::start(), "127.0.0.1:0")
        .await
        .unwrap();
    let mut c = ResourceClient::connect(&handle.local_addr.to_string())
        .await
        .unwrap();
    let r = c.write(&write("k", Some(10), "c")).await.unwrap();
    assert_eq!(
        (r.result, r.highest_before, r.seq),
        (WriteResult::RejectedStaleFence, Some(12), 4)
    );
    let entries = read_log(&log);
    let ops: Vec<_> = entries
        .iter()
        .map(|e| (e.op_id.as_str(), e.result, e.highest_before))
        .collect();
    assert_eq!(
        ops,
        vec![
            ("a", WriteResult::Accepted, None),
            ("lost-9", WriteResult::Accepted, Some(5)),
            ("b", WriteResult::RejectedStaleFence, Some(9)),
            ("lost-12", WriteResult::Accepted, Some(9)),
            ("c", WriteResult::RejectedStaleFence, Some(12)),
        ]
    );
    workloads::resource::audit(&entries, Audit::Exact(Mode::Strict)).unwrap();
}

#[test]
fn the_resource_command_rejects_bad_flags_with_exit_3_and_names_the_fix() {
    let bin = env!("CARGO_BIN_EXE_fencecheck");
    let log = run_dir("flags").join("resource.jsonl");
    let cases: [(&[&str], &str); 3] = [
        (&["--backend", "etcd-guard"], "--etcd"),
        (
            &["--mode", "strictest"],
            "expected strict, strict-idempotent or none",
        ),
        (
            &["--backend", "mongodb"],
            "expected register, etcd-guard, postgres or redis-fenced",
        ),
    ];
    for (flags, says) in cases {
        let out = std::process::Command::new(bin)
            .arg("resource")
            .args(["--listen", "127.0.0.1:0", "--log"])
            .arg(&log)
            .args(flags)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{flags:?}: {stderr}");
        assert!(
            stderr.contains(says),
            "{flags:?} should say {says:?}: {stderr}"
        );
    }
}
