//! Dense and sparse linear-algebra kernels shared by the models (DESIGN.md §4).
//!
//! All dense products go through [`gemm`], which hands contiguous ndarray views to faer 0.24
//! through its safe row-major slice constructors. The crate's only `unsafe` is one audited
//! `vzeroupper` after faer kernels (`crate::engine::sys`, an x86 SSE-transition penalty). Products
//! run single-threaded by default: on a shared 2-vCPU box multi-threaded BLAS collapsed under
//! load, so parallelism goes across runs instead; [`set_threads`] opts in.

mod gemm;
pub mod knn;
pub mod sparse;
pub mod special;
pub(crate) mod thin;

pub use gemm::{Op, gemm, gemm_into, gram_of_columns, gram_of_rows, par, set_threads, threads};
pub use knn::{Neighbours, knn, knn_graph};
pub use sparse::Csr;
