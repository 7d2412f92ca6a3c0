//! The workload generator: each worker repeats acquire → work for a while → write with its token
//! (one or more writes) → release, with seeded randomness, until the time limit. The Jepsen
//! bookkeeping (retiring process ids, `exit` on death) is the [`Session`]'s.

use super::session::{ProcessIds, Session, Step};
use super::{Recorder, WorkerConn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use results::jsonl::JsonlError;
use results::OpType;
use std::ops::RangeInclusive;
use std::time::Duration;

/// What every worker does.
#[derive(Debug, Clone)]
pub struct WorkloadSpec {
    pub lock: String,
    /// The resource key written under the lock.
    pub key: String,
    /// How long a holder works before its writes (drawn per hold).
    pub work: RangeInclusive<Duration>,
    /// Writes per hold.
    pub writes_per_hold: u32,
    /// Pause between a release and the next acquire (drawn per cycle).
    pub between: RangeInclusive<Duration>,
    /// No new acquire starts after this much run time (ns since the run's start).
    pub until_ns: u64,
    pub seed: u64,
}

/// What one worker's loop did (for tests and progress lines; the history is the record).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerSummary {
    pub acquired: u32,
    pub writes_accepted: u32,
    pub writes_rejected: u32,
    pub released: u32,
    pub indeterminate: u32,
    pub exited: bool,
}

/// Drives all workers concurrently; worker `i` starts as process `i`.
pub async fn run_workload(
    conns: Vec<WorkerConn>,
    spec: &WorkloadSpec,
    recorder: &Recorder,
) -> Result<Vec<WorkerSummary>, JsonlError> {
    let n = conns.len() as u32;
    let loops = conns.into_iter().enumerate().map(|(i, conn)| {
        let mut session = Session::new(conn, ProcessIds::of_worker(i as u32, n), recorder.clone());
        let spec = spec.clone();
        tokio::spawn(async move { run_worker(&mut session, &spec).await })
    });
    let mut out = vec![];
    for h in futures::future::join_all(loops).await {
        match h {
            Ok(r) => out.push(r?),
            Err(e) => tracing::error!("worker loop panicked: {e}"),
        }
    }
    Ok(out)
}

/// One worker's loop; returns when the time limit has passed or the worker died.
pub async fn run_worker(s: &mut Session, spec: &WorkloadSpec) -> Result<WorkerSummary, JsonlError> {
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed ^ (u64::from(s.process()) << 32));
    let mut sum = WorkerSummary::default();
    let mut seq = 0u64;
    let clock = s.recorder().clock;
    while clock.now() < spec.until_ns && !s.is_dead() {
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
        if s.idle(draw(&mut rng, &spec.work)).await?.is_some() {
            break;
        }
        let mut retired = false;
        for _ in 0..spec.writes_per_hold {
            seq += 1;
            match s.write(&spec.key, seq).await? {
                Step::Died => {
                    return Ok(WorkerSummary {
                        exited: true,
                        ..sum
                    })
                }
                Step::Done(o) => match o.kind {
                    OpType::Ok => sum.writes_accepted += 1,
                    OpType::Info => {
                        sum.indeterminate += 1;
                        retired = true;
                        break;
                    }
                    _ if o.result.is_some() => sum.writes_rejected += 1,
                    _ => break, // not sent: the worker no longer trusts its hold
                },
            }
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

pub(super) fn draw(rng: &mut ChaCha8Rng, range: &RangeInclusive<Duration>) -> Duration {
    let (lo, hi) = (
        range.start().as_micros() as u64,
        range.end().as_micros() as u64,
    );
    if hi <= lo {
        return *range.start();
    }
    Duration::from_micros(rng.random_range(lo..=hi))
}
