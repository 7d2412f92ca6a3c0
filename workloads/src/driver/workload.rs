//! The workload generator: each worker repeats acquire → work for a while → write with its token
//! (one or more writes; a job writes as it goes) → release, with seeded randomness, until the time limit. The Jepsen
//! bookkeeping (retiring process ids, `exit` on death) is the [`Session`]'s.

use super::session::{ProcessIds, Session, Step};
use super::{Deadline, Recorder, WorkerConn};
use crate::app::{App, HoldLength, OnLost};
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
    /// Writes per hold (a job spreads them over its work).
    pub writes_per_hold: u32,
    /// The application the workers model.
    pub app: App,
    /// Pause between a release and the next acquire (drawn per cycle).
    pub between: RangeInclusive<Duration>,
    /// No new acquire starts after this run time (ns since the run's start); the run may bring
    /// it forward once its tail has settled.
    pub until: Deadline,
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
        let mut session = Session::new(conn, ProcessIds::of_worker(i as u32, n), recorder.clone())
            .on_error(spec.app.on_error());
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

/// One worker's loop; returns when the time limit has passed or the worker died. The
/// application profile shapes each hold: a short one works, then writes; a job writes as it
/// goes, one write after each part of its work; a job whose lock the library reports lost takes
/// it again at once and goes on, where the profile says so.
pub async fn run_worker(s: &mut Session, spec: &WorkloadSpec) -> Result<WorkerSummary, JsonlError> {
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed ^ (u64::from(s.process()) << 32));
    let mut sum = WorkerSummary::default();
    let mut seq = 0u64;
    let clock = s.recorder().clock;
    let job = spec.app.hold() == HoldLength::Job;
    let parts = spec.writes_per_hold.max(1);
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
        let work = draw(&mut rng, &spec.work);
        if !job && s.idle(work).await?.is_some() {
            break;
        }
        let mut held = true;
        let mut written = 0;
        while written < spec.writes_per_hold {
            if job && s.idle(work / parts).await?.is_some() {
                break;
            }
            seq += 1;
            written += 1;
            let refused = match s.write(&spec.key, seq).await? {
                Step::Died => {
                    return Ok(WorkerSummary {
                        exited: true,
                        ..sum
                    })
                }
                Step::Done(o) => match o.kind {
                    OpType::Ok => {
                        sum.writes_accepted += 1;
                        false
                    }
                    OpType::Info => {
                        sum.indeterminate += 1;
                        held = false;
                        break;
                    }
                    _ if o.result.is_some() => {
                        sum.writes_rejected += 1;
                        false
                    }
                    _ => true, // not sent: the worker no longer trusts its hold
                },
            };
            if !refused {
                continue;
            }
            if spec.app.on_lost() == OnLost::Stop || !reacquire(s, spec, &mut sum).await? {
                break;
            }
        }
        if held && s.held().is_some() {
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

/// The job lost its lock and takes it again at once: its release first (as its `finally`
/// would), then an acquire. True when it holds the lock again and goes on.
async fn reacquire(
    s: &mut Session,
    spec: &WorkloadSpec,
    sum: &mut WorkerSummary,
) -> Result<bool, JsonlError> {
    match s.release().await?.kind() {
        None | Some(OpType::Info) => return Ok(false),
        Some(OpType::Ok) => sum.released += 1,
        Some(_) => {}
    }
    if clock_is_up(s, spec) {
        return Ok(false);
    }
    Ok(match s.acquire(&spec.lock).await?.kind() {
        Some(OpType::Ok) => {
            sum.acquired += 1;
            true
        }
        Some(OpType::Info) => {
            sum.indeterminate += 1;
            false
        }
        _ => false,
    })
}

fn clock_is_up(s: &Session, spec: &WorkloadSpec) -> bool {
    spec.until.passed(s.recorder().clock.now())
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
