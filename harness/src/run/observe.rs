//! The lock service's own record of a run (docs/design.md, "service.jsonl"): an observer started
//! with the workload watches the service's lock keys from the host, through the ports published
//! on 127.0.0.1, and writes each change to `service.jsonl` on the run's clock. Faults act inside
//! the run's network and on the nodes' processes, so they do not cut the observer off unless a
//! node it reads is frozen or killed; a change stream it could not take up again where it broke
//! off is recorded as a gap. One observer per provider; each follows one or more streams (etcd's
//! one watch, each Redis server's notifications), and the record is whole only while every
//! stream is followed.

mod etcd;
mod etcd_leases;
mod postgres;
mod redis;
mod sentinel;
mod zookeeper;
mod zookeeper_sessions;

use super::prepare::HarnessLog;
use anyhow::Context;
use containers::cluster::ClusterHandle;
use results::jsonl::JsonlWriter;
use results::service_log::{ServiceEntry, ServiceWhat};
use results::{Provider, RunClock};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

/// Stops the observer when dropped, recording a gap if it was cut off at that moment.
pub struct Observer {
    task: tokio::task::JoinHandle<()>,
    out: Arc<Record>,
}

impl Drop for Observer {
    fn drop(&mut self) {
        self.task.abort();
        let cut_off = self.out.cut_off();
        if !cut_off.is_empty() {
            self.out.gap(
                None,
                &format!(
                    "the run ended while the observer was cut off from {}",
                    cut_off.join(", ")
                ),
            );
        }
        if let Err(e) = self.out.writer.sync() {
            self.out
                .log
                .line(&format!("service.jsonl: syncing at the end: {e}"));
        }
    }
}

/// Where an observer writes, and which of its streams are following the service's changes
/// right now (by name: `service` for a single stream, a node's name otherwise).
struct Record {
    writer: JsonlWriter,
    clock: RunClock,
    log: HarnessLog,
    following: Mutex<BTreeMap<String, bool>>,
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

    fn streams(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, bool>> {
        self.following.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `stream` is following the service's changes now.
    fn following(&self, stream: &str) -> bool {
        self.streams().get(stream).copied().unwrap_or(false)
    }

    fn set_following(&self, stream: &str, yes: bool) {
        self.streams().insert(stream.to_string(), yes);
    }

    /// Whether every stream (at least one) follows now.
    fn following_all(&self) -> bool {
        let streams = self.streams();
        !streams.is_empty() && streams.values().all(|f| *f)
    }

    /// The streams not following now.
    fn cut_off(&self) -> Vec<String> {
        let streams = self.streams();
        streams
            .iter()
            .filter(|(_, following)| !**following)
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// After one attempt of `stream` ended (`why`): if the stream was following, a gap of
    /// `node` (its `node` field) whose `error` says `what` broke and why, said in the harness
    /// log too; then a pause of [`RETRY`] before the next attempt.
    async fn broke(&self, stream: &str, node: Option<&str>, what: &str, why: &str) {
        if self.following(stream) {
            self.gap(node, &format!("{what} broke: {why}"));
            self.log.line(&format!(
                "service.jsonl: {what} broke ({why}); trying again"
            ));
        }
        tokio::time::sleep(RETRY).await;
    }

    /// Records that changes of `node` (every node: `None`) are unknown from now until its next
    /// `watching` line.
    fn gap(&self, node: Option<&str>, why: &str) {
        let mut e = ServiceEntry::new(self.now(), ServiceWhat::Gap);
        e.node = node.map(str::to_string);
        e.error = Some(why.to_string());
        self.write(&e);
        let mut streams = self.streams();
        for (name, following) in streams.iter_mut() {
            if node.is_none_or(|n| n == name) {
                *following = false;
            }
        }
    }
}

/// Two streams' followers as one task; both are counted not following before either is polled,
/// so the workload waits for both.
fn both(
    out: &Record,
    streams: [&str; 2],
    a: impl std::future::Future<Output = ()> + Send + 'static,
    b: impl std::future::Future<Output = ()> + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    for stream in streams {
        out.set_following(stream, false);
    }
    tokio::spawn(async move {
        tokio::join!(a, b);
    })
}

/// How long an observer waits before it tries a stream again after it broke.
const RETRY: Duration = Duration::from_millis(200);

/// How long the workload waits for the observer to follow the service before it starts
/// anyway, its record then beginning late.
const READY: Duration = Duration::from_secs(5);

/// Starts the observer of `cluster`'s provider writing to `path`, and waits until it follows
/// every stream (at most [`READY`]).
pub async fn start(
    cluster: &Arc<RwLock<ClusterHandle>>,
    clock: RunClock,
    path: &Path,
    log: &HarnessLog,
) -> anyhow::Result<Option<Observer>> {
    let provider = cluster.read().unwrap_or_else(|p| p.into_inner()).provider;
    if provider == Provider::Memory {
        return Ok(None);
    }
    let writer =
        JsonlWriter::create(path).with_context(|| format!("creating {}", path.display()))?;
    let out = Arc::new(Record {
        writer,
        clock,
        log: log.clone(),
        following: Mutex::new(BTreeMap::new()),
    });
    let cluster = cluster.clone();
    let task = match provider {
        Provider::Etcd => both(
            &out,
            [etcd::STREAM, etcd_leases::STREAM],
            etcd::follow(cluster.clone(), out.clone()),
            etcd_leases::follow(cluster, out.clone()),
        ),
        Provider::Zookeeper => both(
            &out,
            [zookeeper::STREAM, zookeeper_sessions::STREAM],
            zookeeper::follow(cluster.clone(), out.clone()),
            zookeeper_sessions::follow(cluster, out.clone()),
        ),
        Provider::Redis | Provider::Redlock | Provider::RedisSentinel => {
            let servers = redis::follow(cluster.clone(), out.clone());
            let sentinels = sentinel::follow_all(cluster, out.clone());
            tokio::spawn(async move {
                tokio::join!(servers, sentinels);
            })
        }
        Provider::Postgres => tokio::spawn(postgres::follow(cluster, out.clone())),
        Provider::Memory => return Ok(None),
    };
    let waited = tokio::time::Instant::now();
    while !out.following_all() {
        if waited.elapsed() >= READY {
            log.line(&format!(
                "service.jsonl: the observer did not follow {} within {READY:?}; the workload \
                 starts and the record begins late",
                out.cut_off().join(", ")
            ));
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    if out.following_all() {
        log.line(&format!(
            "service.jsonl: the observer follows, after {:?}",
            waited.elapsed()
        ));
    }
    Ok(Some(Observer { task, out }))
}
