//! [`RunEnv`]: one run's private corner of the Docker engine — its network, its containers, their
//! logs — and the promise that all of it goes away: `teardown().await` on the normal path, `Drop`
//! on errors and panics, the signal thread on Ctrl-C / SIGTERM, `fencecheck clean` after SIGKILL.

use super::container::{ContainerSpec, Node, Readiness, FENCECHECK_IN_CONTAINER};
use super::labels::{container_name, is_not_found, network_name, remove_by_run, validate_run_id};
use super::{connect, guard, logs, pinned, proc_net, DockerError, RUN_LABEL};
use bollard::models::{ContainerCreateBody, HostConfig, NetworkCreateRequest, PortBinding};
use bollard::query_parameters::CreateContainerOptions;
use bollard::Docker;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod lifecycle;

/// What the environment remembers about a container it started, to restart it.
#[derive(Debug, Clone)]
struct Started {
    spec: ContainerSpec,
    restart_ready: Readiness,
    cursor: logs::Cursor,
}

/// What an environment shares with another, or what it is not.
#[derive(Clone, Copy)]
enum Joins<'a> {
    /// A run of its own: its network, its containers.
    Nothing,
    /// A run on another environment's network.
    Network(&'a str),
    /// Not a run (a shared cluster): nothing for an interrupt to check.
    NoRun,
}

/// One run's Docker network and containers. Create with [`RunEnv::create`]; end with
/// [`RunEnv::teardown`] (idempotent). Dropping it without teardown removes everything from a
/// helper thread.
pub struct RunEnv {
    docker: Docker,
    run_id: String,
    network: String,
    image: String,
    run_dir: Option<PathBuf>,
    torn_down: AtomicBool,
    started: Mutex<HashMap<String, Started>>,
    /// The run's pinned copy of the `fencecheck` binary (see [`pinned`]), once one is mounted;
    /// an async lock, held while pinning, so containers started together pin once.
    pinned: tokio::sync::Mutex<Option<PathBuf>>,
}

impl std::fmt::Debug for RunEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunEnv")
            .field("run_id", &self.run_id)
            .field("network", &self.network)
            .field("image", &self.image)
            .finish()
    }
}

impl RunEnv {
    /// Connects to Docker, checks the node image is present, removes containers and networks
    /// left by an earlier run with the same id, and creates the run's network (labelled
    /// `fencecheck.run=<run_id>`). With `run_dir`, every container's output goes to
    /// `<run_dir>/nodes/<container>.log`.
    pub async fn create(run_id: &str, run_dir: Option<&Path>) -> Result<RunEnv, DockerError> {
        Self::open(run_id, run_dir, Joins::Nothing).await
    }

    /// An environment whose containers go on another environment's `network` (a cluster shared
    /// by several runs): it creates no network, and its teardown removes only its own
    /// containers.
    pub async fn join(
        run_id: &str,
        run_dir: Option<&Path>,
        network: &str,
    ) -> Result<RunEnv, DockerError> {
        Self::open(run_id, run_dir, Joins::Network(network)).await
    }

    /// The environment of a cluster that outlives any one run: its own network, every
    /// container's output under `<logs>/nodes/`. It is no run: an interrupt removes it without
    /// checking anything there.
    pub async fn create_for_cluster(run_id: &str, logs: &Path) -> Result<RunEnv, DockerError> {
        Self::open(run_id, Some(logs), Joins::NoRun).await
    }

    async fn open(
        run_id: &str,
        run_dir: Option<&Path>,
        joins: Joins<'_>,
    ) -> Result<RunEnv, DockerError> {
        validate_run_id(run_id)?;
        let docker = connect().await?;
        let image = crate::image::node_image_tag();
        match docker.inspect_image(&image).await {
            Ok(_) => {}
            Err(e) if is_not_found(&e) => return Err(DockerError::ImageMissing { image }),
            Err(e) => return Err(DockerError::api(format!("inspect image {image}"))(e)),
        }
        let stale = remove_by_run(&docker, Some(run_id)).await?;
        if !stale.containers.is_empty() {
            eprintln!(
                "fencecheck: removed {} stale container(s) of an earlier run {run_id}",
                stale.containers.len()
            );
        }
        let network = match joins {
            Joins::Network(n) => n.to_string(),
            Joins::Nothing | Joins::NoRun => network_name(run_id),
        };
        let request = NetworkCreateRequest {
            name: network.clone(),
            driver: Some("bridge".to_string()),
            labels: Some(HashMap::from([(RUN_LABEL.to_string(), run_id.to_string())])),
            ..Default::default()
        };
        if let Some(dir) = run_dir {
            let nodes = dir.join("nodes");
            std::fs::create_dir_all(&nodes)
                .map_err(DockerError::io(format!("create {}", nodes.display())))?;
        }
        guard::register(run_id, run_dir.filter(|_| !matches!(joins, Joins::NoRun)));
        let env = RunEnv {
            docker,
            run_id: run_id.to_string(),
            network: network.clone(),
            image,
            run_dir: run_dir.map(Path::to_path_buf),
            torn_down: AtomicBool::new(false),
            started: Mutex::new(HashMap::new()),
            pinned: tokio::sync::Mutex::new(None),
        };
        if !matches!(joins, Joins::Network(_)) {
            env.docker
                .create_network(request)
                .await
                .map_err(DockerError::api(format!("create network {network}")))?;
        }
        Ok(env)
    }

    pub fn run_id(&self) -> &str {
        &self.run_id
    }
    /// The run's Docker network name (`fc-<run id>`).
    pub fn network(&self) -> &str {
        &self.network
    }
    /// The node image every container uses unless its spec names another.
    pub fn image(&self) -> &str {
        &self.image
    }
    pub fn run_dir(&self) -> Option<&Path> {
        self.run_dir.as_deref()
    }
    /// The Docker connection, for what this type does not wrap (exec, pause...).
    pub fn docker(&self) -> &Docker {
        &self.docker
    }
    /// The full container name (= in-network host name) of the run's container `short`.
    pub fn container_name(&self, short: &str) -> String {
        container_name(&self.run_id, short)
    }

    /// Creates and starts a container on the run's network and waits until it is ready by
    /// `spec.ready`. Ports are published on 127.0.0.1 only.
    pub async fn start_container(&self, spec: ContainerSpec) -> Result<Node, DockerError> {
        let restart_ready = spec.ready.clone();
        self.start_with_restart_readiness(spec, restart_ready).await
    }

    /// As [`Self::start_container`], with another readiness condition for later restarts (a
    /// cluster member is "ready" on first start when the whole cluster is; on restart, when it
    /// listens again).
    pub(crate) async fn start_with_restart_readiness(
        &self,
        spec: ContainerSpec,
        restart_ready: Readiness,
    ) -> Result<Node, DockerError> {
        let name = self.container_name(&spec.name);
        let spec = self.pin_binary(spec).await?;
        let body = self.create_body(&spec, &name);
        let options = CreateContainerOptions {
            name: Some(name.clone()),
            ..Default::default()
        };
        let created = match self.docker.create_container(Some(options), body).await {
            Ok(c) => c,
            Err(e) if is_not_found(&e) => {
                return Err(DockerError::ImageMissing {
                    image: spec.image.clone().unwrap_or_else(|| self.image.clone()),
                })
            }
            Err(e) => return Err(DockerError::api(format!("create container {name}"))(e)),
        };
        let cursor = logs::Cursor::default();
        if let Ok(mut started) = self.started.lock() {
            let record = Started {
                spec: spec.clone(),
                restart_ready,
                cursor: cursor.clone(),
            };
            started.insert(name.clone(), record);
        }
        self.docker
            .start_container(&created.id, None)
            .await
            .map_err(DockerError::api(format!("start container {name}")))?;
        self.stream_logs(&created.id, &name, cursor);
        let node = self.inspect(&name, spec.role).await?;
        self.wait_ready(&node, &spec.ready, None, spec.ready_timeout)
            .await?;
        Ok(node)
    }

    /// Mounts the run's pinned `fencecheck` instead of the binary the spec names, pinning it on
    /// first use.
    async fn pin_binary(&self, mut spec: ContainerSpec) -> Result<ContainerSpec, DockerError> {
        for bind in spec.binds.iter_mut() {
            if bind.1 != FENCECHECK_IN_CONTAINER {
                continue;
            }
            let mut slot = self.pinned.lock().await;
            let path = match &*slot {
                Some(p) => p.clone(),
                None => {
                    let dir = self.run_dir.clone().unwrap_or_else(std::env::temp_dir);
                    let p = pinned::pin(&bind.0, &dir, &self.run_id)
                        .await
                        .map_err(DockerError::io("pin the fencecheck binary"))?;
                    *slot = Some(p.clone());
                    p
                }
            };
            bind.0 = path;
        }
        Ok(spec)
    }

    fn remove_pinned(&self) {
        // Not while a pin is under way (then the lock is held): that start is failing anyway,
        // and the guard's sweep or `fencecheck clean` removes what it leaves.
        if let Some(p) = self.pinned.try_lock().ok().and_then(|mut p| p.take()) {
            let _ = std::fs::remove_file(p);
        }
    }

    fn create_body(&self, spec: &ContainerSpec, name: &str) -> ContainerCreateBody {
        let ports: Vec<u16> = spec.port.iter().chain(&spec.extra_ports).copied().collect();
        let bindings = ports
            .iter()
            .map(|p| {
                let binding = PortBinding {
                    host_ip: Some("127.0.0.1".to_string()),
                    host_port: Some(String::new()),
                };
                (format!("{p}/tcp"), Some(vec![binding]))
            })
            .collect();
        let binds = spec
            .binds
            .iter()
            .map(|(host, inside, ro)| bind_arg(host, inside, *ro))
            .collect();
        ContainerCreateBody {
            image: Some(spec.image.clone().unwrap_or_else(|| self.image.clone())),
            cmd: Some(spec.cmd.clone()),
            hostname: Some(name.to_string()),
            user: spec.user.clone(),
            env: Some(spec.env.iter().map(|(k, v)| format!("{k}={v}")).collect()),
            exposed_ports: Some(ports.iter().map(|p| format!("{p}/tcp")).collect()),
            labels: Some(HashMap::from([
                (RUN_LABEL.to_string(), self.run_id.clone()),
                ("fencecheck.node".to_string(), spec.name.clone()),
            ])),
            host_config: Some(HostConfig {
                network_mode: Some(self.network.clone()),
                port_bindings: Some(bindings),
                binds: Some(binds),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn stream_logs(&self, id: &str, name: &str, cursor: logs::Cursor) {
        if let Some(dir) = &self.run_dir {
            let path = dir.join("nodes").join(format!("{name}.log"));
            logs::spawn_writer(self.docker.clone(), id.to_string(), path, cursor);
        }
    }

    /// Reads the container's current host PID and published ports.
    async fn inspect(&self, name: &str, role: super::Role) -> Result<Node, DockerError> {
        let info = self
            .docker
            .inspect_container(name, None)
            .await
            .map_err(DockerError::api(format!("inspect container {name}")))?;
        let spec_port = self
            .started
            .lock()
            .ok()
            .and_then(|s| s.get(name).and_then(|s| s.spec.port));
        let mut published: Vec<(u16, u16)> = info
            .network_settings
            .and_then(|n| n.ports)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(key, bindings)| {
                let inside = key.split('/').next()?.parse().ok()?;
                let host = bindings?.first()?.host_port.as_ref()?.parse().ok()?;
                Some((inside, host))
            })
            .collect();
        published.sort_unstable();
        let pid = info.state.and_then(|s| s.pid).unwrap_or(0);
        Ok(Node {
            name: name.to_string(),
            container_id: info.id.unwrap_or_default(),
            host_pid: u32::try_from(pid).unwrap_or(0),
            address: match spec_port {
                Some(p) => format!("{name}:{p}"),
                None => name.to_string(),
            },
            client_port: spec_port
                .and_then(|p| published.iter().find(|(c, _)| *c == p).map(|(_, h)| *h)),
            published,
            role,
        })
    }

    /// The node as it is now (host PID and published port change on restart).
    pub async fn refresh(&self, node: &Node) -> Result<Node, DockerError> {
        self.inspect(&node.name, node.role).await
    }

    pub(crate) async fn wait_ready(
        &self,
        node: &Node,
        ready: &Readiness,
        after_log: Option<&str>,
        timeout: Duration,
    ) -> Result<(), DockerError> {
        let start = Instant::now();
        let ok = match ready {
            Readiness::Started => true,
            Readiness::LogLine(needle) => {
                let id = &node.container_id;
                logs::wait_for_line(&self.docker, id, needle, after_log, timeout).await
            }
            Readiness::Listening(port) => loop {
                if proc_net::is_listening(node.host_pid, *port) {
                    break true;
                }
                if start.elapsed() > timeout || self.exit_code(node).await.is_some() {
                    break false;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            },
        };
        if ok {
            return Ok(());
        }
        Err(self.not_ready_error(node, ready, start.elapsed()).await)
    }

    /// `Some(exit code)` when the container is not running.
    pub(crate) async fn exit_code(&self, node: &Node) -> Option<i64> {
        let info = self
            .docker
            .inspect_container(&node.container_id, None)
            .await
            .ok()?;
        let state = info.state?;
        if state.running == Some(true) {
            None
        } else {
            Some(state.exit_code.unwrap_or(-1))
        }
    }

    /// The error for a container that did not become ready: exited (with its code) or timed out,
    /// with its last log lines.
    pub(crate) async fn not_ready_error(
        &self,
        node: &Node,
        ready: &Readiness,
        waited: Duration,
    ) -> DockerError {
        let log = logs::tail(&self.docker, &node.container_id, 15).await;
        match self.exit_code(node).await {
            Some(code) => DockerError::Exited {
                container: node.name.clone(),
                code,
                log,
            },
            None => DockerError::NotReady {
                container: node.name.clone(),
                waited,
                condition: format!("{ready:?}"),
                log,
            },
        }
    }
}

impl Drop for RunEnv {
    fn drop(&mut self) {
        if !self.torn_down.load(Ordering::SeqCst) {
            guard::blocking_teardown(vec![self.run_id.clone()]);
            self.remove_pinned();
        }
    }
}

/// One bind as Docker takes it, `<host>:<inside>[:ro]`. Docker takes a relative source for a
/// volume's name, so a host path given relative to the working directory (a run directory under
/// `results/`) is made absolute here, for every bind.
fn bind_arg(host: &std::path::Path, inside: &str, read_only: bool) -> String {
    let mode = if read_only { ":ro" } else { "" };
    let host = std::path::absolute(host).unwrap_or_else(|_| host.to_path_buf());
    format!("{}:{inside}{mode}", host.display())
}

#[cfg(test)]
mod tests {
    use super::bind_arg;

    #[test]
    fn a_relative_host_path_is_bound_as_an_absolute_one() {
        let arg = bind_arg(
            std::path::Path::new("results/runs/x/data/redis-1"),
            "/var/lib/redis",
            false,
        );
        let cwd = std::env::current_dir().expect("a working directory");
        assert_eq!(
            arg,
            format!(
                "{}/results/runs/x/data/redis-1:/var/lib/redis",
                cwd.display()
            )
        );
        assert_eq!(bind_arg(std::path::Path::new("/a"), "/b", true), "/a:/b:ro");
    }
}
