//! How one step of a scenario reads: a worker's action (`acquire`, `write v1`, `pause` ...), a
//! nemesis action (`pause leader`, `cut-replication`), a wait (`lease-expired A`, `200ms`) and an
//! expectation (`token > A.token`, `rejected-stale-fence`). Each error names the line.

use super::*;

pub(super) fn parse_action(text: &str, line: u32) -> Result<Action, ScenarioError> {
    let mut parts = text.trim().splitn(2, char::is_whitespace);
    let verb = parts.next().unwrap_or_default();
    let arg = parts.next().map(str::trim).unwrap_or_default();
    Ok(match verb {
        "acquire" => Action::Acquire,
        "write" if !arg.is_empty() => Action::Write(arg.to_string()),
        "write" => return Err(at(line, "write needs a value: `write v1`")),
        "release" => Action::Release,
        "pause" => Action::Pause,
        "resume" => Action::Resume,
        "kill" => Action::Kill,
        "isolate" => Action::Isolate,
        "heal" => Action::Heal,
        "begin" => {
            let inner = parse_action(arg, line)?;
            if !matches!(inner, Action::Acquire | Action::Write(_) | Action::Release) {
                return Err(at(line, format!("begin {arg:?}: only an operation can be begun: `begin acquire`, `begin write <value>`, `begin release`")));
            }
            Action::Begin(Box::new(inner))
        }
        "pause-acquiring" => Action::PauseAcquiring(after(verb, arg, line)?),
        "pause-releasing" => Action::PauseReleasing(after(verb, arg, line)?),
        "kill-acquiring" => Action::KillAcquiring(after(verb, arg, line)?),
        "isolate-releasing" => Action::IsolateReleasing(after(verb, arg, line)?),
        "pause-waiter" => Action::PauseWaiter(after(verb, arg, line)?),
        "slow-reply" if arg.is_empty() => Action::SlowReply(None),
        "slow-reply" => Action::SlowReply(Some(length(verb, arg, line)?)),
        "client-clock-jump" => Action::ClientClock(clock_jump_by(arg, line)?),
        "client-clock-skew" => Action::ClientClock(clock_skew_by(arg, line)?),
        "cut-acquire-reply" => Action::CutAcquireReply(after(verb, arg, line)?),
        "cut-release-reply" => Action::CutReleaseReply(after(verb, arg, line)?),
        "cut-renew-reply" if arg.is_empty() => Action::CutRenewReply,
        "starve" if arg.is_empty() => Action::Starve,
        "cut-renew-reply" | "starve" => {
            return Err(at(line, format!("{verb} takes nothing after it (it lasts until the worker's `heal`), not {arg:?}")))
        }
        other => {
            return Err(at(line, format!("unknown action {other:?}; use acquire, write <value>, release, pause, resume, kill, isolate, heal, pause-acquiring / kill-acquiring / pause-waiter / pause-releasing / isolate-releasing / cut-acquire-reply / cut-release-reply [after <duration>], cut-renew-reply, starve, slow-reply [<duration>], client-clock-jump <±duration>, client-clock-skew <factor>x, or begin <operation>")))
        }
    })
}

/// `after 5ms` (or nothing: at once): how long after its request a worker is struck.
fn after(verb: &str, arg: &str, line: u32) -> Result<Dur, ScenarioError> {
    if arg.is_empty() {
        return Ok(Dur::from_millis(0));
    }
    arg.strip_prefix("after")
        .and_then(|d| d.trim().parse().ok())
        .ok_or_else(|| at(line, format!("{arg:?}: write e.g. `{verb} after 5ms`")))
}

/// `2s`: how long a worker step's fault holds something back; never zero.
fn length(verb: &str, arg: &str, line: u32) -> Result<Dur, ScenarioError> {
    match arg.parse::<Dur>() {
        Ok(d) if !d.get().is_zero() => Ok(d),
        _ => Err(at(
            line,
            format!("{verb} {arg:?}: write a length such as `{verb} 2s` (or none: twice the client's operation timeout)"),
        )),
    }
}

/// `10s`, `+10s` (forward) or `-10s` (backward): how far the worker's wall clock jumps.
fn clock_jump_by(arg: &str, line: u32) -> Result<ClientClock, ScenarioError> {
    let (sign, d) = match arg.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, arg.strip_prefix('+').unwrap_or(arg)),
    };
    match d.trim().parse::<Dur>() {
        Ok(d) if !d.get().is_zero() => Ok(ClientClock::Jump {
            millis: sign * d.get().as_millis() as i64,
        }),
        _ => Err(at(
            line,
            format!("client-clock-jump {arg:?}: write how far, e.g. `client-clock-jump 10s` or `client-clock-jump -10s` (backward)"),
        )),
    }
}

/// `3x` (three times as fast) or `0.333x` (a third of the speed): a positive factor other
/// than 1, to the thousandth.
fn clock_skew_by(arg: &str, line: u32) -> Result<ClientClock, ScenarioError> {
    let factor = arg
        .strip_suffix('x')
        .and_then(|f| f.trim().parse::<f64>().ok());
    let per_mille = factor.map(|f| (f * 1000.0).round());
    match per_mille {
        Some(p) if p >= 1.0 && p != 1000.0 && p <= f64::from(u32::MAX) => Ok(ClientClock::Skew {
            per_mille: p as u32,
        }),
        _ => Err(at(
            line,
            format!("client-clock-skew {arg:?}: write a speed other than 1x, e.g. `client-clock-skew 3x` (fast) or `client-clock-skew 0.333x` (slow)"),
        )),
    }
}

pub(super) fn parse_nemesis(text: &str, line: u32) -> Result<Control, ScenarioError> {
    let t = text.trim();
    let node = |rest: &str| {
        let n = rest.trim();
        if n.is_empty() {
            Err(at(
                line,
                format!("{t:?} needs a node: `master`, `leader` or a short name such as redis-1"),
            ))
        } else {
            Ok(n.to_string())
        }
    };
    Ok(match t {
        "heal" => Control::Heal,
        "cut-replication" => Control::CutReplication,
        "clock-real" => Control::ClockReal,
        _ if t.starts_with("clock-jump ") => clock_jump(&t[11..], line)?,
        _ if t.starts_with("stall-service ") => stall(false, &t[14..], line)?,
        _ if t.starts_with("stall-leader ") => stall(true, &t[13..], line)?,
        _ if t.starts_with("pause ") => Control::PauseNode(node(&t[6..])?),
        _ if t.starts_with("resume ") => Control::ResumeNode(node(&t[7..])?),
        _ if t.starts_with("starve ") => Control::StarveNode(node(&t[7..])?),
        _ if t.starts_with("unstarve ") => Control::UnstarveNode(node(&t[9..])?),
        _ if t.starts_with("restart-empty ") => Control::RestartEmpty(node(&t[14..])?),
        _ if t.starts_with("restart ") => Control::Restart(node(&t[8..])?),
        other => return Err(at(line, format!("unknown nemesis action {other:?}; use heal, cut-replication, pause <node>, resume <node>, starve <node>, unstarve <node>, restart-empty <node>, restart <node>, clock-jump <duration> on <node>,<node>..., clock-real, stall-service <duration>, stall-leader <duration> (worker faults are worker steps: pause, resume, kill, isolate)"))),
    })
}

/// `700ms`: how long a stall lasts.
fn stall(leader: bool, rest: &str, line: u32) -> Result<Control, ScenarioError> {
    let length: Dur = rest.trim().parse().map_err(|_| {
        at(
            line,
            format!("stall {rest:?}: write e.g. `stall-service 700ms` (shorter than the ttl)"),
        )
    })?;
    if length.get().is_zero() {
        return Err(at(
            line,
            "a stall of 0s does nothing: give it a length such as 700ms",
        ));
    }
    Ok(Control::Stall { leader, length })
}

/// `10s on redis-1,redis-2,redis-3`.
fn clock_jump(rest: &str, line: u32) -> Result<Control, ScenarioError> {
    let bad = || {
        at(
            line,
            format!("clock-jump {rest:?}: write `clock-jump 10s on redis-1,redis-2,redis-3`"),
        )
    };
    let (ahead, nodes) = rest.split_once(" on ").ok_or_else(bad)?;
    let ahead: crate::config::Dur = ahead.trim().parse().map_err(|_| bad())?;
    let nodes: Vec<String> = nodes
        .split(',')
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect();
    if nodes.is_empty() {
        return Err(bad());
    }
    Ok(Control::ClockJump { ahead, nodes })
}

pub(super) fn parse_wait(
    text: &str,
    workers: &[String],
    line: u32,
) -> Result<Control, ScenarioError> {
    let t = text.trim();
    if t == "failover" {
        return Ok(Control::Failover);
    }
    if let Some(w) = t.strip_prefix("lease-expired") {
        let w = w.trim();
        if !workers.iter().any(|x| x == w) {
            return Err(at(
                line,
                format!("wait lease-expired names unknown worker {w:?}"),
            ));
        }
        return Ok(Control::LeaseExpired(w.to_string()));
    }
    Dur::parse(t).map(Control::Sleep).map_err(|_| {
        at(
            line,
            format!("unknown wait {t:?}; use `lease-expired <worker>`, `failover` or a duration such as 3s"),
        )
    })
}

pub(super) fn parse_expect(
    text: &str,
    workers: &[String],
    line: u32,
) -> Result<Expect, ScenarioError> {
    let t = text.trim();
    if t == "lock-held" {
        return Ok(Expect::LockHeld);
    }
    if t == "acquired" {
        return Ok(Expect::Acquired);
    }
    if let Some(rest) = t.strip_prefix("token") {
        let rest = rest.trim();
        let (op, other) = [
            (">=", Cmp::Ge),
            ("==", Cmp::Eq),
            (">", Cmp::Gt),
            ("<", Cmp::Lt),
        ]
        .into_iter()
        .find_map(|(s, op)| rest.strip_prefix(s).map(|o| (op, o.trim())))
        .ok_or_else(|| {
            at(
                line,
                format!("cannot read token relation {t:?}; write e.g. `token > A.token`"),
            )
        })?;
        let other = other
            .strip_suffix(".token")
            .filter(|w| workers.iter().any(|x| x == w))
            .ok_or_else(|| {
                at(
                    line,
                    format!("{t:?} must compare with `<worker>.token` of a known worker"),
                )
            })?;
        return Ok(Expect::Token {
            op,
            other: other.to_string(),
        });
    }
    if let Some(kind) = results::AnomalyKind::parse(t) {
        return Ok(Expect::Anomaly(kind));
    }
    let result: results::OpResult = serde_json::from_value(serde_json::Value::String(t.to_string()))
        .map_err(|_| at(line, format!("unknown expectation {t:?}; use acquired, accepted, rejected-stale-fence, rejected-duplicate, released, release-rejected-not-owner, lock-held or `token > <worker>.token`")))?;
    Ok(Expect::Result(result))
}
