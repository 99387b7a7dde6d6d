//! The adaptive-neighbour graph of docs/models.md §2.2 (Nie, Wang, Huang, KDD 2014): the
//! closed-form affinities that CAN starts from and FNMF regularises with.
//!
//! For sample i with squared distances `d_i1 ≤ d_i2 ≤ …` to the others (self excluded) and p
//! neighbours,
//!
//! `s_ij = (d_{i,p+1} − d_ij) / (p·d_{i,p+1} − Σ_{h≤p} d_ih)` for the p nearest j, 0 otherwise,
//!
//! the minimiser of `Σ_j (d_ij s_ij + r s_ij²)` over the simplex for the largest r that keeps
//! exactly p neighbours. Each row is nonnegative and sums to 1. The denominator is guarded by
//! [`DEN_GUARD`] (the models' ε_div, docs/models.md §1): when it vanishes (p + 1 points at the same distance,
//! duplicates), the row falls back to equal weights 1/p. The graph is symmetrised as
//! `S ← (S + Sᵀ)/2` (zero diagonal). Built from the project's exact kNN search (p + 1
//! neighbours), O(n p) memory; never n×n.

use super::knn::{Neighbours, knn};
use super::sparse::Csr;
use ndarray::ArrayView2;

/// The denominator below which a row falls back to equal weights (the models' ε_div = 1e-12).
pub const DEN_GUARD: f64 = 1e-12;

/// Row-stochastic adaptive-neighbour affinities of the columns of `x` (m×n), before
/// symmetrisation: `(rows, r_i)` where `rows[i]` holds `(j, s_ij)` for i's p nearest others
/// (nearest first) and `r_i = ½(p·d_{i,p+1} − Σ_{h≤p} d_ih)` is the regularisation that gives
/// them (CAN's λ is the mean of the `r_i`, docs/models.md §2.7). p is capped at n − 2 (one more
/// neighbour than p must exist).
pub fn adaptive_rows(x: ArrayView2<'_, f64>, p: usize) -> (Vec<Vec<(usize, f64)>>, Vec<f64>) {
    let n = x.ncols();
    let p = p.min(n.saturating_sub(2));
    if p == 0 {
        return (vec![Vec::new(); n], vec![0.0; n]);
    }
    let nb = knn(x, p + 1);
    rows_from_neighbours(&nb, p)
}

/// [`adaptive_rows`] from precomputed neighbour lists with at least p + 1 entries per sample.
pub fn rows_from_neighbours(nb: &Neighbours, p: usize) -> (Vec<Vec<(usize, f64)>>, Vec<f64>) {
    let n = nb.n();
    let mut rows = Vec::with_capacity(n);
    let mut r = Vec::with_capacity(n);
    for i in 0..n {
        let (idx, d) = (nb.of(i), nb.sq_dist(i));
        let p = p.min(idx.len().saturating_sub(1));
        if p == 0 {
            rows.push(Vec::new());
            r.push(0.0);
            continue;
        }
        let far = d[p];
        let sum: f64 = d[..p].iter().sum();
        let den = p as f64 * far - sum;
        let row: Vec<(usize, f64)> = if den > DEN_GUARD {
            (0..p).map(|h| (idx[h], (far - d[h]) / den)).collect()
        } else {
            (0..p).map(|h| (idx[h], 1.0 / p as f64)).collect()
        };
        rows.push(row);
        r.push(0.5 * den);
    }
    (rows, r)
}

/// The symmetrised adaptive-neighbour graph `(S + Sᵀ)/2` of the columns of `x` (n×n sparse,
/// zero diagonal, at most 2pn nonzeros; docs/models.md §2.2).
pub fn adaptive_graph(x: ArrayView2<'_, f64>, p: usize) -> Csr {
    let (rows, _) = adaptive_rows(x, p);
    symmetrise(&rows)
}

/// `(S + Sᵀ)/2` of the rows `(j, s_ij)` as a sparse n×n matrix.
pub fn symmetrise(rows: &[Vec<(usize, f64)>]) -> Csr {
    let n = rows.len();
    let mut entries = Vec::with_capacity(2 * rows.iter().map(Vec::len).sum::<usize>());
    for (i, row) in rows.iter().enumerate() {
        for &(j, s) in row {
            entries.push((i, j, 0.5 * s));
            entries.push((j, i, 0.5 * s));
        }
    }
    Csr::from_entries(n, n, &entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// Five points on a line at 0, 1, 3, 6, 10 with p = 2, by hand: for the point at 0 the
    /// squared distances are 1, 9, 36, so s = ((36 − 1), (36 − 9)) / (2·36 − 10) = (35, 27)/62.
    #[test]
    fn closed_form_rows_by_hand_and_the_symmetrised_graph() {
        let x = array![[0.0, 1.0, 3.0, 6.0, 10.0]];
        let (rows, r) = adaptive_rows(x.view(), 2);
        assert_eq!(rows[0].len(), 2);
        assert_eq!(rows[0][0].0, 1);
        assert_eq!(rows[0][1].0, 2);
        assert!((rows[0][0].1 - 35.0 / 62.0).abs() < 1e-15);
        assert!((rows[0][1].1 - 27.0 / 62.0).abs() < 1e-15);
        assert!((r[0] - 31.0).abs() < 1e-12);
        for row in &rows {
            let sum: f64 = row.iter().map(|e| e.1).sum();
            assert!((sum - 1.0).abs() < 1e-14 && row.iter().all(|e| e.1 >= 0.0));
        }
        let s = adaptive_graph(x.view(), 2);
        let dense = s.to_dense();
        for i in 0..5 {
            assert_eq!(dense[[i, i]], 0.0);
            for j in 0..5 {
                assert_eq!(dense[[i, j]], dense[[j, i]]);
            }
        }
        // Sample 0 is among 1's two nearest (1 → 0 at 1, 1 → 2 at 4): both halves add.
        let s01 = 0.5 * rows[0][0].1 + 0.5 * rows[1].iter().find(|e| e.0 == 0).unwrap().1;
        assert!((dense[[0, 1]] - s01).abs() < 1e-15);
    }

    /// Duplicates make the denominator vanish: equal weights, still a row of the simplex.
    #[test]
    fn ties_at_the_boundary_fall_back_to_equal_weights() {
        let x = array![[0.0, 1.0, 1.0, 1.0]];
        let (rows, _) = adaptive_rows(x.view(), 2);
        assert_eq!(rows[0].len(), 2);
        assert!(rows[0].iter().all(|e| (e.1 - 0.5).abs() < 1e-15));
    }
}
