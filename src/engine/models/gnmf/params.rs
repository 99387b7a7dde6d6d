//! GNMF's hyperparameter table (docs/models.md §3.2) and its typed parameters, built once from
//! the checked table.

use crate::engine::linalg::GraphWeight;
use crate::engine::models::{
    Checked, ChoiceOption, HyperParam, ModelError, ParamKind, ParamValue, Preset,
};

/// GNMF's hyperparameters, in the order the GUI shows them.
pub const TABLE: &[HyperParam] = &[
    HyperParam {
        name: "lambda",
        kind: ParamKind::Number {
            default: 10.0,
            min: 0.0,
            max: 1e6,
            log_scale: true,
            grid: &[
                1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5,
            ],
        },
        help: "λ, weight of the graph term λ·Tr(H L Hᵀ) = (λ/2) Σ S_ij ‖h_i − h_j‖²: how \
               strongly samples joined in the p-NN graph are pulled to similar codes \
               (docs/models.md §3.2, (3.8)). 0 gives plain NMF, iterate for iterate. Default \
               10, chosen by the defaults protocol over the public sets (docs/models.md §9); \
               D. Cai's reference code uses 100 (the preset `cai`). W and H start on Cai's \
               scale, so λ means what it means there. The grid 1e-5 … 1e5 is the one the PSMF \
               paper searched.",
    },
    HyperParam {
        name: "neighbors",
        kind: ParamKind::Count {
            default: 5,
            min: 1,
            max: 100,
            grid: &[3, 5, 10],
        },
        help: "p, neighbours per sample in the graph: each sample is joined to its p nearest \
               others in Euclidean distance, and the graph keeps an edge when either end chose \
               it (docs/models.md §2.1). A whole number; capped at n − 1. Default 5.",
    },
    HyperParam {
        name: "weight",
        kind: ParamKind::Choice {
            default: "binary",
            options: &[
                ChoiceOption {
                    name: "binary",
                    help: "Every edge weighs 1 (docs/models.md (2.3)).",
                },
                ChoiceOption {
                    name: "heat",
                    help: "exp(−‖x_i − x_j‖² / (2t²)), t the mean distance between samples \
                           (docs/models.md (2.3a), t by (2.3b)).",
                },
                ChoiceOption {
                    name: "cosine",
                    help: "The cosine of the two samples (docs/models.md (2.3c)).",
                },
            ],
        },
        help: "How the graph's edges are weighted (docs/models.md §2.1): binary (default), \
               heat kernel, or cosine.",
    },
];

/// Named settings: D. Cai's reference code's λ (the default is the project's, docs/models.md §9).
pub const PRESETS: &[Preset] = &[Preset {
    name: "cai",
    help: "λ = 100, as in D. Cai's GNMF code (docs/models.md §3.2).",
    values: &[("lambda", ParamValue::Number(100.0))],
}];

/// Typed GNMF parameters, from the checked table ([`GnmfParams::from_checked`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GnmfParams {
    /// λ ≥ 0: weight of the graph term (0 is NMF).
    pub lambda: f64,
    /// p ≥ 1: neighbours per sample of the graph (docs/models.md §2.1).
    pub neighbors: usize,
    /// Edge weights of the graph.
    pub weight: GraphWeight,
}

impl GnmfParams {
    /// The typed parameters of a checked table.
    pub fn from_checked(p: &Checked) -> Result<Self, ModelError> {
        Ok(Self {
            lambda: p.number("lambda")?,
            neighbors: p.count("neighbors")?,
            weight: p.choice("weight", &GraphWeight::NAMED)?,
        })
    }

    /// The defaults of the table.
    pub fn defaults() -> Result<Self, ModelError> {
        Self::from_checked(&Checked::new("GNMF", TABLE, &Default::default())?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::gnmf::KIND;
    use crate::engine::models::{ModelSpec, ParamValue};

    /// The defaults protocol's choice (docs/models.md §9: λ ∈ {1, 10, 100, 1000} on the seven
    /// public sets); Cai's 100 stays as the preset.
    #[test]
    fn defaults_come_from_the_table() {
        assert_eq!(PRESETS[0].values, &[("lambda", ParamValue::Number(100.0))]);
        let p = GnmfParams::defaults().unwrap();
        assert_eq!(p, GnmfParams {
            lambda: 10.0,
            neighbors: 5,
            weight: GraphWeight::Binary
        });
        let spec = ModelSpec::new(KIND, 2, 0)
            .with("weight", ParamValue::Choice("heat"))
            .with("neighbors", ParamValue::Number(3.0));
        let p = GnmfParams::from_checked(&spec.checked().unwrap()).unwrap();
        assert_eq!((p.weight, p.neighbors), (GraphWeight::Heat, 3));
    }

    #[test]
    fn each_rule_is_refused_with_its_message() {
        let hp = |n: &str| TABLE.iter().find(|h| h.name == n).unwrap();
        for (name, text, want) in [
            ("lambda", "-1", "outside [0, 1000000]"),
            ("lambda", "NaN", "outside"),
            ("neighbors", "0", "outside [1, 100]"),
            ("weight", "gauss", "one of binary, heat, cosine"),
        ] {
            let e = hp(name).parse("GNMF", text).unwrap_err().to_string();
            assert!(e.contains(&format!("`{name}`")) && e.contains(want), "{e}");
        }
        let spec = ModelSpec::new(KIND, 2, 0).with("neighbors", ParamValue::Number(2.5));
        // The table's check refuses the fraction (the parameter is a count).
        let e = spec.checked().unwrap_err().to_string();
        assert!(e.contains("`neighbors`") && e.contains("2.5 is not a whole number"), "{e}");
    }
}
