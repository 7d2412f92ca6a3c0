//! ZooKeeper 3.8, a three-member ensemble started with `QuorumPeerMain` directly (Debian's
//! `zkServer.sh` has no slf4j binding and logs nothing). Ready when `srvr` reports one leader and
//! two followers.
//!
//! tickTime is 500 ms (sessions may be as short as 1 s, for short lock TTLs) and sessions may be
//! as long as 60 s. Leader election backs off at most to 400 ms between notification rounds (the
//! default grows to 60 s), so members that the engine starts a second apart, or that come back from
//! a partition, elect within a second; the JVM uses only the C1 compiler, which starts three JVMs
//! on two cores about a second sooner.

use super::probe::four_letter;
use super::Cluster;
use crate::docker::{ContainerSpec, Node, Readiness, Role};
use futures::future::BoxFuture;

pub(crate) struct Zookeeper;

pub(crate) const MEMBERS: usize = 3;
pub(crate) const CLIENT_PORT: u16 = 2181;

const CLASSPATH: &str =
    "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar";

/// Where a server keeps its snapshots and transaction log; `myid` is written there at every
/// start, so a server whose directory was emptied comes back as the same member, empty.
const DATA_DIR: &str = "/var/lib/fc-zk";

/// The shell script that writes `myid` and `zoo.cfg` and execs the server (so the container's
/// main process, whose host PID fencecheck signals, is the JVM itself).
fn script(id: usize, servers: &[String]) -> String {
    let config = [
        "tickTime=500".to_string(),
        "initLimit=20".to_string(),
        "syncLimit=10".to_string(),
        "dataDir=/var/lib/fc-zk".to_string(),
        format!("clientPort={CLIENT_PORT}"),
        "maxSessionTimeout=60000".to_string(),
        "4lw.commands.whitelist=*".to_string(),
        "admin.enableServer=false".to_string(),
        "quorumListenOnAllIPs=true".to_string(),
    ]
    .iter()
    .chain(servers)
    .map(|line| format!("'{line}'"))
    .collect::<Vec<_>>()
    .join(" ");
    format!(
        "mkdir -p /var/lib/fc-zk && echo {id} > /var/lib/fc-zk/myid && \
         printf '%s\\n' {config} > /tmp/zoo.cfg && \
         exec java -Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
         -Dzookeeper.fastleader.maxNotificationInterval=400 -cp {CLASSPATH} \
         org.apache.zookeeper.server.quorum.QuorumPeerMain /tmp/zoo.cfg"
    )
}

/// `Mode: leader` / `Mode: follower` from a `srvr` answer.
fn mode(srvr: &str) -> Option<&str> {
    srvr.lines()
        .find_map(|l| l.strip_prefix("Mode:"))
        .map(str::trim)
}

impl Cluster for Zookeeper {
    fn client_role(&self) -> Role {
        Role::Member
    }

    fn waves(&self, name: &dyn Fn(&str) -> String) -> Vec<Vec<ContainerSpec>> {
        let shorts: Vec<String> = (1..=MEMBERS).map(|i| format!("zk-{i}")).collect();
        let servers: Vec<String> = shorts
            .iter()
            .enumerate()
            .map(|(i, s)| format!("server.{}={}:2888:3888", i + 1, name(s)))
            .collect();
        vec![shorts
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut spec = ContainerSpec::new(s, ["sh", "-c", &script(i + 1, &servers)]);
                spec.data_dir = Some(DATA_DIR);
                spec.port(CLIENT_PORT)
                    .role(Role::Member)
                    .ready(Readiness::Listening(CLIENT_PORT))
            })
            .collect()]
    }

    fn probe<'a>(&'a self, nodes: &'a [Node]) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let answers = futures::future::join_all(nodes.iter().map(|n| four_letter(n, "srvr")));
            let mut modes = Vec::new();
            for answer in answers.await {
                let answer = answer?;
                modes.push(mode(&answer).unwrap_or("not serving").to_string());
            }
            let leaders = modes.iter().filter(|m| *m == "leader").count();
            let followers = modes.iter().filter(|m| *m == "follower").count();
            if leaders == 1 && followers == MEMBERS - 1 {
                Ok(())
            } else {
                Err(format!("ensemble not formed yet: modes {modes:?}"))
            }
        })
    }

    fn leader<'a>(&'a self, nodes: &'a [Node]) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            for node in nodes {
                // A stopped or partitioned member does not answer; the others still can.
                if let Ok(answer) = four_letter(node, "srvr").await {
                    if mode(&answer) == Some("leader") {
                        return Ok(Some(node.name.clone()));
                    }
                }
            }
            Ok(None)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_mode_from_srvr() {
        let answer = "Zookeeper version: 3.8.0\nLatency min/avg/max: 0/0.0/0\nMode: follower\n";
        assert_eq!(mode(answer), Some("follower"));
        let not_serving = "This ZooKeeper instance is not currently serving requests\n";
        assert_eq!(mode(not_serving), None);
    }

    #[test]
    fn the_config_lists_every_server() {
        let servers = vec!["server.1=a:2888:3888".to_string()];
        let s = script(1, &servers);
        assert!(s.contains("'server.1=a:2888:3888'"), "{s}");
        assert!(s.contains("echo 1 > /var/lib/fc-zk/myid"), "{s}");
    }
}
