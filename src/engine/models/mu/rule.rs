//! The multiplicative rule `z ← max(z ⊙ num ⊘ max(den, ε), FLOOR)` with its floor, and the
//! column normalisation of W that removes the scale indeterminacy (docs/models.md §1, §10.1,
//! §10.3).

use crate::engine::models::EPS_DIV;
use ndarray::{Array2, Zip};

/// Floor of a factor entry after an update: 2⁻³⁰⁰ (4.9e-91), zero for every practical purpose
/// but high enough that the products of the updates never leave the normal range: a product
/// of three factor-sized numbers (WᵀW·H, W·HHᵀ) is at least 2⁻⁹⁰⁰, and a floored entry times a
/// data value above 2⁻⁷²² is normal. Subnormal results cost a microcode assist each, and
/// entries that MU drives towards zero otherwise become subnormal within a few thousand
/// iterations (docs/models.md §10.1; the slowdown it prevents: docs/performance.md, "The floor
/// 2⁻³⁰⁰ and the rescaled update (`models/nmf`, `FLOOR`, `mu_rule`)").
pub const FLOOR: f64 = 4.909_093_465_297_727e-91;

/// 2²⁵⁶: [`mu_rule`] multiplies in a range scaled by this power of two.
const MU_SCALE: f64 = 1.157_920_892_373_162e77;
/// 2⁻²⁵⁶, the exact inverse of [`MU_SCALE`].
const MU_UNSCALE: f64 = 8.636_168_555_094_445e-78;

/// One entry of the multiplicative rule: `max(z · num / max(den, ε), FLOOR)`.
///
/// The product is formed as `(z·2²⁵⁶)·r` and scaled back after the floor, which gives the same
/// bits as `max(z·r, FLOOR)` (powers of two scale exactly while the result is normal, and any
/// product below FLOOR becomes FLOOR either way) but never makes a subnormal intermediate for
/// entries sitting at FLOOR, where `z·r` would underflow every iteration. Differs only if
/// `z·r` exceeds 2⁷⁶⁸ (overflow to ∞).
#[inline(always)]
pub fn mu_rule(z: f64, num: f64, den: f64) -> f64 {
    ((z * MU_SCALE) * (num / den.max(EPS_DIV))).max(FLOOR * MU_SCALE) * MU_UNSCALE
}

/// `z ← max(z ⊙ num ⊘ max(den, ε), FLOOR)` in one pass (the multiplicative rule, docs/models.md §1).
pub fn mu_update(z: &mut Array2<f64>, num: &Array2<f64>, den: &Array2<f64>) {
    Zip::from(z)
        .and(num)
        .and(den)
        .for_each(|z, &a, &b| *z = mu_rule(*z, a, b));
}

/// NMF's W step (docs/models.md (3.4)), shared by every model whose objective leaves W's
/// rule alone (NMF, GNMF, NMFCC, RPNMF): `W·HHᵀ` into `whht` (faer), then
/// `W ← max(W ⊙ XHᵀ ⊘ max(W·HHᵀ, ε), φ)` in place.
pub fn w_step(w: &mut Array2<f64>, xht: &Array2<f64>, hht: &Array2<f64>, whht: &mut Array2<f64>) {
    use crate::engine::linalg::{Op, gemm_into};
    gemm_into(
        &mut whht.view_mut(),
        1.0,
        w.view(),
        Op::N,
        hht.view(),
        Op::N,
        false,
    );
    mu_update(w, xht, whht);
}

/// `w_:a ← w_:a/ν_a`, `h_a: ← ν_a h_a:` with `ν_a = max(‖w_:a‖, 1e-15)` (docs/models.md §10.3);
/// returns the ν.
pub fn normalize_w_columns(w: &mut Array2<f64>, h: &mut Array2<f64>) -> Vec<f64> {
    (0..w.ncols())
        .map(|a| {
            let nu = w
                .column(a)
                .iter()
                .map(|v| v * v)
                .sum::<f64>()
                .sqrt()
                .max(1e-15);
            w.column_mut(a).mapv_inplace(|v| v / nu);
            h.row_mut(a).mapv_inplace(|v| v * nu);
            nu
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn floor_keeps_products_of_three_factors_normal() {
        assert_eq!(FLOOR, 2f64.powi(-300));
        assert!((FLOOR * FLOOR * FLOOR).is_normal());
        assert!((FLOOR * 2f64.powi(-722)).is_normal());
        assert!((FLOOR * MU_SCALE).is_normal());
    }

    #[test]
    fn scaled_mu_rule_gives_the_bits_of_the_plain_rule() {
        assert_eq!(MU_SCALE, 2f64.powi(256));
        assert_eq!(MU_UNSCALE, 2f64.powi(-256));
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        // Factor entries from FLOOR up, numerators and denominators from 0 (and subnormal) up.
        let mut draw = |lo: i32| match rng.gen_range(0..4) {
            0 => FLOOR,
            1 => 0.0,
            2 => f64::MIN_POSITIVE * rng.r#gen::<f64>(),
            _ => rng.r#gen::<f64>() * 2f64.powi(rng.gen_range(lo..300)),
        };
        for _ in 0..200_000 {
            let z = draw(-1022).max(FLOOR);
            let (a, b) = (draw(-1074), draw(-1074));
            let plain = (z * (a / b.max(EPS_DIV))).max(FLOOR);
            assert_eq!(
                mu_rule(z, a, b).to_bits(),
                plain.to_bits(),
                "{z:e} {a:e} {b:e}"
            );
        }
    }
}
