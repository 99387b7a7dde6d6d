//! Triplets `(i, j, q)`: "i is more related to j than to q" (docs/models.md §4.1). Validation, the
//! ordered duplicate-free [`TripletSet`], and the pairwise views NMFCC uses (docs/models.md §3.5,
//! §8.4: every triplet gives the must-link (i, j) and the cannot-link (i, q)).

use super::ConstraintError;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::fmt;

/// Triplet `(i, j, q)`: sample i is more related to j than to q (docs/models.md §4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Triplet {
    pub i: usize,
    pub j: usize,
    pub q: usize,
}

impl fmt::Display for Triplet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {}, {})", self.i, self.j, self.q)
    }
}

impl Triplet {
    /// A triplet from its anchor i, closer sample j and farther sample q.
    pub fn new(i: usize, j: usize, q: usize) -> Self {
        Self { i, j, q }
    }

    /// Check the indices against n samples and that the three are distinct.
    pub fn validate(self, n: usize) -> Result<(), ConstraintError> {
        for (role, index) in [("i", self.i), ("j", self.j), ("q", self.q)] {
            if index >= n {
                return Err(ConstraintError::IndexOutOfRange {
                    t: self,
                    role,
                    index,
                    n,
                });
            }
        }
        if self.i == self.j || self.i == self.q || self.j == self.q {
            return Err(ConstraintError::NotDistinct { t: self });
        }
        Ok(())
    }
}

/// Triplets in insertion order, without duplicates, valid for `n` samples.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TripletSet {
    n: usize,
    list: Vec<Triplet>,
    /// Position of every triplet in `list`.
    pos: HashMap<Triplet, usize>,
}

impl TripletSet {
    /// An empty set for a dataset of n samples.
    pub fn new(n: usize) -> Self {
        Self {
            n,
            list: Vec::new(),
            pos: HashMap::new(),
        }
    }

    /// Number of samples the indices are checked against.
    pub fn n(&self) -> usize {
        self.n
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The triplets in order.
    pub fn as_slice(&self) -> &[Triplet] {
        &self.list
    }

    /// Position of `t`, when present.
    pub fn position(&self, t: &Triplet) -> Option<usize> {
        self.pos.get(t).copied()
    }

    pub fn contains(&self, t: &Triplet) -> bool {
        self.pos.contains_key(t)
    }

    /// Check that `t` could be inserted (valid and not a duplicate).
    pub fn check_new(&self, t: Triplet) -> Result<(), ConstraintError> {
        t.validate(self.n)?;
        if let Some(pos) = self.position(&t) {
            return Err(ConstraintError::Duplicate { t, pos });
        }
        Ok(())
    }

    /// Insert `t` at `at` (clamped to the length); refuses invalid triplets and duplicates.
    pub fn insert_at(&mut self, at: usize, t: Triplet) -> Result<usize, ConstraintError> {
        self.check_new(t)?;
        let at = at.min(self.list.len());
        self.list.insert(at, t);
        self.reindex_from(at);
        Ok(at)
    }

    /// Append `t`; returns its position.
    pub fn push(&mut self, t: Triplet) -> Result<usize, ConstraintError> {
        self.insert_at(self.list.len(), t)
    }

    /// Remove `t`; returns where it was.
    pub fn remove(&mut self, t: &Triplet) -> Result<usize, ConstraintError> {
        let at = self
            .position(t)
            .ok_or(ConstraintError::NotFound { t: *t })?;
        self.list.remove(at);
        self.pos.remove(t);
        self.reindex_from(at);
        Ok(at)
    }

    fn reindex_from(&mut self, at: usize) {
        for (p, t) in self.list.iter().enumerate().skip(at) {
            self.pos.insert(*t, p);
        }
    }
}

/// Must-link pairs `(i, j)` of the triplets (docs/models.md §8.4), as unordered pairs
/// `(min, max)`, sorted and without repeats (NMFCC's mask is symmetric, docs/models.md §3.5).
pub fn must_links(triplets: &[Triplet]) -> Vec<(usize, usize)> {
    unordered_pairs(triplets.iter().map(|t| (t.i, t.j)))
}

/// Cannot-link pairs `(i, q)` of the triplets, unordered, sorted and without repeats.
pub fn cannot_links(triplets: &[Triplet]) -> Vec<(usize, usize)> {
    unordered_pairs(triplets.iter().map(|t| (t.i, t.q)))
}

pub(super) fn unordered_pairs(pairs: impl Iterator<Item = (usize, usize)>) -> Vec<(usize, usize)> {
    pairs
        .map(|(a, b)| (a.min(b), a.max(b)))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_fault() {
        let e = Triplet::new(0, 5, 1).validate(5).unwrap_err();
        assert_eq!(
            e.to_string(),
            "triplet (0, 5, 1): j = 5 is out of range (the dataset has 5 samples)"
        );
        assert!(matches!(
            Triplet::new(2, 1, 2).validate(5),
            Err(ConstraintError::NotDistinct { .. })
        ));
        assert!(Triplet::new(0, 1, 2).validate(3).is_ok());
    }

    #[test]
    fn set_refuses_duplicates_and_keeps_positions() {
        let mut s = TripletSet::new(4);
        s.push(Triplet::new(0, 1, 2)).unwrap();
        s.push(Triplet::new(1, 2, 3)).unwrap();
        let e = s.push(Triplet::new(0, 1, 2)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "triplet (0, 1, 2) is already in the list (at position 0)"
        );
        assert_eq!(s.insert_at(0, Triplet::new(3, 2, 1)).unwrap(), 0);
        assert_eq!(s.position(&Triplet::new(1, 2, 3)), Some(2));
        assert_eq!(s.remove(&Triplet::new(3, 2, 1)).unwrap(), 0);
        assert_eq!(s.position(&Triplet::new(1, 2, 3)), Some(1));
        assert!(s.remove(&Triplet::new(3, 2, 1)).is_err());
    }

    #[test]
    fn pairwise_views() {
        let ts = [
            Triplet::new(0, 1, 2),
            Triplet::new(1, 0, 3),
            Triplet::new(2, 3, 0),
        ];
        assert_eq!(must_links(&ts), vec![(0, 1), (2, 3)]);
        assert_eq!(cannot_links(&ts), vec![(0, 2), (1, 3)]);
    }
}
