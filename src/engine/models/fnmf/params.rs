//! FNMF's hyperparameter table (docs/models.md §5.2) and its typed parameters, built once from
//! the checked table.

use crate::engine::models::{Checked, HyperParam, ModelError, ParamKind};

/// FNMF's hyperparameters, in the order the GUI shows them.
pub const TABLE: &[HyperParam] = &[
    HyperParam {
        name: "beta",
        kind: ParamKind::Number {
            default: 0.1,
            min: 0.0,
            max: 1e6,
            log_scale: true,
            grid: &[1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1e3],
        },
        help: "β, weight of the graph term β·Tr(H L Hᵀ) over the adaptive-neighbour graph of \
               the samples (docs/models.md (5.1), §2.2): samples close in the data get similar \
               codes. 0 drops the graph. Default 0.1, chosen by the protocol over the seven \
               public sets (docs/models.md §9); the paper searched 1e-3 … 1e3.",
    },
    HyperParam {
        name: "lambda",
        kind: ParamKind::Number {
            default: 1.0,
            min: 0.0,
            max: 1e6,
            log_scale: true,
            grid: &[1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1e3],
        },
        help: "λ, weight of the diversity term λ·Σ_{j<l} θ_jᵀθ_l (docs/models.md (5.1)): how \
               strongly the components are pushed to weight different features. Default 1 \
               (our choice); the paper searched 1e-3 … 1e3.",
    },
    HyperParam {
        name: "components",
        kind: ParamKind::Count {
            default: 3,
            min: 1,
            max: 10,
            grid: &[2, 3, 5],
        },
        help: "r, the number of feature-weighting components θ_1 … θ_r, each a weighting of \
               the features on the simplex; every sample is softly assigned to them by its \
               row of P (docs/models.md §5.1). A whole number. Default 3 (not stated in the \
               paper; our choice).",
    },
    HyperParam {
        name: "neighbors",
        kind: ParamKind::Count {
            default: 5,
            min: 1,
            max: 100,
            grid: &[3, 5, 10],
        },
        help: "p, neighbours per sample of the adaptive-neighbour graph (docs/models.md §2.2), \
               symmetrised as (S + Sᵀ)/2. A whole number; capped at n − 2. Default 5, as in the \
               paper.",
    },
];

/// Typed FNMF parameters, from the checked table ([`FnmfParams::from_checked`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FnmfParams {
    /// β ≥ 0: weight of the graph term.
    pub beta: f64,
    /// λ ≥ 0: weight of the diversity term.
    pub lambda: f64,
    /// r ≥ 1: number of feature-weighting components.
    pub components: usize,
    /// p ≥ 1: neighbours per sample of the adaptive-neighbour graph.
    pub neighbors: usize,
}

impl FnmfParams {
    /// The typed parameters of a checked table.
    pub fn from_checked(p: &Checked) -> Result<Self, ModelError> {
        Ok(Self {
            beta: p.number("beta")?,
            lambda: p.number("lambda")?,
            components: p.count("components")?,
            neighbors: p.count("neighbors")?,
        })
    }

    /// The defaults of the table.
    pub fn defaults() -> Result<Self, ModelError> {
        Self::from_checked(&Checked::new("FNMF", TABLE, &Default::default())?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::fnmf::KIND;
    use crate::engine::models::{ModelSpec, ParamValue};

    #[test]
    fn defaults_come_from_the_table() {
        let p = FnmfParams::defaults().unwrap();
        // The defaults of docs/models.md §9 (β chosen there over the seven public sets).
        assert_eq!(p, FnmfParams {
            beta: 0.1,
            lambda: 1.0,
            components: 3,
            neighbors: 5
        });
        let spec = ModelSpec::new(KIND, 2, 0).with("components", ParamValue::Number(7.0));
        let p = FnmfParams::from_checked(&spec.checked().unwrap()).unwrap();
        assert_eq!(p.components, 7);
    }

    #[test]
    fn each_rule_is_refused_with_its_message() {
        let hp = |n: &str| TABLE.iter().find(|h| h.name == n).unwrap();
        for (name, text, want) in [
            ("beta", "-1", "outside [0, 1000000]"),
            ("lambda", "NaN", "outside"),
            ("components", "0", "outside [1, 10]"),
            ("components", "11", "outside [1, 10]"),
            ("neighbors", "0", "outside [1, 100]"),
        ] {
            let e = hp(name).parse("FNMF", text).unwrap_err().to_string();
            assert!(e.contains(&format!("`{name}`")) && e.contains(want), "{e}");
        }
        let spec = ModelSpec::new(KIND, 2, 0).with("components", ParamValue::Number(2.5));
        // The table's check refuses the fraction (the parameter is a count).
        let e = spec.checked().unwrap_err().to_string();
        assert!(e.contains("`components`") && e.contains("2.5 is not a whole number"), "{e}");
    }
}
