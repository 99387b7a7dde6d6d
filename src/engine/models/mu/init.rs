//! Seeded strictly positive initialisation shared by the multiplicative-update models.

use crate::engine::models::ModelSpec;
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// W (m×k) then H (k×n) with entries in (0, 1] · `sqrt(mean(X)/k)` so that WH has the
/// magnitude of X (docs/models.md §3.1). Drawn from `ChaCha8Rng::seed_from_u64(seed)`, W first,
/// row-major; `1 − U[0,1)` keeps every entry strictly positive (a zero entry would lock, docs/models.md §10.1).
pub fn random_wh(
    m: usize,
    n: usize,
    k: usize,
    mean_x: f64,
    seed: u64,
) -> (Array2<f64>, Array2<f64>) {
    let scale = (mean_x / k as f64).sqrt();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let w = Array2::from_shape_simple_fn((m, k), || (1.0 - rng.r#gen::<f64>()) * scale);
    let h = Array2::from_shape_simple_fn((k, n), || (1.0 - rng.r#gen::<f64>()) * scale);
    (w, h)
}

/// The factors a model starts from: the spec's warm start ([`crate::engine::models::WarmStart`],
/// used exactly as given; its shapes were checked by `ModelSpec::validate`) or else the seeded
/// draw of [`random_wh`]. Every MU model calls this, so `--init` works for all of them.
pub fn start_wh(spec: &ModelSpec, m: usize, n: usize, mean_x: f64) -> (Array2<f64>, Array2<f64>) {
    match &spec.init {
        Some(init) => {
            let w = init
                .w
                .clone()
                .unwrap_or_else(|| random_wh(m, n, spec.k, mean_x, spec.seed).0);
            (w, init.h.clone())
        }
        None => random_wh(m, n, spec.k, mean_x, spec.seed),
    }
}
