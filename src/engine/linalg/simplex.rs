//! The weighted simplex QP of docs/models.md §2.4, solved exactly:
//!
//! `min_θ Σ_t (a_t θ_t² + b_t θ_t)` subject to `θ ≥ 0`, `Σ_t θ_t = 1`, with every `a_t > 0`.
//!
//! The KKT conditions give `θ_t(η) = max(0, (η − b_t)/(2a_t))` for the multiplier η of the sum;
//! `g(η) = Σ_t θ_t(η)` is continuous, piecewise linear and nondecreasing, so `g(η) = 1` has one
//! root. Sorting by `b` ascending, the active set is a prefix: the first K with
//! `η_K = (1 + Σ_{t≤K} b_t/(2a_t)) / Σ_{t≤K} 1/(2a_t)` in `(b_(K), b_(K+1)]` gives it. O(m log m).
//! With all `a_t` equal it is the Euclidean projection onto the simplex (Nie's solver in CAN).
//! The multiplier is carried relative to the smallest `b`, so that a tiny `a_t` does not
//! amplify the rounding of `η − b_t`.

/// θ of the weighted simplex QP for coefficients `a` (> 0) and `b`, into `theta` (same length,
/// at least 1). `order` is a workspace (resized as needed). Returns None when an input is not
/// finite or an `a_t` is not positive.
pub fn weighted_simplex_qp(
    a: &[f64],
    b: &[f64],
    theta: &mut [f64],
    order: &mut Vec<usize>,
) -> Option<()> {
    let m = a.len();
    if m == 0 || b.len() != m || theta.len() != m {
        return None;
    }
    if a.iter().any(|&v| !(v > 0.0 && v.is_finite())) || b.iter().any(|v| !v.is_finite()) {
        return None;
    }
    order.clear();
    order.extend(0..m);
    order.sort_by(|&s, &t| b[s].total_cmp(&b[t]).then(s.cmp(&t)));
    // η is carried relative to the smallest b (η' = η − b₀, with every b_t − b₀ ≥ 0 formed
    // directly): with a tiny a_t, θ_t = (η − b_t)/(2a_t) would otherwise amplify the rounding
    // of η ≈ b_t by 1/a_t (a 1e-12 coefficient cost 1e-4 in θ).
    let b0 = b[order[0]];
    let (mut num, mut den) = (1.0, 0.0);
    let mut eta = f64::NAN;
    for (pos, &t) in order.iter().enumerate() {
        let inv = 1.0 / (2.0 * a[t]);
        num += (b[t] - b0) * inv;
        den += inv;
        let e = num / den;
        let next_ok = pos + 1 == m || e <= b[order[pos + 1]] - b0;
        if e > b[t] - b0 && next_ok {
            eta = e;
            break;
        }
    }
    if !eta.is_finite() {
        return None;
    }
    for t in 0..m {
        theta[t] = ((eta - (b[t] - b0)) / (2.0 * a[t])).max(0.0);
    }
    // The entry with the smallest a_t carries the rounding of η amplified most (by 1/a_t):
    // give it what the sum constraint leaves, which the others fix precisely.
    if let Some(j) = (0..m)
        .filter(|&t| theta[t] > 0.0)
        .min_by(|&s, &t| a[s].total_cmp(&a[t]))
    {
        let rest: f64 = (0..m).filter(|&t| t != j).map(|t| theta[t]).sum();
        theta[j] = (1.0 - rest).max(0.0);
    }
    Some(())
}

/// The Euclidean projection of `v` onto the probability simplex (`min ‖θ − v‖²`, θ ≥ 0,
/// Σθ = 1): [`weighted_simplex_qp`] with `a_t = 1`, `b_t = −2 v_t`.
pub fn project_to_simplex(v: &[f64], theta: &mut [f64], order: &mut Vec<usize>) -> Option<()> {
    let a = vec![1.0; v.len()];
    let b: Vec<f64> = v.iter().map(|x| -2.0 * x).collect();
    weighted_simplex_qp(&a, &b, theta, order)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn objective(a: &[f64], b: &[f64], t: &[f64]) -> f64 {
        a.iter()
            .zip(b)
            .zip(t)
            .map(|((a, b), t)| a * t * t + b * t)
            .sum()
    }

    /// By hand: a = (1, 1), b = (0, 1): η = (1 + 1/2)/1 = 1.5 > b = 1, so θ = (0.75, 0.25).
    /// b = (0, 3): the second coordinate leaves the support, θ = (1, 0).
    #[test]
    fn two_coordinates_by_hand() {
        let (mut t, mut o) = (vec![0.0; 2], Vec::new());
        weighted_simplex_qp(&[1.0, 1.0], &[0.0, 1.0], &mut t, &mut o).unwrap();
        assert_eq!(t, vec![0.75, 0.25]);
        weighted_simplex_qp(&[1.0, 1.0], &[0.0, 3.0], &mut t, &mut o).unwrap();
        assert_eq!(t, vec![1.0, 0.0]);
    }

    /// Random problems: feasible, satisfies the KKT conditions (one η for the support, b_t ≥ η
    /// off it), and no random feasible point does better.
    #[test]
    fn random_problems_meet_the_kkt_conditions_and_beat_feasible_points() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (mut o, mut t) = (Vec::new(), Vec::new());
        for trial in 0..200 {
            let m = 1 + trial % 9;
            let a: Vec<f64> = (0..m).map(|_| rng.r#gen::<f64>() + 0.05).collect();
            let b: Vec<f64> = (0..m).map(|_| 4.0 * rng.r#gen::<f64>() - 2.0).collect();
            t.resize(m, 0.0);
            weighted_simplex_qp(&a, &b, &mut t, &mut o).unwrap();
            assert!(t.iter().all(|&v| v >= 0.0));
            assert!((t.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            let etas: Vec<f64> = (0..m)
                .filter(|&s| t[s] > 0.0)
                .map(|s| 2.0 * a[s] * t[s] + b[s])
                .collect();
            let eta = etas[0];
            assert!(etas.iter().all(|e| (e - eta).abs() < 1e-10), "{etas:?}");
            assert!((0..m).filter(|&s| t[s] == 0.0).all(|s| b[s] >= eta - 1e-10));
            let f = objective(&a, &b, &t);
            for _ in 0..50 {
                let mut u: Vec<f64> = (0..m).map(|_| rng.r#gen::<f64>()).collect();
                let s: f64 = u.iter().sum();
                u.iter_mut().for_each(|v| *v /= s);
                assert!(objective(&a, &b, &u) >= f - 1e-12);
            }
        }
    }

    /// θ(η) of the KKT conditions, summed, by bisection on η to 1e-15: the independent
    /// reference the exact solver is checked against.
    fn by_bisection(a: &[f64], b: &[f64]) -> Vec<f64> {
        let theta = |eta: f64| -> Vec<f64> {
            a.iter()
                .zip(b)
                .map(|(a, b)| ((eta - b) / (2.0 * a)).max(0.0))
                .collect()
        };
        let amax = a.iter().copied().fold(0.0, f64::max);
        let (mut lo, mut hi) = (
            b.iter().copied().fold(f64::INFINITY, f64::min),
            b.iter().copied().fold(f64::NEG_INFINITY, f64::max) + 2.0 * amax,
        );
        while theta(hi).iter().sum::<f64>() < 1.0 {
            hi += hi - lo;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if theta(mid).iter().sum::<f64>() < 1.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        theta(0.5 * (lo + hi))
    }

    /// Against bisection and against brute force over the supports, on random problems with
    /// ties in b (equal coefficients) and some a_t at a tiny floor (1e-12, so θ_t jumps).
    #[test]
    fn matches_bisection_and_brute_force_with_ties_and_tiny_a() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let (mut o, mut t) = (Vec::new(), Vec::new());
        for trial in 0..300 {
            let m = 2 + trial % 6;
            let mut a: Vec<f64> = (0..m).map(|_| rng.r#gen::<f64>() + 0.05).collect();
            let mut b: Vec<f64> = (0..m)
                .map(|_| (4.0 * rng.r#gen::<f64>() - 2.0).round() / 2.0)
                .collect();
            if trial % 3 == 0 {
                a[0] = 1e-12;
            }
            if trial % 4 == 0 {
                b[1] = b[0];
                a[1] = a[0];
            }
            t.resize(m, 0.0);
            weighted_simplex_qp(&a, &b, &mut t, &mut o).unwrap();
            assert!(
                (t.iter().sum::<f64>() - 1.0).abs() < 1e-12,
                "trial {trial}: {t:?}"
            );
            let f = objective(&a, &b, &t);
            let bis = by_bisection(&a, &b);
            let fb = objective(&a, &b, &bis);
            // The exact solution is at least as good as bisection's (whose θ_t for a tiny a_t
            // is only as precise as η divided by a_t); with ordinary a they agree entry by entry.
            if (bis.iter().sum::<f64>() - 1.0).abs() < 1e-9 {
                assert!(
                    f <= fb + 1e-9 * (1.0 + f.abs()),
                    "trial {trial}: {f} vs {fb}"
                );
            }
            if a.iter().all(|&v| v > 1e-3) {
                for (x, y) in t.iter().zip(&bis) {
                    assert!((x - y).abs() < 1e-9, "trial {trial}: {t:?} vs {bis:?}");
                }
            }
            // Brute force: every support S, θ on S from its own η, kept when feasible.
            let mut best = f64::INFINITY;
            for mask in 1u32..(1 << m) {
                let s: Vec<usize> = (0..m).filter(|&i| mask & (1 << i) != 0).collect();
                let den: f64 = s.iter().map(|&i| 1.0 / (2.0 * a[i])).sum();
                let num: f64 = 1.0 + s.iter().map(|&i| b[i] / (2.0 * a[i])).sum::<f64>();
                let eta = num / den;
                let th: Vec<f64> = (0..m)
                    .map(|i| {
                        if mask & (1 << i) != 0 {
                            (eta - b[i]) / (2.0 * a[i])
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let sum: f64 = th.iter().sum();
                if th.iter().all(|&v| v >= -1e-12) && (sum - 1.0).abs() < 1e-9 {
                    best = best.min(objective(&a, &b, &th));
                }
            }
            assert!(
                f <= best + 1e-9 * (1.0 + best.abs()),
                "trial {trial}: {f} > {best}"
            );
        }
    }

    #[test]
    fn projection_onto_the_simplex_and_bad_input() {
        let (mut t, mut o) = (vec![0.0; 3], Vec::new());
        project_to_simplex(&[0.2, 0.3, 0.5], &mut t, &mut o).unwrap();
        assert!(
            t.iter()
                .zip([0.2, 0.3, 0.5])
                .all(|(a, b)| (a - b).abs() < 1e-15)
        );
        project_to_simplex(&[2.0, 0.0, -1.0], &mut t, &mut o).unwrap();
        assert_eq!(t, vec![1.0, 0.0, 0.0]);
        assert!(weighted_simplex_qp(&[0.0, 1.0, 1.0], &[0.0; 3], &mut t, &mut o).is_none());
        assert!(weighted_simplex_qp(&[1.0; 3], &[f64::NAN, 0.0, 0.0], &mut t, &mut o).is_none());
    }
}
