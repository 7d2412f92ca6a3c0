//! What happened to the actors, in the order it happened, from the first actor's grant up to
//! the moment the anomaly became true: each actor's grant; its writes as the resource decided
//! them (the resource log, not the worker's view, and at the resource's time); its releases
//! and their answers; the faults on its worker; and the faults on the lock service. Anything
//! another worker did is left out: the scenario keeps only the acquisitions the evidence names.
//! A fault in that window that no replay step can express is a [`Refusal`] naming it. A fault
//! that carries a size (a stall's length, replies' delay, a client clock's move) keeps it as the
//! argument its replay step takes (docs/reproduce.md).

use super::actors::Actor;
use super::{Refusal, Stored};
use crate::replay::scenario::ClientClock;
use results::fault::{scope_of, FaultKind, ReplayForm, Scope};
use results::nemesis_event::targets;
use results::{Anomaly, Dur, OpResult, OpType, Process, F};
use serde_json::Value;

/// One thing that happened, to actor `actor` (an index into the cast) or to the service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Happened {
    Granted {
        actor: usize,
    },
    /// The resource decided a write of the actor's (`seq` of the resource log).
    Wrote {
        actor: usize,
        value: String,
        /// The resource's answer (`accepted`, `rejected-stale-fence` ...).
        result: String,
        key: String,
        token: Option<u64>,
    },
    /// A release completed; `answer` when the client was told something definite.
    Released {
        actor: usize,
        answer: Option<OpResult>,
    },
    /// A fault on the actor's worker began (`start`) or ended; `arg` is its replay step's
    /// argument (700 ms of held-back replies, a client clock 10 s back or 3x fast).
    WorkerFault {
        actor: usize,
        fault: FaultKind,
        start: bool,
        arg: Option<Arg>,
    },
    /// A fault of the lock service on these nodes began or ended; `arg` is a stall's length.
    ServiceFault {
        fault: FaultKind,
        nodes: Vec<String>,
        start: bool,
        arg: Option<Arg>,
    },
}

/// The size of a fault, as its replay step takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// How long it lasts or holds back (a stall, held-back replies).
    Length(Dur),
    /// How long after its operation was sent it struck.
    After(Dur),
    /// Where it moved a client's clock.
    Clock(ClientClock),
}

/// One entry of the timeline: when (ns since the run's start), where in the run it is recorded
/// (`index N` of the history, `seq N` of the resource log), and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub time: u64,
    pub place: String,
    pub what: Happened,
}

/// The timeline of `anomaly` over `cast`, in time order.
pub fn of(stored: &Stored, anomaly: &Anomaly, cast: &[Actor]) -> Result<Vec<Entry>, Refusal> {
    let until = super::until(anomaly);
    let from = cast.iter().map(|a| a.granted.1).min().unwrap_or(0);
    let mut out = Vec::new();
    for (i, a) in cast.iter().enumerate() {
        out.push(Entry {
            time: a.granted.1,
            place: format!("index {}", a.granted.0),
            what: Happened::Granted { actor: i },
        });
    }
    for r in &stored.resource {
        let Some(actor) = cast.iter().position(|a| a.lease == r.lease) else {
            continue;
        };
        if r.time < cast[actor].granted.1 || r.time > until {
            continue;
        }
        out.push(Entry {
            time: r.time,
            place: format!("seq {}", r.seq),
            what: Happened::Wrote {
                actor,
                value: value_word(&r.value, r.seq),
                result: r.result.as_str().to_string(),
                key: r.key.clone(),
                token: r.token,
            },
        });
    }
    for e in &stored.history {
        if e.time < from || e.time > until {
            continue;
        }
        match (&e.process, &e.f) {
            (Process::Worker(p), F::Release) if e.is_completion() => {
                let Some(actor) = cast
                    .iter()
                    .position(|a| a.process == *p && e.lease.as_deref() == Some(&a.lease))
                else {
                    continue;
                };
                let answer = match e.kind {
                    OpType::Ok | OpType::Fail => e.result,
                    _ => None,
                };
                out.push(Entry {
                    time: e.time,
                    place: format!("index {}", e.index),
                    what: Happened::Released { actor, answer },
                });
            }
            // A start that struck nothing (skipped, or a freeze aimed again) is no step.
            (Process::Nemesis, F::Start(_)) if e.error.is_some() => {}
            (Process::Nemesis, F::Start(name) | F::Stop(name)) => {
                let start = matches!(e.f, F::Start(_));
                let value = e.value.as_ref();
                if let Some(what) = fault(e.time, name, start, value, cast).map_err(|why| {
                    Refusal::new(format!(
                        "the anomaly followed {name} (history index {}, {:.3}s), and {why}",
                        e.index,
                        e.time as f64 / 1e9
                    ))
                })? {
                    out.push(Entry {
                        time: e.time,
                        place: format!("index {}", e.index),
                        what,
                    });
                }
            }
            _ => {}
        }
    }
    // Same time: the order of the run's files (grants first, as they were pushed first).
    out.sort_by_key(|x| x.time);
    Ok(out)
}

/// A fault event as the timeline keeps it; `Ok(None)` for one that touched no actor.
fn fault(
    time: u64,
    name: &str,
    start: bool,
    value: Option<&Value>,
    cast: &[Actor],
) -> Result<Option<Happened>, String> {
    let targets = targets(value);
    let known = name.parse::<FaultKind>().ok();
    let form = known.map_or(ReplayForm::None, FaultKind::replay_form);
    match scope_of(name, &targets, |t| cast.iter().any(|a| a.owner == t)) {
        Scope::Workers => {
            // The actor the target worker was at that moment: its latest grant before.
            let actor = cast
                .iter()
                .enumerate()
                .filter(|(_, a)| a.granted.1 <= time && targets.iter().any(|t| *t == a.owner))
                .max_by_key(|(_, a)| a.granted.1)
                .map(|(i, _)| i);
            let Some(actor) = actor else {
                return Ok(None);
            };
            match (known, form) {
                (Some(f), ReplayForm::Worker) => Ok(Some(Happened::WorkerFault {
                    actor,
                    fault: f,
                    start,
                    arg: if start { step_arg(f, value)? } else { None },
                })),
                (Some(f), ReplayForm::InFlight) => Err(in_flight(f, value)),
                (Some(FaultKind::HangWork), _) => Err(
                    "hang-work needs no step of its own: a scenario's actor is sent nothing \
                     between its steps, so write the hang as `- wait: <length>` between the \
                     holder's grant and its next step (its lock client renews on meanwhile)"
                        .to_string(),
                ),
                _ => Err(
                    "a replay step cannot express it yet: a scenario pauses, resumes, \
                          kills, isolates, starves and heals a worker, holds its replies back \
                          or cuts the next one, and moves its client's clock \
                          (docs/reproduce.md, \"What a replay cannot express\")"
                        .to_string(),
                ),
            }
        }
        Scope::Resource => Err(
            "a replay step cannot cut the resource off (docs/reproduce.md, \"What a replay \
             cannot express\")"
                .to_string(),
        ),
        Scope::LockService => match (known, form) {
            (Some(f), ReplayForm::Service) => Ok(Some(Happened::ServiceFault {
                fault: f,
                nodes: targets.iter().map(|t| t.to_string()).collect(),
                start,
                arg: if start { step_arg(f, value)? } else { None },
            })),
            _ => Err(
                "a replay step cannot express that fault of the lock service yet: a \
                      scenario pauses and resumes a node, starves it, kills it with its data \
                      emptied and starts it again, stalls the service or its leader, cuts a \
                      Redis master from its replicas and jumps clocks by a given amount \
                      (docs/reproduce.md, \"What a replay cannot express\")"
                    .to_string(),
            ),
        },
    }
}

/// The argument of a sized fault's replay step, read from its start line's value: a stall's
/// `length_ms`, the held-back replies' `links.delay_ms`, a client clock's `clock` setting.
fn step_arg(fault: FaultKind, value: Option<&Value>) -> Result<Option<Arg>, String> {
    let field = |path: &[&str]| {
        path.iter()
            .try_fold(value?, |v, k| v.get(*k))
            .and_then(Value::as_f64)
    };
    let millis = |ms: f64| Dur::from_millis(ms.round().max(0.0) as u64);
    let arg = match fault {
        FaultKind::StallService | FaultKind::StallLeader => {
            field(&["length_ms"]).map(|ms| Arg::Length(millis(ms)))
        }
        FaultKind::SlowReply => field(&["links", "delay_ms"]).map(|ms| Arg::Length(millis(ms))),
        FaultKind::ClientClockJump => field(&["clock", "ahead", "secs"]).map(|s| {
            Arg::Clock(ClientClock::Jump {
                millis: (s * 1000.0).round() as i64,
            })
        }),
        FaultKind::ClientClockSkew => field(&["clock", "fast", "factor"]).map(|f| {
            Arg::Clock(ClientClock::Skew {
                per_mille: (f * 1000.0).round().max(1.0) as u32,
            })
        }),
        // Struck as soon as the release was seen in flight: at once, unless a delay is named.
        FaultKind::PauseReleasing | FaultKind::IsolateReleasing | FaultKind::CutReleaseReply => {
            return Ok(field(&["delay_ms"]).map(|ms| Arg::After(millis(ms))))
        }
        _ => return Ok(None),
    };
    arg.map(Some).ok_or_else(|| {
        "its start line does not say how much (a run older than the field?)".to_string()
    })
}

/// Why a fault on an acquire in flight is not translated yet, with the step to write by hand.
fn in_flight(fault: FaultKind, value: Option<&Value>) -> String {
    let after = value
        .and_then(|v| v.get("delay_ms"))
        .and_then(Value::as_u64)
        .map_or(String::new(), |ms| format!(" after {ms}ms"));
    format!(
        "it struck an acquire in flight, which reproduce does not yet fold into that acquire's \
         step: write the scenario by hand with the step `{fault}{after}` in place of the \
         acquire (docs/reproduce.md, \"What a replay cannot express\")"
    )
}

/// A written value as one scenario word: the run's own value when it is a plain word (`3-4`,
/// the worker's op id), else `v<seq>`.
fn value_word(value: &serde_json::Value, seq: u64) -> String {
    match value.as_str() {
        Some(s)
            if !s.is_empty()
                && s.len() <= 40
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) =>
        {
            s.to_string()
        }
        _ => format!("v{seq}"),
    }
}
