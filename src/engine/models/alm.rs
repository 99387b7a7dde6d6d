//! The bookkeeping of an augmented Lagrangian (ALM) with an increasing penalty, shared by RMNMF
//! (docs/models.md §3.4, (3.45)–(3.46)) and PSMF (§6.4): the penalty μ and
//! its schedule `μ ← min(ρμ, μ_max)`, the dual ascent `Λ ← Λ + μ·(A − B)` of a multiplier for
//! a constraint `A = B`, and the primal residuals ‖A − B‖_F it measures on the way, with the
//! relative stopping test on them.
//!
//! Nothing here knows the model: a constraint is two arrays of the same shape, and its
//! residual is reported with the scale it is judged against (‖X‖_F for `X = W Gᵀ + E`, √k for
//! `G = Z` with orthonormal G).

use ndarray::{ArrayView2, ArrayViewMut2, Zip};

/// The cap on μ (docs/models.md §10.4): beyond it the steps barely move and the multipliers
/// would grow without bound. [C]
pub const MU_MAX: f64 = 1e10;

/// The penalty μ of an ALM and its schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Penalty {
    mu: f64,
    rho: f64,
    mu_max: f64,
}

impl Penalty {
    /// Start at `mu0 > 0`, grow by `rho ≥ 1` per [`Penalty::grow`], never above `mu_max`.
    pub fn new(mu0: f64, rho: f64, mu_max: f64) -> Self {
        Self {
            mu: mu0.min(mu_max),
            rho,
            mu_max,
        }
    }

    /// The current μ.
    pub fn mu(&self) -> f64 {
        self.mu
    }

    /// `μ ← min(ρμ, μ_max)`, the end of every ALM iteration.
    pub fn grow(&mut self) {
        self.mu = (self.mu * self.rho).min(self.mu_max);
    }

    /// Whether μ has reached its cap (the fit then mostly holds still; worth a note).
    pub fn at_cap(&self) -> bool {
        self.mu >= self.mu_max
    }
}

/// One primal residual: ‖A − B‖_F of a constraint `A = B` and the scale it is judged against.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Residual {
    pub norm: f64,
    pub scale: f64,
}

impl Residual {
    /// `norm / scale` (scale floored at the smallest positive number).
    pub fn relative(&self) -> f64 {
        self.norm / self.scale.max(f64::MIN_POSITIVE)
    }
}

/// Whether every residual is below `tol` relative to its scale (false on NaN).
pub fn residuals_below(residuals: &[Residual], tol: f64) -> bool {
    residuals.iter().all(|r| r.relative() < tol)
}

/// The dual ascent of the multiplier Λ of the constraint `A = B`:
/// `Λ ← Λ + μ (A − B)`, element by element, in one pass; returns `‖A − B‖_F`.
pub fn ascend(
    mut lambda: ArrayViewMut2<'_, f64>,
    mu: f64,
    a: ArrayView2<'_, f64>,
    b: ArrayView2<'_, f64>,
) -> f64 {
    let mut sq = 0.0;
    Zip::from(&mut lambda)
        .and(&a)
        .and(&b)
        .for_each(|l, &a, &b| {
            let d = a - b;
            *l += mu * d;
            sq += d * d;
        });
    sq.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn the_penalty_grows_to_its_cap_and_the_ascent_is_by_hand() {
        let mut p = Penalty::new(1.0, 2.0, 5.0);
        p.grow();
        assert_eq!(p.mu(), 2.0);
        p.grow();
        p.grow();
        assert_eq!(p.mu(), 5.0);
        assert!(p.at_cap());
        let mut l = array![[1.0, 0.0], [0.0, -1.0]];
        let a = array![[3.0, 1.0], [0.0, 0.0]];
        let b = array![[0.0, 1.0], [4.0, 0.0]];
        let r = ascend(l.view_mut(), 0.5, a.view(), b.view());
        assert_eq!(r, 5.0);
        assert_eq!(l, array![[2.5, 0.0], [-2.0, -1.0]]);
        let res = [
            Residual {
                norm: 1e-7,
                scale: 10.0,
            },
            Residual {
                norm: 1e-9,
                scale: 1.0,
            },
        ];
        assert!(residuals_below(&res, 1e-7));
        assert!(!residuals_below(&res, 1e-8));
        let nan = Residual {
            norm: f64::NAN,
            scale: 1.0,
        };
        assert!(!residuals_below(&[nan], 1.0));
    }
}
