//! One test per cluster kind, against the real systems in containers: each starts the cluster,
//! asks it with a real client what the issue promises (members, leader, replicas, independence),
//! tears down, and asserts nothing labelled with its run id remains.

use crate::support::infra::{assert_nothing_left, run_id};
use containers::cluster::ClusterHandle;
use containers::docker::{Role, RunEnv};
use results::Provider;

/// Starts `provider` in a fresh run, hands the cluster to `check`, always tears down, then asserts
/// the run left nothing behind.
async fn with_cluster<F, Fut>(provider: Provider, check: F)
where
    F: FnOnce(ClusterHandle) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let id = run_id(provider.as_str());
    let dir = tempfile::tempdir().expect("tempdir");
    let env = RunEnv::create(&id, Some(dir.path()))
        .await
        .expect("run env");
    let started = env.start_cluster(provider).await;
    let outcome = match started {
        Ok(cluster) => {
            eprintln!("{provider} ready in {:?}", cluster.startup);
            let nodes = cluster.nodes.clone();
            let result = tokio::spawn(check(cluster)).await;
            for node in &nodes {
                let log = dir.path().join("nodes").join(format!("{}.log", node.name));
                assert!(log.exists(), "no log file {}", log.display());
            }
            result.map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    };
    env.teardown().await.expect("teardown");
    assert_nothing_left(&id).await;
    if let Err(e) = outcome {
        panic!("{provider}: {e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_has_three_members_and_one_leader() {
    with_cluster(Provider::Etcd, |cluster| async move {
        assert_eq!(cluster.nodes.len(), 3);
        let mut client = etcd_client::Client::connect(cluster.endpoints(), None)
            .await
            .expect("connect");
        let members = client.member_list().await.expect("member list");
        assert_eq!(members.members().len(), 3);
        let leader = cluster.leader().await.expect("leader").expect("a leader");
        assert!(cluster.nodes.contains(&leader));
        for node in &cluster.nodes {
            assert!(node.host_pid > 1, "{node:?}");
            assert!(node.address.ends_with(":2379"), "{node:?}");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zookeeper_has_one_leader_and_two_followers() {
    with_cluster(Provider::Zookeeper, |cluster| async move {
        assert_eq!(cluster.nodes.len(), 3);
        let mut modes = Vec::new();
        for endpoint in cluster.endpoints() {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut s = tokio::net::TcpStream::connect(&endpoint)
                .await
                .expect("connect");
            s.write_all(b"srvr").await.expect("write");
            let mut answer = String::new();
            s.read_to_string(&mut answer).await.expect("read");
            let mode = answer
                .lines()
                .find_map(|l| l.strip_prefix("Mode: "))
                .map(str::to_string);
            modes.push(mode.expect("a mode"));
        }
        modes.sort();
        assert_eq!(modes, ["follower", "follower", "leader"]);
        // A real client session works too.
        let zk = zookeeper_client::Client::connect(&cluster.endpoints().join(","))
            .await
            .expect("zk client");
        let (_, stat) = zk.get_data("/zookeeper").await.expect("get /zookeeper");
        assert!(stat.czxid <= 0, "{stat:?}");
        let leader = cluster.leader().await.expect("leader").expect("a leader");
        assert!(cluster.nodes.contains(&leader));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_single_master_answers() {
    with_cluster(Provider::Redis, |cluster| async move {
        assert_eq!(cluster.nodes.len(), 1);
        let client =
            redis::Client::open(format!("redis://{}/", cluster.endpoints()[0])).expect("url");
        let mut conn = client
            .get_multiplexed_async_connection()
            .await
            .expect("connect");
        let () = redis::cmd("SET")
            .arg("k")
            .arg("v")
            .query_async(&mut conn)
            .await
            .expect("set");
        let v: String = redis::cmd("GET")
            .arg("k")
            .query_async(&mut conn)
            .await
            .expect("get");
        assert_eq!(v, "v");
        let leader = cluster.leader().await.expect("leader");
        assert_eq!(leader.as_ref(), cluster.nodes.first());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redlock_has_five_independent_masters() {
    with_cluster(Provider::Redlock, |cluster| async move {
        let endpoints = cluster.endpoints();
        assert_eq!(endpoints.len(), 5);
        let mut conns = Vec::new();
        for endpoint in &endpoints {
            let client = redis::Client::open(format!("redis://{endpoint}/")).expect("url");
            conns.push(
                client
                    .get_multiplexed_async_connection()
                    .await
                    .expect("connect"),
            );
        }
        let () = redis::cmd("SET")
            .arg("only-on-first")
            .arg("1")
            .query_async(&mut conns[0])
            .await
            .expect("set");
        for (i, conn) in conns.iter_mut().enumerate() {
            let value: Option<String> = redis::cmd("GET")
                .arg("only-on-first")
                .query_async(conn)
                .await
                .expect("get");
            assert_eq!(value.is_some(), i == 0, "master {i} sees {value:?}");
            let role: Vec<redis::Value> = redis::cmd("ROLE").query_async(conn).await.expect("role");
            assert_eq!(
                role.first(),
                Some(&redis::Value::BulkString(b"master".to_vec()))
            );
        }
        assert_eq!(cluster.leader().await.expect("leader"), None);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_reports_the_master_with_two_replicas() {
    with_cluster(Provider::RedisSentinel, |cluster| async move {
        assert_eq!(cluster.nodes.len(), 6);
        let master = cluster
            .nodes
            .iter()
            .find(|n| n.role == Role::Master)
            .expect("master");
        assert_eq!(
            cluster.endpoints().len(),
            3,
            "clients talk to the 3 sentinels"
        );
        for endpoint in cluster.endpoints() {
            let client = redis::Client::open(format!("redis://{endpoint}/")).expect("url");
            let mut conn = client
                .get_multiplexed_async_connection()
                .await
                .expect("connect");
            let addr: Vec<String> = redis::cmd("SENTINEL")
                .arg("get-master-addr-by-name")
                .arg("mymaster")
                .query_async(&mut conn)
                .await
                .expect("get-master-addr-by-name");
            assert_eq!(addr, [master.name.clone(), "6379".to_string()]);
            let replicas: Vec<redis::Value> = redis::cmd("SENTINEL")
                .arg("replicas")
                .arg("mymaster")
                .query_async(&mut conn)
                .await
                .expect("replicas");
            assert_eq!(replicas.len(), 2);
        }
        assert_eq!(
            cluster.leader().await.expect("leader").as_ref(),
            Some(master)
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_answers_a_query() {
    with_cluster(Provider::Postgres, |cluster| async move {
        let node = &cluster.nodes[0];
        let config = containers::cluster::postgres_connection_string(node).expect("port");
        let (client, connection) = tokio_postgres::connect(&config, tokio_postgres::NoTls)
            .await
            .expect("connect");
        tokio::spawn(connection);
        let row = client.query_one("SELECT 40 + 2", &[]).await.expect("query");
        let answer: i32 = row.get(0);
        assert_eq!(answer, 42);
    })
    .await;
}
