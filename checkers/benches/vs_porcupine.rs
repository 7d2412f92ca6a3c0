//! Side by side with porcupine-rs (a Rust port of the Porcupine linearizability checker) on the
//! same acquire/release histories: valid ones and ones with one planted defect of each kind a
//! fenced-mutex model can express. Both must reach the same valid/invalid decision on every
//! history; the ratio of times is printed.
//!
//! ```text
//! cargo bench -p checkers --bench vs_porcupine -- [events per history, default 100000] [ours]
//! ```
//! Each side gets its input ready before its clock starts (porcupine its operations, fencecheck
//! the history written as JSONL and parsed), and each side's time is a median CPU time:
//! porcupine-rs's of five runs; fencecheck's of ten, five before porcupine-rs runs on any history
//! and five after it ran on all of them, so that one slow or fast moment in fencecheck's short
//! phase weighs less (the ratio with each phase alone is printed too). The total with
//! fencecheck's parsing inside its clock (before porcupine-rs only) is printed as well.
//!
//! The model: state = (owner, last token). Acquire is legal only when the lock is free and the
//! token is higher than the last; a `released` release only by the owner; a release rejected as
//! not-owner only when the releaser is not the owner. fencecheck runs with `fail_on` = the kinds
//! that model expresses (concurrent-holders, double-release, duplicate-token, token-regression).

use checkers::synth::{generate, Shape};
use checkers::{CheckConfig, Engine};
use nix::time::{clock_gettime, ClockId};
use porcupine_rs::{check_operations_timeout, CheckResult, Model, Operation};
use results::{AnomalyKind, Event, EventRef, OpResult, OpType, Process, Validity, F};
use std::collections::HashMap;
use std::time::Duration;

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

/// Each side runs this many times per history and its median CPU time counts: one run of a
/// few milliseconds on a shared machine varies by half.
const RUNS: usize = 5;

/// Runs `check` `n` times: the last result and each run's CPU time.
fn timed<T>(n: usize, mut check: impl FnMut() -> T) -> (T, Vec<Duration>) {
    let mut times = Vec::with_capacity(n);
    let mut last = None;
    for _ in 0..n {
        let c0 = process_cpu();
        last = Some(check());
        times.push(process_cpu() - c0);
    }
    (last.expect("n > 0"), times)
}

/// The median of some run times (the upper one of an even count).
fn median(times: &[Duration]) -> Duration {
    let mut t = times.to_vec();
    t.sort();
    t[t.len() / 2]
}

/// fencecheck on one history given as JSONL: parsed before the clock starts, then checked
/// [`RUNS`] times.
fn time_ours(text: &str, cfg: &CheckConfig) -> (Validity, Vec<Duration>) {
    let parsed: Vec<EventRef<'_>> = text
        .lines()
        .map(|l| EventRef::parse(l).expect("a generated line parses"))
        .collect();
    let (v, times) = timed(RUNS, || {
        let mut engine = Engine::new(cfg);
        // As `fencecheck check` says of a run without service.jsonl, before its history.
        engine.service_log_missing("no service.jsonl".into());
        for e in &parsed {
            engine.event(e);
        }
        engine.finish()
    });
    (v.valid, times)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let events: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(100_000);
    // `ours`: fencecheck only (quick figures while tuning, and a target for perf record).
    let ours_only = args.iter().any(|a| a == "ours");
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
    // Phases: fencecheck on every history, porcupine-rs on every history, fencecheck again. Run
    // back to back on one history, the page faults and frees of porcupine's search (seconds of
    // system time) slowed the next few-millisecond fencecheck runs by up to half, at random.
    struct Row {
        name: String,
        events: usize,
        text: String,
        ours: Validity,
        ours_runs: Vec<Duration>,
        ops: Vec<Operation<FencedMutex>>,
    }
    let mut rows = Vec::new();
    let mut ours_parse_total = Duration::ZERO;
    for (name, shape, seed, defect) in cases {
        let s = generate(seed, &shape, defect);
        assert_eq!(
            s.planted.is_some(),
            defect.is_some(),
            "{name}: defect not planted"
        );
        // Each side gets its input ready before its clock starts: porcupine its operations,
        // fencecheck the history as written to disk (JSONL) and parsed, borrowing that text.
        let text: String = s
            .history
            .iter()
            .map(|e| serde_json::to_string(e).expect("event") + "\n")
            .collect();
        let (ours, ours_runs) = time_ours(&text, &cfg);
        // The same check with the parse inside the clock, for the record.
        let (with_parse, parse_runs) = timed(RUNS, || {
            let mut engine = Engine::new(&cfg);
            // As `fencecheck check` says of a run without service.jsonl, before its history.
            engine.service_log_missing("no service.jsonl".into());
            for l in text.lines() {
                engine.event(&EventRef::parse(l).expect("a generated line parses"));
            }
            engine.finish()
        });
        ours_parse_total += median(&parse_runs);
        assert_eq!(with_parse.valid, ours, "{name}: parse changed the verdict");
        rows.push(Row {
            name,
            events: s.history.len(),
            text,
            ours,
            ours_runs,
            ops: operations(&s.history),
        });
    }
    let before: Duration = rows.iter().map(|r| median(&r.ours_runs)).sum();
    if ours_only {
        println!(
            "fencecheck only: {:.1} ms over {} histories (medians of {RUNS}); with parsing {:.1} ms",
            before.as_secs_f64() * 1e3,
            rows.len(),
            ours_parse_total.as_secs_f64() * 1e3
        );
        return;
    }
    let theirs: Vec<(CheckResult, Duration)> = rows
        .iter()
        .map(|row| {
            let (r, times) = timed(RUNS, || {
                check_operations_timeout::<FencedMutex>(&row.ops, Duration::from_secs(300))
            });
            (r, median(&times))
        })
        .collect();
    let mut after = Duration::ZERO;
    for row in &mut rows {
        let (again, runs) = time_ours(&row.text, &cfg);
        assert_eq!(
            again, row.ours,
            "{}: a second check changed the verdict",
            row.name
        );
        after += median(&runs);
        row.ours_runs.extend(runs);
    }
    println!(
        "{:<40} {:>7} {:>7} {:>10} {:>9} {:>11} {:>8}  same",
        "history", "events", "ours", "ours cpu", "porcupine", "porc. cpu", "ratio"
    );
    let (mut ours_total, mut theirs_total, mut all_agree) = (Duration::ZERO, Duration::ZERO, true);
    for (row, (r, theirs_cpu)) in rows.iter().zip(theirs) {
        let ours_cpu = median(&row.ours_runs);
        let ours = match row.ours {
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
            row.name,
            row.events,
            ours,
            ours_cpu.as_secs_f64() * 1e3,
            theirs,
            theirs_cpu.as_secs_f64() * 1e3,
            theirs_cpu.as_secs_f64() / ours_cpu.as_secs_f64().max(1e-9),
            if same { "yes" } else { "NO" }
        );
    }
    println!(
        "fencecheck before and after porcupine-rs: {:.1} ms and {:.1} ms (sums of medians of {RUNS}; ratio {:.0}x and {:.0}x); each history counts the median of all {} runs",
        before.as_secs_f64() * 1e3,
        after.as_secs_f64() * 1e3,
        theirs_total.as_secs_f64() / before.as_secs_f64().max(1e-9),
        theirs_total.as_secs_f64() / after.as_secs_f64().max(1e-9),
        2 * RUNS
    );
    println!(
        "total cpu: fencecheck {:.1} ms, porcupine-rs {:.1} ms, ratio {:.0}x; same decision on every history: {}",
        ours_total.as_secs_f64() * 1e3,
        theirs_total.as_secs_f64() * 1e3,
        theirs_total.as_secs_f64() / ours_total.as_secs_f64().max(1e-9),
        if all_agree { "yes" } else { "NO" }
    );
    println!(
        "with JSONL parsing inside fencecheck's clock (before porcupine-rs only): {:.1} ms, ratio {:.0}x",
        ours_parse_total.as_secs_f64() * 1e3,
        theirs_total.as_secs_f64() / ours_parse_total.as_secs_f64().max(1e-9),
    );
}
