//! The counter workload's loop (Jepsen's "lock-set" idea): each worker repeats acquire → one
//! increment (read, work for the drawn time, write back) → release until the time limit, and
//! at the end one worker reads the counter once more. The store gets no help from the lock, so
//! any moment with two effective holders — a holder paused between its read and its write while
//! its lease expired — shows as a final value below the acknowledged increments (`lost-update`).

use super::session::{ProcessIds, Session, Step};
use super::workload::draw;
use super::{Recorder, WorkerConn, WorkerSummary, WorkloadSpec};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use results::jsonl::JsonlError;
use results::OpType;

/// One worker's counter loop; returns when the time limit has passed or the worker died. The
/// session stays the caller's (for the final read). In the summary, `writes_accepted` counts
/// applied increments and `writes_rejected` the ones a guard rejected.
pub async fn run_counter_worker(
    s: &mut Session,
    spec: &WorkloadSpec,
) -> Result<WorkerSummary, JsonlError> {
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed ^ (u64::from(s.process()) << 32));
    let mut sum = WorkerSummary::default();
    let clock = s.recorder().clock;
    while !spec.until.passed(clock.now()) && !s.is_dead() {
        match s.acquire(&spec.lock).await?.kind() {
            None => break,
            Some(OpType::Ok) => sum.acquired += 1,
            Some(kind) => {
                sum.indeterminate += u32::from(kind == OpType::Info);
                if s.idle(draw(&mut rng, &spec.between)).await?.is_some() {
                    break;
                }
                continue;
            }
        }
        let mut retired = false;
        match s.increment(&spec.key, draw(&mut rng, &spec.work)).await? {
            Step::Died => break,
            Step::Done(o) => match o.kind {
                OpType::Ok => sum.writes_accepted += 1,
                OpType::Info => {
                    sum.indeterminate += 1;
                    retired = true;
                }
                _ if o.result.is_some() => sum.writes_rejected += 1,
                _ => {} // not applied: the gate refused or the read failed
            },
        }
        if !retired {
            match s.release().await?.kind() {
                None => break,
                Some(OpType::Ok) => sum.released += 1,
                Some(OpType::Info) => sum.indeterminate += 1,
                Some(_) => {}
            }
        }
        if s.idle(draw(&mut rng, &spec.between)).await?.is_some() {
            break;
        }
    }
    sum.exited = s.is_dead();
    Ok(sum)
}

/// The final read of the counter, by the first session that answers it (recorded in the
/// history like every operation). `None` if no live worker could read it.
pub async fn final_read(sessions: &mut [Session], key: &str) -> Result<Option<i64>, JsonlError> {
    for s in sessions.iter_mut().filter(|s| !s.is_dead()) {
        if let Step::Done(o) = s.read(key).await? {
            if o.kind == OpType::Ok {
                return Ok(o.value);
            }
        }
    }
    Ok(None)
}

/// Drives all workers through the counter loop concurrently (worker `i` starts as process `i`),
/// then reads the counter once. Returns each worker's summary and the final value.
pub async fn run_counter_workload(
    conns: Vec<WorkerConn>,
    spec: &WorkloadSpec,
    recorder: &Recorder,
) -> Result<(Vec<WorkerSummary>, Option<i64>), JsonlError> {
    let n = conns.len() as u32;
    let loops = conns.into_iter().enumerate().map(|(i, conn)| {
        let mut session = Session::new(conn, ProcessIds::of_worker(i as u32, n), recorder.clone());
        let spec = spec.clone();
        tokio::spawn(async move {
            let sum = run_counter_worker(&mut session, &spec).await;
            (session, sum)
        })
    });
    let (mut sessions, mut sums) = (vec![], vec![]);
    for h in futures::future::join_all(loops).await {
        match h {
            Ok((session, sum)) => {
                sums.push(sum?);
                sessions.push(session);
            }
            Err(e) => tracing::error!("counter loop panicked: {e}"),
        }
    }
    let value = final_read(&mut sessions, &spec.key).await?;
    Ok((sums, value))
}
