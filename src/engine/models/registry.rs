//! What the registry knows of a model. Each model folder declares a [`Descriptor`] (names,
//! docs section, teaching text, hyperparameter table, side information it needs, what it
//! outputs, and how to build it); the list of them is [`super::MODELS`] (one line per model in
//! `models/mod.rs`). The CLI's `--model` parsing and help, the GUI's picker and parameter
//! widgets and `sweep`'s grid all read it through [`ModelKind`].

use super::bench::BenchFn;
use super::footprint::MemoryFn;
use super::params::{Checked, HyperParam, ParamKind, ParamValue, Preset};
use super::{MODELS, Model, ModelError, ModelSpec};
use crate::engine::constraints::SideInfo;
use crate::engine::data::Dataset;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::sync::Arc;

/// The side information a model cannot run without.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SideNeed {
    /// Nothing beyond X.
    None,
    /// Ordinal triplets (i, j, q).
    Triplets,
    /// Must-link / cannot-link pairs (from triplets or from painted labels).
    Links,
    /// Some known labels (painted, revealed, or from a file).
    PartialLabels,
    /// The p-NN graph of the data (always available: built from X).
    KnnGraph,
}

/// What a fit hands to the evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Output {
    /// A representation H, clustered by k-means for scoring.
    Representation,
    /// Its own cluster labels (scored directly; k-means is not run).
    ClusterLabels,
    /// Class predictions for the samples without a known label.
    ClassPredictions,
}

/// What a model is built from: a spec already checked against the descriptor (the rank, and
/// the parameters as [`Checked`], so the model reads them without checking again), the data,
/// and side information that satisfies [`Descriptor::needs`].
pub struct Build<'a> {
    pub spec: &'a ModelSpec,
    pub params: &'a Checked,
    pub data: Arc<Dataset>,
    pub side: &'a SideInfo,
}

/// Builds a model ready to step.
pub type BuildFn = fn(Build<'_>) -> Result<Box<dyn Model>, ModelError>;

/// Everything the front ends and the engine need to know about a model.
pub struct Descriptor {
    /// Command-line name (`--model NAME`), lower case.
    pub name: &'static str,
    /// Display name.
    pub label: &'static str,
    /// Where its math is: `docs/models.md §N`.
    pub section: &'static str,
    /// A short teaching explanation: what it optimises, what side information it uses, the
    /// paper.
    pub description: &'static str,
    /// Hyperparameters beyond k, seed, iterations and tolerance.
    pub params: &'static [HyperParam],
    /// Named settings offered in one click (the first is not implied to be the default).
    pub presets: &'static [Preset],
    pub needs: SideNeed,
    /// Whether the model has a basis W.
    pub has_w: bool,
    /// Whether new samples can be expressed in the fitted basis ([`super::mu::project`]): the
    /// models whose data term is `‖X − WH‖²_F` and whose other terms involve only the fitted
    /// samples (new samples carry no graph, constraint or triplet).
    pub projects_new_samples: bool,
    /// Whether the model builds a graph or similarities between the samples from X (a p-NN
    /// graph, CAN's neighbours, 2-STGINMF's similarities): `auto` preprocessing keeps a
    /// compositional table on its own scale for it (docs/models.md §1).
    pub sample_graph: bool,
    pub output: Output,
    /// The update rule as the teaching controls show it (docs/models.md), for models whose
    /// iteration is one multiplicative rule; `None` for the others.
    pub update_rule: Option<&'static str>,
    /// Whether every entry of H reaches the objective with a positive weight, so that a NaN or
    /// ±∞ in H makes the objective non-finite (NMF's trace identity: HHᵀ's diagonal holds
    /// Σ h², times WᵀW's positive diagonal; its exact residual every 50 iterations, W·H with
    /// W ≥ 2⁻³⁰⁰). The fit loop then skips its own scan of H for non-finite entries, 1.2 % of a
    /// small fit (the digits from Python).
    pub objective_sees_h: bool,
    pub build: BuildFn,
    /// The large intermediates the model allocates (dense n×n state, the p-NN search, m×n
    /// working copies), checked against the memory available before it is built.
    pub memory: MemoryFn,
    /// The model's own `bench` cases (its iteration against NMF's, or parts particular to
    /// it), run by `bench` in one loop over the registry; `None` for none.
    pub bench: Option<BenchFn>,
}

impl Descriptor {
    /// A model named `name` (command line), `label` (display), its math in `section`, built by
    /// `build`; everything else at the plain value: no description, hyperparameters or
    /// presets, nothing beyond X, no basis W, no projection of new samples, no sample graph,
    /// a representation H as output, no update rule, H scanned for non-finite entries, no large
    /// intermediates, no bench cases. A model's
    /// `DESCRIPTOR` states what differs and ends with `..Descriptor::new(…)`.
    pub const fn new(
        name: &'static str,
        label: &'static str,
        section: &'static str,
        build: BuildFn,
    ) -> Self {
        Self {
            name,
            label,
            section,
            description: "",
            params: &[],
            presets: &[],
            needs: SideNeed::None,
            has_w: false,
            projects_new_samples: false,
            sample_graph: false,
            output: Output::Representation,
            update_rule: None,
            objective_sees_h: false,
            build,
            memory: super::footprint::none,
            bench: None,
        }
    }
}

impl fmt::Debug for Descriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// A handle on a registered model: cheap to copy, compared and serialized by its name.
#[derive(Clone, Copy)]
pub struct ModelKind(&'static Descriptor);

impl ModelKind {
    /// The handle of a descriptor (each model folder exports its own as `KIND`).
    pub const fn of(d: &'static Descriptor) -> Self {
        Self(d)
    }

    /// Every registered model, in menu order.
    pub fn all() -> impl Iterator<Item = ModelKind> {
        MODELS.iter().map(|&d| ModelKind(d))
    }

    /// Parse a command-line name (case-insensitive).
    pub fn from_name(s: &str) -> Option<Self> {
        Self::all().find(|k| k.name().eq_ignore_ascii_case(s))
    }

    /// The registered names, for "unknown model" messages and `--help`.
    pub fn names() -> String {
        Self::all().map(|k| k.name()).collect::<Vec<_>>().join(", ")
    }

    pub fn descriptor(self) -> &'static Descriptor {
        self.0
    }
    pub fn name(self) -> &'static str {
        self.0.name
    }
    pub fn label(self) -> &'static str {
        self.0.label
    }
    pub fn section(self) -> &'static str {
        self.0.section
    }
    pub fn description(self) -> &'static str {
        self.0.description
    }
    pub fn hyperparameters(self) -> &'static [HyperParam] {
        self.0.params
    }
    pub fn presets(self) -> &'static [Preset] {
        self.0.presets
    }
    pub fn needs(self) -> SideNeed {
        self.0.needs
    }
    pub fn update_rule(self) -> Option<&'static str> {
        self.0.update_rule
    }

    pub fn output(self) -> Output {
        self.0.output
    }

    /// What `auto` preprocessing resolves for this model (docs/models.md §1).
    pub fn auto_for(self) -> crate::engine::data::AutoFor {
        if self.0.sample_graph {
            crate::engine::data::AutoFor::SampleGraph
        } else {
            crate::engine::data::AutoFor::Factorisation
        }
    }

    /// The parameters' names, comma-separated ("none" without any), for messages and help.
    pub fn param_names(self) -> String {
        if self.0.params.is_empty() {
            return "none".into();
        }
        let names: Vec<_> = self.0.params.iter().map(|hp| hp.name).collect();
        names.join(", ")
    }

    /// The table entry of a parameter.
    pub fn param(self, name: &str) -> Option<&'static HyperParam> {
        self.0.params.iter().find(|hp| hp.name == name)
    }

    /// Whether the side information satisfies [`Descriptor::needs`]; the one message every
    /// front end shows when it does not.
    pub fn check_side(self, side: &SideInfo) -> Result<(), ModelError> {
        let missing = |what: &str| {
            Err(ModelError::MissingSideInfo {
                model: self.label(),
                what: format!("{what} ({})", self.section()),
            })
        };
        match self.needs() {
            SideNeed::None | SideNeed::KnnGraph => Ok(()),
            SideNeed::Triplets if side.triplets.is_empty() => missing(
                "triplets (i, j, q): click them in Triplet mode, load a constraints file, or \
                 generate them by the protocol (command line: --triplets FILE|generate)",
            ),
            SideNeed::Links if side.triplets.is_empty() && side.n_known_labels() < 2 => missing(
                "must-link / cannot-link pairs: give triplets or label at least two samples \
                 (command line: --triplets, --reveal P or --known-labels FILE)",
            ),
            SideNeed::PartialLabels if side.n_known_labels() == 0 => missing(
                "some known labels: paint them in Label mode or reveal a share of them \
                 (command line: --reveal P or --known-labels FILE)",
            ),
            SideNeed::Triplets | SideNeed::Links | SideNeed::PartialLabels => Ok(()),
        }
    }
}

impl PartialEq for ModelKind {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}
impl Eq for ModelKind {}
impl std::hash::Hash for ModelKind {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}
impl PartialOrd for ModelKind {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ModelKind {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name().cmp(other.name())
    }
}
impl fmt::Debug for ModelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}
impl Serialize for ModelKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}
impl<'de> Deserialize<'de> for ModelKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        ModelKind::from_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown model `{name}` (known: {})",
                ModelKind::names()
            ))
        })
    }
}

/// A parameter value read from a file: here, so that the registry's option names are known.
impl<'de> Deserialize<'de> for ParamValue {
    /// A number, a bool, or the name of an option of some registered model's choice parameter.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(f64),
            Flag(bool),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(v) => Ok(ParamValue::Number(v)),
            Raw::Flag(b) => Ok(ParamValue::Flag(b)),
            Raw::Text(t) => choice_named(&t)
                .map(ParamValue::Choice)
                .ok_or_else(|| serde::de::Error::custom(format!("unknown option `{t}`"))),
        }
    }
}

/// The `'static` name of an option of some registered choice parameter that is spelled `t`.
fn choice_named(t: &str) -> Option<&'static str> {
    MODELS
        .iter()
        .flat_map(|d| d.params.iter())
        .find_map(|hp| match hp.kind {
            ParamKind::Choice { options, .. } => options.iter().find(|o| o.name == t),
            _ => None,
        })
        .map(|o| o.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A NaN in X built in code (not through a loader) is refused at build time, for every
    /// model, with the entry named, before any graph is built (the kNN search would panic).
    #[test]
    fn every_model_refuses_a_non_finite_x_at_build() {
        use crate::engine::constraints::{SideInfo, Triplet};
        use crate::engine::models::{ModelError, ModelSpec, build};
        use std::sync::Arc;
        let mut x =
            ndarray::Array2::from_shape_fn((4, 12), |(i, j)| 1.0 + ((i * 5 + j) % 7) as f64);
        x[[2, 7]] = f64::NAN;
        let data = Arc::new(crate::engine::data::Dataset::from_parts(
            x,
            None,
            vec![],
            "nan",
        ));
        let side = SideInfo::new(
            vec![Triplet::new(0, 1, 2), Triplet::new(3, 4, 5)],
            vec![
                Some(0),
                Some(1),
                Some(0),
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
            ],
        );
        for k in ModelKind::all() {
            let e = build(&ModelSpec::new(k, 2, 0), Arc::clone(&data), &side)
                .err()
                .unwrap_or_else(|| panic!("{} built on a NaN", k.name()));
            assert!(matches!(e, ModelError::BadData { .. }), "{}: {e}", k.name());
            assert!(
                e.to_string().contains("feature 3, sample 8"),
                "{}: {e}",
                k.name()
            );
        }
    }

    #[test]
    fn names_are_unique_lower_case_and_sections_point_at_the_docs() {
        let mut names: Vec<_> = ModelKind::all().map(|k| k.name()).collect();
        assert!(
            names
                .iter()
                .all(|n| n.chars().all(|c| !c.is_ascii_uppercase()))
        );
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before, "two models share a name");
        for k in ModelKind::all() {
            assert!(k.section().starts_with("docs/models.md §"), "{}", k.name());
            assert_eq!(ModelKind::from_name(&k.name().to_uppercase()), Some(k));
            for hp in k.hyperparameters() {
                assert!(
                    hp.check(k.label(), hp.default_value()).is_ok(),
                    "{}",
                    hp.name
                );
            }
            for p in k.presets() {
                for (name, v) in p.values {
                    let hp = k.param(name);
                    assert!(
                        hp.is_some_and(|hp| hp.check(k.label(), *v).is_ok()),
                        "{name}"
                    );
                }
            }
        }
        let json = serde_json::to_string(&crate::engine::models::rpnmf::KIND).unwrap();
        assert_eq!(json, "\"rpnmf\"");
        assert_eq!(
            serde_json::from_str::<ModelKind>(&json).unwrap(),
            crate::engine::models::rpnmf::KIND
        );
        assert!(serde_json::from_str::<ModelKind>("\"nope\"").is_err());
    }
}
