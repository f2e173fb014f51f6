//! A map that forgets its oldest keys: bounded memory for joins over a log
//! that grows without bound.

use crate::fxhash::FxBuild;
use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

/// Two generations of a map: when the current one is full it becomes the
/// old one (dropping the previous old one), so at most twice `cap` keys are
/// held and the most recent `cap` are always kept.
pub struct Recent<K, V> {
    cur: HashMap<K, V, FxBuild>,
    old: HashMap<K, V, FxBuild>,
    cap: usize,
}

impl<K: Eq + Hash, V> Recent<K, V> {
    /// An empty map that keeps at least the `cap` most recent keys.
    pub fn new(cap: usize) -> Self {
        Recent {
            cur: HashMap::default(),
            old: HashMap::default(),
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
    pub fn get_mut<Q: Hash + Eq + ?Sized>(&mut self, k: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        match self.cur.get_mut(k) {
            Some(v) => Some(v),
            None => self.old.get_mut(k),
        }
    }

    /// Whether a key is still remembered.
    pub fn contains<Q: Hash + Eq + ?Sized>(&self, k: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.cur.contains_key(k) || self.old.contains_key(k)
    }

    /// Takes a key's value out, if still remembered.
    pub fn remove<Q: Hash + Eq + ?Sized>(&mut self, k: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.cur.remove(k).or_else(|| self.old.remove(k))
    }
}
