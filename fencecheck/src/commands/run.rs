//! `fencecheck run`: one test. Flags overlay `--config test.yaml`; the result is validated into a
//! `TestPlan` before anything starts, then handed to the run pipeline ([`harness::run`]).

use clap::builder::{PossibleValue, PossibleValuesParser};
use containers::image::pin::Pin;
use harness::config::{
    self, CounterStore, Dur, MemoryBug, Provider, RawTest, RecipeKind, ResourceKind,
};
use nemesis::ALL_FAULTS;
use results::AnomalyKind;
use std::path::PathBuf;

/// `--help` lists each closed set from its one list of names (and clap refuses a name that is
/// not in it, naming the flag).
fn one_of(names: impl IntoIterator<Item = &'static str>) -> PossibleValuesParser {
    PossibleValuesParser::new(names)
}

/// Every provider with its short forms.
fn providers() -> PossibleValuesParser {
    PossibleValuesParser::new(
        Provider::ALL.map(|p| PossibleValue::new(p.as_str()).aliases(p.aliases().iter().copied())),
    )
}

/// Arguments of `fencecheck run`. With none, the default test: etcd-lease, strict resource,
/// holder pauses longer than the ttl, 5 workers, ttl 2s, 60 s.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Test file (YAML); flags given on the command line override its keys.
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// The test's name (its run directory and Docker run id; default: recipe-resource-faults).
    /// A run first removes what an earlier, killed run of the same name left behind, so give
    /// concurrent runs of one test different names.
    #[arg(long)]
    pub name: Option<String>,
    /// Lock provider (default etcd; a recipe names its own).
    #[arg(long, value_parser = providers())]
    pub provider: Option<String>,
    /// Lock recipe (default: the provider's; etcd-lease for etcd).
    #[arg(long, value_parser = one_of(RecipeKind::ALL.map(RecipeKind::as_str)))]
    pub recipe: Option<String>,
    /// A lock library under test, through its shipped adapter (`fencecheck clients` lists
    /// them), `name` or `name@version`; the provider follows (--provider picks one of an
    /// adapter over several backends, as tooz).
    #[arg(long, conflicts_with_all = ["recipe", "client_cmd"])]
    pub client: Option<String>,
    /// Your own adapter (docs/adapters.md): the command each worker starts, run with `sh -c` in
    /// --client-dir (in the client image, or in an image of its own when the folder has a
    /// requirements.txt); needs --provider.
    #[arg(long, conflicts_with = "recipe")]
    pub client_cmd: Option<String>,
    /// Your adapter's folder, mounted read-only into each worker at /client.
    #[arg(long, requires = "client_cmd")]
    pub client_dir: Option<PathBuf>,
    /// Options passed to the adapter's init unchanged, as a JSON map (e.g. '{"style":"with"}';
    /// each shipped adapter's adapter.yaml lists its own).
    #[arg(long, value_parser = json_map)]
    pub client_options: Option<serde_json::Value>,
    /// Pin a dependency of the client's library, NAME==VERSION (e.g. redis==5.0.8): repeat the
    /// flag or separate pins with commas. Each replaces the shipped adapter's own pin of that
    /// package (`fencecheck clients` lists them) and the others are added; the release's image
    /// is built for the whole set. For a shipped Python adapter's release from PyPI only (not
    /// @debian, a Rust adapter or a recipe).
    #[arg(
        long = "with",
        value_name = "NAME==VERSION",
        value_delimiter = ',',
        allow_hyphen_values = true
    )]
    pub with: Vec<Pin>,
    /// Protected resource (default strict; `none` is the unfenced contrast).
    #[arg(long, value_parser = one_of(ResourceKind::ALL.map(ResourceKind::as_str)))]
    pub resource: Option<String>,
    /// Workload: fenced writes (default) or a counter (read, increment, write back).
    #[arg(long, value_parser = one_of(["fenced-write", "counter"]))]
    pub workload: Option<String>,
    /// Store of the counter workload (default redis; etcd-guard needs provider etcd: each
    /// increment's write is guarded by the lock key's revision).
    #[arg(long, value_parser = one_of(CounterStore::ALL.map(CounterStore::as_str)))]
    pub counter_store: Option<String>,
    /// Number of worker processes.
    #[arg(long)]
    pub workers: Option<u32>,
    /// Lease / session ttl, e.g. 2s.
    #[arg(long)]
    pub ttl: Option<Dur>,
    /// How long the workload runs before the final heal, e.g. 60s.
    #[arg(long)]
    pub time_limit: Option<Dur>,
    /// Faults drawn from the seed, comma-separated (e.g. pause-holder,kill-worker), or `none`.
    #[arg(long, value_delimiter = ',',
          value_parser = one_of(ALL_FAULTS.map(|f| f.name()).into_iter().chain(["none"])))]
    pub nemesis: Option<Vec<String>>,
    /// Seed of every random choice (printed; re-use it to repeat a run).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Anomaly kinds that fail the run, comma-separated (default: all but the observed
    /// concurrent-holders, release-of-lost-lock, held-after-loss, locked-out-client,
    /// granted-gone, phantom-holder, deleted-anothers-key and held-against-service).
    #[arg(long, value_delimiter = ',',
          value_parser = one_of(AnomalyKind::ALL.map(|k| k.as_str())))]
    pub fail_on: Option<Vec<String>>,
    /// What a worker does when it cannot confirm its lease (default continue: the naive client).
    #[arg(long, value_parser = one_of(["stop", "continue"]))]
    pub discipline: Option<String>,
    /// The application the workers model (default short): short (critical sections of ttl/4, a
    /// crash after any library error, the library never asked), job (jobs of 3 x ttl on the
    /// library's renewal, writing as they go, the library asked before each write), job-keep
    /// (job, the client kept after the library raised), daemon (job-keep, a lost lock taken
    /// again at once).
    #[arg(long, value_parser = one_of(workloads::app::ROWS.map(|r| r.name)))]
    pub app: Option<String>,
    /// How the lock service's Redis servers persist (redis, redlock, redis-sentinel; default
    /// none): none (a restarted server is empty), everysec or always (the append-only file,
    /// fsynced every second or before each reply).
    #[arg(long, value_parser = one_of(results::persistence::ALL_PERSISTENCE.map(|p| p.name())))]
    pub persistence: Option<String>,
    /// The command whose next reply a cut-acquire-reply, cut-release-reply or cut-renew-reply
    /// strikes, rather than whatever reply comes next: a Redis command (EVALSHA, SET, DEL) or a
    /// ZooKeeper operation (create, delete, ping); etcd's gRPC is not read by command.
    #[arg(long, value_name = "COMMAND")]
    pub cut_reply_to: Option<String>,
    /// Bugs to plant in the in-memory provider: for exercising the pipeline, not for judging a
    /// real lock.
    #[arg(long, value_delimiter = ',', value_parser = one_of(MemoryBug::ALL.map(MemoryBug::as_str)))]
    pub memory_bugs: Option<Vec<String>>,
    /// Where runs are stored.
    #[arg(long, default_value = "results/runs")]
    pub runs: PathBuf,
    /// No progress bar (for CI logs).
    #[arg(long)]
    pub quiet: bool,
}

/// A JSON object, or why not.
fn json_map(text: &str) -> Result<serde_json::Value, String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) if v.is_object() => Ok(v),
        Ok(v) => Err(format!(
            "{v} is not a JSON map; write e.g. '{{\"style\":\"with\"}}'"
        )),
        Err(e) => Err(format!(
            "not JSON ({e}); write e.g. '{{\"style\":\"with\"}}'"
        )),
    }
}

impl Args {
    fn flags(&self) -> RawTest {
        RawTest {
            name: self.name.clone(),
            provider: self.provider.clone(),
            recipe: self.recipe.clone(),
            client: self.client.clone(),
            client_cmd: self.client_cmd.clone(),
            client_dir: self.client_dir.clone(),
            client_options: self.client_options.clone(),
            with: (!self.with.is_empty()).then(|| self.with.clone()),
            resource: self.resource.clone(),
            workload: self.workload.clone(),
            counter_store: self.counter_store.clone(),
            workers: self.workers,
            ttl: self.ttl,
            time_limit: self.time_limit,
            nemesis: self.nemesis.clone(),
            seed: self.seed,
            fail_on: self.fail_on.clone(),
            discipline: self.discipline.clone(),
            app: self.app.clone(),
            memory_bugs: self.memory_bugs.clone(),
            persistence: self.persistence.clone(),
            cut_reply_to: self.cut_reply_to.clone(),
            ..RawTest::default()
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let file = match &args.config {
        Some(path) => config::load_file(path)?,
        None => RawTest::default(),
    };
    let raw = file.overlay(args.flags());
    let plan = config::validate(raw, rand::random()).map_err(|e| match &args.config {
        Some(path) => anyhow::anyhow!("{}: {e}", path.display()),
        None => anyhow::anyhow!("--{}", e.to_string().replacen('_', "-", 1)),
    })?;
    harness::run::execute(
        plan,
        &harness::run::Options {
            runs: args.runs,
            quiet: args.quiet,
            cluster: None,
        },
    )
}
