//! The weighted simplex QP of docs/models.md §2.4, solved exactly:
//!
//! `min_θ Σ_t (a_t θ_t² + b_t θ_t)` subject to `θ ≥ 0`, `Σ_t θ_t = 1`, with every `a_t > 0`.
//!
//! The KKT conditions give `θ_t(η) = max(0, (η − b_t)/(2a_t))` for the multiplier η of the sum;
//! `g(η) = Σ_t θ_t(η)` is continuous, piecewise linear and nondecreasing, so `g(η) = 1` has one
//! root. Sorting by `b` ascending, the active set is a prefix: the first K with
//! `η_K = (1 + Σ_{t≤K} b_t/(2a_t)) / Σ_{t≤K} 1/(2a_t)` in `(b_(K), b_(K+1)]` gives it. O(m log m).
//! With all `a_t` equal it is the Euclidean projection onto the simplex (Nie's solver in CAN).

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
    let (mut num, mut den) = (1.0, 0.0);
    let mut eta = f64::NAN;
    for (pos, &t) in order.iter().enumerate() {
        let inv = 1.0 / (2.0 * a[t]);
        num += b[t] * inv;
        den += inv;
        let e = num / den;
        let next_ok = pos + 1 == m || e <= b[order[pos + 1]];
        if e > b[t] && next_ok {
            eta = e;
            break;
        }
    }
    if !eta.is_finite() {
        return None;
    }
    for t in 0..m {
        theta[t] = ((eta - b[t]) / (2.0 * a[t])).max(0.0);
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
