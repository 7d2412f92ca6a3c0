//! What happened to the actors, in the order it happened, from the first actor's grant up to
//! the moment the anomaly became true: each actor's grant; its writes as the resource decided
//! them (the resource log, not the worker's view, and at the resource's time); its releases
//! and their answers; the faults on its worker; and the faults on the lock service. Anything
//! another worker did is left out: the scenario keeps only the acquisitions the evidence names.
//! A fault in that window that no replay step can express is a [`Refusal`] naming it.

use super::actors::Actor;
use super::{Refusal, Stored};
use results::fault::{scope_of, FaultKind, Scope};
use results::nemesis_event::targets;
use results::{Anomaly, OpResult, OpType, Process, F};

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
    /// A fault on the actor's worker began (`start`) or ended.
    WorkerFault {
        actor: usize,
        fault: FaultKind,
        start: bool,
    },
    /// A fault of the lock service on these nodes began or ended.
    ServiceFault {
        fault: FaultKind,
        nodes: Vec<String>,
        start: bool,
    },
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
            (Process::Nemesis, F::Start(name) | F::Stop(name)) => {
                let start = matches!(e.f, F::Start(_));
                if let Some(what) = fault(e.time, name, start, &targets(e.value.as_ref()), cast)
                    .map_err(|why| {
                        Refusal::new(format!(
                            "the anomaly followed {name} (history index {}, {:.3}s), and {why}",
                            e.index,
                            e.time as f64 / 1e9
                        ))
                    })?
                {
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
    targets: &[std::borrow::Cow<'_, str>],
    cast: &[Actor],
) -> Result<Option<Happened>, String> {
    match scope_of(name) {
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
            match name.parse::<FaultKind>() {
                Ok(
                    f @ (FaultKind::PauseHolder
                    | FaultKind::PauseWorker
                    | FaultKind::KillHolder
                    | FaultKind::KillWorker
                    | FaultKind::IsolateHolder
                    | FaultKind::IsolateWorker),
                ) => Ok(Some(Happened::WorkerFault {
                    actor,
                    fault: f,
                    start,
                })),
                _ => Err(
                    "a replay step cannot express it yet: a scenario pauses, resumes, \
                          kills, isolates and heals a worker (docs/reproduce.md, \"What a \
                          replay cannot express\")"
                        .to_string(),
                ),
            }
        }
        Scope::Resource => Err(
            "a replay step cannot cut the resource off (docs/reproduce.md, \"What a replay \
             cannot express\")"
                .to_string(),
        ),
        Scope::LockService => match name.parse::<FaultKind>() {
            Ok(f @ (FaultKind::PauseNode | FaultKind::PauseLeader)) => {
                Ok(Some(Happened::ServiceFault {
                    fault: f,
                    nodes: targets.iter().map(|t| t.to_string()).collect(),
                    start,
                }))
            }
            _ => Err(
                "a replay step cannot express that fault of the lock service yet: a \
                      scenario pauses and resumes a node, cuts a Redis master from its replicas \
                      and jumps clocks by a given amount (docs/reproduce.md, \"What a replay \
                      cannot express\")"
                    .to_string(),
            ),
        },
    }
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
