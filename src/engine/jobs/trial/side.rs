//! The side information of a trial: which triplets and known labels there are (given, generated
//! by the protocol of docs/models.md §8.4, or a revealed share of the truth), which of them the
//! model is handed, and which the evaluation scores.

use super::TrialError;
use crate::engine::constraints::generate::{
    Generated, ProtocolOptions, generate_triplets, labels_from_truth, reveal_stratified,
};
use crate::engine::constraints::{SideInfo, Triplet};
use crate::engine::data::Dataset;
use crate::engine::models::{ModelKind, SideNeed};
use std::sync::Arc;

/// Where a trial's triplets come from.
#[derive(Clone, Debug, Default)]
pub enum TripletPolicy {
    #[default]
    None,
    /// These triplets (a file, or drawn once and shared by several trials).
    Given(Arc<Vec<Triplet>>),
    /// Drawn by the protocol from the ground-truth labels, seeded by the trial's seed.
    Generate {
        /// Share of the samples used as anchors.
        anchor_fraction: f64,
        /// Triplets per anchor (half from the labels, half from the 5-NN graph).
        per_anchor: usize,
    },
}

/// Where a trial's known labels come from.
#[derive(Clone, Debug, Default)]
pub enum LabelPolicy {
    #[default]
    None,
    /// These labels, per sample (painted, or a `--known-labels` file).
    Given(Arc<Vec<Option<usize>>>),
    /// The true labels of a stratified share of the samples, seeded by the trial's seed.
    Reveal(f64),
}

/// Which of the side information the model is handed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Hand {
    /// All of it (`run`: what the user gave is what the model gets).
    #[default]
    Everything,
    /// Only the kinds the model uses ([`SideNeed`]); the known labels are then drawn only for
    /// a model that uses them or a protocol that scores against them (a sweep, whose triplets
    /// are shared by every model of a repeat).
    WhatTheModelUses,
}

/// A trial's side information, before it is resolved for a seed.
#[derive(Clone, Debug)]
pub enum Side {
    /// This snapshot, handed as it is (the app's store, a k scan): its cached graphs are
    /// shared by every trial that holds it.
    Shared(Arc<SideInfo>),
    /// Drawn for the trial from the policies.
    Policy {
        triplets: TripletPolicy,
        labels: LabelPolicy,
        hand: Hand,
    },
}

impl Default for Side {
    fn default() -> Self {
        Self::Shared(Arc::new(SideInfo::default()))
    }
}

/// The side information of one trial, resolved.
#[derive(Clone, Debug, Default)]
pub struct Resolved {
    /// What the model is handed.
    pub handed: Arc<SideInfo>,
    /// The triplets the evaluation scores (kept in H, in X): every triplet of the trial, also
    /// those a model that does not use triplets was not handed.
    pub triplets: Arc<Vec<Triplet>>,
    /// The known labels per sample (empty when none are known, or none were drawn): a
    /// classifier's training set.
    pub known: Arc<Vec<Option<usize>>>,
    /// How generated triplets came about (for `run.json`).
    pub generated: Option<GeneratedInfo>,
}

/// The counts of a protocol draw of triplets.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GeneratedInfo {
    pub anchors: usize,
    pub label_based: usize,
    pub neighbour_based: usize,
    pub shortfall: usize,
}

impl From<&Generated> for GeneratedInfo {
    fn from(g: &Generated) -> Self {
        Self {
            anchors: g.anchors.len(),
            label_based: g.label_based,
            neighbour_based: g.neighbour_based,
            shortfall: g.shortfall,
        }
    }
}

/// The protocol's triplets for `data` (docs/models.md §8.4) drawn with `seed`.
pub fn generate(
    data: &Dataset,
    anchor_fraction: f64,
    per_anchor: usize,
    seed: u64,
) -> Result<Generated, TrialError> {
    let truth = data.labels.as_ref().ok_or_else(|| {
        TrialError::Side(format!(
            "{}: generated triplets need labelled data (the protocol draws from the labels)",
            data.source
        ))
    })?;
    let opts = ProtocolOptions {
        anchor_fraction,
        per_anchor,
        seed,
        ..ProtocolOptions::default()
    };
    generate_triplets(data.x.view(), &labels_from_truth(truth), &opts, &[])
        .map_err(|e| TrialError::Side(e.to_string()))
}

/// The true labels of a stratified share `p` of `data`'s samples, drawn with `seed`.
pub fn reveal(data: &Dataset, p: f64, seed: u64) -> Result<Vec<Option<usize>>, TrialError> {
    let truth = data.labels.as_ref().ok_or_else(|| {
        TrialError::Side(format!(
            "{}: revealing labels needs labelled data",
            data.source
        ))
    })?;
    reveal_stratified(truth, p, seed).map_err(|e| TrialError::Side(e.to_string()))
}

impl Side {
    /// The side information of a trial of `kind` seeded by `seed`; `scored_labels`: the
    /// protocol scores against the known labels, so they are drawn even for a model that does
    /// not use them.
    pub fn resolve(
        &self,
        data: &Dataset,
        kind: ModelKind,
        seed: u64,
        scored_labels: bool,
    ) -> Result<Resolved, TrialError> {
        let (triplet_policy, label_policy, hand) = match self {
            Side::Shared(side) => {
                return Ok(Resolved {
                    handed: Arc::clone(side),
                    triplets: Arc::new(side.triplets.clone()),
                    known: Arc::new(side.labels.clone()),
                    generated: None,
                });
            }
            Side::Policy {
                triplets,
                labels,
                hand,
            } => (triplets, labels, *hand),
        };
        let uses_triplets = matches!(kind.needs(), SideNeed::Triplets | SideNeed::Links);
        let uses_labels = matches!(kind.needs(), SideNeed::Links | SideNeed::PartialLabels);
        let everything = hand == Hand::Everything;
        let mut generated = None;
        let triplets = match triplet_policy {
            TripletPolicy::None => Arc::new(Vec::new()),
            TripletPolicy::Given(t) => Arc::clone(t),
            TripletPolicy::Generate {
                anchor_fraction,
                per_anchor,
            } => {
                let g = generate(data, *anchor_fraction, *per_anchor, seed)?;
                generated = Some(GeneratedInfo::from(&g));
                Arc::new(g.triplets)
            }
        };
        let known = if everything || uses_labels || scored_labels {
            match label_policy {
                LabelPolicy::None => Arc::new(Vec::new()),
                LabelPolicy::Given(l) => Arc::clone(l),
                LabelPolicy::Reveal(p) => Arc::new(reveal(data, *p, seed)?),
            }
        } else {
            Arc::new(Vec::new())
        };
        let handed = SideInfo::new(
            if everything || uses_triplets {
                triplets.to_vec()
            } else {
                Vec::new()
            },
            if everything || uses_labels {
                known.to_vec()
            } else {
                Vec::new()
            },
        );
        // Handed everything, the known labels are the model's (none when none is known).
        let known = if everything {
            Arc::new(handed.labels.clone())
        } else {
            known
        };
        Ok(Resolved {
            handed: Arc::new(handed),
            triplets,
            known,
            generated,
        })
    }
}
