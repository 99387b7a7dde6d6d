//! t-STE's bench case: the digits with the protocol's triplets (docs/models.md §8.4; |T| =
//! 5,400 with the defaults), k = 10, as `run --model tste --triplets generate` fits it: one
//! iteration is the gradient step and one pass over the triplets for the cost and the gradient
//! (§3.6).

use super::{KIND, Tste, TsteParams};
use crate::engine::constraints::generate::{ProtocolOptions, generate_triplets, labels_from_truth};
use crate::engine::data::{Preprocess, preprocess};
use crate::engine::models::bench::{Bench, BenchError};
use crate::engine::models::{Model, ModelSpec};

/// The case on the digits, when they have labels.
pub(super) fn cases(b: &mut dyn Bench) -> Result<(), BenchError> {
    let Some(p) = b.digits().filter(|p| !p.labels.is_empty()) else {
        return Ok(());
    };
    let mut x = p.x;
    preprocess::apply(&mut x, Preprocess::L2);
    let opts = ProtocolOptions::default();
    let triplets = generate_triplets(x.view(), &labels_from_truth(&p.labels), &opts, &[])?.triplets;
    let spec = ModelSpec::new(KIND, 10, 0);
    let params = TsteParams::from_checked(&spec.checked()?, spec.k)?;
    let mut model = Tste::new(x.ncols(), &spec, params, &triplets)?;
    // Past the first phase, where the embedding grows from its 1e-4 start.
    for _ in 0..100 {
        let _ = model.step();
    }
    let name = format!(
        "tste_iteration protocol triplets |T|={} [digits l2, k=10]",
        triplets.len()
    );
    let (reps, iters) = (b.reps(), p.iters);
    b.time(&name, "iteration", reps, iters, &mut || {
        for _ in 0..iters {
            let _ = model.step();
        }
    });
    Ok(())
}
