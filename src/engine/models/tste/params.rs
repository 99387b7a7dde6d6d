//! t-STE's hyperparameter table (docs/models.md §3.6) and its typed parameters, built once from
//! the checked table and the rank.
//!
//! The kernel's degrees of freedom default to k − 1, a value that depends on the rank, which a
//! table entry's single default cannot express. The table therefore stores `dof = 0` as its
//! default and reads it as "k − 1": 0 is no valid number of degrees of freedom (the kernel needs
//! α > 0), so the sentinel cannot be mistaken for a setting, and the GUI's log slider reaches it
//! exactly. [`TsteParams::from_checked`] resolves it against k.

use crate::engine::models::{Checked, HyperParam, ModelError};

/// t-STE's hyperparameters, in the order the GUI shows them.
pub const TABLE: &[HyperParam] = &[
    HyperParam::number("dof", 0.0, 0.0..=1e3).log().with_grid(&[0.0, 1.0, 2.0, 5.0, 10.0]).help(
        "α, degrees of freedom of the Student-t kernel (1 + ‖y_i − y_j‖²/α)^(−(α+1)/2) \
         (docs/models.md §3.6, (3.61)). 0 (the default) means k − 1, the reference code's choice, \
         which needs k ≥ 2. Small α gives heavy tails: far points barely interact, so clusters \
         separate more; large α approaches a Gaussian kernel.",
    ),
    HyperParam::number("lambda", 0.0, 0.0..=1e3).log().with_grid(&[0.0, 1e-3, 1e-2, 0.1, 1.0]).help(
        "λ, weight of the L2 penalty λ Σ ‖y_i‖² over the samples that occur in a triplet \
         (docs/models.md §3.6, (3.63)). Default 0, as in the reference code; a positive λ keeps \
         the embedding from spreading out.",
    ),
];

/// Typed t-STE parameters, from the checked table and the rank ([`TsteParams::from_checked`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TsteParams {
    /// α > 0: degrees of freedom of the kernel, resolved (a table value of 0 becomes k − 1).
    pub dof: f64,
    /// λ ≥ 0: weight of the L2 penalty.
    pub lambda: f64,
}

impl TsteParams {
    /// The typed parameters of a checked table for rank k: `dof = 0` becomes k − 1, which must
    /// be positive (k ≥ 2).
    pub fn from_checked(p: &Checked, k: usize) -> Result<Self, ModelError> {
        let given = p.number("dof")?;
        let dof = if given == 0.0 {
            k.saturating_sub(1) as f64
        } else {
            given
        };
        if dof <= 0.0 {
            return Err(ModelError::InvalidParam {
                model: "t-STE",
                name: "dof".into(),
                why: format!(
                    "= 0 means k − 1, which is {dof} at k = {k}: use k ≥ 2 or give dof > 0 \
                     (docs/models.md §3.6)"
                ),
            });
        }
        Ok(Self {
            dof,
            lambda: p.number("lambda")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::tste::KIND;
    use crate::engine::models::{ModelSpec, ParamValue};

    fn resolve(k: usize, given: &[(&str, f64)]) -> Result<TsteParams, ModelError> {
        let mut spec = ModelSpec::new(KIND, k, 0);
        for (name, v) in given {
            spec = spec.with(name, ParamValue::Number(*v));
        }
        TsteParams::from_checked(&spec.checked()?, k)
    }

    #[test]
    fn dof_defaults_to_k_minus_one_and_a_given_value_is_kept() {
        assert_eq!(
            resolve(10, &[]).unwrap(),
            TsteParams {
                dof: 9.0,
                lambda: 0.0
            }
        );
        assert_eq!(resolve(2, &[]).unwrap().dof, 1.0);
        assert_eq!(resolve(10, &[("dof", 2.5)]).unwrap().dof, 2.5);
        assert_eq!(resolve(1, &[("dof", 1.0)]).unwrap().dof, 1.0);
        assert_eq!(resolve(3, &[("lambda", 0.5)]).unwrap().lambda, 0.5);
    }

    #[test]
    fn k_one_without_dof_and_bad_values_are_refused_with_the_rule() {
        let e = resolve(1, &[]).unwrap_err().to_string();
        assert!(e.contains("`dof`") && e.contains("k ≥ 2"), "{e}");
        let hp = |n: &str| TABLE.iter().find(|h| h.name == n).unwrap();
        for (name, text) in [("dof", "-1"), ("dof", "NaN"), ("lambda", "-0.1"), ("lambda", "inf")] {
            let e = hp(name).parse("t-STE", text).unwrap_err().to_string();
            assert!(e.contains(&format!("`{name}`")) && e.contains("outside"), "{e}");
        }
    }
}
