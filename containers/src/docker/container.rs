//! One container as fencecheck sees it: what to start ([`ContainerSpec`]), when it counts as up
//! ([`Readiness`]) and what the rest of the harness needs to reach and hurt it ([`Node`]: host PID
//! for signals and `nsenter`, in-network address for other containers, 127.0.0.1 port for the
//! host).

use std::path::PathBuf;
use std::time::Duration;

/// Where the harness's own binary appears inside containers started with
/// [`ContainerSpec::fencecheck`].
pub const FENCECHECK_IN_CONTAINER: &str = "/usr/local/bin/fencecheck";

/// What a node is for. Static: the *current* leader is asked from the cluster
/// ([`crate::cluster::ClusterHandle::leader`]), since it moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// A member of a quorum system (etcd, ZooKeeper).
    Member,
    /// A Redis master (the single one, one of the Redlock five, or the sentinel-managed one).
    Master,
    /// A Redis replica.
    Replica,
    /// A Redis sentinel.
    Sentinel,
    /// A database server (PostgreSQL).
    Database,
    /// A lock-client worker process.
    Worker,
    /// The protected resource.
    Resource,
    /// Anything else.
    Other,
}

/// When a started container counts as ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// As soon as the engine reports it running.
    Started,
    /// When this substring appears in its stdout or stderr.
    LogLine(String),
    /// When its server process listens on this TCP port inside the container (read from the
    /// container's network namespace via `/proc/<host pid>/net/tcp`: no traffic is sent, and
    /// docker-proxy's always-accepting published port does not fool it).
    Listening(u16),
}

/// What to start. Build with [`ContainerSpec::new`] or [`ContainerSpec::fencecheck`] and the
/// builder methods; every field has a sensible default.
#[derive(Debug, Clone)]
pub struct ContainerSpec {
    /// Short name, unique within the run, e.g. `worker-3`; the container is named
    /// `fc-<run id>-<name>` and other containers reach it by that name.
    pub name: String,
    /// Image; `None` means the node image of the run environment.
    pub image: Option<String>,
    /// Command and arguments (the image has no CMD or ENTRYPOINT).
    pub cmd: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Bind mounts: host path, container path, read-only.
    pub binds: Vec<(PathBuf, String, bool)>,
    /// The primary port: exposed, published on 127.0.0.1 (random host port), and the port of
    /// [`Node::address`] / [`Node::client_port`].
    pub port: Option<u16>,
    /// More ports to publish on 127.0.0.1 (see [`Node::published`]).
    pub extra_ports: Vec<u16>,
    pub role: Role,
    pub ready: Readiness,
    pub ready_timeout: Duration,
    /// User to run as (e.g. `postgres`); `None` is root.
    pub user: Option<String>,
    /// Where the server keeps the data its persistence writes, in the container: a run whose
    /// servers persist binds it to a directory of the run ([`crate::control::data`]).
    pub data_dir: Option<&'static str>,
}

impl ContainerSpec {
    /// A container of the node image running `cmd`.
    pub fn new<S: Into<String>>(name: &str, cmd: impl IntoIterator<Item = S>) -> Self {
        ContainerSpec {
            name: name.to_string(),
            image: None,
            cmd: cmd.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            binds: Vec::new(),
            port: None,
            extra_ports: Vec::new(),
            role: Role::Other,
            ready: Readiness::Started,
            ready_timeout: Duration::from_secs(60),
            user: None,
            data_dir: None,
        }
    }

    /// A container running the harness's own binary (`fencecheck <args>`), bind-mounted
    /// read-only from `binary` at [`FENCECHECK_IN_CONTAINER`]. Pass
    /// `std::env::current_exe()?` from the `fencecheck` binary, or
    /// `env!("CARGO_BIN_EXE_fencecheck")` from an integration test.
    pub fn fencecheck<S: Into<String>>(
        name: &str,
        binary: impl Into<PathBuf>,
        args: impl IntoIterator<Item = S>,
    ) -> Self {
        let mut cmd = vec![FENCECHECK_IN_CONTAINER.to_string()];
        cmd.extend(args.into_iter().map(Into::into));
        ContainerSpec::new(name, cmd).bind(binary, FENCECHECK_IN_CONTAINER, true)
    }

    pub fn image(mut self, image: impl Into<String>) -> Self {
        self.image = Some(image.into());
        self
    }
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }
    pub fn bind(mut self, host: impl Into<PathBuf>, container: &str, read_only: bool) -> Self {
        self.binds
            .push((host.into(), container.to_string(), read_only));
        self
    }
    pub fn port(mut self, port: u16) -> Self {
        self.port = Some(port);
        self
    }
    pub fn extra_port(mut self, port: u16) -> Self {
        self.extra_ports.push(port);
        self
    }
    pub fn role(mut self, role: Role) -> Self {
        self.role = role;
        self
    }
    pub fn ready(mut self, ready: Readiness) -> Self {
        self.ready = ready;
        self
    }
    pub fn ready_timeout(mut self, timeout: Duration) -> Self {
        self.ready_timeout = timeout;
        self
    }
    pub fn user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }
}

/// A started container. Plain data: after a restart, ask [`crate::docker::RunEnv::restart`]
/// for the new one (the host PID and the published port change).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Node {
    /// The container name, also its host name on the run's network (`fc-<run>-etcd-1`).
    pub name: String,
    pub container_id: String,
    /// Host PID of the container's main process (the server itself: commands `exec` it), for
    /// `kill(SIGSTOP/SIGCONT/SIGKILL)` and `nsenter -t <pid> -n`.
    pub host_pid: u32,
    /// `name:port` that other containers on the run's network use (just `name` without a port).
    pub address: String,
    /// The primary port published on 127.0.0.1, for clients running on the host.
    pub client_port: Option<u16>,
    /// Every published port: (container port, host port on 127.0.0.1).
    pub published: Vec<(u16, u16)>,
    pub role: Role,
}

impl Node {
    /// `127.0.0.1:<client_port>` for host-side clients.
    pub fn host_endpoint(&self) -> Option<String> {
        self.client_port.map(|p| format!("127.0.0.1:{p}"))
    }

    /// The host port published for `container_port`.
    pub fn host_port(&self, container_port: u16) -> Option<u16> {
        self.published
            .iter()
            .find(|(c, _)| *c == container_port)
            .map(|(_, h)| *h)
    }
}
