//! The workload generator: each worker repeats acquire → work for a while → write with its token
//! (one or more writes) → release, with seeded randomness, until the time limit. Jepsen
//! semantics throughout: `fail` only when certainly not done; after `info` the process id is
//! retired and the worker continues under a fresh one from a shared allocator; a worker that
//! dies gets an `exit` event and its loop ends.

use super::{Gone, Recorder, WorkerConn};
use crate::protocol::{Op, Outcome};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use results::jsonl::JsonlError;
use results::{Event, OpType, F};
use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
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

/// Hands out process ids; the first `n` belong to the `n` workers, retirements draw from here.
#[derive(Debug, Clone)]
pub struct ProcessAllocator(Arc<AtomicU32>);

impl ProcessAllocator {
    pub fn new(first_free: u32) -> Self {
        Self(Arc::new(AtomicU32::new(first_free)))
    }

    pub fn next(&self) -> u32 {
        self.0.fetch_add(1, Ordering::Relaxed)
    }
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
    let alloc = ProcessAllocator::new(conns.len() as u32);
    let loops = conns.into_iter().enumerate().map(|(i, conn)| {
        let (spec, recorder, alloc) = (spec.clone(), recorder.clone(), alloc.clone());
        tokio::spawn(async move { run_worker(conn, i as u32, &spec, &alloc, &recorder).await })
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

enum Step {
    Done(Outcome),
    Died,
}

struct Loop<'a> {
    conn: WorkerConn,
    process: u32,
    alloc: &'a ProcessAllocator,
    rec: &'a Recorder,
    sum: WorkerSummary,
}

impl Loop<'_> {
    /// Records the invoke, calls, records the completion (or the death).
    async fn op(&mut self, invoke: Event, op: Op) -> Result<Step, JsonlError> {
        let template = invoke.clone();
        self.rec.record(invoke)?;
        match self.conn.call(op).await {
            Ok(outcome) => {
                let mut done = template;
                done.kind = outcome.kind;
                done.owner = outcome.owner.clone().or(done.owner);
                done.lease = outcome.lease.clone().or(done.lease);
                done.token = outcome.token.or(done.token);
                done.result = outcome.result;
                done.highest_before = outcome.highest_before;
                done.error = outcome.error.clone();
                self.rec.record(done)?;
                if outcome.kind == OpType::Info {
                    self.sum.indeterminate += 1;
                    self.retire().await;
                }
                Ok(Step::Done(outcome))
            }
            Err(Gone(why)) => {
                let mut open = template;
                open.kind = OpType::Info;
                open.error = Some(format!("worker died: {why}"));
                self.rec.record(open)?;
                let mut exit = self.rec.event(self.process, OpType::Info, F::Exit);
                exit.error = Some(why);
                self.rec.record(exit)?;
                self.sum.exited = true;
                Ok(Step::Died)
            }
        }
    }

    /// After `info`: the process id is retired and the worker forgets any hold it may have.
    async fn retire(&mut self) {
        self.process = self.alloc.next();
        let _ = self.conn.call(Op::Abandon).await;
    }
}

/// One worker's loop; returns when the time limit has passed or the worker died.
pub async fn run_worker(
    conn: WorkerConn,
    first_process: u32,
    spec: &WorkloadSpec,
    alloc: &ProcessAllocator,
    rec: &Recorder,
) -> Result<WorkerSummary, JsonlError> {
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed ^ (u64::from(first_process) << 32));
    let mut l = Loop {
        conn,
        process: first_process,
        alloc,
        rec,
        sum: WorkerSummary::default(),
    };
    let mut seq = 0u64;
    while rec.clock.now() < spec.until_ns {
        let p = l.process;
        let mut inv = rec.event(p, OpType::Invoke, F::Acquire);
        inv.lock = Some(spec.lock.clone());
        let acquire = Op::Acquire {
            process: p,
            lock: spec.lock.clone(),
        };
        let hold = match l.op(inv, acquire).await? {
            Step::Died => break,
            Step::Done(o) if o.kind == OpType::Ok => o,
            Step::Done(_) => {
                tokio::time::sleep(draw(&mut rng, &spec.between)).await;
                continue;
            }
        };
        l.sum.acquired += 1;
        tokio::time::sleep(draw(&mut rng, &spec.work)).await;
        let mut retired = false;
        for _ in 0..spec.writes_per_hold {
            seq += 1;
            let op_id = format!("{p}-{seq}");
            let mut inv = rec.event(p, OpType::Invoke, F::Write);
            inv.lock = Some(spec.lock.clone());
            inv.key = Some(spec.key.clone());
            inv.value = Some(serde_json::json!(op_id));
            inv.token = hold.token;
            inv.op_id = Some(op_id.clone());
            inv.owner = hold.owner.clone();
            inv.lease = hold.lease.clone();
            let write = Op::Write {
                process: p,
                key: spec.key.clone(),
                value: serde_json::json!(op_id),
                op_id,
            };
            match l.op(inv, write).await? {
                Step::Died => return Ok(l.sum),
                Step::Done(o) => match o.kind {
                    OpType::Ok => l.sum.writes_accepted += 1,
                    OpType::Info => {
                        retired = true;
                        break;
                    }
                    _ if o.result.is_some() => l.sum.writes_rejected += 1,
                    _ => break, // not sent: the worker no longer trusts its hold
                },
            }
        }
        if !retired {
            let mut inv = rec.event(p, OpType::Invoke, F::Release);
            inv.lock = Some(spec.lock.clone());
            inv.owner = hold.owner.clone();
            inv.lease = hold.lease.clone();
            inv.token = hold.token;
            match l.op(inv, Op::Release { process: p }).await? {
                Step::Died => break,
                Step::Done(o) if o.kind == OpType::Ok => l.sum.released += 1,
                Step::Done(_) => {}
            }
        }
        tokio::time::sleep(draw(&mut rng, &spec.between)).await;
    }
    Ok(l.sum)
}

fn draw(rng: &mut ChaCha8Rng, range: &RangeInclusive<Duration>) -> Duration {
    let (lo, hi) = (
        range.start().as_micros() as u64,
        range.end().as_micros() as u64,
    );
    if hi <= lo {
        return *range.start();
    }
    Duration::from_micros(rng.random_range(lo..=hi))
}
