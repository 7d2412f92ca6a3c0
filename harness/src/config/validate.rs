//! Raw test → validated [`TestPlan`]. Every rule lives here and every rejection says which
//! field broke which rule and what to write instead; nothing downstream re-checks.

use super::duration::Dur;
use super::plan::*;
use super::raw::RawTest;
use results::AnomalyKind;

/// A rejected test description.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// The YAML key / flag at fault.
    pub field: String,
    pub message: String,
}

fn err(field: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        field: field.to_string(),
        message: message.into(),
    }
}

/// The image tag of the node image this build of fencecheck expects.
pub fn default_image() -> String {
    crate::image::node_image_tag()
}

/// Whether a resource decides writes by their fence token (every resource but `none`).
fn needs_token(resource: &str) -> bool {
    resource != "none"
}

/// Validates a raw test (file overlaid with flags) into a plan. `random_seed` is used when the
/// test names no seed (the caller draws it, so validation itself stays deterministic).
pub fn validate(raw: RawTest, random_seed: u64) -> Result<TestPlan, ConfigError> {
    // Provider and recipe: either may imply the other; both given must agree.
    let provider = match raw.provider.as_deref() {
        Some(p) => Some(Provider::parse(p).ok_or_else(|| {
            err(
                "provider",
                format!("unknown provider {p:?}; use one of {}", Provider::NAMES),
            )
        })?),
        None => None,
    };
    let (recipe, provider) = match (raw.recipe.as_deref(), provider) {
        (Some(r), p) => {
            let (name, rp) = RECIPES.iter().find(|(n, _)| *n == r).ok_or_else(|| {
                let names: Vec<_> = RECIPES.iter().map(|(n, _)| *n).collect();
                err(
                    "recipe",
                    format!("unknown recipe {r:?}; use one of {}", names.join(", ")),
                )
            })?;
            if let Some(p) = p {
                if p != *rp {
                    return Err(err(
                        "recipe",
                        format!(
                            "recipe {r} runs on provider {}, not {}; drop --provider or pick a {} recipe",
                            rp.as_str(),
                            p.as_str(),
                            p.as_str()
                        ),
                    ));
                }
            }
            (name.to_string(), *rp)
        }
        (None, Some(p)) => (default_recipe(p).to_string(), p),
        (None, None) => ("etcd-lease".to_string(), Provider::Etcd),
    };

    let resource = raw.resource.unwrap_or_else(|| "strict".into());
    if !RESOURCES.contains(&resource.as_str()) {
        return Err(err(
            "resource",
            format!(
                "unknown resource {resource:?}; use one of {}",
                RESOURCES.join(", ")
            ),
        ));
    }

    if resource == "etcd-guard" && provider != Provider::Etcd {
        return Err(err(
            "resource",
            format!(
                "etcd-guard guards writes with the etcd lock key's revision, so it needs provider etcd, not {}",
                provider.as_str()
            ),
        ));
    }

    let workload = match raw.workload.as_deref().unwrap_or("fenced-write") {
        "fenced-write" => Workload::FencedWrite,
        "counter" => Workload::Counter,
        w => {
            return Err(err(
                "workload",
                format!("unknown workload {w:?}; use fenced-write or counter"),
            ))
        }
    };
    let counter_store =
        match (workload, raw.counter_store) {
            (Workload::Counter, None) if provider == Provider::Memory => Some("memory".to_string()),
            (Workload::Counter, None) => Some("redis".to_string()),
            (Workload::Counter, Some(s)) if provider == Provider::Memory && s != "memory" => {
                return Err(err(
                    "counter_store",
                    format!("the memory provider keeps its counter in-process: use memory, not {s:?}"),
                ))
            }
            (Workload::Counter, Some(s)) if s == "etcd-guard" && provider != Provider::Etcd => {
                return Err(err(
                    "counter_store",
                    format!(
                        "etcd-guard guards each increment with the etcd lock key's revision, so it needs provider etcd, not {}",
                        provider.as_str()
                    ),
                ))
            }
            (Workload::Counter, Some(s))
                if ["redis", "postgres", "etcd-guard", "memory"].contains(&s.as_str()) =>
            {
                Some(s)
            }
            (Workload::Counter, Some(s)) => {
                return Err(err(
                    "counter_store",
                    format!("unknown store {s:?}; use redis, postgres or etcd-guard (provider etcd)"),
                ))
            }
            (Workload::FencedWrite, Some(_)) => return Err(err(
                "counter_store",
                "only the counter workload has a counter store; add workload: counter or remove it",
            )),
            (Workload::FencedWrite, None) => None,
        };

    let workers = raw.workers.unwrap_or(5);
    if !(1..=64).contains(&workers) {
        return Err(err("workers", format!("{workers} workers: use 1 to 64")));
    }

    let ttl = raw.ttl.unwrap_or(Dur::secs(2));
    if ttl.get().is_zero() {
        return Err(err(
            "ttl",
            "ttl 0 means the lock is never held; use e.g. 2s",
        ));
    }
    if ttl.get().as_millis() < 100 {
        return Err(err(
            "ttl",
            format!("ttl {ttl} is below what any provider honours; use at least 100ms"),
        ));
    }
    let renew_interval = raw
        .renew_interval
        .unwrap_or(Dur::from_millis((ttl.get().as_millis() / 3) as u64));
    if renew_interval.get() * 2 >= ttl.get() || renew_interval.get().is_zero() {
        return Err(err(
            "renew_interval",
            format!(
                "renew interval {renew_interval} must be positive and under half the ttl ({ttl}); use at most {}",
                Dur::from_millis((ttl.get().as_millis() / 3) as u64)
            ),
        ));
    }
    let session_timeout = raw.session_timeout.unwrap_or(ttl);
    let default_op_timeout = Dur((ttl.get() / 2).min(std::time::Duration::from_secs(2)));
    let op_timeout = raw.op_timeout.unwrap_or(default_op_timeout);
    if op_timeout.get().is_zero() || op_timeout.get() >= ttl.get() {
        return Err(err(
            "op_timeout",
            format!(
                "operation timeout {op_timeout} must be positive and under the ttl ({ttl}): a request that may outlive its lease cannot be trusted; use e.g. {default_op_timeout}"
            ),
        ));
    }

    let acquire_timeout = raw.acquire_timeout;
    if acquire_timeout.is_some_and(|d| d.get().is_zero()) {
        return Err(err(
            "acquire_timeout",
            "an acquire timeout of 0 never waits for the lock; use e.g. 1s",
        ));
    }

    let discipline = match raw.discipline.as_deref().unwrap_or("continue") {
        "stop" => Discipline::Stop,
        "continue" => Discipline::Continue,
        d => {
            return Err(err(
                "discipline",
                format!("unknown discipline {d:?}; use stop or continue"),
            ))
        }
    };
    let renewal = match raw.renewal.as_deref().unwrap_or("background") {
        "background" => Renewal::Background,
        "inline" => Renewal::Inline,
        r => {
            return Err(err(
                "renewal",
                format!("unknown renewal {r:?}; use background or inline"),
            ))
        }
    };

    // The recipe's own rules (etcd leases are whole seconds, ...), checked here so that a worker
    // never refuses its flags after the containers started.
    let kind: workloads::config::RecipeKind = recipe
        .parse()
        .map_err(|e: workloads::config::ConfigError| err("recipe", e.to_string()))?;
    workloads::config::RawRecipeConfig {
        ttl: Some(ttl.get()),
        renew_interval: Some(renew_interval.get()),
        session_timeout: Some(session_timeout.get()),
        op_timeout: Some(op_timeout.get()),
        acquire_timeout: acquire_timeout.map(Dur::get),
    }
    .validate(kind)
    .map_err(|e| match e {
        workloads::config::ConfigError::Invalid { field, rule, got } => {
            err(field, format!("{rule} (got {got}) for recipe {recipe}"))
        }
    })?;
    // A resource that compares tokens refuses every write of a recipe that has none: such a run
    // would record refusals, not a test.
    if workload == Workload::FencedWrite && !kind.has_token() && needs_token(&resource) {
        let fitting: Vec<&str> = RESOURCES
            .iter()
            .copied()
            .filter(|r| !needs_token(r))
            .collect();
        return Err(err(
            "resource",
            format!(
                "recipe {recipe} hands out no fence token, and resource {resource} decides writes by \
                 their token: it would refuse every write. Use resource {} (stale writes are then \
                 judged by grant order), or a recipe with a token",
                fitting.join(" or ")
            ),
        ));
    }

    let time_limit = raw.time_limit.unwrap_or(Dur::secs(60));
    if time_limit.get().is_zero() {
        return Err(err(
            "time_limit",
            "a time limit of 0 runs nothing; use e.g. 60s",
        ));
    }
    let work = raw
        .work
        .unwrap_or(Dur::from_millis((ttl.get().as_millis() / 4) as u64));
    let writes_per_hold = raw.writes_per_hold.unwrap_or(1);
    if !(1..=100).contains(&writes_per_hold) {
        return Err(err("writes_per_hold", "use 1 to 100 writes per hold"));
    }
    let lock = raw.lock.unwrap_or_else(|| "fencecheck-lock".into());
    if lock.is_empty() || lock.contains(char::is_whitespace) {
        return Err(err(
            "lock",
            format!("lock name {lock:?} must be non-empty without spaces"),
        ));
    }

    let explicit_faults = raw
        .nemesis
        .as_ref()
        .is_some_and(|n| n.iter().any(|f| f != "none"));
    let nemesis = match raw.nemesis {
        None if provider == Provider::Memory => Vec::new(),
        None => vec!["pause-holder".to_string()],
        Some(list) => {
            let list: Vec<String> = list.into_iter().filter(|f| f != "none").collect();
            if provider == Provider::Memory && !list.is_empty() {
                return Err(err(
                    "nemesis",
                    "the memory provider runs in-process, where no fault can be applied; use none",
                ));
            }
            for f in &list {
                let kind: nemesis::FaultKind = f
                    .parse()
                    .map_err(|e: nemesis::UnknownFault| err("nemesis", format!("{e}, or none")))?;
                let caps = nemesis::Capabilities::for_system(provider.as_str())
                    .map_err(|e| err("provider", e.to_string()))?;
                if let Some(why) = kind.unsupported_because(&caps) {
                    return Err(err(
                        "nemesis",
                        format!(
                            "fault {f} does not apply to provider {}: {why}",
                            provider.as_str()
                        ),
                    ));
                }
            }
            list
        }
    };
    let time_limit_for_faults = raw.time_limit.unwrap_or(Dur::secs(60));
    let nemesis_timeline = match &raw.nemesis_timeline {
        None => None,
        Some(_) if provider == Provider::Memory => {
            return Err(err("nemesis_timeline", "the memory provider runs in-process, where no fault can be applied"))
        }
        Some(_) if explicit_faults => {
            return Err(err(
                "nemesis_timeline",
                "give either nemesis (faults drawn from the seed) or nemesis_timeline (an explicit schedule), not both",
            ))
        }
        Some(timeline) => {
            let ctx = nemesis::Context {
                system: provider.as_str().to_string(),
                ttl: ttl.get(),
                time_limit: Some(time_limit_for_faults.get()),
            };
            let plan = timeline.validate(&ctx).map_err(|e| err("nemesis_timeline", e.to_string()))?;
            Some(plan.lines())
        }
    };
    let nemesis = if nemesis_timeline.is_some() {
        Vec::new()
    } else {
        nemesis
    };
    let isolates_resource = nemesis.iter().any(|f| f == "isolate-resource")
        || nemesis_timeline
            .iter()
            .flatten()
            .any(|l| l.contains("isolate-resource"));
    if workload == Workload::Counter && isolates_resource {
        let field = if nemesis_timeline.is_some() {
            "nemesis_timeline"
        } else {
            "nemesis"
        };
        return Err(err(
            field,
            "isolate-resource needs the fenced resource, and the counter workload has none (it \
             writes to its counter store); use another fault",
        ));
    }
    let fault_duration = raw.fault_duration;
    if fault_duration.is_some_and(|d| d.get().is_zero()) {
        return Err(err(
            "fault_duration",
            "a fault of 0s does nothing; use e.g. 4s or remove it",
        ));
    }
    let nemesis_interval = raw.nemesis_interval.unwrap_or(Dur(ttl.get() * 2));
    if nemesis_interval.get().is_zero() {
        return Err(err(
            "nemesis_interval",
            "faults need quiet time between them; use e.g. 4s",
        ));
    }

    let fail_on = match raw.fail_on {
        None => AnomalyKind::default_fail_on(),
        Some(list) => list
            .iter()
            .map(|k| {
                AnomalyKind::parse(k).ok_or_else(|| {
                    let names: Vec<_> = AnomalyKind::ALL.iter().map(|k| k.as_str()).collect();
                    err(
                        "fail_on",
                        format!(
                            "unknown anomaly kind {k:?}; use any of {}",
                            names.join(", ")
                        ),
                    )
                })
            })
            .collect::<Result<_, _>>()?,
    };
    let recovery_slack = raw.recovery_slack.unwrap_or(Dur::secs(5));
    let recovery = raw
        .recovery
        .unwrap_or(Dur(ttl.get() * 2 + recovery_slack.get()));

    let name = raw.name.unwrap_or_else(|| {
        let faults = if nemesis.is_empty() {
            "no-faults".to_string()
        } else {
            nemesis.join("+")
        };
        format!("{recipe}-{resource}-{faults}")
    });
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        return Err(err(
            "name",
            format!("test name {name:?} must be a plain file name"),
        ));
    }

    let memory_bugs = raw.memory_bugs.unwrap_or_default();
    if !memory_bugs.is_empty() && provider != Provider::Memory {
        return Err(err(
            "memory_bugs",
            "bugs can only be planted in the memory provider; add provider: memory",
        ));
    }
    for bug in &memory_bugs {
        if !crate::run::in_process::MEMORY_BUGS.contains(&bug.as_str()) {
            return Err(err(
                "memory_bugs",
                format!(
                    "unknown bug {bug:?}; use any of {}",
                    crate::run::in_process::MEMORY_BUGS.join(", ")
                ),
            ));
        }
    }
    if provider == Provider::Memory
        && !["strict", "strict-idempotent", "none"].contains(&resource.as_str())
    {
        return Err(err(
            "resource",
            "the memory provider writes to an in-process register: use strict or none",
        ));
    }

    Ok(TestPlan {
        name,
        provider,
        recipe,
        resource,
        workload,
        counter_store,
        workers,
        ttl,
        renew_interval,
        session_timeout,
        op_timeout,
        acquire_timeout,
        discipline,
        renewal,
        time_limit,
        work,
        writes_per_hold,
        lock,
        nemesis,
        nemesis_interval,
        fault_duration,
        seed: raw.seed.unwrap_or(random_seed),
        fail_on,
        recovery_slack,
        recovery,
        image: raw.image.unwrap_or_else(default_image),
        memory_bugs,
        nemesis_timeline,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw() -> RawTest {
        RawTest::default()
    }

    #[test]
    fn the_default_test_is_etcd_lease_strict_with_holder_pauses() {
        let p = validate(raw(), 7).unwrap();
        assert_eq!(p.recipe, "etcd-lease");
        assert_eq!(p.provider, Provider::Etcd);
        assert_eq!(p.resource, "strict");
        assert_eq!(p.workers, 5);
        assert_eq!(p.ttl, Dur::secs(2));
        assert_eq!(p.time_limit, Dur::secs(60));
        assert_eq!(p.nemesis, vec!["pause-holder"]);
        assert_eq!(
            p.fault_duration, None,
            "each fault's default: a holder pause is 2 x ttl"
        );
        assert_eq!(p.seed, 7);
        assert!(!p.fail_on.contains(&AnomalyKind::ConcurrentHolders));
        assert!(p
            .rerun_command(std::path::Path::new("t.yaml"))
            .ends_with("--config t.yaml"));
    }

    #[test]
    fn nonsense_is_rejected_with_the_field_and_what_to_write() {
        let cases: Vec<(RawTest, &str, &str)> = vec![
            (
                RawTest {
                    ttl: Some(Dur::secs(0)),
                    ..raw()
                },
                "ttl",
                "2s",
            ),
            (
                RawTest {
                    ttl: Some(Dur::secs(2)),
                    renew_interval: Some(Dur::secs(1)),
                    ..raw()
                },
                "renew_interval",
                "under half",
            ),
            (
                RawTest {
                    provider: Some("consul".into()),
                    ..raw()
                },
                "provider",
                "etcd",
            ),
            (
                RawTest {
                    recipe: Some("mutex".into()),
                    ..raw()
                },
                "recipe",
                "etcd-lease",
            ),
            (
                RawTest {
                    provider: Some("etcd".into()),
                    recipe: Some("zk-lock".into()),
                    ..raw()
                },
                "recipe",
                "zookeeper",
            ),
            (
                RawTest {
                    resource: Some("s3".into()),
                    ..raw()
                },
                "resource",
                "strict",
            ),
            (
                RawTest {
                    workers: Some(0),
                    ..raw()
                },
                "workers",
                "1 to 64",
            ),
            (
                RawTest {
                    nemesis: Some(vec!["meteor".into()]),
                    ..raw()
                },
                "nemesis",
                "pause-holder",
            ),
            (
                RawTest {
                    nemesis: Some(vec!["failover".into()]),
                    ..raw()
                },
                "nemesis",
                "etcd",
            ),
            (
                RawTest {
                    fail_on: Some(vec!["oops".into()]),
                    ..raw()
                },
                "fail_on",
                "stale-accepted-write",
            ),
            (
                RawTest {
                    workload: Some("counter".into()),
                    nemesis: Some(vec!["pause-holder".into(), "isolate-resource".into()]),
                    ..raw()
                },
                "nemesis",
                "counter workload has none",
            ),
            (
                RawTest {
                    counter_store: Some("redis".into()),
                    ..raw()
                },
                "counter_store",
                "workload",
            ),
            (
                RawTest {
                    provider: Some("redis".into()),
                    workload: Some("counter".into()),
                    counter_store: Some("etcd-guard".into()),
                    ..raw()
                },
                "counter_store",
                "provider etcd",
            ),
            (
                RawTest {
                    workload: Some("counter".into()),
                    counter_store: Some("mongo".into()),
                    ..raw()
                },
                "counter_store",
                "etcd-guard",
            ),
            // Issue 16, point 3: Redlock's writes carry no token, and the default resource
            // (strict) refuses every one of them.
            (
                RawTest {
                    recipe: Some("redlock".into()),
                    ..raw()
                },
                "resource",
                "Use resource none",
            ),
        ];
        for (r, field, hint) in cases {
            let e = validate(r, 1).unwrap_err();
            assert_eq!(e.field, field, "{e}");
            assert!(e.message.contains(hint), "{e} should mention {hint}");
        }
    }

    #[test]
    fn provider_alone_picks_its_default_recipe() {
        let p = validate(
            RawTest {
                provider: Some("zookeeper".into()),
                ..raw()
            },
            1,
        )
        .unwrap();
        assert_eq!(p.recipe, "zk-lock");
        let p = validate(
            RawTest {
                nemesis: Some(vec!["none".into()]),
                ..raw()
            },
            1,
        )
        .unwrap();
        assert!(p.nemesis.is_empty());
        assert!(p.name.ends_with("no-faults"));
    }

    fn from_yaml(text: &str) -> Result<TestPlan, ConfigError> {
        validate(serde_saphyr::from_str::<RawTest>(text).unwrap(), 1)
    }

    #[test]
    fn an_explicit_timeline_replaces_the_drawn_faults() {
        let p = from_yaml(
            "time_limit: 30s\nnemesis_timeline:\n  - at 5s start pause-holder for 6s\n  - at 15s start halves for 10s\n",
        )
        .unwrap();
        assert!(p.nemesis.is_empty());
        let lines = p.nemesis_timeline.unwrap();
        assert_eq!(lines.len(), 2);
        assert!(
            lines[1].starts_with("at 15s start halves for 10s"),
            "{lines:?}"
        );
    }

    #[test]
    fn a_bad_timeline_is_rejected_with_its_line() {
        let cases = [
            ("nemesis_timeline:\n  - at 5s start pause-holder for 6s\n  - at 9s start failover for 5s\n", "line 3"),
            ("nemesis_timeline:\n  - at 5s start halves for 10s\n  - at 9s start majorities-ring for 5s\n", "overlaps"),
            ("nemesis_timeline:\n  - at 5s start pause-holder for -2s\n", "line 2"),
            ("nemesis_timeline:\n  - at 5s start meteor for 2s\n", "meteor"),
            ("nemesis: [kill-worker]\nnemesis_timeline:\n  - at 5s start halves for 2s\n", "not both"),
        ];
        for (yaml, hint) in cases {
            let e = from_yaml(yaml).unwrap_err();
            assert_eq!(e.field, "nemesis_timeline", "{e}");
            assert!(e.message.contains(hint), "{e} should mention {hint}");
        }
    }

    #[test]
    fn the_recipes_own_rules_apply_before_anything_starts() {
        // etcd leases are granted in whole seconds of at least 2 s.
        let e = validate(
            RawTest {
                ttl: Some(Dur::from_millis(1500)),
                ..raw()
            },
            1,
        )
        .unwrap_err();
        assert_eq!(e.field, "ttl", "{e}");
        assert!(e.message.contains("etcd-lease"), "{e}");
        assert!(validate(
            RawTest {
                recipe: Some("redis-lock".into()),
                ttl: Some(Dur::from_millis(1500)),
                ..raw()
            },
            1
        )
        .is_ok());
    }
}
