//! `fencecheck matrix [--config matrix.yaml] [--runs DIR] [--shard I/N] [--jobs K] [--plan]
//! [--own-clusters]`: runs a grid of tests (cells × seeds), K at a time (sharing clusters where
//! the faults allow), and writes one comparison table (`matrix.md`,
//! `matrix.html`, `matrix.json` under `<runs>/matrix/<name>/<UTC stamp>/`); `--plan` prints what
//! it would run and how long that should take, and starts nothing;
//! `fencecheck matrix merge DIR...` joins shards run on several machines into that table. Exit 0
//! every cell as expected, 1 a cell broke its expectation, 2 only unknown verdicts, 3 a harness
//! or configuration error (a bad file is named, with the line where the YAML says it).

use harness::matrix;
use std::path::PathBuf;

/// Arguments of `fencecheck matrix`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    pub merge: Option<Sub>,
    /// The matrix file (YAML): name, seeds, defaults, min_rate, cells with expectations.
    #[arg(long, short = 'c', default_value = "matrix/nightly.yaml")]
    pub config: PathBuf,
    /// Where runs are stored (the matrix goes to <runs>/matrix/<name>/<UTC stamp>/).
    #[arg(long, default_value = "results/runs")]
    pub runs: PathBuf,
    /// Run only shard I of N: a deterministic share of the cells, balanced by expected duration,
    /// for N parallel CI jobs (join them with `fencecheck matrix merge`).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<matrix::shard::Shard>,
    /// Runs at once on this machine, each with its own workers, resource and names; runs whose
    /// faults touch only their own containers share a cluster of their provider (see
    /// --own-clusters). Timing figures depend on the machine's load, which the table states.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
    /// Run only the cells whose label contains one of these words (comma-separated, e.g.
    /// `--cells portalocker,tooz-redis`): to re-run a cell, or the rows of one library.
    #[arg(long, value_delimiter = ',')]
    pub cells: Vec<String>,
    /// Run only these of the file's seeds (comma-separated): a quicker pass over a long grid.
    #[arg(long, value_delimiter = ',')]
    pub seeds: Vec<u64>,
    /// Print what would run (cells, runs, clusters, expected wall time) and start nothing.
    #[arg(long)]
    pub plan: bool,
    /// Every run starts and tears down a cluster of its own, as `fencecheck run` does, even
    /// where it could share one.
    #[arg(long)]
    pub own_clusters: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum Sub {
    /// Join the shards of one matrix run (each DIR a shard's matrix directory, holding its
    /// matrix.json) into the one table, HTML and exit code the whole run would give.
    Merge {
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// Where the merged matrix goes (<runs>/matrix/<name>/<UTC stamp>-merged/).
        #[arg(long, default_value = "results/runs")]
        runs: PathBuf,
    },
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if let Some(Sub::Merge { dirs, runs }) = &args.merge {
        let report = matrix::merge::merge(dirs, runs)?;
        print!("{}", matrix::table::render(&report));
        println!("matrix:  {}", report.dir.join("matrix.html").display());
        return Ok(report.exit_code);
    }
    let path = &args.config;
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("{}: cannot read matrix file: {e}", path.display()))?;
    let mut m =
        matrix::spec::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e:#}", path.display()))?;
    if !args.seeds.is_empty() {
        if let Some(s) = args.seeds.iter().find(|s| !m.seeds.contains(s)) {
            anyhow::bail!(
                "--seeds: {s} is not one of {}'s seeds ({:?})",
                path.display(),
                m.seeds
            );
        }
        m.seeds.retain(|s| args.seeds.contains(s));
        for c in &mut m.cells {
            c.plans.retain(|p| args.seeds.contains(&p.seed));
        }
    }
    if !args.cells.is_empty() {
        m.cells
            .retain(|c| args.cells.iter().any(|w| c.label.contains(w.as_str())));
        anyhow::ensure!(
            !m.cells.is_empty(),
            "--cells {}: no cell of {} has a label containing it",
            args.cells.join(","),
            path.display()
        );
    }
    let options = matrix::Options {
        config: path.display().to_string(),
        config_text: text.clone(),
        runs: args.runs.clone(),
        shard: args.shard,
        jobs: usize::from(args.jobs),
        own_clusters: args.own_clusters,
    };
    if args.plan {
        let chosen: Vec<usize> = match args.shard {
            Some(s) => matrix::shard::cells_of(&m.cells, s),
            None => (0..m.cells.len()).collect(),
        };
        print!(
            "{}",
            matrix::plan::render(&m, &chosen, &options, args.shard)
        );
        return Ok(0);
    }
    let share = match args.shard {
        Some(s) => format!(
            ", shard {s}: {} cells",
            matrix::shard::cells_of(&m.cells, s).len()
        ),
        None => String::new(),
    };
    eprintln!(
        "matrix {}: {} cells × {} seeds from {}{share}, {} at once",
        m.name,
        m.cells.len(),
        m.seeds.len(),
        path.display(),
        args.jobs
    );
    let report = matrix::execute(&m, &options)?;
    print!("{}", matrix::table::render(&report));
    println!("matrix:  {}", report.dir.join("matrix.html").display());
    Ok(report.exit_code)
}
