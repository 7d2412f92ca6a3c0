//! Side by side with porcupine-rs (a Rust port of the Porcupine linearizability checker) on the
//! same acquire/release histories: valid ones and ones with one planted defect of each kind a
//! fenced-mutex model can express. Both must reach the same valid/invalid decision on every
//! history; the ratio of times is printed.
//!
//! ```text
//! cargo bench -p checkers --bench vs_porcupine -- [events per history, default 100000]
//! ```
//! The model: state = (owner, last token). Acquire is legal only when the lock is free and the
//! token is higher than the last; a `released` release only by the owner; a release rejected as
//! not-owner only when the releaser is not the owner. fencecheck runs with `fail_on` = the kinds
//! that model expresses (concurrent-holders, double-release, duplicate-token, token-regression).

use checkers::synth::{generate, Shape};
use checkers::{CheckConfig, Engine};
use nix::time::{clock_gettime, ClockId};
use porcupine_rs::{check_operations_timeout, CheckResult, Model, Operation};
use results::{AnomalyKind, Event, OpResult, OpType, Process, Validity, F};
use std::collections::HashMap;
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
struct FencedMutex;

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct State {
    owner: Option<u32>,
    last: u64,
}

#[derive(Clone, Debug)]
enum LockOp {
    Acquire { client: u32, token: u64 },
    Release { client: u32, released: bool },
}

impl Model for FencedMutex {
    type State = State;
    type Op = LockOp;
    type Metadata = ();

    fn init() -> State {
        State {
            owner: None,
            last: 0,
        }
    }

    fn step(s: &State, op: &LockOp) -> (bool, State) {
        match *op {
            LockOp::Acquire { client, token } if s.owner.is_none() && token > s.last => (
                true,
                State {
                    owner: Some(client),
                    last: token,
                },
            ),
            LockOp::Release {
                client,
                released: true,
            } if s.owner == Some(client) => (
                true,
                State {
                    owner: None,
                    last: s.last,
                },
            ),
            LockOp::Release {
                client,
                released: false,
            } if s.owner != Some(client) => (true, s.clone()),
            _ => (false, s.clone()),
        }
    }
}

/// Pairs invokes with completions; failed acquires certainly did not happen and are dropped.
fn operations(history: &[Event]) -> Vec<Operation<FencedMutex>> {
    let mut pending: HashMap<u32, i64> = HashMap::new();
    let mut ops = Vec::new();
    for e in history {
        let Process::Worker(p) = e.process else {
            continue;
        };
        let t = e.time as i64;
        let op = match (&e.f, e.kind) {
            (F::Acquire | F::Release, OpType::Invoke) => {
                pending.insert(p, t);
                continue;
            }
            (F::Acquire, OpType::Ok) => LockOp::Acquire {
                client: p,
                token: e.token.unwrap_or(0),
            },
            (F::Release, OpType::Ok) => LockOp::Release {
                client: p,
                released: true,
            },
            (F::Release, OpType::Fail) if e.result == Some(OpResult::ReleaseRejectedNotOwner) => {
                LockOp::Release {
                    client: p,
                    released: false,
                }
            }
            _ => {
                pending.remove(&p);
                continue;
            }
        };
        let call = pending.remove(&p).unwrap_or(t);
        ops.push(Operation {
            client_id: Some(p),
            call_time: call,
            return_time: t,
            op,
            metadata: None,
        });
    }
    ops
}

fn process_cpu() -> Duration {
    clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID)
        .map(Duration::from)
        .unwrap_or_default()
}

fn main() {
    let events: usize = std::env::args()
        .skip(1)
        .find(|a| a != "--bench")
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    let cfg = CheckConfig {
        fail_on: vec![
            AnomalyKind::ConcurrentHolders,
            AnomalyKind::DoubleRelease,
            AnomalyKind::DuplicateToken,
            AnomalyKind::TokenRegression,
        ],
        ..CheckConfig::default()
    };
    let serial = Shape {
        workers: 5,
        holds: events * 10 / 47, // about 4.7 events per hold without writes or counter
        writes_per_hold: 0,
        tokens: true,
        counter: false,
        contended: true,
        all_wait: false,
    };
    // Every worker not holding is blocked in acquire: five overlapping acquires at all times.
    let all_wait = Shape {
        workers: 5,
        holds: events / 4,
        all_wait: true,
        ..serial
    };
    let mut cases: Vec<(String, Shape, u64, Option<AnomalyKind>)> = Vec::new();
    for (label, shape) in [("1 waiter", serial), ("all wait", all_wait)] {
        for seed in 1..=3 {
            cases.push((format!("{label}: valid (seed {seed})"), shape, seed, None));
        }
        for kind in &cfg.fail_on {
            for seed in 1..=2 {
                cases.push((
                    format!("{label}: {kind} ({seed})"),
                    shape,
                    seed,
                    Some(*kind),
                ));
            }
        }
    }
    println!(
        "{:<40} {:>7} {:>7} {:>10} {:>9} {:>11} {:>8}  same",
        "history", "events", "ours", "ours cpu", "porcupine", "porc. cpu", "ratio"
    );
    let (mut ours_total, mut theirs_total, mut all_agree) = (Duration::ZERO, Duration::ZERO, true);
    for (name, shape, seed, defect) in cases {
        let s = generate(seed, &shape, defect);
        assert_eq!(
            s.planted.is_some(),
            defect.is_some(),
            "{name}: defect not planted"
        );
        let c0 = process_cpu();
        let w0 = Instant::now();
        let mut engine = Engine::new(&cfg);
        for e in &s.history {
            engine.event(&e.as_ref());
        }
        let v = engine.finish();
        let (_ours_wall, ours_cpu) = (w0.elapsed(), process_cpu() - c0);
        let ops = operations(&s.history);
        let c0 = process_cpu();
        let w0 = Instant::now();
        let r = check_operations_timeout::<FencedMutex>(&ops, Duration::from_secs(300));
        let (_theirs_wall, theirs_cpu) = (w0.elapsed(), process_cpu() - c0);
        let ours = match v.valid {
            Validity::Valid => "valid",
            Validity::Invalid => "invalid",
            Validity::Unknown => "unknown",
        };
        let theirs = match r {
            CheckResult::Ok => "valid",
            CheckResult::Illegal => "invalid",
            CheckResult::Unknown => "timeout",
        };
        let same = ours == theirs;
        all_agree &= same;
        ours_total += ours_cpu;
        theirs_total += theirs_cpu;
        println!(
            "{:<40} {:>7} {:>7} {:>8.2}ms {:>9} {:>9.2}ms {:>7.1}x  {}",
            name,
            s.history.len(),
            ours,
            ours_cpu.as_secs_f64() * 1e3,
            theirs,
            theirs_cpu.as_secs_f64() * 1e3,
            theirs_cpu.as_secs_f64() / ours_cpu.as_secs_f64().max(1e-9),
            if same { "yes" } else { "NO" }
        );
    }
    println!(
        "total cpu: fencecheck {:.1} ms, porcupine-rs {:.1} ms, ratio {:.0}x; same decision on every history: {}",
        ours_total.as_secs_f64() * 1e3,
        theirs_total.as_secs_f64() * 1e3,
        theirs_total.as_secs_f64() / ours_total.as_secs_f64().max(1e-9),
        if all_agree { "yes" } else { "NO" }
    );
}
