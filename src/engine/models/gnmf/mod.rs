//! GNMF: graph-regularised NMF (Cai, He, Han, Huang, TPAMI 2011; docs/models.md §3.2).
//!
//! Objective (3.8): `F(W, H) = ‖X − WH‖²_F + λ Tr(H L Hᵀ)`, W, H ≥ 0, with S the symmetrised
//! p-NN graph of the samples (docs/models.md §2.1, built once per dataset by
//! [`SideInfo::graph`]), D = diag(S1) and L = D − S, so that
//! `Tr(H L Hᵀ) = ½ Σ_ij S_ij ‖h_i − h_j‖²` (3.9).
//!
//! One iteration, H then W, each by the multiplicative rule of the kit ([`super::mu`]):
//! 1. `H ← H ⊙ (WᵀX + λ H S) ⊘ max(WᵀW H + λ H D, ε)` (3.10), with H·S of the current H (kept
//!    from the end of the previous iteration) and `(H D)_aj = d_j h_aj`;
//! 2. H·S and `Tr(H L Hᵀ)` of the new H in one pass over the graph's nonzeros, O(nnz·k): the
//!    graph term of F, and the next iteration's numerator;
//! 3. `W ← W ⊙ (XHᵀ) ⊘ max(W HHᵀ, ε)` (3.11), NMF's rule;
//! 4. F from the trace identity `‖X‖² − 2⟨W, XHᵀ⟩ + ⟨WᵀW, HHᵀ⟩` (exactly from the residual every
//!    50 iterations) plus λ times the graph term.
//!
//! The products and their order are NMF's (`models::nmf`): small X one product per pass, large X
//! the kit's blocked single pass over X, and at λ = 0 the added terms are exact zeros, so
//! GNMF with λ = 0 gives NMF's iterates bit for bit. After the last iteration W's columns are
//! scaled to unit length and H's rows to compensate (docs/models.md (3.7)).

mod algorithm;
pub mod params;

pub use algorithm::Gnmf;
pub use params::GnmfParams;

use crate::engine::models::footprint::{Intermediate, Sizes};
use super::bench::{On, against_nmf};
use super::registry::{Build, Descriptor, ModelKind, SideNeed};
use super::{Model, ModelError};

/// GNMF's large intermediates: the p-NN search and graph (docs/models.md §2.1).
fn memory(s: &Sizes<'_>) -> Vec<Intermediate> {
    vec![s.knn("the p-NN graph", s.m, s.count("neighbors", 5))]
}

/// GNMF in the registry.
pub const DESCRIPTOR: Descriptor = Descriptor {
    description: "Graph-regularised NMF: X ≈ WH where samples that are near neighbours in the \
                  data also get similar codes. It minimises ‖X − WH‖²_F + λ·Tr(H L Hᵀ), where L \
                  is the Laplacian of the p-nearest-neighbour graph of the samples, so the second \
                  term is (λ/2) Σ S_ij ‖h_i − h_j‖² over the graph's edges. Uses no side \
                  information beyond X: the graph is built from the data (binary, heat-kernel or \
                  cosine edge weights). λ = 0 is plain NMF. D. Cai, X. He, J. Han, T. S. Huang, \
                  Graph Regularized Nonnegative Matrix Factorization for Data Representation, \
                  IEEE TPAMI 33(8), 2011.",
    params: params::TABLE,
    presets: params::PRESETS,
    needs: SideNeed::KnnGraph,
    has_w: true,
    projects_new_samples: true,
    sample_graph: true,
    update_rule: Some("H ← H ⊙ (WᵀX + λHS) ⊘ (WᵀWH + λHD)\nW ← W ⊙ (XHᵀ) ⊘ (WHHᵀ)\n\
                   minimising ‖X − WH‖²_F + λ tr(HLHᵀ) (docs/models.md §3.2)"),
    memory,
    bench: Some(|b| against_nmf(b, KIND, &[(On::Random, 20)])),
    ..Descriptor::new("gnmf", "GNMF", "docs/models.md §3.2", build)
};

/// The handle of GNMF.
pub const KIND: ModelKind = ModelKind::of(&DESCRIPTOR);

fn build(Build { spec, params, data, side }: Build<'_>) -> Result<Box<dyn Model>, ModelError> {
    let params = GnmfParams::from_checked(params)?;
    let graph = side.graph(&data, params.neighbors, params.weight);
    Ok(Box::new(Gnmf::start(data, spec, params, graph)?))
}
