//! A scripted incident: the scenario file of `fencecheck replay`, parsed and checked before any
//! container starts. A malformed scenario (unknown worker, a write before that worker ever
//! acquired, an unknown action or expectation) is rejected with its line number.
//!
//! ```yaml
//! name: stale-fence
//! providers: [etcd, zookeeper, redis]   # each runs with its default recipe unless `recipe:` names one
//! resource: strict
//! ttl: 2s
//! workers: [A, B]
//! steps:
//!   - A: acquire
//!   - A: pause
//!   - wait: lease-expired A
//!   - B: acquire
//!     expect: token > A.token
//!   - B: write v2
//!     expect: accepted
//!   - A: resume
//!   - A: write v1
//!     expect: rejected-stale-fence
//!   - A: release
//!     expect: release-rejected-not-owner
//! ```

use crate::config::Dur;
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::collections::BTreeMap;

/// What a worker step does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Acquire,
    Write(String),
    Release,
    Pause,
    Resume,
    Kill,
    /// Cut the worker off from the lock service (not from the resource).
    Isolate,
    Heal,
}

/// What the nemesis / the clock does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// Wait until the provider no longer lists this worker's lease (asked, not slept).
    LeaseExpired(String),
    /// Wait a fixed time (for a scenario that is about time itself).
    Sleep(Dur),
    /// Heal every fault the scenario applied: resume paused workers and nodes, remove cuts.
    Heal,
    /// SIGSTOP every process of a node of the lock service (`master` / `leader`: whoever leads
    /// when the step runs; or a short name such as `redis-1`, `etcd-2`).
    PauseNode(String),
    /// SIGCONT a node paused by `nemesis: pause <node>` (`master` / `leader`: the one paused).
    ResumeNode(String),
    /// Cut the Redis master off from its replicas (the sentinels still see both): whatever it
    /// acknowledges now is not replicated.
    CutReplication,
    /// Wait until the sentinels name a master other than the one at the step's start.
    Failover,
}

/// An expectation on a step's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    Result(results::OpResult),
    /// An acquire that took the lock (`ok`).
    Acquired,
    /// The step could not take the lock because someone holds it.
    LockHeld,
    /// `token > W.token` (or `>=`, `<`, `==`).
    Token {
        op: Cmp,
        other: String,
    },
    /// Some anomaly of this kind is in the final verdict.
    Anomaly(results::AnomalyKind),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Gt,
    Ge,
    Lt,
    Eq,
}

impl Cmp {
    pub fn holds(self, a: u64, b: u64) -> bool {
        match self {
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Lt => a < b,
            Cmp::Eq => a == b,
        }
    }
}

/// One validated step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Worker {
        worker: String,
        action: Action,
        expect: Option<Expect>,
        line: u32,
    },
    Control {
        control: Control,
        expect: Option<Expect>,
        line: u32,
    },
}

/// A validated scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub providers: Vec<String>,
    pub recipe: Option<String>,
    pub resource: String,
    pub ttl: Dur,
    pub workers: Vec<String>,
    pub steps: Vec<Step>,
    /// Anomalies the final check must report (e.g. the stuck-lock scenario).
    pub expect_anomalies: Vec<results::AnomalyKind>,
    /// `recovery_slack` of the run's check (stuck-lock's patience beyond the ttl).
    pub recovery_slack: Option<Dur>,
    /// How long one acquire waits for a held lock before it fails (default: the ttl).
    pub acquire_timeout: Option<Dur>,
    /// Where the workers renew: `background` (default) or `inline` (only before a write).
    pub renewal: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: String,
    #[serde(default)]
    providers: Vec<String>,
    provider: Option<String>,
    recipe: Option<String>,
    #[serde(default = "default_resource")]
    resource: String,
    ttl: Option<Dur>,
    workers: Vec<String>,
    steps: Vec<Spanned<BTreeMap<String, String>>>,
    #[serde(default)]
    expect_anomalies: Vec<String>,
    recovery_slack: Option<Dur>,
    acquire_timeout: Option<Dur>,
    renewal: Option<String>,
}

fn default_resource() -> String {
    "strict".into()
}

/// A scenario that cannot run, with the line it came from.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("line {line}: {message}")]
pub struct ScenarioError {
    pub line: u32,
    pub message: String,
}

fn at(line: u32, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        line,
        message: message.into(),
    }
}

/// Parses and validates a scenario file's text.
pub fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    let raw: RawScenario = serde_saphyr::from_str(text).map_err(|e| {
        // serde-saphyr's message carries its own line/column; keep it whole.
        at(0, e.to_string())
    })?;
    let mut providers = raw.providers;
    if let Some(p) = raw.provider {
        providers.push(p);
    }
    if providers.is_empty() {
        return Err(at(1, "the scenario names no provider: add `provider: etcd` or `providers: [etcd, zookeeper]`"));
    }
    if raw.workers.is_empty() {
        return Err(at(
            1,
            "the scenario names no workers: add `workers: [A, B]`",
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for w in &raw.workers {
        let ok = !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok || matches!(w.as_str(), "wait" | "nemesis" | "expect") {
            return Err(at(1, format!("worker name {w:?}: use letters, digits, - and _ (and not wait, nemesis, expect)")));
        }
        if !seen.insert(w.to_ascii_lowercase()) {
            return Err(at(
                1,
                format!("worker {w:?} is named twice (names are compared ignoring case)"),
            ));
        }
    }
    let expect_anomalies = raw
        .expect_anomalies
        .iter()
        .map(|k| {
            results::AnomalyKind::parse(k)
                .ok_or_else(|| at(1, format!("unknown anomaly kind {k:?} in expect_anomalies")))
        })
        .collect::<Result<_, _>>()?;

    let mut acquired: Vec<&str> = Vec::new();
    let mut steps = Vec::new();
    for spanned in &raw.steps {
        let line = spanned.referenced.line() as u32;
        let mut map = spanned.value.clone();
        let expect = match map.remove("expect") {
            Some(e) => Some(parse_expect(&e, &raw.workers, line)?),
            None => None,
        };
        if map.len() != 1 {
            return Err(at(line, "a step is one `<worker>: <action>`, `wait: ...` or `nemesis: ...`, optionally with `expect:`"));
        }
        let Some((who, what)) = map.into_iter().next() else {
            return Err(at(line, "empty step"));
        };
        if matches!(who.as_str(), "wait" | "nemesis")
            && expect
                .as_ref()
                .is_some_and(|e| !matches!(e, Expect::Anomaly(_)))
        {
            return Err(at(line, format!("a `{who}:` step has no outcome to expect; only an anomaly kind (e.g. `expect: stuck-lock`) may follow it")));
        }
        let step = match who.as_str() {
            "wait" => Step::Control {
                control: parse_wait(&what, &raw.workers, line)?,
                expect,
                line,
            },
            "nemesis" => Step::Control {
                control: parse_nemesis(&what, line)?,
                expect,
                line,
            },
            worker => {
                if !raw.workers.iter().any(|w| w == worker) {
                    return Err(at(
                        line,
                        format!(
                            "unknown worker {worker:?}; the scenario's workers are {}",
                            raw.workers.join(", ")
                        ),
                    ));
                }
                let action = parse_action(&what, line)?;
                match action {
                    Action::Acquire => acquired.push(
                        raw.workers
                            .iter()
                            .find(|w| *w == worker)
                            .map(|s| s.as_str())
                            .unwrap_or_default(),
                    ),
                    Action::Write(_) | Action::Release if !acquired.contains(&worker) => {
                        return Err(at(
                            line,
                            format!("worker {worker} cannot {what:?} before its first acquire"),
                        ));
                    }
                    _ => {}
                }
                if let (Some(Expect::Token { other, .. }), _) = (&expect, &action) {
                    if !acquired.contains(&other.as_str()) {
                        return Err(at(line, format!("the expectation compares with {other}.token but {other} has not acquired yet")));
                    }
                }
                Step::Worker {
                    worker: worker.to_string(),
                    action,
                    expect,
                    line,
                }
            }
        };
        steps.push(step);
    }
    Ok(Scenario {
        name: raw.name,
        providers,
        recipe: raw.recipe,
        resource: raw.resource,
        ttl: raw.ttl.unwrap_or(Dur::secs(2)),
        workers: raw.workers,
        steps,
        expect_anomalies,
        recovery_slack: raw.recovery_slack,
        acquire_timeout: raw.acquire_timeout,
        renewal: raw.renewal,
    })
}

fn parse_action(text: &str, line: u32) -> Result<Action, ScenarioError> {
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
        other => {
            return Err(at(line, format!("unknown action {other:?}; use acquire, write <value>, release, pause, resume, kill, isolate, heal")))
        }
    })
}

fn parse_nemesis(text: &str, line: u32) -> Result<Control, ScenarioError> {
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
        _ if t.starts_with("pause ") => Control::PauseNode(node(&t[6..])?),
        _ if t.starts_with("resume ") => Control::ResumeNode(node(&t[7..])?),
        other => return Err(at(line, format!("unknown nemesis action {other:?}; use heal, cut-replication, pause <node>, resume <node> (worker faults are worker steps: pause, resume, kill, isolate)"))),
    })
}

fn parse_wait(text: &str, workers: &[String], line: u32) -> Result<Control, ScenarioError> {
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

fn parse_expect(text: &str, workers: &[String], line: u32) -> Result<Expect, ScenarioError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    const STALE: &str = "name: stale-fence
providers: [etcd]
resource: strict
ttl: 2s
workers: [A, B]
steps:
  - A: acquire
  - A: pause
  - wait: lease-expired A
  - B: acquire
    expect: token > A.token
  - B: write v2
    expect: accepted
  - A: resume
  - A: write v1
    expect: rejected-stale-fence
  - A: release
    expect: release-rejected-not-owner
";

    #[test]
    fn parses_the_stale_fence_timeline() {
        let s = parse(STALE).unwrap();
        assert_eq!(s.workers, vec!["A", "B"]);
        assert_eq!(s.steps.len(), 8);
        assert_eq!(
            s.steps[3],
            Step::Worker {
                worker: "B".into(),
                action: Action::Acquire,
                expect: Some(Expect::Token {
                    op: Cmp::Gt,
                    other: "A".into()
                }),
                line: 10
            }
        );
        assert!(
            matches!(&s.steps[2], Step::Control { control: Control::LeaseExpired(w), .. } if w == "A")
        );
    }

    #[test]
    fn malformed_scenarios_name_their_line() {
        let unknown_worker = STALE.replace("  - B: write v2", "  - C: write v2");
        let e = parse(&unknown_worker).unwrap_err();
        assert_eq!(e.line, 12, "{e}");
        assert!(e.message.contains("unknown worker \"C\""), "{e}");

        let before_acquire = STALE.replace("  - A: acquire\n", "  - A: write v0\n");
        let e = parse(&before_acquire).unwrap_err();
        assert_eq!(e.line, 7, "{e}");
        assert!(e.message.contains("before its first acquire"), "{e}");

        let unknown_action = STALE.replace("  - A: pause", "  - A: nap");
        let e = parse(&unknown_action).unwrap_err();
        assert_eq!(e.line, 8);
        assert!(e.message.contains("unknown action \"nap\""), "{e}");

        let bad_expect = STALE.replace("expect: accepted", "expect: fine");
        assert!(parse(&bad_expect)
            .unwrap_err()
            .message
            .contains("unknown expectation"));
    }

    #[test]
    fn nemesis_and_wait_steps_for_failover_and_the_options_of_a_replay() {
        let text = "name: failover
provider: redis-sentinel
renewal: inline
acquire_timeout: 300ms
recovery_slack: 1s
workers: [A, B]
steps:
  - nemesis: cut-replication
  - A: acquire
    expect: acquired
  - nemesis: pause master
  - wait: failover
  - B: acquire
    expect: token == A.token
  - nemesis: resume redis-1
expect_anomalies: [duplicate-token]
";
        let s = parse(text).unwrap();
        assert_eq!(s.providers, vec!["redis-sentinel"]);
        assert_eq!(s.renewal.as_deref(), Some("inline"));
        assert_eq!(s.acquire_timeout, Some(Dur::from_millis(300)));
        assert_eq!(s.recovery_slack, Some(Dur::secs(1)));
        let controls: Vec<_> = s
            .steps
            .iter()
            .filter_map(|st| match st {
                Step::Control { control, .. } => Some(control.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            controls,
            vec![
                Control::CutReplication,
                Control::PauseNode("master".into()),
                Control::Failover,
                Control::ResumeNode("redis-1".into())
            ]
        );
        assert!(matches!(
            &s.steps[1],
            Step::Worker {
                expect: Some(Expect::Acquired),
                ..
            }
        ));

        let e = parse(&text.replace("pause master", "pause")).unwrap_err();
        assert_eq!(e.line, 11, "{e}");
        let e = parse(&text.replace(
            "  - wait: failover",
            "  - wait: failover\n    expect: accepted",
        ))
        .unwrap_err();
        assert_eq!(e.line, 12, "{e}");
        assert!(e.message.contains("only an anomaly kind"), "{e}");
        let e = parse(&text.replace("workers: [A, B]", "workers: [A, a]")).unwrap_err();
        assert!(e.message.contains("named twice"), "{e}");
    }
}
