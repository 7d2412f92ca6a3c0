//! The validated test: the only value that can start a run. Every closed set is an enum and
//! every schedule is already built (the fault plan drawn from the seed, the client discipline,
//! the planted bugs), so nothing downstream parses or validates again. What a run's
//! `test.yaml` holds is this plan written out ([`super::plan_file`]), fully resolved, so a run
//! can be repeated exactly and `fencecheck check` can read `ttl`, `recovery_slack` and
//! `fail_on` from it.

use super::clients::LockClient;
use super::duration::Dur;
use nemesis::{FaultKind, Plan};
use results::persistence::Persistence;
use results::AnomalyKind;
pub use workloads::app::App;
pub use workloads::config::{Discipline, RecipeConfig};
pub use workloads::kinds::{CounterStore, Provider, RecipeKind, ResourceKind};
pub use workloads::recipes::MemoryBug;

/// What each worker does while it holds the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// Writes with its fence token to the resource.
    FencedWrite,
    /// Read-increment-write of a counter in this store: what a lock alone protects.
    Counter(CounterStore),
}

impl Workload {
    pub fn as_str(self) -> &'static str {
        match self {
            Workload::FencedWrite => "fenced-write",
            Workload::Counter(_) => "counter",
        }
    }

    /// The counter workload's store.
    pub fn counter_store(self) -> Option<CounterStore> {
        match self {
            Workload::Counter(s) => Some(s),
            Workload::FencedWrite => None,
        }
    }
}

/// The faults of a run: how the test asked for them and the exact plan they make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Faults {
    /// The kinds drawn from the seed (`nemesis:`); empty with an explicit schedule or none.
    pub drawn: Vec<FaultKind>,
    /// Quiet time before the first drawn fault and between two.
    pub interval: Dur,
    /// How long each drawn fault lasts; absent: each fault's default (a pause is 2 x ttl,
    /// longer than the lease: the GC pause of the literature).
    pub duration: Option<Dur>,
    /// Whether the plan is the test's own schedule (`nemesis_timeline:`).
    pub explicit: bool,
    /// What the run injects, when, and for how long.
    pub plan: Plan,
}

/// A fully resolved, valid test.
#[derive(Debug, Clone, PartialEq)]
pub struct TestPlan {
    pub name: String,
    pub provider: Provider,
    /// Who takes the lock: a recipe of fencecheck's, or a library behind its adapter.
    pub client: LockClient,
    pub resource: ResourceKind,
    pub workload: Workload,
    pub workers: u32,
    /// The lock client's validated timing (ttl, renewal, session, operation and acquire
    /// timeouts, each default resolved): what every worker is launched with and what
    /// `test.yaml` records.
    pub client_timing: RecipeConfig,
    pub discipline: Discipline,
    /// The application the workers model (docs/design.md, "Driving a library as applications
    /// do").
    pub app: App,
    pub time_limit: Dur,
    /// How long a worker works while holding the lock before it writes.
    pub work: Dur,
    pub writes_per_hold: u32,
    pub lock: String,
    pub faults: Faults,
    pub seed: u64,
    pub fail_on: Vec<AnomalyKind>,
    pub recovery_slack: Dur,
    /// After the final heal: how long every worker has to acquire once (liveness).
    pub recovery: Dur,
    pub image: String,
    /// The image adapter workers run in (a client adapter in containers only).
    pub client_image: Option<String>,
    /// Bugs planted in the in-memory lock service (provider `memory` only).
    pub memory_bugs: Vec<MemoryBug>,
    /// Which of a matrix's concurrent runs (`--jobs`) this is: its Docker run id then carries
    /// a hash of the whole name and `-j<slot>`, so that runs at once never share containers.
    /// Not part of the test (not in `test.yaml`).
    pub docker_slot: Option<u32>,
    /// The lock service's servers start under libfaketime (the fault plan, or a replay
    /// scenario, moves their clocks).
    pub fake_clocks: bool,
    /// The workers' lock clients start under libfaketime (the fault plan, or a replay
    /// scenario, moves their clocks).
    pub fake_client_clocks: bool,
    /// The run starts the link proxy in front of the lock service (the fault plan, or a replay
    /// scenario, shapes a worker's links).
    pub link_proxy: bool,
    /// A node of the lock service is killed with its data directory emptied (the fault plan, or
    /// a replay scenario's `restart-empty` step): the nodes' data directories are bound under
    /// the run.
    pub empties_data: bool,
    /// How the lock service's Redis servers keep what they acknowledged across a restart.
    pub persistence: Persistence,
    /// The command whose next reply a cut strikes, where the protocol can be read; `None`:
    /// the next reply, whatever it answers.
    pub cut_reply_to: Option<String>,
}

impl TestPlan {
    /// The command line that re-runs exactly this test (same seed, same everything): the run's
    /// own `test.yaml` is the fully resolved test, so it is the most exact way to say it.
    pub fn rerun_command(&self, test_yaml: &std::path::Path) -> String {
        format!("fencecheck run --config {}", test_yaml.display())
    }

    /// The lease's length.
    pub fn ttl(&self) -> Dur {
        Dur(self.client_timing.ttl)
    }

    /// Whether the test runs in this process (provider `memory`: no containers; worker faults
    /// only).
    pub fn in_process(&self) -> bool {
        self.provider == Provider::Memory
    }
}
