//! CAN's bench case (docs/models.md §2.7): a fit to its stop on a clustered 1024×1440 problem
//! with k = 20 (COIL20's shape), the problem PSMF's case starts from.

use super::{Can, CanParams};
use crate::engine::models::Model;
use crate::engine::models::bench::{Bench, BenchError, clustered_matrix};

/// The clustered problem both CAN's and PSMF's cases run on: (X, k, its label).
pub(crate) fn clustered() -> (ndarray::Array2<f64>, usize, String) {
    let (m, n, k) = (1024, 1440, 20);
    (clustered_matrix(m, n, k, 21), k, format!("clustered {m}×{n}, k={k}"))
}

/// The fit to its stop, with the rounds it took.
pub(super) fn cases(b: &mut dyn Bench) -> Result<(), BenchError> {
    let (x, k, label) = clustered();
    let cp = CanParams::defaults()?;
    let mut rounds = 0;
    let reps = b.reps().min(3);
    b.time(&format!("can_fit [{label}]"), "fit", reps, 1, &mut || {
        if let Ok(mut c) = Can::new(x.view(), k, 0, cp) {
            rounds = 0;
            while !c.has_converged() {
                let _ = c.step();
                rounds += 1;
            }
            c.finish();
        }
    });
    b.note(format!("can [{label}]: {rounds} round(s) per fit"));
    Ok(())
}
