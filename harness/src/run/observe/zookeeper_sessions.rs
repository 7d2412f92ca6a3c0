//! ZooKeeper's sessions beside its nodes: a watch shows an ephemeral node's owner session but
//! not the session itself, whose start, heartbeats and end change no node. So the observer asks
//! every server for its `dump` (a four-letter word, answered on the client port) every [`POLL`]
//! and records what changed since the read before:
//! - a session not seen before (`granted`, `ttl_ms` its negotiated timeout): every server lists
//!   the ensemble's sessions with their timeouts;
//! - a session whose deadline moved later (`renewed`: a heartbeat or a request reached the
//!   service): only the leader keeps the deadlines, printed to the second, so a session is
//!   renewed when the leader's read puts its deadline in a later second than before;
//! - a session gone (`ended`: closed, or expired), when no server lists it any more.
//!
//! The observer's own session (10 s) is among them. A read that no server answers is a gap of
//! the sessions until one does, and that read's differences are dated when seen; while the
//! leader does not answer, renewals go unseen.

use super::Record;
use containers::cluster::ClusterHandle;
use results::service_log::{ServiceEntry, ServiceWhat};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How often the observer reads the sessions.
const POLL: Duration = Duration::from_millis(250);

/// How long one server's answer may take.
const ASK: Duration = Duration::from_millis(500);

/// The stream's name, and the `node` of its `watching` and `gap` lines.
pub(super) const STREAM: &str = "sessions";

/// What one server's `dump` says of the sessions.
#[derive(Debug, Default, PartialEq, Eq)]
struct Dump {
    /// Every session the server lists (hex, without `0x`), with its timeout in ms where given.
    sessions: BTreeMap<String, Option<u64>>,
    /// The leader's deadlines, as a sortable (year, month, day, hour, minute, second).
    deadlines: BTreeMap<String, Deadline>,
}

type Deadline = (u32, u32, u32, u32, u32, u32);

/// The sessions the reads found, each with the last deadline the leader gave it.
type Known = BTreeMap<String, Option<Deadline>>;

/// Reads the sessions until the task is aborted.
pub(super) async fn follow(cluster: Arc<RwLock<ClusterHandle>>, out: Arc<Record>) {
    let mut known = Known::new();
    loop {
        let why = read(&cluster, &out, &mut known).await;
        out.broke(STREAM, Some(STREAM), "reading ZooKeeper's sessions", &why)
            .await;
    }
}

/// Reads every [`POLL`] until no server answers: the reason.
async fn read(cluster: &RwLock<ClusterHandle>, out: &Record, known: &mut Known) -> String {
    let mut tick = tokio::time::interval(POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let endpoints = cluster
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .endpoints();
        let answers = futures::future::join_all(endpoints.iter().map(|e| dump(e))).await;
        let dumps: Vec<Dump> = answers.iter().flatten().map(|t| parse(t)).collect();
        if dumps.is_empty() {
            let why = answers
                .into_iter()
                .filter_map(Result::err)
                .collect::<Vec<_>>();
            return format!("no server answered dump: {}", why.join("; "));
        }
        if !out.following(STREAM) {
            let mut e = ServiceEntry::new(out.now(), ServiceWhat::Watching);
            e.node = Some(STREAM.into());
            out.write(&e);
            out.set_following(STREAM, true);
        }
        let at = out.now();
        let line = |what: ServiceWhat, id: &str, ttl_ms: Option<u64>| {
            let mut e = ServiceEntry::new(at, what);
            e.owner = Some(id.to_string());
            e.ttl_ms = ttl_ms;
            e
        };
        let mut now: BTreeMap<String, (Option<u64>, Option<Deadline>)> = BTreeMap::new();
        for d in &dumps {
            for (id, timeout) in &d.sessions {
                let entry = now.entry(id.clone()).or_default();
                entry.0 = entry.0.or(*timeout);
            }
            for (id, deadline) in &d.deadlines {
                now.entry(id.clone()).or_default().1 = Some(*deadline);
            }
        }
        for id in known.keys() {
            if !now.contains_key(id) {
                out.write(&line(ServiceWhat::Ended, id, None));
            }
        }
        let mut next = BTreeMap::new();
        for (id, (timeout, deadline)) in now {
            let was = known.get(&id).copied();
            match was {
                None => out.write(&line(ServiceWhat::Granted, &id, timeout)),
                Some(Some(before)) if deadline.is_some_and(|d| d > before) => {
                    out.write(&line(ServiceWhat::Renewed, &id, None))
                }
                Some(_) => {}
            }
            // A read without the leader keeps the deadline the last one gave.
            next.insert(id, deadline.or(was.flatten()));
        }
        *known = next;
    }
}

/// One server's answer to `dump`, whole.
async fn dump(endpoint: &str) -> Result<String, String> {
    let ask = async {
        let mut stream = tokio::net::TcpStream::connect(endpoint).await?;
        stream.write_all(b"dump").await?;
        let mut text = String::new();
        stream.read_to_string(&mut text).await?;
        Ok::<_, std::io::Error>(text)
    };
    match tokio::time::timeout(ASK, ask).await {
        Ok(Ok(text)) => Ok(text),
        Ok(Err(e)) => Err(format!("{endpoint}: {e}")),
        Err(_) => Err(format!("{endpoint}: no answer within {ASK:?}")),
    }
}

/// The sessions of a `dump`: a follower's `Global Sessions` (`0x<id>\t<timeout>ms`), the
/// leader's `Session Sets` (`<n> expire at <date>:` and the sessions that expire then).
fn parse(text: &str) -> Dump {
    let mut d = Dump::default();
    let mut section = "";
    let mut deadline: Option<Deadline> = None;
    for line in text.lines() {
        if line.starts_with("Global Sessions") || line.starts_with("Session Sets") {
            section = "sessions";
            continue;
        }
        if line.starts_with("ephemeral nodes dump") {
            section = "";
        }
        if section.is_empty() {
            continue;
        }
        if let Some(at) = line.split(" expire at ").nth(1) {
            deadline = date(at.trim_end_matches(':'));
            continue;
        }
        let mut fields = line.trim().split('\t');
        let Some(id) = fields.next().and_then(|f| f.strip_prefix("0x")) else {
            continue;
        };
        let timeout = (fields.next())
            .and_then(|t| t.strip_suffix("ms"))
            .and_then(|t| t.parse().ok());
        d.sessions.insert(id.to_string(), timeout);
        if line.starts_with('\t') {
            if let Some(at) = deadline {
                d.deadlines.insert(id.to_string(), at);
            }
        }
    }
    d
}

/// `Mon Dec 07 00:22:53 UTC 2026` as a sortable tuple (the zone is the server's, one for all).
fn date(text: &str) -> Option<Deadline> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let f: Vec<&str> = text.split_whitespace().collect();
    let [_, month, day, time, _, year] = f[..] else {
        return None;
    };
    let month = MONTHS.iter().position(|m| *m == month)? as u32 + 1;
    let mut hms = time.split(':').map(|x| x.parse::<u32>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    Some((year.parse().ok()?, month, day.parse().ok()?, h, m, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_followers_and_a_leaders_dump_give_the_sessions_and_the_deadlines() {
        let follower = "SessionTracker dump:\nGlobal Sessions(2):\n0x100001b1e930000\t10000ms\n\
                        0x200001b1e590000\t2000ms\nephemeral nodes dump:\nSessions with \
                        Ephemerals (1):\n0x200001b1e590000:\n\t/l/lock-1\n";
        let d = parse(follower);
        assert_eq!(d.sessions.len(), 2);
        assert_eq!(d.sessions["200001b1e590000"], Some(2000));
        assert!(d.deadlines.is_empty());
        let leader = "SessionTracker dump:\nSession Sets (3)/(2):\n0 expire at Mon Dec 07 \
                      00:22:51 UTC 2026:\n2 expire at Mon Dec 07 00:22:53 UTC 2026:\n\
                      \t0x300001b1edd0000\n\t0x200001b1e590000\n1 expire at Mon Dec 07 \
                      00:23:01 UTC 2026:\n\t0x100001b1e930000\nephemeral nodes dump:\n\
                      Sessions with Ephemerals (1):\n0x200001b1e590000:\n\t/l/lock-1\n\
                      Connections dump:\n";
        let d = parse(leader);
        assert_eq!(d.sessions.len(), 3);
        assert_eq!(d.sessions["300001b1edd0000"], None);
        assert_eq!(d.deadlines["200001b1e590000"], (2026, 12, 7, 0, 22, 53));
        assert!(d.deadlines["100001b1e930000"] > d.deadlines["200001b1e590000"]);
        assert_eq!(
            date("Sun Jan 01 23:59:09 UTC 2027"),
            Some((2027, 1, 1, 23, 59, 9))
        );
        assert_eq!(date("garbage"), None);
    }
}
