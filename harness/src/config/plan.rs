//! The validated test: the only value that can start a run. It is also what `test.yaml` of a
//! stored run holds (fully resolved: seed, image and every default written out), so a run can be
//! repeated exactly and `fencecheck check` can read `ttl`, `recovery_slack` and `fail_on` from it.

use super::duration::Dur;
use results::AnomalyKind;
use serde::Serialize;

/// The lock service a recipe talks to (and so the cluster the harness starts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    /// In-process lock service (no containers): for fast pipeline tests.
    Memory,
    Etcd,
    Zookeeper,
    Redis,
    Redlock,
    RedisSentinel,
}

impl Provider {
    pub const NAMES: &'static str = "etcd, zookeeper, redis, redlock, redis-sentinel, memory";

    pub fn parse(s: &str) -> Option<Provider> {
        Some(match s {
            "memory" => Provider::Memory,
            "etcd" => Provider::Etcd,
            "zookeeper" | "zk" => Provider::Zookeeper,
            "redis" => Provider::Redis,
            "redlock" => Provider::Redlock,
            "redis-sentinel" | "sentinel" => Provider::RedisSentinel,
            _ => return None,
        })
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Provider::Memory => "memory",
            Provider::Etcd => "etcd",
            Provider::Zookeeper => "zookeeper",
            Provider::Redis => "redis",
            Provider::Redlock => "redlock",
            Provider::RedisSentinel => "redis-sentinel",
        }
    }
}

/// A recipe and the provider it runs on.
pub const RECIPES: &[(&str, Provider)] = &[
    ("etcd-lease", Provider::Etcd),
    ("etcd-lock", Provider::Etcd),
    ("zk-lock", Provider::Zookeeper),
    ("redis-lock", Provider::Redis),
    ("redis-lock-del", Provider::Redis),
    ("redlock", Provider::Redlock),
    ("redis-sentinel", Provider::RedisSentinel),
    ("memory", Provider::Memory),
];

/// The default recipe of each provider.
pub fn default_recipe(p: Provider) -> &'static str {
    match p {
        Provider::Memory => "memory",
        Provider::Etcd => "etcd-lease",
        Provider::Zookeeper => "zk-lock",
        Provider::Redis => "redis-lock",
        Provider::Redlock => "redlock",
        Provider::RedisSentinel => "redis-sentinel",
    }
}

/// The protected resource every write goes to.
pub const RESOURCES: &[&str] = &[
    "strict",
    "strict-idempotent",
    "none",
    "etcd-guard",
    "postgres",
    "redis-fenced",
];

/// What each worker does while it holds the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// Writes with its fence token to the resource.
    FencedWrite,
    /// Read-increment-write of a plain counter (no token check): what a lock alone protects.
    Counter,
}

/// What a worker does when it cannot confirm it still holds the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Discipline {
    Stop,
    Continue,
}

impl Discipline {
    pub fn as_str(&self) -> &'static str {
        match self {
            Discipline::Stop => "stop",
            Discipline::Continue => "continue",
        }
    }
}

/// Where lease renewal runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Renewal {
    Background,
    Inline,
}

impl Renewal {
    pub fn as_str(&self) -> &'static str {
        match self {
            Renewal::Background => "background",
            Renewal::Inline => "inline",
        }
    }
}

/// A fully resolved, valid test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestPlan {
    pub name: String,
    pub provider: Provider,
    pub recipe: String,
    pub resource: String,
    pub workload: Workload,
    /// Store of the counter workload (`redis`, `postgres`, `etcd-guard` with provider etcd, or
    /// `memory` with provider memory); absent for fenced writes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counter_store: Option<String>,
    pub workers: u32,
    pub ttl: Dur,
    pub renew_interval: Dur,
    pub session_timeout: Dur,
    pub op_timeout: Dur,
    /// How long one acquire may wait for a held lock before it fails certainly (absent: the
    /// recipe's default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acquire_timeout: Option<Dur>,
    pub discipline: Discipline,
    pub renewal: Renewal,
    pub time_limit: Dur,
    /// How long a worker works while holding the lock before it writes.
    pub work: Dur,
    pub writes_per_hold: u32,
    pub lock: String,
    pub nemesis: Vec<String>,
    /// Quiet time before the first fault and between two faults.
    pub nemesis_interval: Dur,
    /// How long each fault lasts; absent: each fault's default (a pause is 2 x ttl, longer than
    /// the lease: the GC pause of the literature).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault_duration: Option<Dur>,
    pub seed: u64,
    pub fail_on: Vec<AnomalyKind>,
    pub recovery_slack: Dur,
    /// After the final heal: how long every worker has to acquire once (liveness).
    pub recovery: Dur,
    pub image: String,
    /// Bugs planted in the in-memory lock service (provider `memory` only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub memory_bugs: Vec<String>,
    /// An explicit fault schedule (plan lines, validated); replaces the faults drawn from the seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nemesis_timeline: Option<Vec<String>>,
}

impl TestPlan {
    /// The command line that re-runs exactly this test (same seed, same everything): the run's
    /// own `test.yaml` is the fully resolved test, so it is the most exact way to say it.
    pub fn rerun_command(&self, test_yaml: &std::path::Path) -> String {
        format!("fencecheck run --config {}", test_yaml.display())
    }
}
