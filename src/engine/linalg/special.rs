//! Numerically stable logistic sigmoid and softplus (MODELS.md §2.5).

/// `σ(t) = 1/(1+e^{−t})`, evaluated without overflow for any finite t.
pub fn sigmoid(t: f64) -> f64 {
    if t >= 0.0 {
        1.0 / (1.0 + (-t).exp())
    } else {
        let e = t.exp();
        e / (1.0 + e)
    }
}

/// `sp(t) = ln(1 + e^t) = max(t, 0) + ln(1 + e^{−|t|})`; `sp'(t) = σ(t)`.
pub fn softplus(t: f64) -> f64 {
    t.max(0.0) + (-t.abs()).exp().ln_1p()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_at_extremes_and_consistent() {
        assert_eq!(sigmoid(1000.0), 1.0);
        assert_eq!(sigmoid(-1000.0), 0.0);
        assert!((sigmoid(0.3) + sigmoid(-0.3) - 1.0).abs() < 1e-15);
        assert_eq!(softplus(1000.0), 1000.0);
        assert_eq!(softplus(-1000.0), 0.0);
        assert!((softplus(0.0) - 2f64.ln()).abs() < 1e-15);
        let h = 1e-6;
        for t in [-3.0, -0.1, 0.0, 0.7, 5.0] {
            let fd = (softplus(t + h) - softplus(t - h)) / (2.0 * h);
            assert!((fd - sigmoid(t)).abs() < 1e-9);
        }
    }
}
