//! Seeded strictly positive initialisation shared by the multiplicative-update models.

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
