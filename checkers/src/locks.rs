//! Lock names as dense ids. A run has a handful of locks whose names every event repeats; the
//! engine resolves an event's lock once, and the checkers keep per-lock state in vectors indexed
//! by the id. Before, each of five checkers and the hold book hashed and compared the name
//! again for every event, and that was the largest share of the check.
//!
//! Memory is one entry per distinct lock name that an acquire, release or lease-lost event
//! named, which the per-lock state needed anyway.

use crate::hashing::FastMap;
use crate::name::Name;

/// A lock, as the index of its name in [`LockNames`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LockId(u32);

impl LockId {
    fn index(self) -> usize {
        self.0 as usize
    }
}

/// Every lock name seen so far, each with its id.
#[derive(Debug, Default)]
pub struct LockNames {
    ids: FastMap<Name, LockId>,
    names: Vec<Name>,
    /// The id returned last: most events are about the same lock as the one before.
    last: Option<LockId>,
}

impl LockNames {
    /// The id of `name`, given a new one the first time the name is seen.
    #[inline]
    pub fn intern(&mut self, name: &str) -> LockId {
        if let Some(id) = self.last.filter(|id| same(&self.names[id.index()], name)) {
            return id;
        }
        let id = match self.ids.get(name) {
            Some(&id) => id,
            None => {
                let id = LockId(u32::try_from(self.names.len()).expect("under 2^32 lock names"));
                self.names.push(Name::from(name));
                self.ids.insert(Name::from(name), id);
                id
            }
        };
        self.last = Some(id);
        id
    }

    /// The name behind an id this table gave.
    pub fn name(&self, id: LockId) -> &str {
        &self.names[id.index()]
    }
}

/// `a == b`, compared here byte by byte: `==` on strings calls libc's memcmp, and that call
/// was most of the cost of finding the id of a lock named by a few bytes.
#[inline]
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// State kept per lock: a vector indexed by [`LockId`], grown on first use.
#[derive(Debug)]
pub struct PerLock<V>(Vec<V>);

impl<V> Default for PerLock<V> {
    fn default() -> Self {
        PerLock(Vec::new())
    }
}

impl<V: Default> PerLock<V> {
    /// The state of `lock`, if it was ever touched.
    #[inline]
    pub fn get(&self, lock: LockId) -> Option<&V> {
        self.0.get(lock.index())
    }

    /// The state of `lock`, mutable, if it was ever touched.
    #[inline]
    pub fn get_mut(&mut self, lock: LockId) -> Option<&mut V> {
        self.0.get_mut(lock.index())
    }

    /// The state of `lock`, created (default) on first use. Always inlined: left to the
    /// compiler, it stayed a call of 10 instructions for each grant in the hold book and the
    /// token checkers (1.4% of the engine's on vs_porcupine's histories).
    #[inline(always)]
    pub fn at(&mut self, lock: LockId) -> &mut V {
        let i = lock.index();
        if i >= self.0.len() {
            self.grow(i);
        }
        &mut self.0[i]
    }

    /// Room for lock `i` (once per lock: kept out of the inlined path).
    #[cold]
    #[inline(never)]
    fn grow(&mut self, i: usize) {
        self.0.resize_with(i + 1, V::default);
    }

    /// Every lock's state, in id order (the order the names were first seen).
    pub fn iter(&self) -> impl Iterator<Item = (LockId, &V)> {
        self.0
            .iter()
            .enumerate()
            .map(|(i, v)| (LockId(i as u32), v))
    }

    /// Every lock's state, mutable, in id order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (LockId, &mut V)> {
        self.0
            .iter_mut()
            .enumerate()
            .map(|(i, v)| (LockId(i as u32), v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_get_stable_dense_ids() {
        let mut n = LockNames::default();
        let a = n.intern("a");
        let b = n.intern("/locks/b");
        assert_eq!((a, b), (LockId(0), LockId(1)));
        assert_eq!(n.intern("a"), a, "a name seen before keeps its id");
        assert_eq!(n.intern("a"), a, "and again through the last-id shortcut");
        assert_eq!(n.intern("/locks/b"), b);
        assert_eq!((n.name(a), n.name(b)), ("a", "/locks/b"));
        assert_ne!(n.intern("/locks/c"), b, "same length, different bytes");
        assert_ne!(n.intern("/locks/bb"), b, "same prefix, different length");
    }

    #[test]
    fn per_lock_state_grows_on_first_use() {
        let mut n = LockNames::default();
        let (a, b) = (n.intern("a"), n.intern("b"));
        let mut s: PerLock<u32> = PerLock::default();
        assert_eq!(s.get(b), None);
        *s.at(b) += 2;
        assert_eq!((s.get(a), s.get(b)), (Some(&0), Some(&2)));
        assert_eq!(s.iter().map(|(_, v)| *v).collect::<Vec<_>>(), vec![0, 2]);
    }
}
