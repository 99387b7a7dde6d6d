//! A small compressed-sparse-row matrix: kNN graphs (MODELS.md §2.1) and the RPNMF role
//! matrices `Mneg`/`Mpos` (MODELS.md §4.4), multiplied from the left by a dense k×n factor.

use ndarray::{Array2, ArrayView2};

/// Compressed sparse row matrix of f64. Column indices are sorted and unique within a row.
#[derive(Clone, Debug, PartialEq)]
pub struct Csr {
    nrows: usize,
    ncols: usize,
    /// `indptr[r]..indptr[r + 1]` indexes row r's entries; length `nrows + 1`.
    indptr: Vec<usize>,
    indices: Vec<usize>,
    data: Vec<f64>,
}

impl Csr {
    /// An `nrows × ncols` matrix from `(row, col, value)` entries; duplicate positions are
    /// summed. Entries out of range are a programming error and are skipped in release builds.
    pub fn from_entries(nrows: usize, ncols: usize, entries: &[(usize, usize, f64)]) -> Self {
        let mut sorted: Vec<(usize, usize, f64)> = entries
            .iter()
            .copied()
            .filter(|&(r, c, _)| {
                debug_assert!(r < nrows && c < ncols, "entry ({r}, {c}) out of range");
                r < nrows && c < ncols
            })
            .collect();
        sorted.sort_unstable_by_key(|&(r, c, _)| (r, c));
        let mut indptr = vec![0usize; nrows + 1];
        let mut indices: Vec<usize> = Vec::with_capacity(sorted.len());
        let mut data: Vec<f64> = Vec::with_capacity(sorted.len());
        let mut last: Option<(usize, usize)> = None;
        for (r, c, v) in sorted {
            if last == Some((r, c)) {
                if let Some(d) = data.last_mut() {
                    *d += v;
                }
                continue;
            }
            last = Some((r, c));
            indptr[r + 1] += 1;
            indices.push(c);
            data.push(v);
        }
        for r in 0..nrows {
            indptr[r + 1] += indptr[r];
        }
        Self {
            nrows,
            ncols,
            indptr,
            indices,
            data,
        }
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.data.len()
    }

    /// Row r as (column indices, values).
    pub fn row(&self, r: usize) -> (&[usize], &[f64]) {
        let (a, b) = (self.indptr[r], self.indptr[r + 1]);
        (&self.indices[a..b], &self.data[a..b])
    }

    /// Position of entry (r, c) in [`Self::values`], when stored.
    pub fn position(&self, r: usize, c: usize) -> Option<usize> {
        let (a, b) = (self.indptr[r], self.indptr[r + 1]);
        self.indices[a..b].binary_search(&c).ok().map(|p| a + p)
    }

    /// The stored values, in row order.
    pub fn values(&self) -> &[f64] {
        &self.data
    }

    /// The stored values, mutable: the sparsity pattern stays fixed.
    pub fn values_mut(&mut self) -> &mut [f64] {
        &mut self.data
    }

    /// Row sums (the degree vector `S 1` of a graph).
    pub fn row_sums(&self) -> Vec<f64> {
        (0..self.nrows)
            .map(|r| self.row(r).1.iter().sum())
            .collect()
    }

    /// Whether the matrix equals its transpose (exactly).
    pub fn is_symmetric(&self) -> bool {
        self.nrows == self.ncols
            && (0..self.nrows).all(|r| {
                let (cols, vals) = self.row(r);
                cols.iter()
                    .zip(vals)
                    .all(|(&c, &v)| self.position(c, r).is_some_and(|p| self.data[p] == v))
            })
    }

    /// Dense copy (tests and small matrices only).
    pub fn to_dense(&self) -> Array2<f64> {
        let mut out = Array2::zeros((self.nrows, self.ncols));
        for r in 0..self.nrows {
            let (cols, vals) = self.row(r);
            for (&c, &v) in cols.iter().zip(vals) {
                out[[r, c]] += v;
            }
        }
        out
    }

    /// `out ← A·self` for a dense `A` (k×nrows); `out` is k×ncols. O(k·nnz).
    pub fn left_mul_into(&self, a: ArrayView2<'_, f64>, out: &mut Array2<f64>) {
        debug_assert_eq!(a.ncols(), self.nrows);
        debug_assert_eq!(out.dim(), (a.nrows(), self.ncols));
        out.fill(0.0);
        for (a_row, mut o_row) in a.rows().into_iter().zip(out.rows_mut()) {
            for (r, &ar) in a_row.iter().enumerate() {
                if ar == 0.0 {
                    continue;
                }
                let (cols, vals) = self.row(r);
                for (&c, &v) in cols.iter().zip(vals) {
                    o_row[c] += ar * v;
                }
            }
        }
    }

    /// `A·self` as a new array.
    pub fn left_mul(&self, a: ArrayView2<'_, f64>) -> Array2<f64> {
        let mut out = Array2::zeros((a.nrows(), self.ncols));
        self.left_mul_into(a, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn duplicates_are_summed_and_product_matches_dense() {
        let m = Csr::from_entries(3, 3, &[(0, 1, 1.0), (2, 0, 2.0), (0, 1, 0.5), (1, 1, 3.0)]);
        assert_eq!(m.nnz(), 3);
        let d = m.to_dense();
        assert_eq!(d, array![[0.0, 1.5, 0.0], [0.0, 3.0, 0.0], [2.0, 0.0, 0.0]]);
        let a = array![[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]];
        assert_eq!(m.left_mul(a.view()), a.dot(&d));
        assert_eq!(m.position(2, 0), Some(2));
        assert_eq!(m.position(2, 1), None);
        assert!(!m.is_symmetric());
    }
}
