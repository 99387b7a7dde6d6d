//! PSMF's hyperparameter table (docs/models.md §6.6) and its typed parameters, built once from
//! the checked table and the rank.
//!
//! Two defaults depend on the run: `mu0 = 0` means "from the residual at the start" (§6.6) and
//! `subspace = 0` means s = k. Neither 0 is a valid setting (μ0 > 0, s ≥ 1), so the sentinels
//! cannot be mistaken for one.

use crate::engine::models::{Checked, ChoiceOption, HyperParam, ModelError};

const GRID: &[f64] = &[
    1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5,
];

/// The options of `init`.
const INIT: &[ChoiceOption] = &[
    ChoiceOption::new("can", "CAN's labels (docs/models.md §2.7), the paper's initialiser."),
    ChoiceOption::new("kmeans", "k-means on X, 10 seeded starts, the lowest inertia."),
];

/// The options of `lw`.
const LW: &[ChoiceOption] = &[
    ChoiceOption::new(
        "centroid",
        "L_W = I − ŜŜᵀ, distances to the pseudo-class centroid (eq. (9)).",
    ),
    ChoiceOption::new(
        "pairwise",
        "L_W = 2·blockdiag(N_a I − 11ᵀ), all pairwise distances in a class.",
    ),
];

/// PSMF's hyperparameters, in the order the GUI shows them.
pub const TABLE: &[HyperParam] = &[
    HyperParam::number("lambda1", 1e-2, 0.0..=1e6).log().with_grid(GRID).help(
        "λ1, weight of the graph term Tr(Gᵀ L_m G), L_m the p-NN Laplacian of the projected \
         samples Πᵀx, rebuilt every iteration (docs/models.md §6.1, §6.2). The paper searched 1e-5 \
         … 1e5; default 1e-2 (our choice).",
    ),
    HyperParam::number("lambda2", 1e-2, 0.0..=1e6).log().with_grid(GRID).help(
        "λ2, weight of the pseudo-supervised LDA term Tr(Πᵀ X L_W Xᵀ Π), L_W built from the \
         current pseudo labels (docs/models.md §6.2). Grid 1e-5 … 1e5; default 1e-2.",
    ),
    HyperParam::number("mu0", 0.0, 0.0..=1e6).log().with_grid(&[0.0, 0.1, 1.0, 10.0, 100.0]).help(
        "μ0, the first ALM penalty (docs/models.md §6.6). 0 (default) means 1 / the median \
         residual column norm at the start. It matters a great deal: a large μ0 freezes the pseudo \
         labels, a small one lets them move.",
    ),
    HyperParam::count("subspace", 0, 0..=1000, &[0]).help(
        "s, dimension of the discriminative subspace Πᵀx (docs/models.md §6.6). 0 (default) means \
         s = k. A whole number, at most the number of features (after the PCA of §6.3 when m ≥ \
         n).",
    ),
    HyperParam::number("rho", 1.1, 1.0..=10.0).with_grid(&[1.01, 1.05, 1.1, 1.2, 1.5]).help(
        "ρ, growth of the ALM penalty per iteration, μ ← min(ρμ, μ_max) (docs/models.md (6.13)). \
         Default 1.1 (RMNMF's code uses 1.05).",
    ),
    HyperParam::number("mu_max", 1e10, 1e-6..=1e20).log().with_grid(&[1e6, 1e10]).help(
        "μ_max, cap on the ALM penalty (docs/models.md §6.6, §10.4). Default 1e10.",
    ),
    HyperParam::count("neighbors", 5, 1..=100, &[3, 5, 10]).help(
        "p, neighbours per sample of the binary p-NN graph L_m in the projected space \
         (docs/models.md §6.2, §2.1). A whole number; default 5.",
    ),
    HyperParam::choice("init", "can", INIT).help(
        "Where the pseudo labels start (docs/models.md §6.6). PSMF keeps most of the labelling it \
         starts from, so this choice matters: CAN (default) or k-means.",
    ),
    HyperParam::count("can_neighbors", 20, 1..=100, &[10, 15, 20, 30]).help(
        "k of the CAN start (init = can): neighbours per sample of CAN's adaptive graph \
         (docs/models.md §2.7, §6.6). PSMF keeps the labelling CAN gives it, so this decides much \
         of the result. Default 20, measured on five labelled sets (docs/models.md §6.6): against \
         CAN's own 15, Dermatology 93.6 % ACC instead of 76.6 %, Iris 96.5 instead of 96.3, but \
         ORL faces (10 images a person) 60.3 instead of 63.0.",
    ),
    HyperParam::flag("mm", false).help(
        "MM correction of the Q step (docs/models.md (6.11)): adds (I − AAᵀ)Q_old inside the \
         Procrustes step, exact even when AAᵀ ≠ I. Off by default (the paper's step).",
    ),
    HyperParam::choice("lw", "centroid", LW).help(
        "Which local alignment builds L_W (docs/models.md §6.2): centroid (default) or pairwise.",
    ),
    HyperParam::count("iterations", 50, 1..=100_000, &[50]).help(
        "ALM iterations before PSMF stops as converged (the paper: 50; docs/models.md §6.6). The \
         run's own iteration cap still applies. It also stops once the three primal residuals are \
         below 1e-9.",
    ),
];

/// Which L_W (docs/models.md §6.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LwVariant {
    Centroid,
    Pairwise,
}

/// Where the pseudo labels start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PsmfInit {
    Can,
    KMeans,
}

/// Typed PSMF parameters ([`PsmfParams::from_checked`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PsmfParams {
    pub lambda1: f64,
    pub lambda2: f64,
    /// μ0 > 0, or `None` for the residual rule.
    pub mu0: Option<f64>,
    /// s ≥ 1, resolved (0 in the table means k).
    pub subspace: usize,
    pub rho: f64,
    pub mu_max: f64,
    pub neighbors: usize,
    pub init: PsmfInit,
    /// Neighbours of the CAN start's graph.
    pub can_neighbors: usize,
    pub mm: bool,
    pub lw: LwVariant,
    pub iterations: usize,
}

impl PsmfParams {
    /// The typed parameters for rank k.
    pub fn from_checked(p: &Checked, k: usize) -> Result<Self, ModelError> {
        let s = p.count("subspace")?;
        let mu0 = p.number("mu0")?;
        Ok(Self {
            lambda1: p.number("lambda1")?,
            lambda2: p.number("lambda2")?,
            mu0: (mu0 > 0.0).then_some(mu0),
            subspace: if s == 0 { k } else { s },
            rho: p.number("rho")?,
            mu_max: p.number("mu_max")?,
            neighbors: p.count("neighbors")?,
            init: p.choice("init", &[("can", PsmfInit::Can), ("kmeans", PsmfInit::KMeans)])?,
            can_neighbors: p.count("can_neighbors")?,
            mm: p.flag("mm")?,
            lw: p.choice("lw", &[
                ("centroid", LwVariant::Centroid),
                ("pairwise", LwVariant::Pairwise),
            ])?,
            iterations: p.count("iterations")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::psmf::KIND;
    use crate::engine::models::{ModelSpec, ParamValue};

    #[test]
    fn sentinels_resolve_and_given_values_are_kept() {
        let spec = ModelSpec::new(KIND, 4, 0);
        let p = PsmfParams::from_checked(&spec.checked().unwrap(), 4).unwrap();
        assert_eq!((p.subspace, p.mu0, p.init, p.lw), (4, None, PsmfInit::Can, LwVariant::Centroid));
        assert_eq!((p.rho, p.iterations, p.neighbors, p.mm), (1.1, 50, 5, false));
        assert_eq!(p.can_neighbors, 20);
        let spec = spec
            .with("subspace", ParamValue::Number(6.0))
            .with("mu0", ParamValue::Number(0.5))
            .with("init", ParamValue::Choice("kmeans"));
        let p = PsmfParams::from_checked(&spec.checked().unwrap(), 4).unwrap();
        assert_eq!((p.subspace, p.mu0, p.init), (6, Some(0.5), PsmfInit::KMeans));
        let spec = ModelSpec::new(KIND, 4, 0).with("subspace", ParamValue::Number(2.5));
        // The table's check refuses the fraction (the parameter is a count).
        let e = spec.checked().unwrap_err().to_string();
        assert!(e.contains("`subspace`") && e.contains("whole"), "{e}");
    }
}
