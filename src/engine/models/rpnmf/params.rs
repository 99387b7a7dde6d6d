//! RPNMF hyperparameters (MODELS.md §4.2), checked once: one [`ModelError`] and one test per
//! rule.

use crate::engine::models::{ModelError, ModelSpec};

const MODEL: &str = "RPNMF";

/// Checked RPNMF hyperparameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RpnmfParams {
    /// α: weight of the ranking loss in eq. (9), ≥ 0 (α = 0 is plain NMF).
    pub alpha: f64,
    /// δ: margin added to the distance difference `t_τ` (MODELS.md §4.1), ≥ 0.
    pub delta: f64,
    /// The monotonicity safeguard of MODELS.md §4.5 step d (on by default; off =
    /// "paper-literal").
    pub safeguard: bool,
    /// Unit-L2 W columns (H rows rescaled to compensate) in [`crate::engine::models::Model::finish`],
    /// for k-means only; off by default because the ranking loss lives in the raw H geometry
    /// (MODELS.md §4.5 step 4, §10.3).
    pub normalize_w: bool,
}

impl Default for RpnmfParams {
    fn default() -> Self {
        Self {
            alpha: 0.1,
            delta: 10.0,
            safeguard: true,
            normalize_w: false,
        }
    }
}

fn invalid(name: &str, why: String) -> ModelError {
    ModelError::InvalidParam {
        model: MODEL,
        name: name.to_owned(),
        why,
    }
}

impl RpnmfParams {
    /// Check every rule.
    pub fn check(self) -> Result<Self, ModelError> {
        if !self.alpha.is_finite() {
            return Err(invalid("alpha", format!("= {} must be finite", self.alpha)));
        }
        if self.alpha < 0.0 {
            return Err(invalid("alpha", format!("= {} must be ≥ 0", self.alpha)));
        }
        if !self.delta.is_finite() {
            return Err(invalid("delta", format!("= {} must be finite", self.delta)));
        }
        if self.delta < 0.0 {
            return Err(invalid("delta", format!("= {} must be ≥ 0", self.delta)));
        }
        Ok(self)
    }

    /// The parameters of a spec (given or default), checked. `safeguard` must be 0 or 1.
    pub fn from_spec(spec: &ModelSpec) -> Result<Self, ModelError> {
        let p = spec.resolved_params();
        let get = |name: &str, default: f64| p.get(name).copied().unwrap_or(default);
        let d = Self::default();
        let sg = get("safeguard", 1.0);
        if sg != 0.0 && sg != 1.0 {
            return Err(invalid(
                "safeguard",
                format!("= {sg} must be 1 (on) or 0 (off, paper-literal)"),
            ));
        }
        let nw = get("normalize_w", 0.0);
        if nw != 0.0 && nw != 1.0 {
            return Err(invalid(
                "normalize_w",
                format!("= {nw} must be 1 (on) or 0 (off)"),
            ));
        }
        Self {
            alpha: get("alpha", d.alpha),
            delta: get("delta", d.delta),
            safeguard: sg == 1.0,
            normalize_w: nw == 1.0,
        }
        .check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::ModelKind;

    fn with(name: &str, v: f64) -> ModelSpec {
        let mut s = ModelSpec::new(ModelKind::Rpnmf, 2, 0);
        s.params.insert(name.into(), v);
        s
    }

    fn err(p: RpnmfParams) -> String {
        p.check().unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_the_papers() {
        let p = RpnmfParams::from_spec(&ModelSpec::new(ModelKind::Rpnmf, 2, 0)).unwrap();
        assert_eq!(p, RpnmfParams::default());
        assert_eq!((p.alpha, p.delta, p.safeguard), (0.1, 10.0, true));
        assert!(
            !RpnmfParams::from_spec(&with("safeguard", 0.0))
                .unwrap()
                .safeguard
        );
    }

    #[test]
    fn alpha_must_be_finite() {
        let e = err(RpnmfParams {
            alpha: f64::NAN,
            ..Default::default()
        });
        assert!(e.contains("`alpha`") && e.contains("finite"), "{e}");
    }

    #[test]
    fn alpha_must_be_nonnegative() {
        let e = err(RpnmfParams {
            alpha: -0.1,
            ..Default::default()
        });
        assert!(e.contains("`alpha`") && e.contains("≥ 0"), "{e}");
    }

    #[test]
    fn delta_must_be_finite() {
        let e = err(RpnmfParams {
            delta: f64::INFINITY,
            ..Default::default()
        });
        assert!(e.contains("`delta`") && e.contains("finite"), "{e}");
    }

    #[test]
    fn delta_must_be_nonnegative() {
        let e = err(RpnmfParams {
            delta: -1.0,
            ..Default::default()
        });
        assert!(e.contains("`delta`") && e.contains("≥ 0"), "{e}");
    }

    #[test]
    fn safeguard_must_be_0_or_1() {
        let e = RpnmfParams::from_spec(&with("safeguard", 0.5))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`safeguard`") && e.contains("paper-literal"),
            "{e}"
        );
    }

    #[test]
    fn normalize_w_must_be_0_or_1() {
        let e = RpnmfParams::from_spec(&with("normalize_w", 2.0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`normalize_w`") && e.contains("0 (off)"), "{e}");
        assert!(
            RpnmfParams::from_spec(&with("normalize_w", 1.0))
                .unwrap()
                .normalize_w
        );
    }
}
