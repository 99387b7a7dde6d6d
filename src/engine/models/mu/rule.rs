//! The multiplicative rule `z ← max(z ⊙ num ⊘ max(den, ε), FLOOR)` with its floor, and the
//! column normalisation of W that removes the scale indeterminacy (docs/models.md §1, §10.1,
//! §10.3).

use crate::engine::models::EPS_DIV;
use faer::traits::pulp;
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
///
/// Contiguous arrays of one layout go through pulp's dispatch, where the loop gets the CPU's
/// widest registers (the baseline build has two lanes): the same operations per entry, so the
/// same bits, in half the time on NMF's k×n H (docs/performance.md, "The rule in wide
/// registers (`models/mu/rule.rs`, `mu_update`)").
pub fn mu_update(z: &mut Array2<f64>, num: &Array2<f64>, den: &Array2<f64>) {
    assert!(
        z.dim() == num.dim() && z.dim() == den.dim(),
        "mu_update: shapes differ"
    );
    let same_layout = z.strides() == num.strides() && z.strides() == den.strides();
    match (
        same_layout,
        num.as_slice_memory_order(),
        den.as_slice_memory_order(),
    ) {
        (true, Some(num), Some(den)) if z.as_slice_memory_order().is_some() => {
            if let Some(z) = z.as_slice_memory_order_mut() {
                pulp::Arch::new().dispatch(Rule { z, num, den });
            }
        }
        _ => Zip::from(z)
            .and(num)
            .and(den)
            .for_each(|z, &a, &b| *z = mu_rule(*z, a, b)),
    }
}

/// [`mu_update`] on three slices of one length, as a pulp job.
struct Rule<'a> {
    z: &'a mut [f64],
    num: &'a [f64],
    den: &'a [f64],
}

impl pulp::WithSimd for Rule<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        for ((z, &a), &b) in self.z.iter_mut().zip(self.num).zip(self.den) {
            *z = mu_rule(*z, a, b);
        }
    }
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
    use ndarray::ShapeBuilder;
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
    fn mu_update_gives_the_rule_entry_by_entry_in_every_layout() {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let mut draw = |r: usize, c: usize| {
            Array2::from_shape_simple_fn((r, c), || match rng.gen_range(0..6) {
                0 => 0.0,
                1 => FLOOR,
                _ => rng.r#gen::<f64>() * 2f64.powi(rng.gen_range(-40..40)),
            })
        };
        let (z0, num, den) = (draw(13, 37), draw(13, 37), draw(13, 37));
        let want = Array2::from_shape_fn((13, 37), |(i, j)| {
            (z0[[i, j]] * (num[[i, j]] / den[[i, j]].max(EPS_DIV))).max(FLOOR)
        });
        let same = |got: &Array2<f64>| {
            got.indexed_iter()
                .all(|(ij, v)| v.to_bits() == want[ij].to_bits())
        };
        // Row-major slices (the pulp path).
        let mut z = z0.clone();
        mu_update(&mut z, &num, &den);
        assert!(same(&z));
        // Column-major, all three alike (the pulp path over memory order).
        let f = |a: &Array2<f64>| {
            let mut b = Array2::zeros(a.raw_dim().f());
            b.assign(a);
            b
        };
        let mut z = f(&z0);
        mu_update(&mut z, &f(&num), &f(&den));
        assert!(same(&z));
        // Mixed layouts (the element-wise path).
        let mut z = z0.clone();
        mu_update(&mut z, &f(&num), &den);
        assert!(same(&z));
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
