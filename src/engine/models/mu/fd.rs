//! Central finite differences, the test every model with a gradient takes: the analytic
//! gradient of the objective in one factor against `(f(Z + εE_ij) − f(Z − εE_ij)) / 2ε`.

use ndarray::Array2;

/// The finite-difference gradient of `f` at `z`, entry by entry, with step `eps`.
pub fn gradient(f: impl Fn(&Array2<f64>) -> f64, z: &Array2<f64>, eps: f64) -> Array2<f64> {
    let mut g = Array2::<f64>::zeros(z.dim());
    for idx in ndarray::indices(z.dim()) {
        let (mut plus, mut minus) = (z.clone(), z.clone());
        plus[idx] += eps;
        minus[idx] -= eps;
        g[idx] = (f(&plus) - f(&minus)) / (2.0 * eps);
    }
    g
}

/// `‖a − b‖_F / ‖a‖_F`: how far a finite-difference gradient `b` is from the analytic `a`.
pub fn relative_error(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    (a - b).mapv(|v| v * v).sum().sqrt() / a.mapv(|v| v * v).sum().sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn gradient_of_a_quadratic_is_exact() {
        // f(Z) = Σ z² has gradient 2Z; central differences are exact for quadratics.
        let z = array![[1.0, -2.0], [0.5, 3.0]];
        let g = gradient(|z| z.mapv(|v| v * v).sum(), &z, 1e-3);
        assert!(relative_error(&(&z * 2.0), &g) < 1e-9);
        assert!(
            relative_error(&(&z * 3.0), &g) > 0.1,
            "a wrong gradient is caught"
        );
    }
}
