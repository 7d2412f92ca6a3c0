//! How links are shaped right now: per tag (a worker's or a node's name), set and healed by the
//! control port. A link takes the strongest setting of its two ends.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Mutex;

use super::Route;

/// One setting: added delay per chunk (fixed + up to `jitter_ms`), and the probability that a
/// chunk breaks the connection instead.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Shaping {
    #[serde(default)]
    pub delay_ms: u64,
    #[serde(default)]
    pub jitter_ms: u64,
    #[serde(default)]
    pub loss: f64,
    /// Shape only what the lock service sends back (`slow-reply`): requests pass at once.
    #[serde(default)]
    pub replies_only: bool,
    /// Close the connection that carries the next reply instead of passing it, once (the
    /// `cut-*-reply` faults): the request landed, the answer never arrives.
    #[serde(default)]
    pub cut_next_reply: bool,
    /// With `cut_next_reply`: the reply cut is the next one to a request with this command
    /// (a RESP command such as `EVALSHA`, a ZooKeeper operation such as `delete`), where the
    /// connection's protocol can be read (`frames`); elsewhere the next reply.
    #[serde(default)]
    pub cut_reply_to: Option<String>,
}

/// A control line.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Command {
    #[serde(default)]
    tag: Option<String>,
    #[serde(default)]
    heal: bool,
    /// Asks what became of the tag's cut (`{"tag":"worker-1","cut":"?"}`), changing nothing.
    #[serde(default)]
    cut: Option<String>,
    #[serde(flatten)]
    shaping: Shaping,
}

#[derive(Debug, Default)]
pub struct Shapings {
    by_tag: Mutex<BTreeMap<String, Shaping>>,
    /// The tags whose latest cut was spent on a reply.
    spent: Mutex<std::collections::BTreeSet<String>>,
}

impl Shapings {
    /// Applies one control line; the answer after `ok` (empty, or for a cut question `spent`,
    /// `armed` or `none`).
    pub fn apply(&self, line: &str) -> Result<String, String> {
        let c: Command = serde_json::from_str(line).map_err(|e| format!("{line:?}: {e}"))?;
        let mut map = self.by_tag.lock().unwrap_or_else(|p| p.into_inner());
        let mut spent = self.spent.lock().unwrap_or_else(|p| p.into_inner());
        match (c.heal, c.tag, c.cut) {
            (false, Some(tag), Some(_)) => {
                return Ok(if map.get(&tag).is_some_and(|s| s.cut_next_reply) {
                    "armed"
                } else if spent.contains(&tag) {
                    "spent"
                } else {
                    "none"
                }
                .to_string());
            }
            (true, _, _) => {
                map.clear();
                spent.clear();
            }
            (false, Some(tag), None) => {
                if c.shaping.cut_next_reply {
                    spent.remove(&tag);
                }
                map.insert(tag, c.shaping);
            }
            (false, None, _) => return Err(format!("{line:?}: name a tag or send heal")),
        }
        Ok(String::new())
    }

    /// The setting a link has now: the larger delay, jitter and loss of its two ends.
    pub fn for_route(&self, route: &Route) -> Shaping {
        let map = self.by_tag.lock().unwrap_or_else(|p| p.into_inner());
        let (a, b) = (
            map.get(&route.worker).cloned().unwrap_or_default(),
            map.get(&route.node).cloned().unwrap_or_default(),
        );
        Shaping {
            delay_ms: a.delay_ms.max(b.delay_ms),
            jitter_ms: a.jitter_ms.max(b.jitter_ms),
            loss: a.loss.max(b.loss),
            replies_only: a.replies_only || b.replies_only,
            cut_next_reply: a.cut_next_reply || b.cut_next_reply,
            cut_reply_to: a.cut_reply_to.or(b.cut_reply_to),
        }
    }

    /// Whether the reply now on `route` is to be cut: true once per cut set on either end,
    /// which is spent by it.
    pub fn take_cut(&self, route: &Route) -> bool {
        let mut map = self.by_tag.lock().unwrap_or_else(|p| p.into_inner());
        for tag in [&route.worker, &route.node] {
            if let Some(s) = map.get_mut(tag).filter(|s| s.cut_next_reply) {
                s.cut_next_reply = false;
                self.spent
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(tag.clone());
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_takes_the_stronger_end_and_heal_clears_all() {
        let s = Shapings::default();
        let r = super::super::parse_routes("worker-1>etcd-1=0.0.0.0:1->h:2").unwrap();
        s.apply(r#"{"tag":"worker-1","delay_ms":200,"jitter_ms":50}"#)
            .unwrap();
        s.apply(r#"{"tag":"etcd-1","loss":0.1}"#).unwrap();
        let got = s.for_route(&r[0]);
        assert_eq!((got.delay_ms, got.jitter_ms, got.loss), (200, 50, 0.1));
        s.apply(r#"{"tag":"worker-1","delay_ms":900,"replies_only":true}"#)
            .unwrap();
        assert!(s.for_route(&r[0]).replies_only);
        s.apply(r#"{"heal":true}"#).unwrap();
        assert_eq!(s.for_route(&r[0]), Shaping::default());
        // A cut asked after: armed until a reply spends it, then spent until healed or re-armed.
        let cut = |s: &Shapings| s.apply(r#"{"tag":"worker-1","cut":"?"}"#).unwrap();
        assert_eq!(cut(&s), "none");
        s.apply(r#"{"tag":"worker-1","cut_next_reply":true}"#)
            .unwrap();
        assert_eq!(cut(&s), "armed");
        assert!(s.take_cut(&r[0]));
        assert!(!s.take_cut(&r[0]), "once");
        assert_eq!(cut(&s), "spent");
        s.apply(r#"{"tag":"worker-1","cut_next_reply":true}"#)
            .unwrap();
        assert_eq!(cut(&s), "armed");
        assert!(s.apply(r#"{"delay_ms":5}"#).is_err());
        assert!(s.apply("nonsense").unwrap_err().contains("nonsense"));
    }
}
