//! pg-advisory (PostgreSQL session advisory locks) against the real server: contending workers
//! never overlap and their tokens strictly increase; a holder SIGSTOPped past the ttl keeps the
//! lock (a session has no lease: the server keeps it while the socket lives), so nobody else is
//! granted it while the holder is frozen, and the holder's write after SIGCONT is accepted.

use crate::support::recipes::{contention, contention_secs, with_bed};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use results::{OpResult, OpType, Process, Provider, F};
use std::time::Duration;
use workloads::config::RecipeKind;
use workloads::driver::Session;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pg_advisory_excludes_fences_and_keeps_the_lock_through_a_pause() {
    with_bed(
        Provider::Postgres,
        RecipeKind::PgAdvisory,
        Duration::from_secs(2),
        |bed| async move {
            contention(&bed, 5, contention_secs()).await;
            let (a_node, a_conn) = bed.worker("a-pause", "continue").await;
            let (_, b_conn) = bed.worker("b-pause", "stop").await;
            let mut a = Session::new(a_conn, bed.ids(), bed.rec.clone());
            let mut b = Session::new(b_conn, bed.ids(), bed.rec.clone());
            let (a_process, b_process) = (a.process(), b.process());
            assert_eq!(a.acquire("paused").await.unwrap().kind(), Some(OpType::Ok));
            let pid = Pid::from_raw(a_node.host_pid as i32);
            kill(pid, Signal::SIGSTOP).expect("SIGSTOP");
            // B asks while A is frozen for longer than the ttl.
            let waiting = tokio::spawn(async move {
                let step = b.acquire("paused").await.unwrap();
                (b, step)
            });
            tokio::time::sleep(bed.ttl + Duration::from_millis(500)).await;
            kill(pid, Signal::SIGCONT).expect("SIGCONT");
            let write = a.write("k-paused", 1).await.unwrap();
            assert_eq!(write.kind(), Some(OpType::Ok), "A still holds: {write:?}");
            a.release().await.unwrap();
            let (mut b, _) = waiting.await.expect("join");
            b.release().await.unwrap();
            let events = bed.history();
            let done = |p: u32, f: F| {
                events
                    .iter()
                    .find(|e| {
                        e.process == Process::Worker(p) && e.f == f && e.kind != OpType::Invoke
                    })
                    .cloned()
                    .unwrap_or_else(|| panic!("no completion of {f:?} by {p}"))
            };
            let a_write = done(a_process, F::Write);
            assert_eq!(a_write.result, Some(OpResult::Accepted), "{a_write:?}");
            let a_release = done(a_process, F::Release);
            assert_eq!(a_release.result, Some(OpResult::Released), "{a_release:?}");
            let b_acquire = done(b_process, F::Acquire);
            if b_acquire.kind == OpType::Ok {
                assert!(
                    b_acquire.index > a_release.index,
                    "B was granted the lock while A's session held it: {b_acquire:?}"
                );
            }
        },
    )
    .await;
}
