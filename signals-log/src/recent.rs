//! A map that forgets its oldest keys: bounded memory for joins over a log
//! that grows without bound.

use std::collections::HashMap;
use std::hash::Hash;

/// Two generations of a map: when the current one is full it becomes the
/// old one (dropping the previous old one), so at most twice `cap` keys are
/// held and the most recent `cap` are always kept.
pub struct Recent<K, V> {
    cur: HashMap<K, V>,
    old: HashMap<K, V>,
    cap: usize,
}

impl<K: Eq + Hash, V> Recent<K, V> {
    /// An empty map that keeps at least the `cap` most recent keys.
    pub fn new(cap: usize) -> Self {
        Recent {
            cur: HashMap::new(),
            old: HashMap::new(),
            cap,
        }
    }

    /// Inserts a key, forgetting the oldest generation when full.
    pub fn insert(&mut self, k: K, v: V) {
        if self.cur.len() >= self.cap {
            self.old = std::mem::take(&mut self.cur);
        }
        self.cur.insert(k, v);
    }

    /// The value of a key still remembered.
    pub fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        match self.cur.get_mut(k) {
            Some(v) => Some(v),
            None => self.old.get_mut(k),
        }
    }

    /// Whether a key is still remembered.
    pub fn contains(&self, k: &K) -> bool {
        self.cur.contains_key(k) || self.old.contains_key(k)
    }

    /// Takes a key's value out, if still remembered.
    pub fn remove(&mut self, k: &K) -> Option<V> {
        self.cur.remove(k).or_else(|| self.old.remove(k))
    }
}
