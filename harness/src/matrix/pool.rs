//! The shared clusters of one matrix run. A run that may share ([`sharing`]) takes a cluster of
//! its provider from the pool: one already up, whether other runs are on it or it is idle after
//! its last one, once [`SharedCluster::verify`] found it whole; else a fresh one. A cluster that
//! fails its check is never used again: it is torn down when its last run leaves, and the run
//! that asked gets a fresh one. Every cluster goes at the matrix's end, on an error too (each
//! is a `RunEnv`, removed by its guard on a panic or Ctrl-C).
//!
//! Runs on one cluster take lock names no earlier run on it took (the cluster's use number
//! after the test's lock name), so nothing one run left there (a key, a node, a lease being
//! let go) is anything another run waits for or reads.

use crate::config::TestPlan;
use crate::run::shared_cluster::{self, sharing, OnCluster, SharedCluster};
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use workloads::kinds::Provider;

/// The pool: its own async runtime (every run has one of its own, which ends with the run),
/// where its clusters' logs go, and the clusters.
pub struct Pool {
    runtime: tokio::runtime::Runtime,
    logs: PathBuf,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    clusters: Vec<Pooled>,
}

struct Pooled {
    cluster: Arc<SharedCluster>,
    /// Runs on it now.
    users: usize,
    /// Runs it has served, this one included: the next lock name's number.
    uses: usize,
    /// It failed its check: no run takes it again.
    retired: bool,
}

/// A run's place on a shared cluster: the cluster, and the lock name it takes there.
pub struct Checkout {
    pub on: OnCluster,
    pub lock: String,
}

impl Pool {
    /// A pool whose clusters keep their nodes' output under `logs/<cluster id>/`.
    pub fn new(logs: &Path) -> anyhow::Result<Pool> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .context("starting the shared clusters' runtime")?;
        Ok(Pool {
            runtime,
            logs: logs.to_path_buf(),
            state: Mutex::new(State::default()),
        })
    }

    /// A cluster for `plan`, or `None` when the plan needs one of its own ([`sharing`]).
    pub fn checkout(&self, plan: &TestPlan) -> Option<anyhow::Result<Checkout>> {
        let provider = sharing(plan).ok()?;
        Some(self.checkout_of(provider).map(|(on, uses)| Checkout {
            on,
            lock: format!("{}-{uses}", plan.lock),
        }))
    }

    /// A verified cluster of `provider` and its use number, started when none passes its
    /// check. The pool stays locked meanwhile, so runs that ask at once share the one start.
    fn checkout_of(&self, provider: Provider) -> anyhow::Result<(OnCluster, usize)> {
        let mut state = self.lock();
        for i in 0..state.clusters.len() {
            let pooled = &state.clusters[i];
            if pooled.retired || pooled.cluster.provider != provider {
                continue;
            }
            let cluster = pooled.cluster.clone();
            match self.runtime.block_on(cluster.verify()) {
                Ok(()) => {
                    let pooled = &mut state.clusters[i];
                    pooled.users += 1;
                    pooled.uses += 1;
                    return Ok((cluster.on().clone(), pooled.uses));
                }
                Err(why) => {
                    eprintln!(
                        "matrix: shared cluster {} failed its check ({why}); a fresh one for \
                         the next run",
                        cluster.on().id
                    );
                    state.clusters[i].retired = true;
                }
            }
        }
        self.sweep(&mut state);
        let id = shared_cluster::cluster_id(provider);
        let logs = self.logs.join(&id);
        let cluster = self
            .runtime
            .block_on(SharedCluster::start(&id, provider, &logs))?;
        let on = cluster.on().clone();
        state.clusters.push(Pooled {
            cluster: Arc::new(cluster),
            users: 1,
            uses: 1,
            retired: false,
        });
        Ok((on, 1))
    }

    /// The run on cluster `id` is over.
    pub fn checkin(&self, id: &str) {
        let mut state = self.lock();
        if let Some(pooled) = state.clusters.iter_mut().find(|p| p.cluster.on().id == id) {
            pooled.users = pooled.users.saturating_sub(1);
        }
        self.sweep(&mut state);
    }

    /// Tears down every cluster; says which could not be.
    pub fn finish(&self) -> Vec<String> {
        let mut state = self.lock();
        let all: Vec<Pooled> = state.clusters.drain(..).collect();
        all.iter()
            .filter_map(|p| self.runtime.block_on(p.cluster.teardown()).err())
            .map(|e| format!("{e:#}"))
            .collect()
    }

    /// Tears down the retired clusters nobody is on any more.
    fn sweep(&self, state: &mut State) {
        let (gone, kept): (Vec<Pooled>, Vec<Pooled>) = state
            .clusters
            .drain(..)
            .partition(|p| p.retired && p.users == 0);
        state.clusters = kept;
        for p in gone {
            if let Err(e) = self.runtime.block_on(p.cluster.teardown()) {
                eprintln!("matrix: {e:#}");
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The clusters up now (a test's view).
    pub fn clusters(&self) -> Vec<Arc<SharedCluster>> {
        self.lock()
            .clusters
            .iter()
            .map(|p| p.cluster.clone())
            .collect()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        for e in self.finish() {
            eprintln!("matrix: {e}");
        }
    }
}
