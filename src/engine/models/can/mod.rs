//! CAN — clustering with adaptive neighbours (Nie, Wang, Huang, KDD 2014; docs/models.md §2.7),
//! offered as a model of its own (`--model can`) and used as PSMF's initialiser (§6.3).
//!
//! CAN learns a sparse affinity graph A whose Laplacian has exactly c zero eigenvalues, so that
//! its c connected components are the clusters. With d_ij the squared Euclidean distances and
//! k the neighbourhood size, in the order the code follows:
//!
//! 1. For each i, its k + 1 nearest others ([`crate::engine::linalg::knn`]); the initial rows by
//!    the closed form of §2.2 with k neighbours ([`crate::engine::linalg::adaptive`]):
//!    `a_ij = (d_{i,k+1} − d_ij) / (k d_{i,k+1} − Σ_{h≤k} d_ih)`; A ← (A + Aᵀ)/2. The ridge
//!    weight and the first rank weight are `r = λ = mean_i ½(k d_{i,k+1} − Σ_{h≤k} d_ih)`.
//! 2. F (n×c): the c eigenvectors of `L_A = D_A − A` with the smallest eigenvalues, without an
//!    n×n matrix: the q connected components of A > 0 (union-find) span the null space
//!    exactly (their normalised indicators, eigenvalue 0); when q < c the other c − q
//!    come from LOBPCG on sparse products of L_A in the complement of the
//!    indicators, warm-started from the previous F ([`crate::engine::linalg::eigen`]). With
//!    q ≥ c, F is the indicators of the c largest components.
//! 3. One round ([`crate::engine::models::Model::step`]): for each i, on its k neighbours only,
//!    `a_i ← Proj_simplex(−(d_ij + λ‖f_i − f_j‖²)/(2r))` (the exact projection of §2.4); A ←
//!    (A + Aᵀ)/2; the new F and eigenvalues σ_1 ≤ σ_2 ≤ …. Then, with q the number of
//!    components of A > 0 counted exactly (the number of zero eigenvalues, which the authors'
//!    code reads off as `σ_1 + … + σ_c > 1e-11` and `σ_1 + … + σ_{c+1} < 1e-11`): if q < c,
//!    λ ← 2λ and F is the new one; else if q > c, λ ← λ/2 and the previous F is kept; else
//!    CAN has converged
//!    ([`crate::engine::models::Model::has_converged`]). At most `rounds` rounds (30).
//! 4. Labels: the connected components of A > 0 when there are exactly c of them (numbered by
//!    their smallest sample); otherwise k-means on the rows of F (one seeded start while
//!    running, 10 starts with the lowest inertia at the end).
//!
//! The objective monitored is CAN's, `Σ_i Σ_j (d_ij a_ij + r a_ij²) + 2λ Σ_{a≤c} σ_a`
//! (`Tr(FᵀL_A F)` is the sum of the c smallest eigenvalues). H is Fᵀ (c×n), the spectral
//! embedding, which the scatter shows; the model's labels are scored directly (no k-means on H).

mod algorithm;
pub(crate) mod bench;
pub mod params;
mod spectral;

pub use algorithm::{Can, EIGEN_ZERO, components};
pub use params::CanParams;

use crate::engine::models::footprint::{Intermediate, Sizes};
use super::registry::{Build, Descriptor, ModelKind, Output};
use super::{Model, ModelError};

/// CAN's large intermediates: the p-NN search of its first graph and the LOBPCG blocks.
fn memory(s: &Sizes<'_>) -> Vec<Intermediate> {
    vec![
        s.knn("the p-NN search", s.m, s.count("neighbors", 5) + 1),
        lobpcg_blocks(s),
    ]
}

/// LOBPCG's n×b blocks (b ≤ 2c + 6): the basis of 3b columns, its image, the Ritz vectors,
/// their images, residuals and copies — about 12 blocks of n×b f64.
pub(crate) fn lobpcg_blocks(s: &Sizes<'_>) -> Intermediate {
    Intermediate {
        what: "the eigensolver's n×(2c + 6) blocks",
        bytes: 12 * (s.n as u128) * (2 * s.k as u128 + 6) * 8,
    }
}

/// CAN in the registry.
pub const DESCRIPTOR: Descriptor = Descriptor {
    description: "Clustering with Adaptive Neighbours: learns a sparse similarity graph in which \
                  each sample links to a few of its k nearest neighbours, with weights on the \
                  probability simplex, and pushes the graph until it falls apart into exactly c \
                  connected pieces, which are the clusters. It alternates the graph (each row a \
                  projection onto the simplex of the distances plus λ times the distances in a \
                  spectral embedding F) and F (the c smallest eigenvectors of the graph's \
                  Laplacian), doubling or halving λ until there are exactly c components. Uses \
                  nothing but X; outputs its own cluster labels, and F as H. It is a strong \
                  baseline and PSMF's initialiser. F. Nie, X. Wang, H. Huang, Clustering and \
                  Projected Clustering with Adaptive Neighbors, KDD 2014.",
    params: params::TABLE,
    sample_graph: true,
    output: Output::ClusterLabels,
    memory,
    bench: Some(bench::cases),
    ..Descriptor::new("can", "CAN", "docs/models.md §2.7", build)
};

/// The handle of CAN.
pub const KIND: ModelKind = ModelKind::of(&DESCRIPTOR);

fn build(Build { spec, params, data, .. }: Build<'_>) -> Result<Box<dyn Model>, ModelError> {
    if spec.init.is_some() {
        return Err(ModelError::BadData {
            why: "CAN does not continue from a warm start: it starts from the data's own \
                  adaptive-neighbour graph (docs/models.md §2.7)"
                .into(),
        });
    }
    let params = CanParams::from_checked(params)?;
    Ok(Box::new(Can::new(data.x.view(), spec.k, spec.seed, params)?))
}

/// Test data shared with PSMF's tests.
#[cfg(test)]
pub(crate) mod tests_support {
    pub(crate) use super::algorithm::tests::blobs;
}
