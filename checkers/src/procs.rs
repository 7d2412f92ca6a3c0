//! State kept per worker process. Process ids are small integers (one per worker, and a new one
//! for each retired process), so a vector indexed by the id replaces a hash map lookup on every
//! event. An id beyond [`DENSE`] (thousands of retired processes, or anything a history says)
//! goes to a map instead, so a huge id cannot make a huge vector. The vector does not shrink:
//! it costs at most [`DENSE`] empty slots per map, a few tens of kilobytes.
//!
//! The lookups are `inline(always)`: left to the compiler, `insert` stayed a call even with
//! LTO (3.7% of a profile's samples), and inlining them made the check about 2% faster. Their
//! map path is out of line (`cold`): inlined, the compiler hoisted the hashing of the event's
//! process out of the engine's loop over its checkers, and paid it on every event although no
//! id of a lock history reaches the map.

use crate::hashing::FastMap;

/// Ids below this are kept in the vector.
pub const DENSE: u32 = 1 << 12;

/// A map from process id to `V` (see the module doc).
#[derive(Debug)]
pub struct PerProcess<V> {
    dense: Vec<Option<V>>,
    sparse: FastMap<u32, V>,
}

impl<V> Default for PerProcess<V> {
    fn default() -> Self {
        PerProcess {
            dense: Vec::new(),
            sparse: FastMap::default(),
        }
    }
}

impl<V> PerProcess<V> {
    #[inline(always)]
    pub fn get(&self, p: u32) -> Option<&V> {
        if p < DENSE {
            self.dense.get(p as usize)?.as_ref()
        } else {
            self.sparse_get(p)
        }
    }

    #[inline(always)]
    pub fn get_mut(&mut self, p: u32) -> Option<&mut V> {
        if p < DENSE {
            self.dense.get_mut(p as usize)?.as_mut()
        } else {
            self.sparse_get_mut(p)
        }
    }

    /// Sets the state of `p`, returning the one it replaces.
    #[inline(always)]
    pub fn insert(&mut self, p: u32, v: V) -> Option<V> {
        if p < DENSE {
            self.slot(p).replace(v)
        } else {
            self.sparse_insert(p, v)
        }
    }

    #[inline(always)]
    pub fn remove(&mut self, p: u32) -> Option<V> {
        if p < DENSE {
            self.dense.get_mut(p as usize)?.take()
        } else {
            self.sparse_remove(p)
        }
    }

    /// The state of `p`, made with `make` if it has none.
    #[inline(always)]
    pub fn get_or_insert_with(&mut self, p: u32, make: impl FnOnce() -> V) -> &mut V {
        if p < DENSE {
            self.slot(p).get_or_insert_with(make)
        } else {
            self.sparse_get_or_insert_with(p, make)
        }
    }

    /// Every process's state, mutable (dense ids first, in order; then the rest).
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.dense
            .iter_mut()
            .filter_map(Option::as_mut)
            .chain(self.sparse.values_mut())
    }

    /// Every process's state (dense ids first, in order; then the rest).
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.dense
            .iter()
            .filter_map(Option::as_ref)
            .chain(self.sparse.values())
    }

    #[inline(always)]
    fn slot(&mut self, p: u32) -> &mut Option<V> {
        let i = p as usize;
        if i >= self.dense.len() {
            self.grow(i);
        }
        &mut self.dense[i]
    }

    #[cold]
    #[inline(never)]
    fn sparse_get(&self, p: u32) -> Option<&V> {
        self.sparse.get(&p)
    }

    #[cold]
    #[inline(never)]
    fn sparse_get_mut(&mut self, p: u32) -> Option<&mut V> {
        self.sparse.get_mut(&p)
    }

    #[cold]
    #[inline(never)]
    fn sparse_insert(&mut self, p: u32, v: V) -> Option<V> {
        self.sparse.insert(p, v)
    }

    #[cold]
    #[inline(never)]
    fn sparse_remove(&mut self, p: u32) -> Option<V> {
        self.sparse.remove(&p)
    }

    #[cold]
    #[inline(never)]
    fn sparse_get_or_insert_with(&mut self, p: u32, make: impl FnOnce() -> V) -> &mut V {
        self.sparse.entry(p).or_insert_with(make)
    }

    /// Room for slot `i` (once per process: kept out of the inlined path).
    #[cold]
    #[inline(never)]
    fn grow(&mut self, i: usize) {
        self.dense.resize_with(i + 1, || None);
    }
}

impl<V: Default> PerProcess<V> {
    /// The state of `p`, default if it has none.
    #[inline(always)]
    pub fn at(&mut self, p: u32) -> &mut V {
        self.get_or_insert_with(p, V::default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_huge_ids_behave_the_same() {
        for p in [0, 7, DENSE - 1, DENSE, u32::MAX] {
            let mut m: PerProcess<u32> = PerProcess::default();
            assert_eq!(m.get(p), None);
            assert_eq!(m.insert(p, 1), None);
            assert_eq!(m.insert(p, 2), Some(1));
            *m.at(p) += 1;
            assert_eq!(m.get(p), Some(&3));
            assert_eq!(m.values().copied().collect::<Vec<_>>(), vec![3]);
            assert_eq!(m.remove(p), Some(3));
            assert_eq!(m.get(p), None);
            assert_eq!(m.remove(p), None);
        }
    }

    #[test]
    fn a_huge_id_does_not_grow_the_vector() {
        let mut m: PerProcess<u8> = PerProcess::default();
        m.insert(u32::MAX, 1);
        assert!(m.dense.is_empty());
    }
}
