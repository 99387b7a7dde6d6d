//! RMNMF's bench cases (docs/models.md §3.4) on `orl_32x32` (1024×400, k = 40, when present)
//! and on a random 1024×1440 matrix (k = 20): its iteration timed in turn with the three m×n×k
//! products it makes (X − G Wᵀ, Bᵀ G and B W) alone on arrays of the same shapes, so the report
//! states the iteration against its O(mnk) part; the rest is O(mn) passes, O(nnz·k) graph
//! passes and the O(nk²) thin SVD of the Procrustes step.

use super::{KIND, Rmnmf, RmnmfParams};
use crate::engine::constraints::SideInfo;
use crate::engine::data::Dataset;
use crate::engine::linalg::{GraphWeight, Op, gemm_into};
use crate::engine::models::bench::{Bench, BenchError, Problem, orl, random_1440, random_matrix};
use crate::engine::models::{Model, ModelSpec};
use ndarray::Array2;
use std::sync::Arc;

/// The iteration against its products on ORL (k = 40) and on the random 1024×1440 (k = 20).
pub(super) fn cases(b: &mut dyn Bench) -> Result<(), BenchError> {
    if let Some(p) = orl(b, "rmnmf") {
        against_products(b, p, 40)?;
    }
    let p = random_1440(b, 15);
    against_products(b, p, 20)
}

fn against_products(b: &mut dyn Bench, p: Problem, k: usize) -> Result<(), BenchError> {
    let ((m, n), label, iters) = (p.x.dim(), p.label.as_str(), p.iters.max(3));
    let data = Arc::new(Dataset::from_parts(p.x, None, vec![], label));
    let params = RmnmfParams::defaults()?;
    let graph = SideInfo::default().graph(&data, params.neighbors, GraphWeight::Binary);
    let nnz = graph.nnz();
    let mut model = Rmnmf::start(Arc::clone(&data), &ModelSpec::new(KIND, k, 0), params, graph)?;
    let xt = data.x.t().as_standard_layout().into_owned();
    let g = random_matrix(n, k, 16);
    let w = random_matrix(m, k, 17);
    let mut r = Array2::<f64>::zeros((n, m));
    let mut wk = Array2::<f64>::zeros((m, k));
    let mut nk = Array2::<f64>::zeros((n, k));
    let times = b.interleaved(2, iters, &mut |case| {
        for _ in 0..iters {
            if case == 0 {
                let _ = model.step();
            } else {
                r.assign(&xt);
                gemm_into(&mut r.view_mut(), -1.0, g.view(), Op::N, w.view(), Op::T, true);
                gemm_into(&mut wk.view_mut(), 1.0, xt.view(), Op::T, g.view(), Op::N, false);
                gemm_into(&mut nk.view_mut(), 1.0, xt.view(), Op::N, w.view(), Op::N, false);
            }
        }
    });
    let flops = Some(6.0 * (m * n * k) as f64);
    let what = format!("rmnmf iteration / its three m×n×k products [{label}, k={k}]");
    b.ratio(&what, &times[0], &times[1]);
    let name = format!("rmnmf_iteration lambda=1 mu0=1e-5 5-NN [{label}, k={k}]");
    b.case(&name, "iteration", &times[0], flops);
    let name = format!("rmnmf three m×n×k products [{label}, k={k}]");
    b.case(&name, "iteration", &times[1], flops);
    b.note(format!(
        "rmnmf [{label}]: 5-NN binary graph with {nnz} nonzeros; per iteration O(mnk) = 3 \
         products of {:.0} MFLOP, O(nnz·k) = {}, O(nk²) = {}",
        2.0 * (m * n * k) as f64 / 1e6,
        nnz * k,
        n * k * k
    ));
    Ok(())
}
