//! Seeded generators of long, valid lock histories — one lock, workers taking turns, tokens from
//! a counter with gaps (like etcd revisions), fenced writes, a counter workload — and of the same
//! histories with exactly one planted defect of a chosen kind. Property tests use them to show
//! that valid runs stay valid and each defect is found as its own kind; benches use them for
//! millions of events (streamed through a callback, never held in memory).
//!
//! Deterministic: the same seed and shape always give the same history (SplitMix64, no clock).

use results::{AnomalyKind, Event, OpResult, OpType, Process, ResourceEntry, WriteResult, F};

mod gen;
use gen::{Gen, HoldInfo, KEY};

/// How many acquisitions a planted locked-out client fails through (the last ones of the
/// history), each [`LOCKED_OUT_STEP`] apart: 2.8 s of failures, longer than a ttl of 1 s and a
/// slack of 1 s.
pub const LOCKED_OUT_HOLDS: usize = 8;
const LOCKED_OUT_STEP: u64 = 400_000_000;

/// The locked-out client `x` tries the lock once more and fails, as a wedged client does.
fn fail_to_acquire(g: &mut Gen, x: u32, pending: &mut [bool]) {
    if !pending[x as usize] {
        let inv = g.op(x, OpType::Invoke, F::Acquire, None);
        g.emit(inv);
    }
    let mut f = g.op(x, OpType::Fail, F::Acquire, None);
    f.error = Some("client is closed".into());
    g.emit(f);
    pending[x as usize] = false;
}

/// SplitMix64: tiny, seedable, good enough to shuffle workers.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// The shape of a generated history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub workers: u32,
    /// Number of acquisitions (at least 2 for a defect to be planted).
    pub holds: usize,
    pub writes_per_hold: u32,
    /// Whether acquisitions carry fence tokens (false: Redlock-like).
    pub tokens: bool,
    /// Whether each hold also reads and increments a counter.
    pub counter: bool,
    /// Whether the next worker's acquire is already pending while the holder releases.
    pub contended: bool,
    /// Whether every worker not holding the lock is always blocked in acquire (a mutex loop:
    /// release, then acquire again at once), so many acquire operations overlap.
    pub all_wait: bool,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            workers: 5,
            holds: 100,
            writes_per_hold: 2,
            tokens: true,
            counter: true,
            contended: true,
            all_wait: false,
        }
    }
}

/// One generated line: a history event or a resource decision.
#[derive(Debug, Clone)]
pub enum Item {
    Event(Event),
    Resource(ResourceEntry),
}

/// A generated history held in memory (for tests).
#[derive(Debug, Clone, Default)]
pub struct Synth {
    pub history: Vec<Event>,
    pub resource: Vec<ResourceEntry>,
    /// The acquisition (hold number) where the defect was planted, if it could be.
    pub planted: Option<usize>,
}

/// Generates into memory.
pub fn generate(seed: u64, shape: &Shape, defect: Option<AnomalyKind>) -> Synth {
    let mut s = Synth::default();
    s.planted = generate_into(seed, shape, defect, &mut |item| match item {
        Item::Event(e) => s.history.push(e),
        Item::Resource(r) => s.resource.push(r),
    });
    s
}

/// Generates, handing every line to `sink` in order (history events and resource entries
/// interleaved as they happen; a consumer writes them to their two files). Returns the hold
/// where the defect was planted (`None`: no defect asked, or no place found for it).
pub fn generate_into(
    seed: u64,
    shape: &Shape,
    defect: Option<AnomalyKind>,
    sink: &mut dyn FnMut(Item),
) -> Option<usize> {
    use AnomalyKind::*;
    let mut rng = Rng::new(seed);
    let holds = shape.holds.max(2);
    let mut at = match defect {
        Some(StuckLock) => holds - 1,
        Some(LockedOutClient) => holds.saturating_sub(LOCKED_OUT_HOLDS),
        _ => 1 + rng.below(holds as u64 - 1) as usize,
    };
    let workers = shape.workers.max(1);
    let mut g = Gen {
        rng,
        sink,
        index: 0,
        seq: 0,
        now: 0,
        token: 0,
        highest: None,
        count: 0,
        tokens: shape.tokens,
        ops: Default::default(),
    };
    let mut w = 1 + g.rng.below(u64::from(workers)) as u32;
    // Per worker (index = worker id): whether its acquire is pending, and the highest token
    // completed when it was invoked (what a regression is measured against).
    let mut pending = vec![false; workers as usize + 1];
    let mut snap: Vec<Option<u64>> = vec![None; workers as usize + 1];
    let mut max_done: Option<u64> = None;
    let mut reinvoke: Option<u32> = None;
    if shape.all_wait {
        for x in 1..=workers {
            let inv = g.op(x, OpType::Invoke, F::Acquire, None);
            g.emit(inv);
            pending[x as usize] = true;
        }
    }
    let mut early: Option<HoldInfo> = None;
    let mut prev: Option<HoldInfo> = None;
    let mut planted_at = None;
    // The worker whose every acquire fails from the planted hold on (a locked-out client): it
    // needs two others to take turns, and the history's last holds to fail through.
    let lockable = workers >= 3 && holds >= LOCKED_OUT_HOLDS;
    let mut locked_out: Option<u32> = None;
    for k in 0..holds {
        // A regression is only one if the lower token's acquire was invoked after the higher
        // one completed: wait for a holder whose invoke saw a completed token.
        if defect == Some(TokenRegression)
            && k == at
            && early.is_none()
            && snap[w as usize].is_none()
            && pending[w as usize]
        {
            at += 1;
        }
        let planted = defect
            .filter(|_| k == at)
            .filter(|d| *d != LockedOutClient || lockable);
        if planted.is_some() {
            planted_at = Some(k);
        }
        // The locked-out client's first two failures come while the lock is free: a free lock
        // it still cannot take.
        if planted == Some(LockedOutClient) {
            let x = other(&mut g.rng, w, workers);
            locked_out = Some(x);
            for _ in 0..2 {
                fail_to_acquire(&mut g, x, &mut pending);
            }
        }
        let hold = match early.take() {
            Some(h) => h,
            None => {
                if !pending[w as usize] {
                    let inv = g.op(w, OpType::Invoke, F::Acquire, None);
                    g.emit(inv);
                    snap[w as usize] = max_done;
                }
                let token = match (planted, &prev) {
                    (Some(DuplicateToken), Some(p)) => p.token,
                    (Some(TokenRegression), Some(p)) => snap[w as usize]
                        .or(p.token)
                        .map(|t| t - 1)
                        .filter(|_| g.tokens),
                    _ => g.next_token(),
                };
                let h = HoldInfo {
                    worker: w,
                    lease: format!("lease-{k}"),
                    token,
                };
                let ok = g.op(w, OpType::Ok, F::Acquire, Some(&h));
                g.emit(ok);
                h
            }
        };
        // The previous holder's keep-alive still hears held after this grant.
        if let (Some(HeldAfterLoss), Some(p)) = (planted, &prev) {
            let ask = g.op(p.worker, OpType::Invoke, F::Check, Some(p));
            g.emit(ask.clone());
            let mut held = ask;
            held.kind = OpType::Ok;
            held.held = Some(true);
            g.emit(held);
        }
        pending[w as usize] = false;
        max_done = max_done.max(hold.token);
        // A second release of the previous hold (double-release), or the first, late release
        // of a hold that ended in lease-lost (release-of-lost-lock: the new holder's own
        // release will succeed, so nothing shows harm).
        if let (Some(DoubleRelease | ReleaseOfLostLock), Some(p)) = (planted, &prev) {
            let inv = g.op(p.worker, OpType::Invoke, F::Release, Some(p));
            g.emit(inv);
            let mut done = g.op(p.worker, OpType::Ok, F::Release, Some(p));
            done.result = Some(OpResult::Released);
            g.emit(done);
        }
        if let Some(x) = reinvoke.take() {
            let inv = g.op(x, OpType::Invoke, F::Acquire, None);
            g.emit(inv);
            pending[x as usize] = true;
            snap[x as usize] = max_done;
        }
        // The locked-out client fails once more, while the holder holds.
        if let Some(x) = locked_out {
            g.now += LOCKED_OUT_STEP;
            fail_to_acquire(&mut g, x, &mut pending);
        }
        if workers > 1 && g.rng.below(3) == 0 {
            let x = other(&mut g.rng, w, workers);
            if !pending[x as usize] {
                let inv = g.op(x, OpType::Invoke, F::Acquire, None);
                g.emit(inv);
                let f = g.op(x, OpType::Fail, F::Acquire, None);
                g.emit(f);
            }
        }
        for _ in 0..shape.writes_per_hold {
            let op_id = g.next_op_id(w);
            let (result, done) = if planted == Some(TokenRegression) {
                (WriteResult::RejectedStaleFence, OpType::Fail)
            } else {
                (WriteResult::Accepted, OpType::Ok)
            };
            g.write(w, &hold, op_id, result, done);
        }
        if planted == Some(DuplicateEffect) {
            let n = g.ops.get(&w).copied().unwrap_or(1).saturating_sub(1);
            let entry = ResourceEntry {
                seq: 0,
                time: g.now + 10,
                key: KEY.into(),
                process: w,
                owner: format!("worker-{w}"),
                lease: hold.lease.clone(),
                token: hold.token,
                op_id: format!("{w}-{n}"),
                value: format!("{w}-{n}").into(),
                highest_before: None,
                result: WriteResult::Accepted,
            };
            g.duplicate_last_entry(entry);
        }
        if let (Some(StaleAcceptedWrite), Some(p)) = (planted, &prev) {
            let late = 1000 + k as u32;
            g.write(
                late,
                p,
                format!("late-{k}"),
                WriteResult::Accepted,
                OpType::Info,
            );
        }
        if shape.counter {
            let mut inv = g.op(w, OpType::Invoke, F::Read, None);
            inv.lock = None;
            inv.key = Some("counter".into());
            g.emit(inv.clone());
            let seen = if planted == Some(LostUpdate) {
                g.count - 1
            } else {
                g.count
            };
            let mut done = inv.clone();
            done.kind = OpType::Ok;
            done.value = Some(seen.into());
            g.emit(done);
            let mut inc = inv;
            inc.f = F::Increment;
            g.emit(inc.clone());
            inc.kind = OpType::Ok;
            g.emit(inc);
            g.count += 1;
        }
        if planted == Some(StuckLock) {
            let exit = Event::new(0, Process::Worker(w), OpType::Info, F::Exit);
            g.emit(exit);
            for _ in 0..30 {
                let x = other(&mut g.rng, w, workers);
                g.now += 100_000_000;
                if pending[x as usize] {
                    continue; // still blocked in its acquire: trying all along
                }
                let inv = g.op(x, OpType::Invoke, F::Acquire, None);
                g.emit(inv);
                let f = g.op(x, OpType::Fail, F::Acquire, None);
                g.emit(f);
            }
            let mut last = Event::new(0, Process::Worker(workers + 1), OpType::Invoke, F::Read);
            last.key = Some("counter".into());
            g.emit(last);
            return planted_at;
        }
        let mut next = other(&mut g.rng, w, workers);
        while Some(next) == locked_out {
            next = other(&mut g.rng, w, workers);
        }
        let wait = shape.contended && k + 1 < holds && g.rng.below(2) == 0;
        if wait && !pending[next as usize] {
            let inv = g.op(next, OpType::Invoke, F::Acquire, None);
            g.emit(inv);
            pending[next as usize] = true;
            snap[next as usize] = max_done;
        }
        let rel = g.op(w, OpType::Invoke, F::Release, Some(&hold));
        if defect == Some(ConcurrentHolders) && k + 1 == at {
            if !pending[next as usize] {
                let inv = g.op(next, OpType::Invoke, F::Acquire, None);
                g.emit(inv);
            }
            pending[next as usize] = false;
            let token = g.next_token();
            let h = HoldInfo {
                worker: next,
                lease: format!("lease-{}", k + 1),
                token,
            };
            let ok = g.op(next, OpType::Ok, F::Acquire, Some(&h));
            g.emit(ok);
            max_done = max_done.max(h.token);
            early = Some(h);
            g.emit(rel);
            let mut done = g.op(w, OpType::Fail, F::Release, Some(&hold));
            done.result = Some(OpResult::ReleaseRejectedNotOwner);
            g.emit(done);
        } else if defect == Some(ReleaseOfLostLock) && k + 1 == at {
            // The holder notices its lease is gone and does not release (yet).
            let lost = g.op(w, OpType::Info, F::LeaseLost, Some(&hold));
            g.emit(lost);
        } else {
            g.emit(rel);
            let mut done = g.op(w, OpType::Ok, F::Release, Some(&hold));
            done.result = Some(OpResult::Released);
            g.emit(done);
        }
        if shape.all_wait && workers > 1 {
            reinvoke = Some(w); // after the next holder's grant (and any planted release)
        }
        prev = Some(hold);
        w = next;
    }
    if defect == Some(ConcurrentHolders) {
        return Some(at);
    }
    planted_at
}

/// A worker other than `w` (or `w` itself when it is the only one).
fn other(rng: &mut Rng, w: u32, workers: u32) -> u32 {
    if workers <= 1 {
        return w;
    }
    let x = 1 + rng.below(u64::from(workers - 1)) as u32;
    if x >= w {
        x + 1
    } else {
        x
    }
}
