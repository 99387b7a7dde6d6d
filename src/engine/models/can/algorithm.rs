//! The CAN rounds of docs/models.md §2.7 (see the module above for the math).

use super::params::CanParams;
use crate::engine::eval::kmeans::{KMeansParams, kmeans, repeated_kmeans};
use crate::engine::linalg::adaptive::{rows_from_neighbours, symmetrise};
use super::spectral::{Spectrum, spectrum};
pub use crate::engine::linalg::components::components;
use crate::engine::linalg::{Csr, knn, project_to_simplex};
use crate::engine::models::{Outputs, Model, ModelError, ModelKind, Objective, Term};
use ndarray::{Array2, ArrayView2};
use std::sync::Arc;

/// The eigenvalue sums below which the dense reference (the authors' code) counts them as zero;
/// the model itself counts components exactly.
pub const EIGEN_ZERO: f64 = 1e-11;
/// Row weights below this (rows sum to 1) are set to 0 after the simplex projection, and the
/// row is rescaled to sum 1: an edge that a near-tie in the projection leaves at 1e-15 would
/// otherwise join two components by rounding alone (the authors' code reads such a link off
/// the eigenvalues at 1e-11, where it counts as absent).
pub const WEIGHT_ZERO: f64 = 1e-9;
/// k-means starts on F's rows at the end when the components are not c.
pub const FINAL_KMEANS_STARTS: usize = 10;

/// Clustering with adaptive neighbours (docs/models.md §2.7).
///
/// Holds the k nearest others of each sample with their squared distances (n·k each), the
/// current rows a_i on them, the symmetrised A (sparse, ≤ 2nk entries) and F (n×c): memory
/// O(n(k + c)). Each round is n simplex projections of length k, O(nk(c + log k)), a
/// union-find over A's edges and, while A has fewer than c components, LOBPCG on sparse
/// products of L_A warm-started from the previous F, O(nkc + nc²) per iteration.
pub struct Can {
    c: usize,
    k: usize,
    seed: u64,
    rounds: usize,
    /// `idx[i*k..(i+1)*k]`: the k nearest others of i, nearest first.
    idx: Vec<usize>,
    /// Their squared distances.
    d: Vec<f64>,
    /// `a[i*k + h]`: the weight of i's h-th neighbour in row i (before symmetrising).
    a: Vec<f64>,
    graph: Arc<Csr>,
    /// F, n×c.
    f: Array2<f64>,
    /// Fᵀ, c×n (the model's H).
    ft: Array2<f64>,
    /// The c smallest eigenvalues of the current L_A (exact zeros for its components).
    eigenvalues: Vec<f64>,
    r: f64,
    lambda: f64,
    iteration: usize,
    done: bool,
    /// Rounds in which λ was doubled / halved.
    doubled: usize,
    halved: usize,
    components: usize,
    labels: Vec<usize>,
    /// LOBPCG iterations over all rounds, and rounds whose eigenpairs missed the tolerance.
    eig_iterations: usize,
    eig_unconverged: usize,
    /// Tests only: F from the dense eigendecomposition (the plain reference the sparse path
    /// is checked against), and with `authors` also their stop rule on eigenvalues at 1e-11
    /// and no [`WEIGHT_ZERO`].
    #[cfg(test)]
    pub(crate) dense: bool,
    #[cfg(test)]
    pub(crate) authors: bool,
    objective: Objective,
}

impl Can {
    /// Step 1 and 2 of §2.7 on the columns of `x` (m×n) for c clusters: the neighbours, the
    /// initial graph, r = λ and F. Fails on non-finite data, c outside 1..=n or n < 3.
    pub fn new(
        x: ArrayView2<'_, f64>,
        c: usize,
        seed: u64,
        params: CanParams,
    ) -> Result<Self, ModelError> {
        let n = x.ncols();
        if x.iter().any(|v| !v.is_finite()) {
            return Err(ModelError::BadData {
                why: "X has a NaN or infinite entry".into(),
            });
        }
        if n < 3 || c == 0 || c > n {
            return Err(ModelError::BadData {
                why: format!("CAN needs at least 3 samples and 1 ≤ c ≤ n (n = {n}, c = {c})"),
            });
        }
        let k = params.neighbors.min(n - 2).max(1);
        let nb = knn(x, k + 1);
        let (rows, ri) = rows_from_neighbours(&nb, k);
        let mut idx = Vec::with_capacity(n * k);
        let mut d = Vec::with_capacity(n * k);
        let mut a = Vec::with_capacity(n * k);
        for (i, row) in rows.iter().enumerate() {
            idx.extend_from_slice(&nb.of(i)[..k]);
            d.extend_from_slice(&nb.sq_dist(i)[..k]);
            a.extend(row.iter().map(|e| e.1));
        }
        let r = ri.iter().sum::<f64>() / n as f64;
        if !(r > 0.0 && r.is_finite()) {
            return Err(ModelError::BadData {
                why: format!(
                    "all samples coincide with their neighbours (r = {r}): CAN has no distances \
                     to work with"
                ),
            });
        }
        let graph = Arc::new(symmetrise(&rows));
        let sp = spectrum(&graph, c, None, seed, 0)?;
        let mut s = Self {
            c,
            k,
            seed,
            rounds: params.rounds,
            idx,
            d,
            a,
            graph,
            ft: sp.f.t().to_owned(),
            f: sp.f,
            eigenvalues: sp.values,
            r,
            lambda: r,
            iteration: 0,
            done: false,
            doubled: 0,
            halved: 0,
            components: sp.count,
            labels: sp.labels,
            eig_iterations: sp.iterations,
            eig_unconverged: usize::from(!sp.converged),
            #[cfg(test)]
            dense: false,
            #[cfg(test)]
            authors: false,
            objective: Objective::single("fit", 0.0),
        };
        s.refresh_labels(1)?;
        s.objective = s.compute_objective();
        Ok(s)
    }

    /// [`Self::new`] with the dense reference's F and stop rule from the start (tests).
    #[cfg(test)]
    pub(crate) fn new_dense(
        x: ArrayView2<'_, f64>,
        c: usize,
        seed: u64,
        params: CanParams,
        authors: bool,
    ) -> Result<Self, ModelError> {
        let mut s = Self::new(x, c, seed, params)?;
        s.dense = true;
        s.authors = authors;
        let sp = s.spectrum(0)?;
        s.f = sp.f;
        s.ft = s.f.t().to_owned();
        s.eigenvalues = sp.values;
        s.components = sp.count;
        s.labels = sp.labels;
        s.refresh_labels(1)?;
        s.objective = s.compute_objective();
        Ok(s)
    }

    /// Run CAN to its stop (at most `rounds` rounds) and return the final labels: PSMF's
    /// initialiser (docs/models.md §6.3).
    pub fn cluster(
        x: ArrayView2<'_, f64>,
        c: usize,
        seed: u64,
        params: CanParams,
    ) -> Result<(Vec<usize>, usize), ModelError> {
        let mut can = Self::new(x, c, seed, params)?;
        while !can.done {
            can.step()?;
        }
        can.finish();
        Ok((can.labels.clone(), can.components))
    }

    /// The symmetrised affinity graph A.
    pub fn affinity(&self) -> &Arc<Csr> {
        &self.graph
    }

    /// The current λ.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// r, the ridge weight (also the first λ).
    pub fn r(&self) -> f64 {
        self.r
    }

    /// The number of connected components of the current A.
    pub fn n_components(&self) -> usize {
        self.components
    }

    /// The c smallest eigenvalues of the current L_A.
    pub fn eigenvalues(&self) -> &[f64] {
        &self.eigenvalues
    }

    /// The row weights on the neighbours (`a[i*k + h]`) and the neighbours themselves.
    pub fn rows(&self) -> (&[f64], &[usize], usize) {
        (&self.a, &self.idx, self.k)
    }

    fn compute_objective(&self) -> Objective {
        let fit: f64 = self
            .a
            .iter()
            .zip(&self.d)
            .map(|(&a, &d)| d * a + self.r * a * a)
            .sum();
        // L_A is positive semidefinite: a rounding-negative eigenvalue (−1e-16) counts as 0.
        let trace: f64 = self.eigenvalues.iter().take(self.c).map(|s| s.max(0.0)).sum();
        let rank = 2.0 * self.lambda * trace;
        Objective {
            total: fit + rank,
            terms: vec![
                Term {
                    name: "fit".into(),
                    value: fit,
                },
                Term {
                    name: "rank_penalty".into(),
                    value: rank,
                },
            ],
        }
    }

    /// F, the eigenvalues and the components of the current graph for round `t`.
    fn spectrum(&self, t: usize) -> Result<Spectrum, ModelError> {
        #[cfg(test)]
        if self.dense {
            return tests::dense_spectrum(&self.graph, self.c, t, self.authors);
        }
        spectrum(&self.graph, self.c, Some(self.f.view()), self.seed, t)
    }

    /// Whether A has fewer / more than c components (§2.7 step 3): counted exactly, or by the
    /// eigenvalue sums at [`EIGEN_ZERO`] in the dense reference.
    fn compare_components(&self, count: usize) -> (bool, bool) {
        #[cfg(test)]
        if self.authors {
            let fn1: f64 = self.eigenvalues.iter().take(self.c).sum();
            let fn2: f64 = if self.eigenvalues.len() > self.c {
                self.eigenvalues.iter().sum()
            } else {
                f64::INFINITY
            };
            return (fn1 > EIGEN_ZERO, fn1 <= EIGEN_ZERO && fn2 < EIGEN_ZERO);
        }
        (count < self.c, count > self.c)
    }

    /// Whether this is the tests' reference with the authors' rule (never in the model).
    fn authors_rule(&self) -> bool {
        #[cfg(test)]
        if self.authors {
            return true;
        }
        false
    }

    /// Labels from the components when there are c of them, else k-means on F's rows with
    /// `starts` seeded starts (the lowest inertia).
    fn refresh_labels(&mut self, starts: usize) -> Result<(), ModelError> {
        if self.components == self.c {
            // `labels` holds the components already.
            return Ok(());
        }
        let bad = |e: crate::engine::eval::EvalError| ModelError::Diverged {
            iteration: self.iteration,
            what: format!("k-means on F failed: {e}"),
        };
        self.labels = if starts <= 1 {
            kmeans(self.ft.view(), self.c, 100, self.seed).map_err(bad)?.labels
        } else {
            let mut p = KMeansParams::new(self.c);
            p.restarts = starts;
            p.seed = self.seed;
            let rk = repeated_kmeans(self.ft.view(), &p).map_err(bad)?;
            rk.runs[rk.best].labels.clone()
        };
        Ok(())
    }
}

/// Zero the weights below [`WEIGHT_ZERO`] of a row on the simplex and rescale it to sum 1.
fn drop_tiny_weights(row: &mut [f64]) {
    if !row.iter().any(|&w| w > 0.0 && w < WEIGHT_ZERO) {
        return;
    }
    for w in row.iter_mut() {
        if *w < WEIGHT_ZERO {
            *w = 0.0;
        }
    }
    let sum: f64 = row.iter().sum();
    if sum > 0.0 {
        row.iter_mut().for_each(|w| *w /= sum);
    }
}

impl Model for Can {
    fn kind(&self) -> ModelKind {
        super::KIND
    }

    fn step(&mut self) -> Result<Objective, ModelError> {
        if self.done {
            return Ok(self.objective.clone());
        }
        let t = self.iteration + 1;
        let (n, c, k) = (self.f.nrows(), self.c, self.k);
        let mut v = vec![0.0; k];
        let mut theta = vec![0.0; k];
        let mut order = Vec::with_capacity(k);
        let mut new_a = vec![0.0; n * k];
        for i in 0..n {
            let fi = self.f.row(i);
            for (h, vh) in v.iter_mut().enumerate() {
                let j = self.idx[i * k + h];
                let fj = self.f.row(j);
                let df: f64 = (0..c).map(|a| (fi[a] - fj[a]) * (fi[a] - fj[a])).sum();
                *vh = -(self.d[i * k + h] + self.lambda * df) / (2.0 * self.r);
            }
            project_to_simplex(&v, &mut theta, &mut order).ok_or_else(|| ModelError::Diverged {
                iteration: t,
                what: format!("the simplex projection of row {i} got a non-finite entry"),
            })?;
            if !self.authors_rule() {
                drop_tiny_weights(&mut theta);
            }
            new_a[i * k..(i + 1) * k].copy_from_slice(&theta);
        }
        self.a = new_a;
        let rows: Vec<Vec<(usize, f64)>> = (0..n)
            .map(|i| (0..k).map(|h| (self.idx[i * k + h], self.a[i * k + h])).collect())
            .collect();
        self.graph = Arc::new(symmetrise(&rows));
        let sp = self.spectrum(t)?;
        self.eigenvalues = sp.values;
        self.eig_iterations += sp.iterations;
        self.eig_unconverged += usize::from(!sp.converged);
        let (fewer, more) = self.compare_components(sp.count);
        self.components = sp.count;
        self.labels = sp.labels;
        if fewer {
            self.lambda *= 2.0;
            self.doubled += 1;
            self.f = sp.f;
        } else if more {
            self.lambda /= 2.0;
            self.halved += 1;
        } else {
            self.f = sp.f;
            self.done = true;
        }
        self.ft = self.f.t().to_owned();
        self.iteration = t;
        if self.iteration >= self.rounds {
            self.done = true;
        }
        self.refresh_labels(1)?;
        self.objective = self.compute_objective();
        Ok(self.objective.clone())
    }

    fn h(&self) -> ArrayView2<'_, f64> {
        self.ft.view()
    }

    fn w(&self) -> Option<ArrayView2<'_, f64>> {
        None
    }

    fn objective(&self) -> Objective {
        self.objective.clone()
    }

    fn finish(&mut self) {
        // The labels of the final graph, k-means with several starts if it is not c pieces.
        let _ = self.refresh_labels(FINAL_KMEANS_STARTS);
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = vec![format!(
            "CAN: {} round(s), λ doubled {} and halved {} time(s) (final λ = {:.4e}, r = {:.4e}); \
             the graph has {} connected component(s) for c = {}; {} LOBPCG iteration(s) in all",
            self.iteration,
            self.doubled,
            self.halved,
            self.lambda,
            self.r,
            self.components,
            self.c,
            self.eig_iterations
        )];
        if self.eig_unconverged > 0 {
            notes.push(format!(
                "the eigenvectors of {} round(s) missed the tolerance after {} LOBPCG iterations \
                 (their Ritz vectors were used)",
                self.eig_unconverged,
                super::spectral::EIG_MAX_ITER
            ));
        }
        if self.components != self.c {
            notes.push(format!(
                "CAN did not reach exactly {} components ({} found): the labels are k-means \
                 ({} starts) on the rows of F (docs/models.md §2.7 step 4)",
                self.c, self.components, FINAL_KMEANS_STARTS
            ));
        }
        notes
    }

    fn outputs(&self) -> Outputs {
        Outputs {
            assignments: Some(self.labels.clone()),
            graph: Some(Arc::clone(&self.graph)),
            ..Outputs::default()
        }
    }

    fn has_converged(&self) -> bool {
        self.done
    }

}

#[cfg(test)]
#[path = "tests.rs"]
pub(crate) mod tests;
