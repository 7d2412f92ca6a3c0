//! The lock service's own record of a run (docs/design.md, "service.jsonl"): an observer started
//! with the workload watches the service's lock keys from the host, through the ports published
//! on 127.0.0.1, and writes each change to `service.jsonl` on the run's clock. Faults act inside
//! the run's network and on the nodes' processes, so they do not cut the observer off unless a
//! node it reads is frozen or killed; a change stream it could not take up again where it broke
//! off is recorded as a gap. Providers without an observer yet write no `service.jsonl`, and the
//! kinds that need it stay unknown where they apply.

mod etcd;

use super::prepare::HarnessLog;
use anyhow::Context;
use containers::cluster::ClusterHandle;
use results::jsonl::JsonlWriter;
use results::service_log::{ServiceEntry, ServiceWhat};
use results::{Provider, RunClock};
use std::path::Path;
use std::sync::{Arc, RwLock};

/// Stops the observer when dropped, recording a gap if it was cut off at that moment.
pub struct Observer {
    task: tokio::task::JoinHandle<()>,
    out: Arc<Record>,
}

impl Drop for Observer {
    fn drop(&mut self) {
        self.task.abort();
        if !self.out.following() {
            self.out
                .gap("the run ended while the observer was cut off from the service");
        }
        if let Err(e) = self.out.writer.sync() {
            self.out
                .log
                .line(&format!("service.jsonl: syncing at the end: {e}"));
        }
    }
}

/// Where an observer writes, and whether it is following the service's changes right now.
struct Record {
    writer: JsonlWriter,
    clock: RunClock,
    log: HarnessLog,
    following: std::sync::atomic::AtomicBool,
}

impl Record {
    fn write(&self, entry: &ServiceEntry) {
        if let Err(e) = self.writer.append(entry) {
            self.log.line(&format!("service.jsonl: {e}"));
        }
    }

    fn now(&self) -> u64 {
        self.clock.now()
    }

    fn following(&self) -> bool {
        self.following.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn set_following(&self, yes: bool) {
        self.following
            .store(yes, std::sync::atomic::Ordering::Relaxed);
    }

    fn gap(&self, why: &str) {
        let mut e = ServiceEntry::new(self.now(), ServiceWhat::Gap);
        e.error = Some(why.to_string());
        self.write(&e);
        self.set_following(false);
    }
}

/// Starts the observer of `cluster`'s provider writing to `path`; `None` for a provider that has
/// none yet (no file is written).
pub fn start(
    cluster: &Arc<RwLock<ClusterHandle>>,
    clock: RunClock,
    path: &Path,
    log: &HarnessLog,
) -> anyhow::Result<Option<Observer>> {
    let provider = cluster.read().unwrap_or_else(|p| p.into_inner()).provider;
    if provider != Provider::Etcd {
        return Ok(None);
    }
    let writer =
        JsonlWriter::create(path).with_context(|| format!("creating {}", path.display()))?;
    let out = Arc::new(Record {
        writer,
        clock,
        log: log.clone(),
        following: false.into(),
    });
    let task = tokio::spawn(etcd::follow(cluster.clone(), out.clone()));
    Ok(Some(Observer { task, out }))
}
