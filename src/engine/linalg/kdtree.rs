//! Exact p-nearest-neighbour search by a k-d tree, for samples in few dimensions (PSMF's
//! s-dimensional subspace, docs/models.md §6.2): O(n log n) to build and, on clustered data in
//! up to [`TREE_MAX_DIMS`] dimensions, far below the O(n²·d) of the blocked search per query
//! set. The answer is the same as [`super::knn::knn`]'s, bit for bit: every reported distance
//! is `Σ_k (x_ki − x_kc)²` summed in f64 in feature order, ties go to the smaller index, and a
//! node is skipped only when its box's lower bound (a sum of fewer, smaller terms, so never
//! above the exact sum even after rounding) is strictly worse than the current p-th best.
//! Queries run in parallel over fixed chunks; each query's result does not depend on the
//! thread count.

use super::knn::{Neighbours, knn_unless};
use ndarray::ArrayView2;
use rayon::prelude::*;
use std::cmp::Ordering;

/// At most this many dimensions use the tree; more go through the blocked GEMM search.
pub const TREE_MAX_DIMS: usize = 16;
/// Points per leaf.
const LEAF: usize = 16;
/// Queries per parallel chunk (and per interrupt poll).
const CHUNK: usize = 2048;

struct Node {
    /// `perm[start..end]` are the node's points.
    start: usize,
    end: usize,
    /// Children (0 = none: a leaf).
    left: usize,
    right: usize,
}

struct Tree<'a> {
    d: usize,
    /// Samples as rows (n×d).
    pts: &'a [f64],
    perm: Vec<usize>,
    /// The samples as rows in the order of `perm` (n×d): a leaf's points side by side.
    sorted: Vec<f64>,
    nodes: Vec<Node>,
    /// Node j's bounding box at `2d·j`: `lo[k]` then `hi[k]` per dimension (one array, so
    /// that a query reads the boxes it tests without a pointer per node).
    boxes: Vec<f64>,
}

fn cmp(a: &(f64, usize), b: &(f64, usize)) -> Ordering {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
}

impl<'a> Tree<'a> {
    fn build(pts: &'a [f64], n: usize, d: usize) -> Self {
        let mut t = Tree {
            d,
            pts,
            perm: (0..n).collect(),
            sorted: Vec::new(),
            nodes: Vec::new(),
            boxes: Vec::new(),
        };
        t.node(0, n);
        t.sorted = t
            .perm
            .iter()
            .flat_map(|&i| pts[i * d..(i + 1) * d].iter().copied())
            .collect();
        t
    }

    /// Builds the node over `perm[start..end]` and returns its index.
    fn node(&mut self, start: usize, end: usize) -> usize {
        let d = self.d;
        let mut lo = vec![f64::INFINITY; d];
        let mut hi = vec![f64::NEG_INFINITY; d];
        for &i in &self.perm[start..end] {
            let row = &self.pts[i * d..(i + 1) * d];
            for ((l, h), &v) in lo.iter_mut().zip(hi.iter_mut()).zip(row) {
                *l = l.min(v);
                *h = h.max(v);
            }
        }
        let id = self.nodes.len();
        self.nodes.push(Node {
            start,
            end,
            left: 0,
            right: 0,
        });
        self.boxes.extend_from_slice(&lo);
        self.boxes.extend_from_slice(&hi);
        if end - start <= LEAF {
            return id;
        }
        let dim = (0..d)
            .max_by(|&a, &b| (hi[a] - lo[a]).total_cmp(&(hi[b] - lo[b])).then(b.cmp(&a)))
            .unwrap_or(0);
        if hi[dim] - lo[dim] <= 0.0 {
            return id; // all points equal: one leaf
        }
        let mid = start + (end - start) / 2;
        let pts = self.pts;
        self.perm[start..end].select_nth_unstable_by(mid - start, |&a, &b| {
            pts[a * d + dim]
                .total_cmp(&pts[b * d + dim])
                .then(a.cmp(&b))
        });
        let left = self.node(start, mid);
        let right = self.node(mid, end);
        self.nodes[id].left = left;
        self.nodes[id].right = right;
        id
    }

    /// The lower bound of the squared distance from q to the node's box.
    fn bound(&self, id: usize, q: &[f64]) -> f64 {
        let d = self.d;
        let (lo, hi) = self.boxes[2 * d * id..2 * d * (id + 1)].split_at(d);
        let mut s = 0.0;
        for ((&qk, &lo), &hi) in q.iter().zip(lo).zip(hi) {
            let g = if qk < lo {
                lo - qk
            } else if qk > hi {
                qk - hi
            } else {
                continue;
            };
            s += g * g;
        }
        s
    }

    /// The p nearest others of point i, nearest first, into `best` (sorted, at most p).
    fn query(&self, i: usize, p: usize, best: &mut Vec<(f64, usize)>, stack: &mut Vec<usize>) {
        let d = self.d;
        let q = &self.pts[i * d..(i + 1) * d];
        best.clear();
        stack.clear();
        stack.push(0);
        while let Some(id) = stack.pop() {
            let node = &self.nodes[id];
            if best.len() == p && self.bound(id, q) > best[p - 1].0 {
                continue;
            }
            if node.left == 0 {
                let rows = self.sorted[node.start * d..node.end * d].chunks_exact(d);
                for (&c, row) in self.perm[node.start..node.end].iter().zip(rows) {
                    if c == i {
                        continue;
                    }
                    // The sum in feature order, abandoned once its partial sum is over the
                    // p-th best (terms are ≥ 0, so the full sum could only be larger).
                    let bar = if best.len() == p {
                        best[p - 1].0
                    } else {
                        f64::INFINITY
                    };
                    let mut dist = 0.0;
                    let mut over = false;
                    for (u, v) in q.iter().zip(row) {
                        dist += (u - v) * (u - v);
                        if dist > bar {
                            over = true;
                            break;
                        }
                    }
                    if over {
                        continue;
                    }
                    let cand = (dist, c);
                    if best.len() == p {
                        if cmp(&cand, &best[p - 1]) != Ordering::Less {
                            continue;
                        }
                        best.pop();
                    }
                    let pos = best.partition_point(|e| cmp(e, &cand) == Ordering::Less);
                    best.insert(pos, cand);
                }
                continue;
            }
            // Visit the nearer child first (pushed last).
            let (near, far) = if self.bound(node.left, q) <= self.bound(node.right, q) {
                (node.left, node.right)
            } else {
                (node.right, node.left)
            };
            stack.push(far);
            stack.push(near);
        }
    }
}

/// The p nearest neighbours of every column of `x` (d×n), itself excluded, by the k-d tree,
/// or `None` once `stop()` is true (asked before each chunk of queries). Equal to
/// [`super::knn::knn`] (see the module docs).
pub fn knn_tree_unless(
    x: ArrayView2<'_, f64>,
    p: usize,
    stop: &(dyn Fn() -> bool + Sync),
) -> Option<Neighbours> {
    let (d, n) = x.dim();
    let p = p.min(n.saturating_sub(1));
    let rows = x.t().as_standard_layout().into_owned();
    let pts = rows.as_slice()?;
    if p == 0 {
        return Some(Neighbours::from_parts(0, Vec::new(), Vec::new()));
    }
    let tree = Tree::build(pts, n, d);
    // Queries in the tree's order, so that consecutive queries are near each other and walk
    // the same nodes and leaves while they are in cache; each query's answer does not depend
    // on which ran before it.
    let starts: Vec<usize> = (0..n).step_by(CHUNK).collect();
    let parts: Vec<(Vec<usize>, Vec<f64>)> = starts
        .par_iter()
        .map(|&s0| {
            if stop() {
                return None;
            }
            let s1 = (s0 + CHUNK).min(n);
            let mut idx = Vec::with_capacity((s1 - s0) * p);
            let mut dist = Vec::with_capacity((s1 - s0) * p);
            let (mut best, mut stack) = (Vec::with_capacity(p + 1), Vec::new());
            for &i in &tree.perm[s0..s1] {
                tree.query(i, p, &mut best, &mut stack);
                idx.extend(best.iter().map(|e| e.1));
                dist.extend(best.iter().map(|e| e.0));
            }
            Some((idx, dist))
        })
        .collect::<Option<Vec<_>>>()?;
    let mut idx = vec![0; n * p];
    let mut dist = vec![0.0; n * p];
    for (&s0, (ii, dd)) in starts.iter().zip(parts) {
        let lists = ii.chunks_exact(p).zip(dd.chunks_exact(p));
        for (&i, (il, dl)) in tree.perm[s0..].iter().zip(lists) {
            idx[i * p..(i + 1) * p].copy_from_slice(il);
            dist[i * p..(i + 1) * p].copy_from_slice(dl);
        }
    }
    Some(Neighbours::from_parts(p, idx, dist))
}

/// The p-NN search fit for the dimension: the tree up to [`TREE_MAX_DIMS`] dimensions with
/// finite data, else the blocked GEMM search. Either gives the same answer.
pub fn knn_auto_unless(
    x: ArrayView2<'_, f64>,
    p: usize,
    stop: &(dyn Fn() -> bool + Sync),
) -> Option<Neighbours> {
    if (1..=TREE_MAX_DIMS).contains(&x.nrows())
        && x.iter().all(|v| v.is_finite() && v.abs() < 1e150)
    {
        knn_tree_unless(x, p, stop)
    } else {
        knn_unless(x, p, stop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::linalg::knn;
    use ndarray::Array2;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Random clustered points in 1, 3 and 10 dimensions, and points on an integer grid full
    /// of ties and duplicates: the tree's answer equals the blocked search's exactly.
    #[test]
    fn tree_equals_the_blocked_search() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for &(d, n, p) in &[(1, 300, 4), (3, 1000, 5), (10, 2500, 7), (2, 5, 10)] {
            let x =
                Array2::from_shape_fn((d, n), |(_, j)| (j % 4) as f64 * 3.0 + rng.r#gen::<f64>());
            let tree = knn_tree_unless(x.view(), p, &|| false).unwrap();
            assert_eq!(tree, knn(x.view(), p), "d = {d}, n = {n}");
        }
        let grid = Array2::from_shape_fn((2, 400), |(a, j)| ((j * (a + 3)) % 7) as f64);
        assert_eq!(
            knn_tree_unless(grid.view(), 6, &|| false).unwrap(),
            knn(grid.view(), 6)
        );
        assert!(knn_tree_unless(grid.view(), 6, &|| true).is_none());
    }
}
