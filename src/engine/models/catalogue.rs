use serde::{Deserialize, Serialize};

/// A model's hyperparameter: its name (as used by `--param NAME=VALUE`), default, range and
/// the text the GUI shows in its tooltip (with the MODELS.md section).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HyperParam {
    pub name: &'static str,
    pub default: f64,
    pub min: f64,
    pub max: f64,
    /// Drag on a log scale in the GUI.
    pub log_scale: bool,
    /// An on/off switch stored as 0 or 1 (a checkbox in the GUI, `NAME=0|1` in the CLI).
    pub flag: bool,
    /// The paper's grid, offered as presets.
    pub grid: &'static [f64],
    pub help: &'static str,
}

/// The models the app can run. Only models that exist are listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelKind {
    /// Lee–Seung multiplicative-update NMF (MODELS.md §3.1).
    Nmf,
    /// Ranking Preserving NMF with triplets (MODELS.md §4).
    Rpnmf,
}

impl ModelKind {
    /// Every model, in menu order.
    pub const ALL: &'static [ModelKind] = &[ModelKind::Nmf, ModelKind::Rpnmf];

    /// Command-line name (`--model NAME`).
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Nmf => "nmf",
            ModelKind::Rpnmf => "rpnmf",
        }
    }

    /// Display name.
    pub fn label(self) -> &'static str {
        match self {
            ModelKind::Nmf => "NMF",
            ModelKind::Rpnmf => "RPNMF",
        }
    }

    /// Parse a command-line name (case-insensitive).
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|k| k.name().eq_ignore_ascii_case(s))
    }

    /// MODELS.md section with the model's math.
    pub fn section(self) -> &'static str {
        match self {
            ModelKind::Nmf => "MODELS.md §3.1",
            ModelKind::Rpnmf => "MODELS.md §4",
        }
    }

    /// A short teaching explanation: what it optimises, what side information it uses, the paper.
    pub fn description(self) -> &'static str {
        match self {
            ModelKind::Nmf => {
                "Nonnegative matrix factorization X ≈ WH minimising the squared Frobenius error \
                 ‖X − WH‖²_F with Lee–Seung multiplicative updates (H first, then W). Uses no side \
                 information: the unsupervised baseline every other model is compared with. \
                 D. Lee and H. S. Seung, Algorithms for Non-negative Matrix Factorization, NIPS 2001."
            }
            ModelKind::Rpnmf => {
                "Ranking Preserving NMF: X ≈ WH where the codes also respect ordinal triplets \
                 (i, j, q), \"i is more like j than like q\". It minimises ‖X − WH‖²_F + \
                 α Σ softplus(‖h_i − h_j‖² − ‖h_i − h_q‖² + δ): the smooth penalty grows when j is \
                 not closer to i than q by a margin δ in the learned space. Needs triplets: click \
                 them on the scatter, or generate them from labels and nearest neighbours. Plain \
                 NMF can break such relations even when they hold in X (the paper's Proposition 1). \
                 A safeguard (on by default) keeps the objective from rising when triplets \
                 contradict each other. Q. Wang, G. Tian, W. Liu, Y. Wang, Z. Zhang, Y. Yamanishi, \
                 Ranking Preserving Nonnegative Matrix Factorization, IJCAI 2018."
            }
        }
    }

    /// Hyperparameters beyond k, seed, iterations and tolerance.
    pub fn hyperparameters(self) -> &'static [HyperParam] {
        match self {
            ModelKind::Nmf => &[],
            ModelKind::Rpnmf => RPNMF_PARAMS,
        }
    }

    /// Whether the model needs triplets (it cannot run without them).
    pub fn needs_triplets(self) -> bool {
        matches!(self, ModelKind::Rpnmf)
    }
}

/// RPNMF hyperparameters (MODELS.md §4.2).
const RPNMF_PARAMS: &[HyperParam] = &[
    HyperParam {
        name: "alpha",
        default: 0.1,
        min: 0.0,
        max: 1e3,
        log_scale: true,
        flag: false,
        grid: &[1e-4, 1e-3, 1e-2, 0.1, 1.0],
        help: "α, weight of the ranking loss α Σ softplus(t) in eq. (9) (MODELS.md §4.2). \
               0 gives plain NMF. The paper found clustering flat for 1e-4…0.1 and worse above 0.1.",
    },
    HyperParam {
        name: "delta",
        default: 10.0,
        min: 0.0,
        max: 1e4,
        log_scale: true,
        flag: false,
        grid: &[1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0],
        help: "δ, margin in t = ‖h_i − h_j‖² − ‖h_i − h_q‖² + δ of eq. (9) (MODELS.md §4.1–4.2): \
               how much closer j must be to i than q, in squared distance in H-space, so its \
               useful range depends on the scale of X.",
    },
    HyperParam {
        name: "safeguard",
        default: 1.0,
        min: 0.0,
        max: 1.0,
        log_scale: false,
        flag: true,
        grid: &[0.0, 1.0],
        help: "On: if an H update raises the objective, retry with damped steps H ⊙ ratio^γ, \
               γ = 1/2, 1/4, … 1/1024, else keep H, so the objective never rises (MODELS.md §4.5 \
               d; the paper's text names only γ = 1/2, which froze H on real data). Off: \
               paper-literal updates, which can diverge with contradictory triplets.",
    },
    HyperParam {
        name: "normalize_w",
        default: 0.0,
        min: 0.0,
        max: 1.0,
        log_scale: false,
        flag: true,
        grid: &[0.0, 1.0],
        help: "On: after the last iteration scale W's columns to unit length and H's rows to \
               compensate, as for NMF before k-means. Off by default: the ranking loss and δ \
               live in the raw H geometry, which this changes (MODELS.md §4.5, §10.3). With a \
               large δ RPNMF meets the margins by inflating a few rows of H (and shrinking their \
               W columns); k-means on the raw H then sees little else, so turn this on for \
               clustering scores.",
    },
];
