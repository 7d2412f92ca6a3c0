//! `fencecheck bench soak`: many short runs, each ended one drawn way — left to finish, Ctrl-C,
//! SIGKILL of the harness then `fencecheck clean`, a lock-service node killed from outside
//! (`docker kill`), a node frozen from outside for 6 s (`docker pause`) — over etcd, ZooKeeper
//! and Redis, and after each one what it left and what it said. Its expectations are the
//! project's own: nothing left behind (containers, networks, stopped processes), no history torn
//! in the middle, a finished run re-checked to the same exit, an interrupted or killed run
//! unknown, an unplanned death or freeze recorded, the run's own teardown never recorded as a
//! death. One line per run and a total; exit 1 when any expectation broke.

use super::soak_way::{Outcome, Way};
use anyhow::Context;
use rand::{Rng, SeedableRng};
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `fencecheck bench soak`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// How many runs.
    #[arg(long, default_value_t = 20)]
    pub runs: u32,
    /// Draws each run's way, recipe and seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The ways to draw from (default: all of finish, sigint, sigkill, node-killed,
    /// node-frozen).
    #[arg(long, value_delimiter = ',', value_parser = Way::parse)]
    pub ways: Vec<Way>,
    /// Where the runs are stored (default: a fresh folder under the system's temp dir).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// The recipes soaked, with the container a node fault hits (`<run id>-<short>`).
const RECIPES: [(&str, &str); 3] = [
    ("etcd-lease", "etcd-2"),
    ("zk-lock", "zk-2"),
    ("redis-lock", "redis-1"),
];

pub fn run(args: Args) -> anyhow::Result<u8> {
    anyhow::ensure!(args.runs > 0, "--runs must be at least 1");
    let root = match &args.dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("fencecheck-soak-{}", std::process::id())),
    };
    std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
    let bin = std::env::current_exe().context("locating the fencecheck binary")?;
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(args.seed);
    let started = Instant::now();
    println!(
        "soak of {} runs (seed {}) in {}",
        args.runs,
        args.seed,
        root.display()
    );
    println!("{}", Outcome::header());
    let ways = if args.ways.is_empty() {
        Way::ALL.to_vec()
    } else {
        args.ways.clone()
    };
    let mut outcomes = Vec::new();
    for i in 0..args.runs {
        let way = ways[rng.random_range(0..ways.len())];
        let (recipe, node) = RECIPES[rng.random_range(0..RECIPES.len())];
        let name = format!("soak-{}-{i}", args.seed);
        let at = rng.random_range(2_000..6_000u64);
        let outcome = super::soak_way::soak_one(
            &runtime,
            &bin,
            &root,
            &name,
            recipe,
            node,
            way,
            at,
            args.seed + u64::from(i),
        )
        .with_context(|| format!("soak run {i} ({name}, {recipe}, {way:?})"))?;
        println!("{}", outcome.row(i));
        outcomes.push(outcome);
    }
    let sum = |f: fn(&Outcome) -> u32| outcomes.iter().map(f).sum::<u32>();
    let leaks = sum(|o| o.leftovers);
    let stopped = sum(|o| o.stopped);
    let torn = sum(|o| u32::from(o.torn));
    let wrong: Vec<String> = outcomes
        .iter()
        .enumerate()
        .filter_map(|(i, o)| o.wrong.as_ref().map(|w| format!("run {i}: {w}")))
        .collect();
    println!(
        "total: {} runs in {:.0} s: {leaks} leftovers, {stopped} stopped processes, {torn} torn \
         histories, {} wrong verdict classes",
        outcomes.len(),
        started.elapsed().as_secs_f64(),
        wrong.len()
    );
    for w in &wrong {
        println!("  {w}");
    }
    Ok(if leaks + stopped + torn == 0 && wrong.is_empty() {
        0
    } else {
        1
    })
}
