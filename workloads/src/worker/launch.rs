//! A worker's launch: everything one worker is made of (its name, its lock client — a recipe or
//! a library behind its adapter —, the validated [`RecipeConfig`], where the lock service, the
//! resource and the counter store are, its discipline), made once from the validated plan on the
//! host and handed whole to the place the worker runs: the container's `fencecheck worker
//! --launch <json>` or the harness's in-process site. Both call the one constructor,
//! [`WorkerLaunch::start`]; they differ only in how a [`Place`] reaches what the launch names
//! (real endpoints over the run's network, or services in the harness's own process).

use super::Worker;
use crate::adapter::{AdapterClient, Init, Launch, INIT_DEADLINE, PROTOCOL};
use crate::app::App;
use crate::client::Client;
use crate::config::{Discipline, RecipeConfig};
use crate::counter_guard::Counter;
use crate::fenced_write::ResourceWriter;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;

/// Everything one worker is made of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerLaunch {
    /// The worker's name: the `owner` of its acquisitions.
    pub name: String,
    /// Who takes the lock.
    pub client: ClientLaunch,
    /// The lock's name (an adapter is started for one lock).
    pub lock: String,
    /// The lock client's validated timing. For a recipe, `config.recipe` is that recipe; for an
    /// adapter, the provider's default recipe, whose rules the timing follows.
    pub config: RecipeConfig,
    pub discipline: Discipline,
    /// The application the worker models (whether it asks its library before each write).
    #[serde(default)]
    pub app: App,
    /// The lock service's endpoints as the worker reaches them (`etcd-1:2379`, or its routes
    /// through the link proxy); empty in process.
    #[serde(default)]
    pub endpoints: Vec<String>,
    /// The master name the sentinels monitor (redis-sentinel).
    #[serde(default = "default_sentinel_master")]
    pub sentinel_master: String,
    /// The fenced resource (`host:port`); absent: the place's own (in process, or a private
    /// strict register for smoke tests).
    #[serde(default)]
    pub resource: Option<String>,
    /// The counter workload's store: `redis://host:port`, a PostgreSQL connection string, or
    /// `etcd-guard` (increments guarded by the lock key's revision on `endpoints`).
    #[serde(default)]
    pub counter_store: Option<String>,
    /// The run's start as absolute CLOCK_MONOTONIC ns (absent: the worker's own start).
    #[serde(default)]
    pub clock_start: Option<u64>,
}

fn default_sentinel_master() -> String {
    "mymaster".to_string()
}

/// The lock client of a launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientLaunch {
    /// One of fencecheck's recipes: the launch's `config.recipe`.
    Recipe,
    /// A library behind its adapter.
    Adapter(AdapterLaunch),
}

/// A library behind its adapter, as the worker starts it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdapterLaunch {
    /// The adapter's name in messages (a shipped adapter's folder name, or `own`).
    pub name: String,
    /// Which build of its library the plan asked for (`2.11.0`, `debian`, `requirements.txt`),
    /// empty when the plan names none; the worker's log says it beside what the library
    /// reports of itself at the handshake.
    #[serde(default)]
    pub release: String,
    /// `sh -c <command>`, in `dir` when given.
    pub command: String,
    #[serde(default)]
    pub dir: Option<PathBuf>,
    /// The test's `client_options`, passed to the adapter's `init` unchanged.
    #[serde(default = "empty_options")]
    pub options: serde_json::Value,
    /// Refuse to serve when the adapter reports no fence token (the resource decides by token).
    #[serde(default)]
    pub require_token: bool,
}

fn empty_options() -> serde_json::Value {
    serde_json::json!({})
}

/// Where a worker runs: how it reaches what its launch names.
pub trait Place: Send + Sync {
    /// The lock client of a recipe launch.
    fn recipe_client<'a>(
        &'a self,
        launch: &'a WorkerLaunch,
    ) -> BoxFuture<'a, Result<Arc<dyn Client>, String>>;

    /// How to start (and restart) the adapter of an adapter launch.
    fn adapter(&self, launch: &WorkerLaunch, adapter: &AdapterLaunch) -> Box<dyn Launch>;

    /// The client of the protected resource.
    fn resource<'a>(
        &'a self,
        launch: &'a WorkerLaunch,
    ) -> BoxFuture<'a, Result<Box<dyn ResourceWriter>, String>>;

    /// The counter store, when the launch names one (or the place has its own).
    fn counter<'a>(
        &'a self,
        launch: &'a WorkerLaunch,
    ) -> BoxFuture<'a, Result<Option<Arc<dyn Counter>>, String>>;
}

/// A worker that could not be started; names the worker and what failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("worker {worker}: {what}: {message}")]
pub struct LaunchError {
    pub worker: String,
    /// What was being reached (`recipe etcd-lease at etcd-1:2379,...`, `adapter kazoo`, ...).
    pub what: String,
    pub message: String,
}

impl WorkerLaunch {
    /// A launch that names no place yet: no endpoints, the place's own resource, no counter
    /// store, the worker's own clock.
    pub fn new(
        name: impl Into<String>,
        client: ClientLaunch,
        lock: impl Into<String>,
        config: RecipeConfig,
        discipline: Discipline,
    ) -> Self {
        WorkerLaunch {
            name: name.into(),
            client,
            lock: lock.into(),
            config,
            discipline,
            app: App::default(),
            endpoints: Vec::new(),
            sentinel_master: default_sentinel_master(),
            resource: None,
            counter_store: None,
            clock_start: None,
        }
    }

    /// The launch of recipe `config.recipe` at `endpoints`, with the default discipline
    /// (benchmarks and the recipe tests start workers this way, without a plan).
    pub fn recipe(name: impl Into<String>, config: RecipeConfig, endpoints: Vec<String>) -> Self {
        WorkerLaunch {
            endpoints,
            ..WorkerLaunch::new(
                name,
                ClientLaunch::Recipe,
                "",
                config,
                Discipline::default(),
            )
        }
    }

    /// Builds the worker this launch describes, reaching its lock client, resource and counter
    /// through `place`. The one constructor of a worker, in containers and in process.
    pub async fn start(&self, place: &dyn Place) -> Result<Worker, LaunchError> {
        let fail = |what: String| {
            let worker = self.name.clone();
            move |message: String| LaunchError {
                worker,
                what,
                message,
            }
        };
        let (client, label) = match &self.client {
            ClientLaunch::Recipe => {
                let what = format!(
                    "recipe {} at {}",
                    self.config.recipe,
                    self.endpoints.join(",")
                );
                let client = place.recipe_client(self).await.map_err(fail(what))?;
                (client, self.config.recipe.to_string())
            }
            ClientLaunch::Adapter(a) => {
                let what = format!("adapter {} ({:?})", a.name, a.command);
                self.start_adapter(a, place).await.map_err(fail(what))?
            }
        };
        let resource = place
            .resource(self)
            .await
            .map_err(fail(format!("resource {}", self.resource_name())))?;
        let mut worker = Worker::new(
            &self.name,
            client,
            resource,
            self.config.clone(),
            self.discipline,
        )
        .with_client_label(label)
        .with_ask(self.app.ask())
        .with_clock(
            self.clock_start
                .map_or_else(results::RunClock::start, results::RunClock::from_start),
        );
        let store = self.counter_store.as_deref().unwrap_or("in process");
        if let Some(counter) = place
            .counter(self)
            .await
            .map_err(fail(format!("counter store {store}")))?
        {
            worker = worker.with_counter(counter);
        }
        Ok(worker)
    }

    /// The adapter's `init`: who it works for, where the lock service is, the test's timing.
    pub fn init(&self, adapter: &AdapterLaunch) -> Init {
        Init {
            protocol: PROTOCOL,
            worker: self.name.clone(),
            lock: self.lock.clone(),
            provider: self.config.recipe.provider().to_string(),
            endpoints: self.endpoints.clone(),
            ttl_ms: self.config.ttl.as_millis() as u64,
            acquire_timeout_ms: self.config.acquire_timeout.as_millis() as u64,
            op_timeout_ms: self.config.op_timeout.as_millis() as u64,
            options: adapter.options.clone(),
        }
    }

    /// Starts the adapter and shakes hands with it; the label names the library it reported.
    async fn start_adapter(
        &self,
        a: &AdapterLaunch,
        place: &dyn Place,
    ) -> Result<(Arc<dyn Client>, String), String> {
        let launch = place.adapter(self, a);
        let adapter = AdapterClient::start(
            &a.name,
            launch,
            self.init(a),
            INIT_DEADLINE,
            self.config.clone(),
        )
        .await?;
        let d = adapter.described().clone();
        tracing::info!(
            adapter = %a.name,
            release = %a.release,
            library = %d.library,
            version = %d.version,
            token = d.token.as_deref().unwrap_or("none"),
            "adapter started"
        );
        if d.token.is_none() && a.require_token {
            return Err(format!(
                "{} {} reports no fence token, and the test's resource decides writes by token: \
                 use resource none (stale writes are then judged by grant order)",
                d.library, d.version
            ));
        }
        Ok((
            Arc::new(adapter),
            format!("{} ({} {})", a.name, d.library, d.version),
        ))
    }

    fn resource_name(&self) -> &str {
        self.resource.as_deref().unwrap_or("in process")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RawRecipeConfig, RecipeKind};

    fn launch() -> WorkerLaunch {
        WorkerLaunch {
            name: "worker-1".into(),
            client: ClientLaunch::Adapter(AdapterLaunch {
                release: "2.11.0".into(),
                name: "kazoo".into(),
                command: "python3 /adapters/kazoo/adapter.py".into(),
                dir: None,
                options: serde_json::json!({"style": "with"}),
                require_token: true,
            }),
            lock: "fc-lock".into(),
            config: RawRecipeConfig {
                acquire_timeout: Some(std::time::Duration::from_millis(1500)),
                ..Default::default()
            }
            .validate(RecipeKind::ZkLock)
            .unwrap(),
            discipline: "continue,inline".parse().unwrap(),
            app: App::JobKeep,
            endpoints: vec!["zk-1:2181".into()],
            sentinel_master: default_sentinel_master(),
            resource: Some("resource:7000".into()),
            counter_store: None,
            clock_start: Some(42),
        }
    }

    #[test]
    fn a_launch_travels_whole_and_comes_back_equal() {
        let l = launch();
        let json = serde_json::to_string(&l).unwrap();
        assert_eq!(serde_json::from_str::<WorkerLaunch>(&json).unwrap(), l);
        assert!(
            json.contains("\"discipline\":\"continue,inline\""),
            "{json}"
        );
    }

    #[test]
    fn the_init_carries_the_validated_timing_and_the_options() {
        let l = launch();
        let ClientLaunch::Adapter(a) = &l.client else {
            unreachable!()
        };
        let init = l.init(a);
        assert_eq!(init.acquire_timeout_ms, 1500);
        assert_eq!(init.op_timeout_ms, l.config.op_timeout.as_millis() as u64);
        assert_eq!(init.ttl_ms, 5000);
        assert_eq!(init.provider, "zookeeper");
        assert_eq!(init.options["style"], "with");
    }

    #[test]
    fn an_unknown_field_is_refused_by_name() {
        let mut v = serde_json::to_value(launch()).unwrap();
        v["ttl"] = "2s".into();
        let err = serde_json::from_value::<WorkerLaunch>(v)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `ttl`"), "{err}");
    }
}
