//! PSMF's bench case (docs/models.md §6): the start (whitening, CAN, Q) and its 50 paper
//! iterations, on CAN's clustered 1024×1440 problem with k = 20 (COIL20's shape).

use super::{KIND, Psmf, PsmfParams};
use crate::engine::models::bench::{Bench, BenchError};
use crate::engine::models::{Model, ModelSpec};
use std::time::Instant;

/// The start, timed once, and the 50 iterations.
pub(super) fn cases(b: &mut dyn Bench) -> Result<(), BenchError> {
    let (x, k, label) = crate::engine::models::can::bench::clustered();
    let spec = ModelSpec::new(KIND, k, 0);
    let pp = PsmfParams::from_checked(&spec.checked()?, k)?;
    let start = Instant::now();
    let mut model = Psmf::new(x.view(), &spec, pp)?;
    let start_s = start.elapsed().as_secs_f64();
    let name = format!("psmf_fit 50 iterations from the CAN start [{label}]");
    let reps = b.reps().min(3);
    b.time(&name, "fit", reps, 1, &mut || {
        for _ in 0..50 {
            let _ = model.step();
        }
    });
    b.note(format!("psmf [{label}]: start (whitening, CAN, Q) {start_s:.2} s"));
    Ok(())
}
