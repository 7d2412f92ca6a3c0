//! The set of op_ids the resource accepted, kept small enough that a 10M-event history does not
//! cost memory in proportion to its writes.
//!
//! Workers name their writes `<process>-<n>` with `n` counting up per process (docs/design.md, "history.jsonl"; see
//! `workloads::driver::Session::write`), and a process sends one write at a time. So the accepted
//! `n` of one process arrive almost in order and form a few runs of consecutive numbers: a gap
//! opens only where a write was rejected or never reached the resource. [`Applied`] keeps, per
//! process, those runs — memory follows processes and gaps, not writes — and the resource seq of
//! the most recent [`RECENT`] accepted writes, to name where the first copy of a duplicate was
//! applied. An op_id of any other shape falls back to a 128-bit fingerprint per write (the
//! previous representation: 24 bytes per write, collisions about 2^-128 per pair).

use crate::hashing::FastMap;
use std::collections::VecDeque;
use std::hash::{DefaultHasher, Hash, Hasher};

/// How many recent accepted writes per process keep their resource seq.
pub const RECENT: usize = 64;

/// Where the first copy of a repeated op_id was applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstSeen {
    /// At this resource seq.
    Seq(u64),
    /// Earlier than the writes whose seqs are kept; the op_id is still certainly repeated.
    Earlier,
}

#[derive(Debug, Default)]
struct Runs {
    /// Sorted, disjoint, non-adjacent inclusive ranges of accepted `n`.
    ranges: Vec<(u64, u64)>,
    /// (n, resource seq) of the latest accepted writes, oldest first.
    recent: VecDeque<(u64, u64)>,
}

impl Runs {
    /// Adds `n`; returns false when it was already there.
    fn insert(&mut self, n: u64, seq: u64) -> bool {
        let r = &mut self.ranges;
        match r.last_mut() {
            None => r.push((n, n)),
            Some(last) if n == last.1 + 1 => last.1 = n,
            Some(last) if n > last.1 + 1 => r.push((n, n)),
            Some(_) => {
                // Out of order: find the first range ending at or after n - 1.
                let i = r.partition_point(|&(_, hi)| hi.saturating_add(1) < n);
                if r[i].0 <= n && n <= r[i].1 {
                    return false;
                }
                if r[i].1 + 1 == n {
                    r[i].1 = n;
                    if i + 1 < r.len() && r[i + 1].0 == n + 1 {
                        r[i].1 = r[i + 1].1;
                        r.remove(i + 1);
                    }
                } else if n + 1 == r[i].0 {
                    r[i].0 = n;
                } else {
                    r.insert(i, (n, n));
                }
            }
        }
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back((n, seq));
        true
    }

    fn first(&self, n: u64) -> FirstSeen {
        self.recent
            .iter()
            .find(|&&(m, _)| m == n)
            .map_or(FirstSeen::Earlier, |&(_, s)| FirstSeen::Seq(s))
    }
}

/// `<process>-<n>` in canonical decimal (no sign, no leading zero), or `None`.
fn worker_op_id(op_id: &str) -> Option<(u32, u64)> {
    let (p, n) = op_id.split_once('-')?;
    let canonical = |s: &str| {
        !s.is_empty()
            && s.len() <= 19
            && s.bytes().all(|b| b.is_ascii_digit())
            && (s == "0" || !s.starts_with('0'))
    };
    (canonical(p) && canonical(n)).then_some((p.parse().ok()?, n.parse().ok()?))
}

fn fingerprint(op_id: &str) -> (u64, u64) {
    let mut a = DefaultHasher::new();
    op_id.hash(&mut a);
    let mut b = DefaultHasher::new();
    0x9e37_79b9_7f4a_7c15u64.hash(&mut b);
    op_id.hash(&mut b);
    (a.finish(), b.finish())
}

/// Accepted op_ids (see the module doc).
#[derive(Debug, Default)]
pub struct Applied {
    workers: FastMap<u32, Runs>,
    /// Other op_ids: first half of the fingerprint -> (second half, first seq).
    other: FastMap<u64, (u64, u64)>,
    /// Distinct other op_ids whose first halves collided (about never): (first, second, seq).
    overflow: Vec<(u64, u64, u64)>,
}

impl Applied {
    /// Records that `op_id` was accepted at resource `seq`; if it had been accepted before,
    /// says where.
    pub fn accept(&mut self, op_id: &str, seq: u64) -> Option<FirstSeen> {
        if let Some((p, n)) = worker_op_id(op_id) {
            let runs = self.workers.entry(p).or_default();
            return (!runs.insert(n, seq)).then(|| runs.first(n));
        }
        let (h1, h2) = fingerprint(op_id);
        match self.other.get(&h1) {
            Some(&(second, first)) if second == h2 => Some(FirstSeen::Seq(first)),
            None => {
                self.other.insert(h1, (h2, seq));
                None
            }
            Some(_) => match self.overflow.iter().find(|o| o.0 == h1 && o.1 == h2) {
                Some(o) => Some(FirstSeen::Seq(o.2)),
                None => {
                    self.overflow.push((h1, h2, seq));
                    None
                }
            },
        }
    }

    /// How many ranges and fingerprints are held (what memory follows).
    pub fn footprint(&self) -> usize {
        self.workers
            .values()
            .map(|r| r.ranges.len() + r.recent.len())
            .sum::<usize>()
            + self.other.len()
            + self.overflow.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_op_ids_are_parsed_only_in_canonical_form() {
        assert_eq!(worker_op_id("4-0"), Some((4, 0)));
        assert_eq!(worker_op_id("12-345"), Some((12, 345)));
        for other in [
            "4-00",
            "04-1",
            "4-",
            "-1",
            "4-1-0",
            "a-1",
            "4--1",
            "4-+1",
            "op-lease-2-2",
        ] {
            assert_eq!(worker_op_id(other), None, "{other}");
        }
    }

    #[test]
    fn in_order_writes_of_a_process_are_one_range() {
        let mut a = Applied::default();
        for n in 0..10_000 {
            assert_eq!(a.accept(&format!("7-{n}"), n), None);
        }
        assert_eq!(a.workers[&7].ranges, vec![(0, 9_999)]);
        assert!(a.footprint() <= 1 + RECENT);
        assert_eq!(a.accept("7-9999", 20_000), Some(FirstSeen::Seq(9_999)));
        assert_eq!(a.accept("7-5", 20_001), Some(FirstSeen::Earlier));
        assert_eq!(a.accept("8-5", 20_002), None);
    }

    #[test]
    fn gaps_and_out_of_order_writes_are_exact() {
        let mut a = Applied::default();
        for (i, n) in [0u64, 1, 5, 6, 3, 9, 2, 4, 8, 7].into_iter().enumerate() {
            assert_eq!(a.accept(&format!("1-{n}"), i as u64), None, "{n}");
        }
        assert_eq!(a.workers[&1].ranges, vec![(0, 9)]);
        for n in 0..10 {
            assert!(a.accept(&format!("1-{n}"), 100).is_some(), "{n}");
        }
        let mut b = Applied::default();
        for n in [10u64, 20, 30, 15, 25, 5] {
            assert_eq!(b.accept(&format!("2-{n}"), n), None);
        }
        assert_eq!(
            b.workers[&2].ranges,
            vec![(5, 5), (10, 10), (15, 15), (20, 20), (25, 25), (30, 30)]
        );
        assert_eq!(b.accept("2-15", 99), Some(FirstSeen::Seq(15)));
        assert_eq!(b.accept("2-16", 99), None);
    }

    #[test]
    fn other_op_ids_fall_back_to_fingerprints() {
        let mut a = Applied::default();
        assert_eq!(a.accept("op-lease-2-2", 3), None);
        assert_eq!(a.accept("op-lease-2-3", 4), None);
        assert_eq!(a.accept("op-lease-2-2", 5), Some(FirstSeen::Seq(3)));
    }
}
