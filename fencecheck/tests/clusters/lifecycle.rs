//! The life of containers around the clusters: restart keeps data and reports the new PID and
//! port; generic containers run the harness's own binary with log or port readiness; every exit
//! path removes everything (teardown, Drop, Ctrl-C) and what a SIGKILLed harness left behind is
//! removed by `fencecheck clean --run <id>`.

use crate::support::infra::{assert_nothing_left, run_id};
use containers::docker::{connect, list_run_containers, ContainerSpec, Readiness, Role, RunEnv};
use results::Provider;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FENCECHECK: &str = env!("CARGO_BIN_EXE_fencecheck");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_etcd_leader_restarts_with_its_data_and_a_new_pid() {
    let id = run_id("restart");
    let env = RunEnv::create(&id, None).await.expect("env");
    let outcome = async {
        let mut cluster = env.start_cluster(Provider::Etcd).await?;
        let mut client = etcd_client::Client::connect(cluster.endpoints(), None).await?;
        client.put("survives", "restart", None).await?;
        let leader = cluster.leader().await?.ok_or("no leader")?;
        env.kill(&leader).await?;
        let restarted = env.restart(&leader).await?;
        assert_ne!(restarted.host_pid, leader.host_pid);
        assert_eq!(restarted.container_id, leader.container_id);
        cluster.replace(restarted.clone());
        let endpoint = restarted.host_endpoint().ok_or("no port")?;
        let mut direct = etcd_client::Client::connect([endpoint], None).await?;
        let deadline = Instant::now() + Duration::from_secs(20);
        // Serializable read from the restarted member itself: its own data, after it rejoined.
        loop {
            let options = etcd_client::GetOptions::new().with_serializable();
            match direct.get("survives", Some(options)).await {
                Ok(resp) if !resp.kvs().is_empty() => {
                    assert_eq!(resp.kvs()[0].value(), b"restart");
                    break;
                }
                _ if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(100)).await
                }
                other => panic!("restarted member never served the key: {other:?}"),
            }
        }
        let again = cluster.leader().await?;
        assert!(again.is_some(), "a leader after the restart");
        Ok::<(), Box<dyn std::error::Error>>(())
    }
    .await;
    env.teardown().await.expect("teardown");
    assert_nothing_left(&id).await;
    outcome.expect("restart scenario");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generic_containers_run_the_harness_binary_and_wait_for_readiness() {
    let id = run_id("generic");
    let dir = tempfile::tempdir().expect("tempdir");
    let env = RunEnv::create(&id, Some(dir.path())).await.expect("env");
    let outcome = async {
        // The binary is mounted read-only; readiness by a log line.
        let spec = ContainerSpec::fencecheck("help", FENCECHECK, ["--help"])
            .role(Role::Worker)
            .ready(Readiness::LogLine("Usage".to_string()));
        let node = env.start_container(spec).await?;
        assert_eq!(node.address, format!("fc-{id}-help"));
        // Readiness by a listening port, published on 127.0.0.1 only.
        let spec = ContainerSpec::new("listener", ["nc", "-l", "-k", "-p", "7000"])
            .env("FENCECHECK_TEST", "1")
            .port(7000)
            .role(Role::Resource)
            .ready(Readiness::Listening(7000));
        let node = env.start_container(spec).await?;
        assert_eq!(node.address, format!("fc-{id}-listener:7000"));
        assert!(node.client_port.is_some());
        let info = env.docker().inspect_container(&node.name, None).await?;
        let ports = info
            .network_settings
            .and_then(|n| n.ports)
            .unwrap_or_default();
        for binding in ports.values().flatten().flatten() {
            assert_eq!(binding.host_ip.as_deref(), Some("127.0.0.1"), "{binding:?}");
        }
        // A container that exits before it is ready is an error quoting its output.
        let spec = ContainerSpec::new("dies", ["sh", "-c", "echo boom; exit 7"])
            .ready(Readiness::Listening(1234));
        let err = env
            .start_container(spec)
            .await
            .expect_err("must fail")
            .to_string();
        assert!(
            err.contains("exited (code 7)") && err.contains("boom"),
            "{err}"
        );
        Ok::<(), Box<dyn std::error::Error>>(())
    }
    .await;
    env.teardown().await.expect("teardown");
    assert_nothing_left(&id).await;
    outcome.expect("generic containers");
    let log = std::fs::read_to_string(dir.path().join(format!("nodes/fc-{id}-help.log")));
    assert!(log.expect("help log").contains("Usage"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_environment_without_teardown_removes_everything() {
    let id = run_id("drop");
    {
        let env = RunEnv::create(&id, None).await.expect("env");
        env.start_cluster(Provider::Redis).await.expect("redis");
        // No teardown: an early `?` or a panic leaves the scope like this.
    }
    assert_nothing_left(&id).await;
}

/// Waits until some container labelled `id` exists (or `timeout`).
async fn wait_for_containers(id: &str, timeout: Duration) -> usize {
    let docker = connect().await.expect("docker");
    let deadline = Instant::now() + timeout;
    loop {
        let n = list_run_containers(&docker, Some(id))
            .await
            .expect("list")
            .len();
        if n > 0 || Instant::now() > deadline {
            return n;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkilled_harness_leaves_containers_that_clean_removes() {
    let id = run_id("sigkill");
    let mut child = Command::new(FENCECHECK)
        .args(["cluster", "up", "zookeeper", "--run", &id])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn fencecheck");
    let started = wait_for_containers(&id, Duration::from_secs(30)).await;
    child.kill().expect("SIGKILL"); // std's kill is SIGKILL on Unix
    child.wait().expect("reap");
    assert!(started > 0, "fencecheck never started a container");
    // Requests the harness sent just before it died may still complete in the engine; clean
    // must cope with that, so it runs at once rather than after things settle.
    let docker = connect().await.expect("docker");
    let left = list_run_containers(&docker, Some(&id)).await.expect("list");
    assert!(
        !left.is_empty(),
        "SIGKILL cannot clean up, so something must be left"
    );
    let clean = Command::new(FENCECHECK)
        .args(["clean", "--run", &id])
        .output()
        .expect("clean");
    assert!(clean.status.success(), "{clean:?}");
    assert!(String::from_utf8_lossy(&clean.stdout).contains(&format!("of run {id}")));
    assert_nothing_left(&id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_on_cluster_up_tears_the_cluster_down() {
    use std::io::{BufRead, BufReader};
    let id = run_id("sigint");
    let mut child = Command::new(FENCECHECK)
        .args(["cluster", "up", "redis", "--run", &id])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn fencecheck");
    let stdout = child.stdout.take().expect("stdout");
    let lines = tokio::task::spawn_blocking(move || {
        let mut seen = Vec::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let ready = line.starts_with("ready;");
            seen.push(line);
            if ready {
                break;
            }
        }
        seen
    });
    let lines = tokio::time::timeout(Duration::from_secs(60), lines)
        .await
        .expect("cluster up printed ready in time")
        .expect("reader");
    assert!(
        lines.iter().any(|l| l.starts_with("endpoints: 127.0.0.1:")),
        "{lines:?}"
    );
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("SIGINT");
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .expect("join");
    assert_eq!(status.expect("wait").code(), Some(130));
    assert_nothing_left(&id).await;
}
