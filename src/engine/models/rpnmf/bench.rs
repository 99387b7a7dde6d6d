//! RPNMF's bench case as `run --triplets generate` and the app fit it: unit-L2 digits, the
//! protocol's triplets from labels and the 5-NN graph (docs/models.md §8.4), k = 10. Unlike the
//! random triplets of NMF's breakdown, these make the safeguard damp most steps, and each damped
//! level is one more evaluation of F; the note says how many evaluations an iteration took.

use super::{Rpnmf, paper_spec};
use crate::engine::constraints::SideInfo;
use crate::engine::constraints::generate::{ProtocolOptions, generate_triplets, labels_from_truth};
use crate::engine::data::{Dataset, Preprocess, preprocess};
use crate::engine::models::Model;
use crate::engine::models::bench::{Bench, BenchError};
use std::sync::Arc;

/// The protocol case on the digits, when they have labels.
pub(super) fn cases(b: &mut dyn Bench) -> Result<(), BenchError> {
    let Some(p) = b.digits() else {
        return Ok(());
    };
    if p.labels.is_empty() {
        b.note("rpnmf protocol triplets: skipped (digits labels absent)".into());
        return Ok(());
    }
    let mut x = p.x;
    preprocess::apply(&mut x, Preprocess::L2);
    let opts = ProtocolOptions::default();
    let triplets = generate_triplets(x.view(), &labels_from_truth(&p.labels), &opts, &[])?.triplets;
    let n_triplets = triplets.len();
    let data = Arc::new(Dataset::from_parts(x, None, vec![], "digits l2"));
    let side = SideInfo::with_triplets(triplets);
    let mut rp = Rpnmf::new(data, &paper_spec(10, 0), &side)?;
    // Past the first fast descent, where the damping settles in.
    for _ in 0..200 {
        let _ = rp.step();
    }
    let before = rp.safeguard_stats().evaluations;
    let start = rp.iteration();
    let iters = p.iters;
    let name = format!("rpnmf_iteration protocol triplets |T|={n_triplets} [digits l2, k=10]");
    let reps = b.reps();
    b.time(&name, "iteration", reps, iters, &mut || {
        for _ in 0..iters {
            let _ = rp.step();
        }
    });
    let st = rp.safeguard_stats();
    b.note(format!(
        "rpnmf protocol triplets [digits l2]: iterations {}..{}: {:.2} evaluations of F per \
         iteration; {} of {} steps damped in all (deepest γ = 2^-{}), {} rejected",
        start,
        rp.iteration(),
        (st.evaluations - before) as f64 / (rp.iteration() - start).max(1) as f64,
        st.damped,
        rp.iteration(),
        st.deepest,
        st.rejected
    ));
    Ok(())
}
