//! Partitions as data. A grudge says, for each node, which nodes it drops traffic from; the
//! harness turns it into iptables rules inside each node's network namespace. Every partition
//! fault is one of the pure builders below, so what a fault cuts can be read and tested without
//! any container.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Node name -> the names of the nodes whose traffic it drops (both directions are cut by the
/// harness: INPUT from them and OUTPUT to them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Grudge(pub BTreeMap<String, BTreeSet<String>>);

impl Grudge {
    /// No cut at all.
    pub fn none() -> Self {
        Self::default()
    }

    /// Every member of `a` drops traffic from every member of `b`, and vice versa.
    pub fn cut(a: &[String], b: &[String]) -> Self {
        let mut g = Self::none();
        for x in a {
            for y in b {
                if x != y {
                    g.drop_from(x, y);
                    g.drop_from(y, x);
                }
            }
        }
        g
    }

    /// Every drop any of `grudges` names: the cuts installed together.
    pub fn union<'a>(grudges: impl IntoIterator<Item = &'a Grudge>) -> Self {
        let mut g = Self::none();
        for one in grudges {
            for (node, from) in &one.0 {
                g.0.entry(node.clone())
                    .or_default()
                    .extend(from.iter().cloned());
            }
        }
        g
    }

    /// `one` against all the others.
    pub fn isolate(one: &str, all: &[String]) -> Self {
        let rest: Vec<String> = all.iter().filter(|n| *n != one).cloned().collect();
        Self::cut(&[one.to_string()], &rest)
    }

    /// The first `n / 2` nodes (a minority) against the rest (a majority). Callers shuffle
    /// `nodes` first to choose which side a node lands on.
    pub fn halves(nodes: &[String]) -> Self {
        let (minority, majority) = nodes.split_at(nodes.len() / 2);
        Self::cut(minority, majority)
    }

    /// Each node sees itself and the next `n / 2` nodes around the ring (a majority), and drops
    /// everyone else: every node is in a majority, and no two nodes see the same majority.
    pub fn majorities_ring(nodes: &[String]) -> Self {
        let n = nodes.len();
        let visible = n / 2 + 1;
        let mut g = Self::none();
        for (i, node) in nodes.iter().enumerate() {
            let sees: BTreeSet<usize> = (0..visible).map(|k| (i + k) % n).collect();
            for (j, other) in nodes.iter().enumerate() {
                if !sees.contains(&j) {
                    g.drop_from(node, other);
                }
            }
        }
        g
    }

    /// One worker against every lock-service node; the resource stays reachable. The worker
    /// alone holds the grudge: its rules drop both directions, so the nodes need none, and a
    /// cluster shared with other runs is never touched by one run's cut or its heal.
    pub fn isolate_worker(worker: &str, lock_nodes: &[String]) -> Self {
        let mut g = Self::none();
        for node in lock_nodes.iter().filter(|n| *n != worker) {
            g.drop_from(worker, node);
        }
        g
    }

    /// One-way: `deaf` drops what arrives from each of `from` (applied inbound only).
    pub fn deafen(deaf: &str, from: &[String]) -> Self {
        let mut g = Self::none();
        for f in from.iter().filter(|f| *f != deaf) {
            g.drop_from(deaf, f);
        }
        g
    }

    /// One-way: each of `hearers` drops what arrives from `muted` (applied inbound only).
    pub fn mute(muted: &str, hearers: &[String]) -> Self {
        let mut g = Self::none();
        for h in hearers.iter().filter(|h| *h != muted) {
            g.drop_from(h, muted);
        }
        g
    }

    /// The resource against every worker and lock-service node.
    pub fn isolate_resource(resource: &str, everyone_else: &[String]) -> Self {
        Self::isolate(resource, everyone_else)
    }

    fn drop_from(&mut self, node: &str, from: &str) {
        self.0
            .entry(node.to_string())
            .or_default()
            .insert(from.to_string());
    }

    /// The nodes that get rules (those with a non-empty grudge).
    pub fn nodes(&self) -> impl Iterator<Item = &str> {
        self.0
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, _)| k.as_str())
    }

    /// Whether `node` drops traffic from `from`.
    pub fn drops(&self, node: &str, from: &str) -> bool {
        self.0.get(node).is_some_and(|s| s.contains(from))
    }

    pub fn is_empty(&self) -> bool {
        self.0.values().all(BTreeSet::is_empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("n{i}")).collect()
    }

    /// The nodes `node` can still exchange traffic with (neither side drops the other).
    fn reach(g: &Grudge, node: &str, all: &[String]) -> BTreeSet<String> {
        all.iter()
            .filter(|o| !g.drops(node, o) && !g.drops(o, node))
            .cloned()
            .collect()
    }

    #[test]
    fn isolate_cuts_one_node_from_all_others_both_ways() {
        let all = names(3);
        let g = Grudge::isolate("n2", &all);
        assert!(g.drops("n2", "n1") && g.drops("n1", "n2"));
        assert!(g.drops("n2", "n3") && g.drops("n3", "n2"));
        assert!(!g.drops("n1", "n3"));
        assert_eq!(reach(&g, "n1", &all).len(), 2);
    }

    #[test]
    fn halves_leave_a_strict_minority_and_a_majority() {
        let all = names(5);
        let g = Grudge::halves(&all);
        assert_eq!(reach(&g, "n1", &all), ["n1", "n2"].map(String::from).into());
        assert_eq!(reach(&g, "n5", &all).len(), 3);
        let three = Grudge::halves(&names(3));
        assert_eq!(reach(&three, "n1", &names(3)).len(), 1);
    }

    #[test]
    fn majorities_ring_gives_every_node_a_different_majority() {
        let all = names(5);
        let g = Grudge::majorities_ring(&all);
        let mut seen = BTreeSet::new();
        for n in &all {
            let visible: BTreeSet<String> =
                all.iter().filter(|o| !g.drops(n, o)).cloned().collect();
            assert_eq!(visible.len(), 3, "{n} sees a majority");
            assert!(seen.insert(visible), "no two nodes see the same majority");
        }
    }

    #[test]
    fn isolate_worker_keeps_the_resource_reachable() {
        let nodes = names(3);
        let g = Grudge::isolate_worker("worker-2", &nodes);
        for n in &nodes {
            assert!(
                g.drops("worker-2", n),
                "both directions, in the worker's rules"
            );
        }
        assert_eq!(
            g.nodes().collect::<Vec<_>>(),
            ["worker-2"],
            "no node holds a rule"
        );
        assert!(!g.drops("worker-2", "resource"));
        assert!(!g.drops("worker-2", "worker-1"));
    }

    #[test]
    fn deafen_and_mute_cut_one_direction() {
        let nodes = names(3);
        let deaf = Grudge::deafen("worker-1", &nodes);
        assert!(nodes
            .iter()
            .all(|n| deaf.drops("worker-1", n) && !deaf.drops(n, "worker-1")));
        let mute = Grudge::mute("worker-1", &nodes);
        assert!(nodes
            .iter()
            .all(|n| mute.drops(n, "worker-1") && !mute.drops("worker-1", n)));
        let follower = Grudge::deafen("n2", &["n1".to_string()]);
        assert!(follower.drops("n2", "n1") && !follower.drops("n1", "n2"));
        assert_eq!(follower.nodes().collect::<Vec<_>>(), ["n2"]);
    }

    #[test]
    fn serializes_as_a_plain_map() {
        let g = Grudge::isolate("a", &["a".into(), "b".into()]);
        assert_eq!(
            serde_json::to_string(&g).unwrap(),
            r#"{"a":["b"],"b":["a"]}"#
        );
    }
}
