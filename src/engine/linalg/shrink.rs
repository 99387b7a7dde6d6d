//! Column-wise shrinkage, the proximal map of the l2,1 norm (docs/models.md §1):
//! `Shrink_τ(A)` scales each column `a_i` to `max(0, 1 − τ/‖a_i‖) a_i`, the minimiser of
//! `τ‖E‖_{2,1} + ½‖E − A‖²_F`. The E step of RMNMF's and PSMF's ALM.

use ndarray::ArrayViewMut2;

/// `Shrink_τ` in place on the columns of `a` (any layout); returns the l2,1 norm of the result
/// `Σ_i ‖e_i‖`. A column shorter than τ (or zero) becomes zero; a NaN column stays NaN.
pub fn shrink_columns(mut a: ArrayViewMut2<'_, f64>, tau: f64) -> f64 {
    let mut l21 = 0.0;
    for mut col in a.columns_mut() {
        let norm = col.iter().map(|v| v * v).sum::<f64>().sqrt();
        // `!(norm > tau)` keeps NaN columns out of this branch, so they pass through as NaN.
        if norm <= tau {
            col.fill(0.0);
            continue;
        }
        let scale = 1.0 - tau / norm;
        col.mapv_inplace(|v| v * scale);
        l21 += norm * scale;
    }
    l21
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// Columns (3, 4) (norm 5) and (0.3, 0.4) (norm 0.5) with τ = 1: the first is scaled by
    /// 4/5, the second vanishes; the result's l2,1 norm is 4. It is the proximal point: no
    /// perturbation lowers τ‖E‖_{2,1} + ½‖E − A‖².
    #[test]
    fn by_hand_and_as_the_proximal_point() {
        let a = array![[3.0, 0.3], [4.0, 0.4]];
        let mut e = a.clone();
        let l21 = shrink_columns(e.view_mut(), 1.0);
        assert!((l21 - 4.0).abs() < 1e-15);
        assert!((e[[0, 0]] - 2.4).abs() < 1e-15 && (e[[1, 0]] - 3.2).abs() < 1e-15);
        assert_eq!((e[[0, 1]], e[[1, 1]]), (0.0, 0.0));
        let f = |e: &ndarray::Array2<f64>| {
            let l21: f64 = e.columns().into_iter().map(|c| c.dot(&c).sqrt()).sum();
            l21 + 0.5 * (e - &a).mapv(|v| v * v).sum()
        };
        let best = f(&e);
        for d in [[1e-3, 0.0], [0.0, -1e-3], [1e-3, 1e-3]] {
            for c in 0..2 {
                let mut p = e.clone();
                p[[0, c]] += d[0];
                p[[1, c]] += d[1];
                assert!(f(&p) > best);
            }
        }
        let mut nan = array![[f64::NAN], [1.0]];
        assert!(shrink_columns(nan.view_mut(), 1.0).is_nan() || nan[[0, 0]].is_nan());
        assert!(nan[[0, 0]].is_nan());
    }
}
