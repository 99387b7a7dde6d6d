//! RMNMF's hyperparameter table (docs/models.md §3.4) and its typed parameters, built once from
//! the checked table.

use crate::engine::models::{Checked, HyperParam, ModelError, ParamKind};

/// The grid 1e-5 … 1e5 the PSMF paper searched for RMNMF's λ and initial μ.
const PSMF_GRID: &[f64] = &[
    1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5,
];

/// RMNMF's hyperparameters, in the order the GUI shows them.
pub const TABLE: &[HyperParam] = &[
    HyperParam {
        name: "lambda",
        kind: ParamKind::Number {
            default: 0.1,
            min: 0.0,
            max: 1e6,
            log_scale: true,
            grid: PSMF_GRID,
        },
        help: "λ, weight of the graph term λ·Tr(Gᵀ L G) = (λ/2) Σ S_ij ‖g_i − g_j‖² \
               (docs/models.md §3.4, (3.40)): how strongly samples joined in the 5-NN graph \
               are pulled to the same cluster indicator. 0 drops the graph. Default 0.1, chosen \
               with μ₀ by the defaults protocol over the public sets (docs/models.md §9); the \
               grid 1e-5 … 1e5 is the one the PSMF paper searched.",
    },
    HyperParam {
        name: "mu0",
        kind: ParamKind::Number {
            default: 0.01,
            min: 1e-8,
            max: 1e8,
            log_scale: true,
            grid: PSMF_GRID,
        },
        help: "μ₀, the initial penalty of the augmented Lagrangian (docs/models.md §3.4, \
               (3.41)); μ grows by ρ every iteration up to 1e10. A small μ₀ makes the \
               shrinkage threshold 1/μ large, so E stays 0 and the constraints X = W Gᵀ + E \
               and G = Z are loose for the first few hundred iterations, while G moves; a \
               large one holds them tightly from the start and all but freezes the k-means \
               labels. Default 0.01, chosen with λ by the defaults protocol over the public sets \
               (docs/models.md §9); the PSMF paper searched 1e-5 … 1e5.",
    },
    HyperParam {
        name: "rho",
        kind: ParamKind::Number {
            default: 1.05,
            min: 1.0,
            max: 10.0,
            log_scale: false,
            grid: &[1.01, 1.05, 1.1, 1.5],
        },
        help: "ρ ≥ 1, growth of the penalty per iteration, μ ← min(ρμ, 1e10) (docs/models.md \
               §3.4, (3.46)). Default 1.05, the authors' code's. 1 keeps μ fixed.",
    },
    HyperParam {
        name: "neighbors",
        kind: ParamKind::Count {
            default: 5,
            min: 1,
            max: 100,
            grid: &[3, 5, 10],
        },
        help: "p, neighbours per sample in the binary graph (docs/models.md §2.1). A whole \
               number; capped at n − 1. Default 5, the authors' code's.",
    },
    HyperParam {
        name: "legacy_sign",
        kind: ParamKind::Flag { default: false },
        help: "Add (λ/μ) L Z inside the Procrustes step, as the authors' MATLAB code does, \
               instead of subtracting it as the derivation does (docs/models.md §3.4, (3.44)). \
               Off by default.",
    },
];

/// Typed RMNMF parameters, from the checked table ([`RmnmfParams::from_checked`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RmnmfParams {
    /// λ ≥ 0: weight of the graph term.
    pub lambda: f64,
    /// μ₀ > 0: the initial penalty.
    pub mu0: f64,
    /// ρ ≥ 1: the penalty's growth per iteration.
    pub rho: f64,
    /// p ≥ 1: neighbours per sample of the binary graph.
    pub neighbors: usize,
    /// `+ (λ/μ) L Z` in the G step (the authors' code) instead of `−`.
    pub legacy_sign: bool,
}

impl RmnmfParams {
    /// The typed parameters of a checked table.
    pub fn from_checked(p: &Checked) -> Result<Self, ModelError> {
        Ok(Self {
            lambda: p.number("lambda")?,
            mu0: p.number("mu0")?,
            rho: p.number("rho")?,
            neighbors: p.count("neighbors")?,
            legacy_sign: p.flag("legacy_sign")?,
        })
    }

    /// The defaults of the table.
    pub fn defaults() -> Result<Self, ModelError> {
        Self::from_checked(&Checked::new("RMNMF", TABLE, &Default::default())?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::rmnmf::KIND;
    use crate::engine::models::{ModelSpec, ParamValue};

    #[test]
    fn defaults_come_from_the_table_and_rules_are_enforced() {
        // The defaults protocol's choice (docs/models.md §9: best median rank of λ ∈ {0.01, 0.1,
        // 1} × μ₀ ∈ {1e-5, 0.01, 1} over the seven public sets).
        let p = RmnmfParams::defaults().unwrap();
        assert_eq!(p, RmnmfParams {
            lambda: 0.1,
            mu0: 0.01,
            rho: 1.05,
            neighbors: 5,
            legacy_sign: false,
        });
        let hp = |n: &str| TABLE.iter().find(|h| h.name == n).unwrap();
        for (name, text, want) in [
            ("lambda", "-1", "outside"),
            ("mu0", "0", "outside"),
            ("rho", "0.9", "outside"),
            ("neighbors", "0", "outside"),
        ] {
            let e = hp(name).parse("RMNMF", text).unwrap_err().to_string();
            assert!(e.contains(&format!("`{name}`")) && e.contains(want), "{e}");
        }
        let spec = ModelSpec::new(KIND, 2, 0).with("neighbors", ParamValue::Number(2.5));
        // The table's check refuses the fraction (the parameter is a count).
        let e = spec.checked().unwrap_err().to_string();
        assert!(e.contains("2.5 is not a whole number"), "{e}");
        let spec = ModelSpec::new(KIND, 2, 0).with("legacy_sign", ParamValue::Flag(true));
        assert!(
            RmnmfParams::from_checked(&spec.checked().unwrap())
                .unwrap()
                .legacy_sign
        );
    }
}
