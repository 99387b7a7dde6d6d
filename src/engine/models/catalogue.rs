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
}

impl ModelKind {
    /// Every model, in menu order.
    pub const ALL: &'static [ModelKind] = &[ModelKind::Nmf];

    /// Command-line name (`--model NAME`).
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Nmf => "nmf",
        }
    }

    /// Display name.
    pub fn label(self) -> &'static str {
        match self {
            ModelKind::Nmf => "NMF",
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
        }
    }

    /// Hyperparameters beyond k, seed, iterations and tolerance.
    pub fn hyperparameters(self) -> &'static [HyperParam] {
        match self {
            ModelKind::Nmf => &[],
        }
    }

    /// Whether the model needs triplets (it cannot run without them).
    pub fn needs_triplets(self) -> bool {
        false
    }
}
