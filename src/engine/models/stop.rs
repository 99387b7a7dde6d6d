//! The fit's stopping rule on the objective, shared by the fit loop
//! ([`crate::engine::jobs::experiment`]) and the models' own inner solvers.

/// The stopping rule: the relative change `|f_{t−1} − f_t| / f_{t−1} < tol` of docs/models.md
/// §3.1/§4.5 e, **and** `|f_{t−1} − f_t| < tol · |f_0 − f_t|`.
///
/// The second test guards the first against a large, slowly moving part of the objective. RPNMF's
/// ranking term starts near `α |T| δ` (δ = 100, |T| = 1200 on `orl_32x32`: F ≈ 12,000 with a
/// reconstruction of 20), so the relative change fell below 1e-5 at iteration 2 while F was
/// still falling steadily, and the fit "converged" keeping 53 % of the triplets. Measured
/// against the progress made so far, that change is large, so the fit goes on. When the
/// objective has dropped by more than its current value since the start — every NMF fit from a
/// random start — the second test is the looser one and the rule is the relative change alone.
pub fn converged(f0: f64, prev: f64, cur: f64, tol: f64) -> bool {
    if tol <= 0.0 {
        return false;
    }
    let change = (prev - cur).abs();
    change < tol * prev.abs().max(f64::MIN_POSITIVE) && change < tol * (f0 - cur).abs()
}
