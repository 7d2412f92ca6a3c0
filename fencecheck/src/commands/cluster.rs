//! `fencecheck cluster up <provider>`: starts one cluster, prints its endpoints and keeps it up
//! until Ctrl-C (which tears it down), for poking at a provider by hand while reproducing an
//! incident.

use containers::cluster::ClusterHandle;
use containers::docker::RunEnv;
use results::Provider;
use std::path::PathBuf;

/// Arguments of `fencecheck cluster`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

/// What to do with a cluster.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Start a cluster and keep it up until Ctrl-C.
    Up(UpArgs),
}

/// Arguments of `fencecheck cluster up`.
#[derive(Debug, clap::Args)]
pub struct UpArgs {
    /// etcd, zookeeper, redis, redlock, redis-sentinel or postgres.
    #[arg(value_name = "PROVIDER", value_parser = Provider::parse_with_servers)]
    pub provider: Provider,
    /// Run id for labels and names (default: up-<provider>-<random>).
    #[arg(long = "run", value_name = "ID")]
    pub run: Option<String>,
    /// Write node logs to <DIR>/nodes/<container>.log.
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.action {
        Action::Up(up) => tokio::runtime::Runtime::new()?.block_on(cluster_up(up)),
    }
}

async fn cluster_up(args: UpArgs) -> anyhow::Result<u8> {
    let id = args
        .run
        .unwrap_or_else(|| format!("up-{}-{:04x}", args.provider, rand::random::<u16>()));
    let env = RunEnv::create(&id, args.run_dir.as_deref()).await?;
    println!("run {id}: starting {} ...", args.provider);
    let cluster = match env.start_cluster(args.provider).await {
        Ok(cluster) => cluster,
        Err(e) => {
            env.teardown().await?;
            return Err(e.into());
        }
    };
    print_cluster(&cluster, &id).await;
    println!("ready; press Ctrl-C to tear down (or later: fencecheck clean --run {id})");
    // The teardown signal thread installed by RunEnv removes everything and exits on Ctrl-C.
    std::future::pending::<()>().await;
    Ok(0)
}

async fn print_cluster(cluster: &ClusterHandle, id: &str) {
    println!(
        "{} ready in {:.2} s (network fc-{id})",
        cluster.provider,
        cluster.startup.as_secs_f64()
    );
    let leader = cluster.leader().await.ok().flatten().map(|n| n.name);
    println!(
        "  {:<40} {:<9} {:<24} {:<28} host pid",
        "node", "role", "host endpoint", "in-network"
    );
    for node in &cluster.nodes {
        let mark = if leader.as_deref() == Some(node.name.as_str()) {
            " (leader)"
        } else {
            ""
        };
        println!(
            "  {:<40} {:<9} {:<24} {:<28} {}{mark}",
            node.name,
            format!("{:?}", node.role).to_lowercase(),
            node.host_endpoint().unwrap_or_default(),
            node.address,
            node.host_pid
        );
    }
    println!("endpoints: {}", cluster.endpoints().join(","));
}
