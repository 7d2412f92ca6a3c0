//! Shared by the `resource_*` tests: real stores in containers (started with the docker CLI,
//! labelled `fencecheck.run=<unique id>`, ports published on 127.0.0.1 only, removed on drop),
//! the 8-client write hammer, and the check that a `resource.jsonl` agrees with every reply.
#![allow(dead_code, clippy::unwrap_used)] // test helpers: a failed docker call should fail the test loudly

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use results::jsonl::JsonlReader;
use results::ResourceEntry;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use workloads::resource::{audit, Audit};
use workloads::resource::{ResourceClient, WriteReply, WriteRequest};

/// The node image of this build (its tag is a hash of the package list: never spelled out here).
pub fn image() -> String {
    containers::image::node_image_tag()
}

fn docker(args: &[&str]) -> Result<String, String> {
    let out = Command::new("docker")
        .args(args)
        .output()
        .map_err(|e| format!("docker: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "docker {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// SIGKILLs a container (usable from a blocking task: needs no `Docker`).
pub fn docker_kill(container: &str) {
    docker(&["kill", container]).unwrap();
}

/// One test's containers and network; everything is removed on drop.
pub struct Docker {
    pub id: String,
    pub network: String,
    containers: Vec<String>,
}

impl Docker {
    pub fn new(tag: &str) -> Docker {
        let id = format!("t-resource-{tag}-{:08x}", rand::random::<u32>());
        let network = format!("{id}-net");
        docker(&[
            "network",
            "create",
            "--label",
            &format!("fencecheck.run={id}"),
            &network,
        ])
        .unwrap();
        Docker {
            id,
            network,
            containers: Vec::new(),
        }
    }

    /// Starts `cmd` (run by `sh -c`) in a container named `<id>-<name>` publishing `port` on
    /// 127.0.0.1; returns the container name (its host name on the network).
    pub fn run(&mut self, name: &str, port: u16, mounts: &[(&Path, &str)], cmd: &str) -> String {
        let cname = format!("{}-{name}", self.id);
        let label = format!("fencecheck.run={}", self.id);
        let publish = format!("127.0.0.1::{port}");
        let mut args: Vec<String> = [
            "run",
            "-d",
            "--name",
            &cname,
            "--hostname",
            &cname,
            "--label",
            &label,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend([
            "--network".into(),
            self.network.clone(),
            "-p".into(),
            publish,
        ]);
        for (host, inside) in mounts {
            args.extend(["-v".into(), format!("{}:{inside}", host.display())]);
        }
        args.extend([image(), "sh".into(), "-c".into(), cmd.into()]);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        docker(&refs).unwrap();
        self.containers.push(cname.clone());
        cname
    }

    /// The 127.0.0.1 port that `port` of `container` is published on (changes after a restart).
    pub fn host_port(&self, container: &str, port: u16) -> u16 {
        let out = docker(&["port", container, &format!("{port}/tcp")]).unwrap();
        let line = out
            .lines()
            .find(|l| l.starts_with("127.0.0.1:"))
            .expect("published on 127.0.0.1");
        line.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// Waits until the container's output contains `needle`.
    pub fn wait_for(&self, container: &str, needle: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            let out = Command::new("docker")
                .args(["logs", container])
                .output()
                .unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            if text.contains(needle) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{container} never printed {needle:?}:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn kill(&self, container: &str) {
        docker_kill(container);
    }

    pub fn start(&self, container: &str) {
        docker(&["start", container]).unwrap();
    }

    pub fn etcd(&mut self) -> String {
        let host = format!("{}-etcd", self.id);
        let cmd = format!(
            "exec etcd --name e1 --data-dir /tmp/e1 --listen-client-urls http://0.0.0.0:2379 \
             --advertise-client-urls http://{host}:2379 --listen-peer-urls http://0.0.0.0:2380 \
             --initial-advertise-peer-urls http://{host}:2380 --initial-cluster e1=http://{host}:2380"
        );
        self.run("etcd", 2379, &[], &cmd)
    }

    pub fn redis(&mut self) -> String {
        self.run(
            "redis",
            6379,
            &[],
            "exec redis-server --port 6379 --bind 0.0.0.0 --protected-mode no --save '' --appendonly no",
        )
    }

    /// PostgreSQL 15 with trust auth for the test network (fsync off: tests measure decisions,
    /// not durability).
    pub fn postgres(&mut self) -> String {
        self.run(
            "pg",
            5432,
            &[],
            "mkdir -p /tmp/pg && chown postgres /tmp/pg && \
             runuser -u postgres -- /usr/lib/postgresql/15/bin/initdb -D /tmp/pg -A trust -U postgres >/dev/null && \
             echo 'host all all 0.0.0.0/0 trust' >> /tmp/pg/pg_hba.conf && \
             exec runuser -u postgres -- /usr/lib/postgresql/15/bin/postgres -D /tmp/pg \
             -c listen_addresses=* -c fsync=off -c max_connections=50 -k /tmp",
        )
    }

    /// Names of containers still carrying this test's label.
    pub fn leftovers(id: &str) -> String {
        docker(&[
            "ps",
            "-a",
            "-q",
            "--filter",
            &format!("label=fencecheck.run={id}"),
        ])
        .unwrap()
    }
}

impl Drop for Docker {
    fn drop(&mut self) {
        for c in &self.containers {
            let _ = docker(&["rm", "-f", "-v", c]);
        }
        let _ = docker(&["network", "rm", &self.network]);
    }
}

/// A fresh directory under the system temp dir (a run dir stand-in).
pub fn run_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "fc-resource-{tag}-{}-{:x}",
        std::process::id(),
        rand::random::<u32>()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn write(key: &str, token: Option<u64>, op_id: &str) -> WriteRequest {
    WriteRequest {
        lock: "l".into(),
        lock_key: None,
        key: key.into(),
        value: serde_json::json!(op_id),
        token,
        op_id: op_id.into(),
        owner: "worker-1".into(),
        lease: "lease-1".into(),
        process: 1,
    }
}

/// One write sent by the hammer and what came back.
#[derive(Debug, Clone)]
pub struct Sent {
    pub req: WriteRequest,
    pub reply: Result<WriteReply, String>,
}

/// Chooses a write's token (and lock key) for client `c`.
pub type Chooser = Arc<dyn Fn(&mut StdRng, &str) -> (Option<u64>, Option<String>) + Send + Sync>;

/// `clients` connections send `total` writes between them to random `keys`, each token drawn by
/// `choose`. Returns every write with its reply, in no particular order.
pub async fn hammer(
    addr: &str,
    clients: usize,
    total: usize,
    keys: &[&str],
    seed: u64,
    choose: Chooser,
) -> Vec<Sent> {
    hammer_until(addr, clients, total, "", keys, seed, choose, None).await
}

/// [`hammer`] that also stops a client at its first error (the resource died) or when `stop`
/// is set; op_ids are `<prefix><client>-<i>`.
#[allow(clippy::too_many_arguments)]
pub async fn hammer_until(
    addr: &str,
    clients: usize,
    total: usize,
    prefix: &str,
    keys: &[&str],
    seed: u64,
    choose: Chooser,
    stop: Option<Arc<AtomicBool>>,
) -> Vec<Sent> {
    let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (addr, keys, choose, stop) =
            (addr.to_string(), keys.clone(), choose.clone(), stop.clone());
        let prefix = prefix.to_string();
        let n = total / clients + usize::from(c < total % clients);
        tasks.push(tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(seed + c as u64);
            let mut client = ResourceClient::connect(&addr).await.unwrap();
            let mut sent = Vec::with_capacity(n);
            for i in 0..n {
                if stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed)) {
                    break;
                }
                let key = keys[rng.random_range(0..keys.len())].clone();
                let (token, lock_key) = choose(&mut rng, &key);
                let req = WriteRequest {
                    lock: format!("lock-{key}"),
                    lock_key,
                    key,
                    value: serde_json::json!({"client": c, "i": i}),
                    token,
                    op_id: format!("{prefix}{c}-{i}"),
                    owner: format!("worker-{c}"),
                    lease: format!("lease-{c}"),
                    process: c as u32,
                };
                let reply = client.write(&req).await.map_err(|e| e.to_string());
                let failed = reply.is_err();
                sent.push(Sent { req, reply });
                if failed && stop.is_some() {
                    break;
                }
            }
            sent
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all
}

pub fn read_log(path: &Path) -> Vec<ResourceEntry> {
    JsonlReader::<ResourceEntry>::open(path)
        .unwrap()
        .map(|r| r.unwrap().1)
        .collect()
}

/// The log agrees with itself (`audit`) and with every acknowledged reply: the entry at the
/// reply's seq is that write with that decision and highest_before; no acknowledged write is
/// missing; nothing is in the log that nobody sent. Per key, the store's own order of the
/// acknowledged decisions rises with seq. Returns the log.
pub fn check_log(path: &Path, sent: &[Sent], how: Audit) -> Vec<ResourceEntry> {
    let log = read_log(path);
    audit(&log, how).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let by_op: HashMap<&str, &Sent> = sent.iter().map(|s| (s.req.op_id.as_str(), s)).collect();
    for e in &log {
        assert!(
            by_op.contains_key(e.op_id.as_str()),
            "seq {} ({}) was never sent",
            e.seq,
            e.op_id
        );
    }
    let mut per_key: BTreeMap<&str, Vec<(u64, u64)>> = BTreeMap::new();
    for s in sent {
        let Ok(r) = &s.reply else { continue };
        let e = log
            .get(r.seq as usize)
            .unwrap_or_else(|| panic!("acknowledged seq {} is missing from the log", r.seq));
        assert_eq!(
            (e.op_id.as_str(), e.result, e.highest_before, e.token),
            (
                s.req.op_id.as_str(),
                r.result,
                r.highest_before,
                s.req.token
            ),
            "log line seq {} disagrees with its reply",
            r.seq
        );
        if let Some(order) = r.store_order {
            per_key
                .entry(s.req.key.as_str())
                .or_default()
                .push((r.seq, order));
        }
    }
    for (key, mut orders) in per_key {
        orders.sort();
        for w in orders.windows(2) {
            assert!(
                w[0].1 <= w[1].1,
                "key {key}: seq {} has store order {} after seq {} with {}",
                w[1].0,
                w[1].1,
                w[0].0,
                w[0].1
            );
        }
    }
    log
}
