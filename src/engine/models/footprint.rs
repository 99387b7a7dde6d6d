//! The large intermediates a model allocates beyond X, H and W (issue 20 point 5): each
//! descriptor declares them ([`super::Descriptor::memory`]), and [`super::build`] refuses,
//! before anything is allocated, a fit whose intermediates would not fit in the memory
//! available ([`crate::engine::machine::limits`]), with the model, the size and what to do.
//!
//! The counts are upper estimates of what the model holds at its peak (dense n×n matrices,
//! the p-NN search's blocks and candidate lists, m×n working copies); small k×n or sparse
//! O(n·p) parts are left out unless they are all there is.

use super::params::Checked;
use super::{ModelError, ModelKind};
use crate::engine::machine::limits;

/// The sizes a model's intermediates depend on.
#[derive(Clone, Copy, Debug)]
pub struct Sizes<'a> {
    /// Features.
    pub m: usize,
    /// Samples.
    pub n: usize,
    /// Rank.
    pub k: usize,
    /// Samples with a known label in the side information.
    pub labelled: usize,
    /// The model's hyperparameters, checked.
    pub params: &'a Checked,
}

impl Sizes<'_> {
    /// A whole-number parameter (neighbour counts), or `default` when the table has none.
    pub fn count(&self, name: &str, default: usize) -> usize {
        self.params
            .number(name)
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map_or(default, |v| v as usize)
    }

    /// `count` dense n×n f64 matrices.
    pub fn dense_nn(&self, what: &'static str, count: u128) -> Intermediate {
        let n = self.n as u128;
        Intermediate {
            what,
            bytes: count * n * n * 8,
        }
    }

    /// `count` m×n f64 working copies of X.
    pub fn like_x(&self, what: &'static str, count: u128) -> Intermediate {
        Intermediate {
            what,
            bytes: count * self.m as u128 * self.n as u128 * 8,
        }
    }

    /// The p-NN search of the n samples in `dims` dimensions and the sparse graph from it
    /// ([`crate::engine::linalg::knn::footprint`]).
    pub fn knn(&self, what: &'static str, dims: usize, p: usize) -> Intermediate {
        let threads = rayon::current_num_threads();
        let search = crate::engine::linalg::knn::footprint(dims, self.n, p, threads);
        // The symmetrised graph in CSR: up to 2np entries of an index and a value, twice
        // while it is built from the entry list.
        let graph = 4 * (self.n as u128) * (p as u128) * 16;
        Intermediate {
            what,
            bytes: search + graph,
        }
    }
}

impl Sizes<'_> {
    /// The p-NN search of the n samples in `dims` dimensions as the models run it: the k-d
    /// tree up to [`crate::engine::linalg::kdtree::TREE_MAX_DIMS`] dimensions (the samples as
    /// rows, the nodes with their boxes, the result: O(n·(dims + p))), else [`Self::knn`].
    pub fn knn_any(&self, what: &'static str, dims: usize, p: usize) -> Intermediate {
        if dims > crate::engine::linalg::kdtree::TREE_MAX_DIMS {
            return self.knn(what, dims, p);
        }
        let n = self.n as u128;
        let (d, p) = (dims as u128, p as u128);
        let tree = n * d * 8 + (n / 4 + 1) * (2 * d * 8 + 80) + n * 8;
        Intermediate {
            what,
            bytes: tree + n * p * 16 + 4 * n * p * 16,
        }
    }
}

/// One large allocation (or group of them) a model makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intermediate {
    /// What it is, for the message ("the p-NN search").
    pub what: &'static str,
    pub bytes: u128,
}

/// A model's intermediates for given sizes ([`super::Descriptor::memory`]).
pub type MemoryFn = fn(&Sizes<'_>) -> Vec<Intermediate>;

/// For models with nothing beyond X-sized products of k rows or columns.
pub fn none(_: &Sizes<'_>) -> Vec<Intermediate> {
    Vec::new()
}

/// Refuse, before anything is allocated, a fit of `kind` whose intermediates would exceed
/// `available()` bytes; the message names the model, each part and its size, and what to do.
/// `available` is asked only when the model declares intermediates (reading the machine's
/// memory is three `/proc` files, about 30 µs of a small NMF fit's 1 ms fixed cost from Python).
pub fn check(
    kind: ModelKind,
    sizes: &Sizes<'_>,
    available: impl FnOnce() -> u64,
) -> Result<(), ModelError> {
    let parts = (kind.descriptor().memory)(sizes);
    let total = parts
        .iter()
        .map(|p| p.bytes)
        .fold(0u128, u128::saturating_add);
    if total == 0 {
        return Ok(());
    }
    let available = available();
    let list = parts
        .iter()
        .map(|p| {
            format!(
                "{} {}",
                p.what,
                limits::human(u64::try_from(p.bytes).unwrap_or(u64::MAX))
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let what = format!(
        "{} on {} samples × {} features ({list})",
        kind.label(),
        sizes.n,
        sizes.m
    );
    limits::check_against(&what, total, 1, available).map_err(|t| ModelError::BadData {
        why: format!(
            "{t}; {}: use fewer samples, or a model without a graph or n×n state such as NMF",
            fitting_samples(kind, sizes, available)
        ),
    })
}

/// Total bytes of a model's declared intermediates at the given sizes.
fn total_bytes(kind: ModelKind, sizes: &Sizes<'_>) -> u128 {
    (kind.descriptor().memory)(sizes)
        .iter()
        .map(|p| p.bytes)
        .fold(0u128, u128::saturating_add)
}

/// The largest sample count below `sizes.n` whose intermediates fit in `available`, said in
/// words ("at most 12345 samples fit"). The footprints grow with n, so a bisection finds it;
/// given labels (2-STGINMF) shrink in proportion.
fn fitting_samples(kind: ModelKind, sizes: &Sizes<'_>, available: u64) -> String {
    let at = |n: usize| {
        let labelled = if sizes.n == 0 {
            0
        } else {
            (sizes.labelled as u128 * n as u128 / sizes.n as u128) as usize
        };
        let s = Sizes {
            n,
            labelled,
            ..*sizes
        };
        total_bytes(kind, &s) <= u128::from(available)
    };
    let (mut lo, mut hi) = (0usize, sizes.n);
    // Invariant: `lo` fits (or is 0), `hi` does not.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if at(mid) { lo = mid } else { hi = mid }
    }
    if lo < 2 {
        "no sample count fits this budget".to_string()
    } else {
        format!("at most {lo} samples fit")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::ModelSpec;

    fn refusal(name: &str, m: usize, n: usize, labelled: usize, budget: u64) -> Option<String> {
        let kind = ModelKind::from_name(name).unwrap();
        let params = ModelSpec::new(kind, 2, 0).checked().unwrap();
        let sizes = Sizes {
            m,
            n,
            k: 2,
            labelled,
            params: &params,
        };
        check(kind, &sizes, || budget).err().map(|e| e.to_string())
    }

    #[test]
    fn models_with_large_intermediates_are_refused_under_a_small_budget() {
        // CAN at n = 500, k = 2: the p-NN search and 12 blocks of 500 × 10 f64 (469 KiB),
        // against 100 kB.
        let e = refusal("can", 4, 500, 0, 100_000).expect("CAN refused");
        assert!(
            e.contains("CAN on 500 samples × 4 features (the p-NN search")
                && e.contains("the eigensolver's n×(2c + 6) blocks 468.8 KiB")
                && e.contains("but only 97.7 KiB of memory is available")
                && e.contains(
                    "fit: use fewer samples, or a model without a graph or n×n state such as NMF"
                ),
            "{e}"
        );
        assert_eq!(refusal("can", 4, 500, 0, 1 << 30), None);
        // 2-STGINMF with every sample labelled: 2 × 500² f64 = 3.8 MiB, beside 2 MiB of
        // similarity blocks, against 4 MiB; with 30 labelled it fits.
        let e = refusal("stginmf", 4, 500, 500, 4 << 20).expect("2-STGINMF refused");
        assert!(
            e.contains("the dense train–train similarity and distances 3.8 MiB"),
            "{e}"
        );
        assert_eq!(refusal("stginmf", 4, 500, 30, 4 << 20), None);
        // GNMF's p-NN search holds blocks of 256 × n distances.
        let e = refusal("gnmf", 4, 500, 0, 100_000).expect("GNMF refused");
        assert!(
            e.contains("GNMF on 500 samples × 4 features (the p-NN graph"),
            "{e}"
        );
        // NMF declares nothing: any budget passes.
        assert_eq!(refusal("nmf", 4, 500, 0, 1), None);
    }

    #[test]
    fn every_model_with_a_graph_or_n_by_n_state_declares_it() {
        for name in ["gnmf", "rmnmf", "fnmf", "psmf", "can", "stginmf"] {
            assert!(
                refusal(name, 50, 5000, 500, 1000).is_some(),
                "{name} declares no intermediates"
            );
        }
    }

    /// The refusal names the largest sample count that fits, and that count really is the edge:
    /// it passes the same check, one more sample does not.
    #[test]
    fn a_refusal_names_the_sample_count_that_fits() {
        let budget = 4 << 20;
        let e = refusal("stginmf", 4, 2000, 2000, budget).expect("2-STGINMF refused");
        let fits: usize = e
            .split("at most ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no count in: {e}"));
        assert!(fits > 2 && fits < 2000, "{e}");
        assert_eq!(refusal("stginmf", 4, fits, fits, budget), None, "{e}");
        assert!(refusal("stginmf", 4, fits + 1, fits + 1, budget).is_some());
    }
}
