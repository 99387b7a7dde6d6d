//! NMFCC's hyperparameter table (docs/models.md §3.5) and its typed parameters, built once
//! from the checked table.

use crate::engine::models::{Checked, HyperParam, ModelError, ParamKind};

/// The grid both weights are searched on (docs/models.md §3.5).
const GRID: &[f64] = &[1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1e3];

/// NMFCC's hyperparameters, in the order the GUI shows them.
pub const TABLE: &[HyperParam] = &[
    HyperParam {
        name: "alpha",
        kind: ParamKind::Number {
            default: 0.1,
            min: 0.0,
            max: 1e3,
            log_scale: true,
            grid: GRID,
        },
        help: "α, weight of the must-link term α Σ (1 − h_iᵀh_j)² over the must-link pairs \
               (docs/models.md §3.5): it pulls the codes of two linked samples towards \
               an inner product of 1. 0 switches it off. Default 0.1, the best cell of the \
               grid on ORL with the protocol's triplets (docs/models.md §3.5, Defaults).",
    },
    HyperParam {
        name: "beta",
        kind: ParamKind::Number {
            default: 0.1,
            min: 0.0,
            max: 1e3,
            log_scale: true,
            grid: GRID,
        },
        help: "β, weight of the cannot-link term β Σ (h_iᵀh_q)² over the cannot-link pairs \
               (docs/models.md §3.5): it pushes the codes of two separated samples \
               towards orthogonal. 0 switches it off; α = β = 0 is plain NMF. Default 0.1, \
               chosen by the protocol over the seven public sets (docs/models.md §9); \
               0.001 was the best cell on ORL alone (§3.5, Defaults).",
    },
];

/// Typed NMFCC parameters, from the checked table ([`NmfccParams::from_checked`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NmfccParams {
    /// α: weight of the must-link term, ≥ 0.
    pub alpha: f64,
    /// β: weight of the cannot-link term, ≥ 0.
    pub beta: f64,
}

impl NmfccParams {
    /// The typed parameters of a checked table.
    pub fn from_checked(p: &Checked) -> Result<Self, ModelError> {
        Ok(Self {
            alpha: p.number("alpha")?,
            beta: p.number("beta")?,
        })
    }

    /// The defaults of the table.
    pub fn defaults() -> Result<Self, ModelError> {
        Self::from_checked(&Checked::new("NMFCC", TABLE, &Default::default())?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::nmfcc::KIND;
    use crate::engine::models::{ModelSpec, ParamValue};

    #[test]
    fn defaults_come_from_the_table_and_values_are_checked() {
        let p = NmfccParams::defaults().unwrap();
        // The defaults of docs/models.md §9 (β chosen there over the seven public sets).
        assert_eq!((p.alpha, p.beta), (0.1, 0.1));
        let spec = ModelSpec::new(KIND, 2, 0).with("beta", ParamValue::Number(0.0));
        let p = NmfccParams::from_checked(&spec.checked().unwrap()).unwrap();
        assert_eq!((p.alpha, p.beta), (0.1, 0.0));
        for (name, text, want) in [
            ("alpha", "-1", "outside [0, 1000]"),
            ("beta", "1001", "outside [0, 1000]"),
            ("beta", "NaN", "outside"),
            ("alpha", "x", "is not a number"),
        ] {
            let hp = TABLE.iter().find(|h| h.name == name).unwrap();
            let e = hp.parse("NMFCC", text).unwrap_err().to_string();
            assert!(e.contains(&format!("`{name}`")) && e.contains(want), "{e}");
        }
    }
}
