//! Connected components by union-find (disjoint sets with path halving and union by size):
//! exact counts for CAN's stop rule (docs/models.md §2.7 step 3), O(nnz·α(n)) time and O(n)
//! memory, instead of counting eigenvalues below a threshold.

use super::Csr;

/// Disjoint sets over `0..n`.
#[derive(Clone, Debug)]
pub struct UnionFind {
    parent: Vec<usize>,
    size: Vec<usize>,
    sets: usize,
}

impl UnionFind {
    /// n singletons.
    pub fn new(n: usize) -> Self {
        Self {
            parent: (0..n).collect(),
            size: vec![1; n],
            sets: n,
        }
    }

    /// The representative of v's set.
    pub fn find(&mut self, mut v: usize) -> usize {
        while self.parent[v] != v {
            self.parent[v] = self.parent[self.parent[v]];
            v = self.parent[v];
        }
        v
    }

    /// Merge the sets of a and b; whether they were apart.
    pub fn union(&mut self, a: usize, b: usize) -> bool {
        let (mut ra, mut rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        if self.size[ra] < self.size[rb] {
            std::mem::swap(&mut ra, &mut rb);
        }
        self.parent[rb] = ra;
        self.size[ra] += self.size[rb];
        self.sets -= 1;
        true
    }

    /// Number of disjoint sets.
    pub fn sets(&self) -> usize {
        self.sets
    }

    /// Each element's set, numbered 0, 1, … in the order of the sets' smallest elements.
    pub fn labels(&mut self) -> Vec<usize> {
        let n = self.parent.len();
        let mut number = vec![usize::MAX; n];
        let mut next = 0;
        (0..n)
            .map(|v| {
                let r = self.find(v);
                if number[r] == usize::MAX {
                    number[r] = next;
                    next += 1;
                }
                number[r]
            })
            .collect()
    }
}

/// The connected components of a square graph's edges with a positive weight (either
/// direction counts): their number and each vertex's component, numbered in the order of
/// their smallest vertex.
pub fn components(graph: &Csr) -> (usize, Vec<usize>) {
    let mut uf = UnionFind::new(graph.nrows());
    for i in 0..graph.nrows() {
        let (cols, vals) = graph.row(i);
        for (&j, &w) in cols.iter().zip(vals) {
            if w > 0.0 {
                uf.union(i, j);
            }
        }
    }
    (uf.sets(), uf.labels())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: usize, edges: &[(usize, usize, f64)]) -> Csr {
        let mut e = Vec::new();
        for &(a, b, w) in edges {
            e.push((a, b, w));
            e.push((b, a, w));
        }
        Csr::from_entries(n, n, &e)
    }

    /// Hand-made graphs: {0, 3}, {1, 2, 4}, {5}, and a zero-weight edge that does not join.
    #[test]
    fn components_of_hand_made_graphs() {
        let g = graph(6, &[(0, 3, 1.0), (1, 4, 0.5), (4, 2, 2.0), (3, 5, 0.0)]);
        assert_eq!(components(&g), (3, vec![0, 1, 1, 0, 1, 2]));
        // Joining 5 to 2 leaves two: {0, 3} and {1, 2, 4, 5}.
        let g = graph(6, &[(0, 3, 1.0), (1, 4, 0.5), (4, 2, 2.0), (2, 5, 1e-300)]);
        assert_eq!(components(&g), (2, vec![0, 1, 1, 0, 1, 1]));
        // No edges: every vertex alone; a path: one piece.
        assert_eq!(components(&graph(4, &[])), (4, vec![0, 1, 2, 3]));
        let path: Vec<_> = (0..9).map(|i| (i, i + 1, 1.0)).collect();
        assert_eq!(components(&graph(10, &path)).0, 1);
        // A one-directional edge counts (A > 0 in either triangle).
        let g = Csr::from_entries(3, 3, &[(2, 0, 1.0)]);
        assert_eq!(components(&g), (2, vec![0, 1, 0]));
    }

    #[test]
    fn union_reports_whether_it_merged() {
        let mut uf = UnionFind::new(5);
        assert!(uf.union(0, 1) && uf.union(3, 4) && uf.union(1, 4));
        assert!(!uf.union(0, 3));
        assert_eq!(uf.sets(), 2);
        assert_eq!(uf.labels(), vec![0, 0, 1, 0, 0]);
    }
}
