//! Dense and sparse linear-algebra kernels shared by the models (DESIGN.md §4).
//!
//! Dense products go through [`gemm`], which hands contiguous ndarray views to faer 0.24
//! through its safe row-major slice constructors, except NMF's and RPNMF's two big products
//! `WᵀX` and `XHᵀ`, which use the thin kernels of [`thin`] (faster at rank k ≪ m, n; `XHᵀ` of
//! an X that fits in cache by the lane sums of `gram`), and the k×k×n products `HHᵀ`
//! (`gram`) and `WᵀW·H` (the thin `WᵀX` kernel). The
//! crate's `unsafe` (a `vzeroupper` after faer kernels, `madvise` for large buffers) is all in
//! `crate::engine::machine::sys`. One fit's big products use the threads its worker sets ([`set_threads`]; all
//! cores for a single fit, one per fit in sweeps), split by output entries so that the bits do
//! not depend on the count ([`parallel`]); faer runs sequentially.

pub mod adaptive;
pub mod components;
pub mod eigen;
mod gemm;
pub(crate) mod gram;
pub mod graph;
pub mod kdtree;
pub mod knn;
pub mod parallel;
pub mod procrustes;
pub mod projection;
pub mod shrink;
pub mod simplex;
pub mod sparse;
pub mod special;
pub(crate) mod thin;

pub use adaptive::{adaptive_graph, adaptive_rows};
pub use gemm::{Op, gemm, gemm_into, gram_of_columns, gram_of_rows};
pub use graph::{GraphWeight, weighted_graph};
pub use knn::{Neighbours, knn, knn_graph, knn_of};
pub use parallel::{ThreadsGuard, available_threads, for_each_part, set_threads, threads};
pub use procrustes::{ProcrustesError, procrustes};
pub use shrink::shrink_columns;
pub use simplex::{project_to_simplex, weighted_simplex_qp};
pub use sparse::Csr;

/// The index of the largest entry of each row (the first on ties): a soft assignment
/// (PSMF's G, label spreading's F) read as labels.
pub fn argmax_rows(m: ndarray::ArrayView2<'_, f64>) -> Vec<usize> {
    m.rows()
        .into_iter()
        .map(|row| {
            let mut best = 0;
            for (a, &v) in row.iter().enumerate() {
                if v > row[best] {
                    best = a;
                }
            }
            best
        })
        .collect()
}
