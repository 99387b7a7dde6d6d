//! NMF's bench cases: the iteration against its two big products (WᵀX and XHᵀ) alone, by
//! faer's GEMM and by the kernels the iteration uses, with RPNMF's iteration (|T| = 3n random
//! triplets) in the same turns, on the digits (k = 10) and the large random problem (k = 20).

use super::{KIND, Nmf};
use crate::engine::constraints::SideInfo;
use crate::engine::constraints::generate::random_triplets;
use crate::engine::data::Dataset;
use crate::engine::linalg::{Op, gemm_into};
use crate::engine::models::bench::{Bench, BenchError, Problem};
use crate::engine::models::rpnmf::{Rpnmf, paper_spec};
use crate::engine::models::{Model, ModelSpec};
use ndarray::Array2;
use std::sync::Arc;

/// The breakdown on the digits and on the large random problem.
pub(super) fn cases(b: &mut dyn Bench) -> Result<(), BenchError> {
    for (p, k) in [(b.digits(), 10), (b.random(), 20)] {
        if let Some(p) = p {
            breakdown(b, p, k)?;
        }
    }
    Ok(())
}

/// Four cases in turn, rep by rep, each rep `iters` units: a drift of the machine's speed
/// during the run then moves all four alike, and each ratio is the median of its reps' ratios
/// (pairs measured side by side), not a ratio of medians taken minutes apart.
fn breakdown(b: &mut dyn Bench, p: Problem, k: usize) -> Result<(), BenchError> {
    let (m, n) = p.x.dim();
    let (label, iters) = (p.label.as_str(), p.iters);
    let data = Arc::new(Dataset::from_parts(p.x, None, vec![], label));
    let mut model = Nmf::new(Arc::clone(&data), &ModelSpec::new(KIND, k, 0))?;
    let gemm_flops = 2.0 * 2.0 * (m * n * k) as f64;
    let side = SideInfo::with_triplets(random_triplets(n, 3 * n, 17));
    let mut rp = Rpnmf::new(Arc::clone(&data), &paper_spec(k, 0), &side)?;
    // The two big GEMMs alone, on the same shapes, from the factors after one warm-up block.
    for _ in 0..iters {
        let _ = model.step();
    }
    let w = model.w().map_or_else(|| Array2::zeros((m, k)), |w| w.to_owned());
    let h = model.h().to_owned();
    let mut wtx = Array2::<f64>::zeros((k, n));
    let mut xht = Array2::<f64>::zeros((m, k));
    let times = b.interleaved(4, iters, &mut |case| {
        for _ in 0..iters {
            match case {
                0 => {
                    let _ = model.step();
                }
                1 => {
                    let x = data.x.view();
                    gemm_into(&mut wtx.view_mut(), 1.0, w.view(), Op::T, x, Op::N, false);
                    gemm_into(&mut xht.view_mut(), 1.0, x, Op::N, h.view(), Op::T, false);
                }
                // The same two products by the kernels and column blocks the iteration uses
                // (thin kernels in blocks on large X; thin WᵀX and the lane-sum XHᵀ on small X).
                2 => model.big_products(),
                _ => {
                    let _ = rp.step();
                }
            }
        }
    });
    let (nmf, gemm, products, rpnmf) = (&times[0], &times[1], &times[2], &times[3]);
    b.ratio(&format!("nmf iteration / its two GEMMs (faer) [{label}]"), nmf, gemm);
    let what = format!("nmf iteration / its two products as it computes them [{label}]");
    b.ratio(&what, nmf, products);
    b.ratio(&format!("rpnmf iteration / nmf iteration [{label}]"), rpnmf, nmf);
    let names = [
        (format!("nmf_iteration [{label}, k={k}]"), "iteration"),
        (format!("gemm WtX+XHt [{label}, k={k}]"), "pair"),
        (
            format!("nmf big products WtX+XHt as the iteration computes them [{label}, k={k}]"),
            "pair",
        ),
        (format!("rpnmf_iteration |T|=3n [{label}, k={k}]"), "iteration"),
    ];
    for ((name, unit), t) in names.iter().zip(&times) {
        b.case(name, unit, t, Some(gemm_flops));
    }
    // The safeguard's work depends on how often it damps or rejects: say so next to the timing.
    let st = rp.safeguard_stats();
    b.note(format!(
        "rpnmf safeguard [{label}] after {} iterations: {} damped (deepest γ = 2^-{}), {} rejected",
        rp.iteration(),
        st.damped,
        st.deepest,
        st.rejected
    ));
    Ok(())
}
