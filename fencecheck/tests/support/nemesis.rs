//! What every nemesis container test needs: a real cluster of its own (a run id unique to the
//! test), the real `DockerControl` and `RunTopology` over it, a history file, and the final
//! checks — nothing stopped, no rule left, no container left behind.

#![allow(dead_code)]

use containers::cluster::ClusterHandle;
use containers::control::{audit, topology, ClusterRestart, DockerControl, RunTopology};
use containers::docker::{list_run_containers, ContainerSpec, Node, RunEnv};
use results::jsonl::{HistoryWriter, JsonlReader};
use results::Provider;
use results::{Event, RunClock};
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

pub struct Fixture {
    pub env: Arc<RunEnv>,
    pub cluster: Arc<RwLock<ClusterHandle>>,
    pub others: Vec<Node>,
    pub control: DockerControl,
    pub topology: RunTopology,
    pub history: HistoryWriter,
    pub history_path: PathBuf,
    pub clock: RunClock,
}

fn run_id(tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("t-nemesis-{tag}-{:x}{:x}", std::process::id(), nanos)
}

/// Starts `provider` and the extra containers (workers named in `workers`) for one test.
pub async fn fixture(provider: Provider, tag: &str, extra: Vec<ContainerSpec>) -> Fixture {
    start(provider, tag, extra, false).await
}

/// As [`fixture`], the cluster's servers under fake clocks that the control can move.
pub async fn fixture_with_fake_clocks(provider: Provider, tag: &str) -> Fixture {
    start(provider, tag, vec![], true).await
}

async fn start(provider: Provider, tag: &str, extra: Vec<ContainerSpec>, faked: bool) -> Fixture {
    let id = run_id(tag);
    let dir = std::env::temp_dir().join(&id);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let env = Arc::new(RunEnv::create(&id, None).await.expect("run env"));
    let clocks = dir.join("clocks");
    let cluster = if faked {
        env.start_cluster_with_fake_clocks(provider, &clocks).await
    } else {
        env.start_cluster(provider).await
    }
    .expect("cluster starts");
    let mut others = Vec::new();
    for spec in extra {
        others.push(env.start_container(spec).await.expect("extra container"));
    }
    let mut targets = topology::targets(&env, cluster.nodes.iter());
    targets.extend(topology::targets(&env, others.iter()));
    let workers: Vec<String> = others
        .iter()
        .map(|n| topology::short_name(&env, &n.name))
        .filter(|n| n.starts_with("worker"))
        .collect();
    let cluster = Arc::new(RwLock::new(cluster));
    let restart = Arc::new(ClusterRestart::new(
        env.clone(),
        cluster.clone(),
        others.clone(),
    ));
    let docker = containers::docker::connect().await.expect("docker");
    let mut control = DockerControl::new(docker, env.network(), targets, restart);
    if faked {
        control = control.with_fake_clocks(clocks);
    }
    let resource = others
        .iter()
        .map(|n| topology::short_name(&env, &n.name))
        .find(|n| n == "resource");
    let topology = RunTopology::new(&env, cluster.clone(), workers, resource);
    let history_path = dir.join("history.jsonl");
    Fixture {
        history: HistoryWriter::create(&history_path).expect("history"),
        history_path,
        clock: RunClock::start(),
        env,
        cluster,
        others,
        control,
        topology,
    }
}

impl Fixture {
    pub fn handle(&self) -> ClusterHandle {
        self.cluster.read().expect("cluster lock").clone()
    }

    pub fn node(&self, short: &str) -> Node {
        self.handle().node(short).cloned().expect("node exists")
    }

    pub fn events(&self) -> Vec<Event> {
        JsonlReader::<Event>::open(&self.history_path)
            .expect("history")
            .map(|r| r.expect("history line").1)
            .collect()
    }

    /// Every container of the run: no process stopped, no iptables rule, all running.
    pub async fn assert_healed(&self) {
        let mut names: Vec<String> = self.handle().nodes.iter().map(|n| n.name.clone()).collect();
        names.extend(self.others.iter().map(|n| n.name.clone()));
        let found = audit(self.env.docker(), &names).await.expect("audit");
        assert!(found.is_clean(), "not healed: {found:?}");
        assert!(
            found.not_running.is_empty(),
            "not running after heal: {found:?}"
        );
        assert!(!self.control.is_hurting());
    }

    /// Removes everything and asserts nothing with this run's label remains.
    pub async fn teardown(self) {
        let id = self.env.run_id().to_string();
        self.env.teardown().await.expect("teardown");
        let left = list_run_containers(self.env.docker(), Some(&id))
            .await
            .expect("list");
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}

/// The plan of a one-line timeline, checked against `provider`.
pub fn plan(provider: Provider, yaml: &str) -> nemesis::Plan {
    nemesis::Schedule::from_yaml(yaml)
        .expect("yaml")
        .validate(&nemesis::Context {
            capabilities: provider.capabilities(),
            ttl: std::time::Duration::from_secs(2),
            time_limit: None,
        })
        .expect("valid plan")
}

/// The state letters of every process of a container (`T` = stopped).
pub async fn states(fx: &Fixture, container: &str) -> Vec<char> {
    let id = fx
        .env
        .docker()
        .inspect_container(container, None)
        .await
        .expect("inspect")
        .id
        .unwrap_or_default();
    containers::control::procs::container_pids(&id)
        .into_iter()
        .filter_map(containers::control::procs::process_state)
        .collect()
}

/// The targets of the first nemesis event, once it has been recorded (the fault has taken
/// effect).
pub async fn first_targets(fx: &Fixture) -> Vec<String> {
    let start = std::time::Instant::now();
    loop {
        if let Some(e) = fx.events().first() {
            let targets = e.value.as_ref().expect("value")["targets"].clone();
            return serde_json::from_value(targets).expect("targets");
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "fault never started"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Whether `from` (a container) can open a TCP connection to `to:port` on the run's network,
/// asked from inside `from` with `docker exec ... nc -z` (traffic stays on the network).
pub fn reaches(from: &str, to: &str, port: u16) -> bool {
    std::process::Command::new("docker")
        .args(["exec", from, "nc", "-z", "-w", "1", to, &port.to_string()])
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Waits until the history holds at least `n` nemesis events (faults have taken effect).
pub async fn wait_for_events(fx: &Fixture, n: usize) {
    let start = std::time::Instant::now();
    while fx.events().len() < n {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(15),
            "event {n} never came"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
