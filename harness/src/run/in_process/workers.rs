//! The in-process workers and the [`Place`] they run in: the memory lock service, the register
//! and the counter store that every worker of the run shares, reached without a network. Each
//! worker is built from its launch by the one constructor the container worker uses
//! ([`WorkerLaunch::start`]) and can be frozen, killed and started again, which is what the
//! in-process [`super::control`] does for the nemesis.

use futures::future::BoxFuture;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use workloads::adapter::{InProcessAdapter, Launch};
use workloads::client::Client;
use workloads::counter_guard::Counter;
use workloads::fenced_write::{MemoryResource, ResourceWriter};
use workloads::recipes::MemoryLockService;
use workloads::worker::{spawn_killable, AdapterLaunch, Freeze, Place, WorkerLaunch};

/// What every in-process worker of a run shares.
pub struct Shared {
    pub service: MemoryLockService,
    pub resource: MemoryResource,
    /// The counter workload's store: one in-process counter all workers share.
    pub counter: Arc<dyn Counter>,
}

/// One worker's place: the shared services, seen through its own freeze gate.
struct InProcessPlace {
    shared: Arc<Shared>,
    freeze: Freeze,
}

impl InProcessPlace {
    fn lock_client(&self, launch: &WorkerLaunch) -> Arc<dyn Client> {
        let c = &launch.config;
        let client = self
            .shared
            .service
            .client(&launch.name, c.ttl, c.acquire_timeout);
        self.freeze.client(Arc::new(client))
    }
}

impl Place for InProcessPlace {
    fn recipe_client<'a>(
        &'a self,
        launch: &'a WorkerLaunch,
    ) -> BoxFuture<'a, Result<Arc<dyn Client>, String>> {
        Box::pin(async move { Ok(self.lock_client(launch)) })
    }

    fn adapter(&self, launch: &WorkerLaunch, _adapter: &AdapterLaunch) -> Box<dyn Launch> {
        // The adapter is part of the worker: the same gate freezes it.
        let place = InProcessPlace {
            shared: self.shared.clone(),
            freeze: self.freeze.clone(),
        };
        let launch = launch.clone();
        Box::new(InProcessAdapter::new(move || place.lock_client(&launch)))
    }

    fn resource<'a>(
        &'a self,
        _launch: &'a WorkerLaunch,
    ) -> BoxFuture<'a, Result<Box<dyn ResourceWriter>, String>> {
        Box::pin(
            async move { Ok(Box::new(self.shared.resource.clone()) as Box<dyn ResourceWriter>) },
        )
    }

    fn counter<'a>(
        &'a self,
        _launch: &'a WorkerLaunch,
    ) -> BoxFuture<'a, Result<Option<Arc<dyn Counter>>, String>> {
        Box::pin(async move { Ok(Some(self.shared.counter.clone())) })
    }
}

/// One worker's live parts: the driver's end of its connection until the workload takes it,
/// its task (to kill it) and its gate (to freeze it).
#[derive(Default)]
struct Slot {
    conn: Option<tokio::io::DuplexStream>,
    task: Option<tokio::task::AbortHandle>,
    freeze: Freeze,
}

/// The run's in-process workers, by index.
pub struct Workers {
    launches: Vec<WorkerLaunch>,
    shared: Arc<Shared>,
    slots: Mutex<Vec<Slot>>,
    /// Bumped at every (re)start, so a waiter for a restart wakes.
    started: watch::Sender<u64>,
}

impl Workers {
    /// Starts one worker per launch.
    pub async fn start_all(
        launches: Vec<WorkerLaunch>,
        shared: Arc<Shared>,
    ) -> anyhow::Result<Workers> {
        let slots = launches.iter().map(|_| Slot::default()).collect();
        let workers = Workers {
            launches,
            shared,
            slots: Mutex::new(slots),
            started: watch::Sender::new(0),
        };
        for i in 0..workers.launches.len() {
            workers.start(i).await?;
        }
        Ok(workers)
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, Vec<Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn len(&self) -> usize {
        self.launches.len()
    }

    /// Every worker's name (the nemesis's targets).
    pub fn names(&self) -> Vec<String> {
        self.launches.iter().map(|l| l.name.clone()).collect()
    }

    /// The index of the worker named `name`.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.launches.iter().position(|l| l.name == name)
    }

    /// Starts worker `i` afresh from its launch (a new hold-less worker, thawed, with a new
    /// connection for the workload to take).
    pub async fn start(&self, i: usize) -> anyhow::Result<()> {
        let launch = &self.launches[i];
        let freeze = Freeze::default();
        let place = InProcessPlace {
            shared: self.shared.clone(),
            freeze: freeze.clone(),
        };
        let worker = launch.start(&place).await?.with_freeze(freeze.clone());
        let (conn, task) = spawn_killable(worker);
        let old = std::mem::replace(
            &mut self.slots()[i],
            Slot {
                conn: Some(conn),
                task: Some(task),
                freeze,
            },
        );
        if let Some(task) = old.task {
            task.abort();
        }
        self.started.send_modify(|n| *n += 1);
        Ok(())
    }

    /// Worker `i`'s connection, if it was started and nobody took it yet.
    pub fn take_conn(&self, i: usize) -> Option<tokio::io::DuplexStream> {
        self.slots().get_mut(i).and_then(|s| s.conn.take())
    }

    /// Whether a connection waits for the workload (the worker was started again).
    fn has_conn(&self, i: usize) -> bool {
        self.slots().get(i).is_some_and(|s| s.conn.is_some())
    }

    /// Waits until worker `i` has a fresh connection, or `deadline`.
    pub async fn restarted(&self, i: usize, deadline: tokio::time::Instant) -> bool {
        let mut started = self.started.subscribe();
        loop {
            if self.has_conn(i) {
                return true;
            }
            match tokio::time::timeout_at(deadline, started.changed()).await {
                Ok(Ok(())) => continue,
                _ => return self.has_conn(i),
            }
        }
    }

    pub fn freeze(&self, i: usize) {
        self.slots()[i].freeze.freeze();
    }

    pub fn thaw(&self, i: usize) {
        self.slots()[i].freeze.thaw();
    }

    /// The in-process SIGKILL: the worker's task ends at once, with its client and renewals.
    /// Its gate stays closed, so nothing of it that outlives the task (an adapter's call in
    /// flight) ever reaches the lock service again.
    pub fn kill(&self, i: usize) {
        let mut slots = self.slots();
        let slot = &mut slots[i];
        slot.freeze.freeze();
        if let Some(task) = slot.task.take() {
            task.abort();
        }
        slot.conn = None;
    }

    /// Ends every worker (the run is over).
    pub fn kill_all(&self) {
        for i in 0..self.len() {
            self.kill(i);
        }
    }
}
