//! The t-STE iteration of docs/models.md §3.6 (see the module above for the math): the cost and
//! its gradient in one pass over the triplets, the gradient step and the step-size schedule.

use faer::traits::pulp;
use super::params::TsteParams;
use crate::engine::constraints::Triplet;
use crate::engine::linalg::special::sigmoid_and_softplus;
use crate::engine::models::{Model, ModelError, ModelKind, ModelSpec, Objective, Term};
use ndarray::{Array2, ArrayView2};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Initial step size η (3.68).
pub const ETA_START: f64 = 2.0;
/// η grows by this factor after a step that lowered the cost by more than [`MIN_DECREASE`].
pub const ETA_GROWTH: f64 = 1.01;
/// η shrinks by this factor after any other step (a failure).
pub const ETA_SHRINK: f64 = 0.5;
/// A step must lower the cost by more than this (absolute) to count as a decrease.
pub const MIN_DECREASE: f64 = 1e-7;
/// Failures in a row that end the fit.
pub const MAX_FAILURES: usize = 5;
/// Standard deviation of the seeded start (3.66).
pub const START_SCALE: f64 = 1e-4;

/// The two terms of the cost (3.63) of one embedding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    /// `Σ_τ −ln p_τ`.
    pub loss: f64,
    /// `λ Σ_{i∈A} ‖y_i‖²`.
    pub l2: f64,
}

impl Cost {
    pub fn total(self) -> f64 {
        self.loss + self.l2
    }

    fn objective(self) -> Objective {
        Objective {
            total: self.total(),
            terms: vec![
                Term {
                    name: "triplet_loss".into(),
                    value: self.loss,
                },
                Term {
                    name: "l2".into(),
                    value: self.l2,
                },
            ],
        }
    }
}

/// t-distributed stochastic triplet embedding (docs/models.md §3.6).
///
/// One [`Model::step`] is the gradient step (3.67) with the gradient of the current Y, then
/// the cost and gradient of the new Y in one pass over the triplets (3.64)–(3.65), then the
/// schedule (3.68) and the best-so-far bookkeeping. The embedding is stored sample by sample
/// (n×k, row i = y_i), so a triplet reads three contiguous rows; [`Model::h`] is its
/// transpose, a view.
pub struct Tste {
    params: TsteParams,
    /// Triplets as `[i, j, q]`, 32-bit (12 bytes each: the pass streams them).
    triplets: Vec<[u32; 3]>,
    /// The samples that occur in some triplet, ascending (the set A of (3.63)).
    active: Vec<u32>,
    /// Whether the start came from `spec.init` (for the notes).
    warm: bool,
    y: Array2<f64>,    // n×k, the current embedding
    grad: Array2<f64>, // n×k, ∇C at y
    cost: Cost,
    eta: f64,
    /// Steps in a row that did not lower the cost by more than [`MIN_DECREASE`].
    failures: usize,
    /// Steps that were failures, in all.
    total_failures: usize,
    best: Array2<f64>,
    best_cost: Cost,
    /// The iteration the best Y is from (0: the start).
    best_iteration: usize,
    /// `n / |T|`, the factor of η in (3.67).
    step_scale: f64,
    iteration: usize,
    /// Set by [`Model::finish`] when it replaced the last iterate by a better earlier one: the
    /// last iteration and its cost.
    replaced_last: Option<(usize, f64)>,
}

impl Tste {
    /// t-STE on n samples with these triplets, from the spec's warm start (H, k×n) or the
    /// seeded start (3.66). Refuses triplets that are not three distinct samples below n.
    pub fn new(
        n: usize,
        spec: &ModelSpec,
        params: TsteParams,
        triplets: &[Triplet],
    ) -> Result<Self, ModelError> {
        let k = spec.k;
        let invalid = |why: String| ModelError::InvalidParam {
            model: "t-STE",
            name: "triplets".into(),
            why,
        };
        if triplets.is_empty() {
            return Err(ModelError::MissingSideInfo {
                model: "t-STE",
                what: "at least one triplet (docs/models.md §3.6)".into(),
            });
        }
        if u32::try_from(n).is_err() {
            return Err(invalid(format!(
                "cannot index n = {n} samples (at most {})",
                u32::MAX
            )));
        }
        if let Some(bad) = triplets
            .iter()
            .find(|t| t.i.max(t.j).max(t.q) >= n || t.i == t.j || t.i == t.q || t.j == t.q)
        {
            return Err(invalid(format!(
                "contain {bad}, which is not three distinct samples below n = {n}"
            )));
        }
        // Indices fit in u32: checked against n above.
        let triplets: Vec<[u32; 3]> = triplets
            .iter()
            .map(|t| [t.i as u32, t.j as u32, t.q as u32])
            .collect();
        let mut seen = vec![false; n];
        for t in &triplets {
            for &s in t {
                seen[s as usize] = true;
            }
        }
        let active = (0..n as u32).filter(|&s| seen[s as usize]).collect();
        let (y, warm) = match &spec.init {
            // `ModelSpec::validate` checked the shape on the build path; direct callers too.
            Some(init) if init.h.dim() != (k, n) => {
                return Err(ModelError::InitShape {
                    file: init.source.clone(),
                    what: "H",
                    found: format!("{}×{}", init.h.nrows(), init.h.ncols()),
                    expected: format!("{k}×{n}"),
                    why: format!("k = {k} rows by the data's {n} samples"),
                });
            }
            Some(init) => (init.h.t().as_standard_layout().into_owned(), true),
            None => (gaussian_start(n, k, spec.seed), false),
        };
        let mut s = Self {
            params,
            step_scale: n as f64 / triplets.len() as f64,
            triplets,
            active,
            warm,
            grad: Array2::zeros((n, k)),
            best: y.clone(),
            y,
            cost: Cost { loss: 0.0, l2: 0.0 },
            eta: ETA_START,
            failures: 0,
            total_failures: 0,
            best_cost: Cost { loss: 0.0, l2: 0.0 },
            best_iteration: 0,
            iteration: 0,
            replaced_last: None,
        };
        s.evaluate();
        s.best_cost = s.cost;
        Ok(s)
    }

    /// Cost and gradient of the current Y.
    fn evaluate(&mut self) {
        let k = self.y.ncols();
        // Both arrays are built in standard layout and never re-strided.
        if let (Some(y), Some(g)) = (self.y.as_slice(), self.grad.as_slice_mut()) {
            self.cost = cost_and_gradient(y, k, &self.triplets, &self.active, &self.params, g);
        } else {
            self.cost = Cost {
                loss: f64::NAN,
                l2: f64::NAN,
            };
        }
    }

    /// The step size the next step will use.
    pub fn eta(&self) -> f64 {
        self.eta
    }

    /// Failures in a row so far.
    pub fn failures(&self) -> usize {
        self.failures
    }

    /// The samples in no triplet.
    pub fn untouched(&self) -> usize {
        self.y.nrows() - self.active.len()
    }

    /// The lowest cost seen and the iteration it is from (0: the start).
    pub fn best(&self) -> (Cost, usize) {
        (self.best_cost, self.best_iteration)
    }
}

/// `y ← y − c g` entry by entry as one FMA, dispatched like [`cost_and_gradient`].
struct Step<'a> {
    y: &'a mut [f64],
    g: &'a [f64],
    c: f64,
}

impl pulp::WithSimd for Step<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        for (y, &g) in self.y.iter_mut().zip(self.g) {
            *y = (-self.c).mul_add(g, *y);
        }
    }
}

/// The seeded start (3.66): n×k, entry (i, a) = 10⁻⁴ z with z standard normal, sample by
/// sample; the normals come in pairs from Box–Muller, `√(−2 ln u₁) (cos, sin)(2π u₂)`, with
/// u₁ = 1 − U[0, 1) ∈ (0, 1] so the logarithm is finite.
fn gaussian_start(n: usize, k: usize, seed: u64) -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut z = Vec::with_capacity(n * k + 1);
    while z.len() < n * k {
        let u1 = 1.0 - rng.r#gen::<f64>();
        let u2: f64 = rng.r#gen();
        let r = (-2.0 * u1.ln()).sqrt();
        let (s, c) = (std::f64::consts::TAU * u2).sin_cos();
        z.push(START_SCALE * r * c);
        z.push(START_SCALE * r * s);
    }
    z.truncate(n * k);
    Array2::from_shape_vec((n, k), z).unwrap_or_else(|_| Array2::zeros((n, k)))
}

/// The cost (3.63) of the embedding `y` (n×k row-major, row i = y_i) and its gradient into
/// `grad` (same shape, overwritten), in one pass over the triplets in their order, then the L2
/// term over `active` in ascending order (skipped when λ = 0).
///
/// Per triplet: the two squared distances, `a_τ` by (3.64), `σ(a_τ)` and `sp(a_τ)` from one
/// exponential (`linalg::special`), the two kernel weights `u`, and the three gradient rows.
/// A non-finite coordinate makes a distance, hence `a_τ` and the loss, non-finite (∞ − ∞ or
/// NaN), so the fit loop sees a non-finite cost.
pub(crate) fn cost_and_gradient(
    y: &[f64],
    k: usize,
    triplets: &[[u32; 3]],
    active: &[u32],
    p: &TsteParams,
    grad: &mut [f64],
) -> Cost {
    pulp::Arch::new().dispatch(CostAndGradient {
        y,
        k,
        triplets,
        active,
        p,
        grad,
    })
}

/// [`cost_and_gradient`] as a pulp job: compiled for the CPU's instruction set, so the
/// `mul_add`s of the stable exponential and logarithm ([`sigmoid_and_softplus`]) are FMA
/// instructions and not calls into the software `fma` (which took a quarter of the
/// iteration; docs/performance.md, "The baselines' own passes"). The same operations, the same bits.
struct CostAndGradient<'a> {
    y: &'a [f64],
    k: usize,
    triplets: &'a [[u32; 3]],
    active: &'a [u32],
    p: &'a TsteParams,
    grad: &'a mut [f64],
}

impl pulp::WithSimd for CostAndGradient<'_> {
    type Output = Cost;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Cost {
        let CostAndGradient {
            y,
            k,
            triplets,
            active,
            p,
            grad,
        } = self;
        cost_and_gradient_body(y, k, triplets, active, p, grad)
    }
}

/// The pass itself (inlined into the dispatched job).
#[inline(always)]
fn cost_and_gradient_body(
    y: &[f64],
    k: usize,
    triplets: &[[u32; 3]],
    active: &[u32],
    p: &TsteParams,
    grad: &mut [f64],
) -> Cost {
    let alpha = p.dof;
    let half_power = (alpha + 1.0) / 2.0;
    let gamma = (alpha + 1.0) / alpha;
    grad.fill(0.0);
    let mut loss = 0.0;
    for &[i, j, q] in triplets {
        let (bi, bj, bq) = (i as usize * k, j as usize * k, q as usize * k);
        let (yi, yj, yq) = (&y[bi..bi + k], &y[bj..bj + k], &y[bq..bq + k]);
        let (mut dij, mut diq) = (0.0, 0.0);
        for c in 0..k {
            let (a, b) = (yi[c] - yj[c], yi[c] - yq[c]);
            dij += a * a;
            diq += b * b;
        }
        let a = half_power * ((dij - diq) / (alpha + diq)).ln_1p();
        let (s, sp) = sigmoid_and_softplus(a);
        loss += sp;
        let cj = gamma * s * (alpha / (alpha + dij));
        let cq = gamma * s * (alpha / (alpha + diq));
        for c in 0..k {
            let (a, b) = (yi[c] - yj[c], yi[c] - yq[c]);
            grad[bi + c] += cj * a - cq * b;
            grad[bj + c] -= cj * a;
            grad[bq + c] += cq * b;
        }
    }
    let mut l2 = 0.0;
    if p.lambda != 0.0 {
        let mut sq = 0.0;
        for &s in active {
            let b = s as usize * k;
            for c in 0..k {
                let v = y[b + c];
                sq += v * v;
                grad[b + c] += 2.0 * p.lambda * v;
            }
        }
        l2 = p.lambda * sq;
    }
    Cost { loss, l2 }
}

impl Model for Tste {
    fn kind(&self) -> ModelKind {
        super::KIND
    }

    fn step(&mut self) -> Result<Objective, ModelError> {
        // (3.67): the step with the gradient of the current Y (samples in no triplet have a
        // zero gradient and stay exactly where they are).
        let c = self.eta * self.step_scale;
        if let (Some(y), Some(g)) = (self.y.as_slice_mut(), self.grad.as_slice()) {
            pulp::Arch::new().dispatch(Step { y, g, c });
        } else {
            self.y
                .zip_mut_with(&self.grad, |y, &g| *y = (-c).mul_add(g, *y));
        }
        let before = self.cost.total();
        self.evaluate();
        self.iteration += 1;
        let after = self.cost.total();
        // (3.68); a NaN cost counts as a failure (and the fit loop stops on it).
        if before - after > MIN_DECREASE {
            self.eta *= ETA_GROWTH;
            self.failures = 0;
        } else {
            self.eta *= ETA_SHRINK;
            self.failures += 1;
            self.total_failures += 1;
        }
        if after < self.best_cost.total() {
            self.best.assign(&self.y);
            self.best_cost = self.cost;
            self.best_iteration = self.iteration;
        }
        Ok(self.objective())
    }

    fn h(&self) -> ArrayView2<'_, f64> {
        self.y.t()
    }

    fn w(&self) -> Option<ArrayView2<'_, f64>> {
        None
    }

    fn objective(&self) -> Objective {
        self.cost.objective()
    }

    /// Five failures in a row (3.68).
    fn has_converged(&self) -> bool {
        self.failures >= MAX_FAILURES
    }

    /// Return the best Y seen (docs/models.md §3.6, step 6): when an earlier iterate (or the
    /// start) had a lower cost than the last, it becomes the result.
    fn finish(&mut self) {
        if self.best_iteration == self.iteration || self.replaced_last.is_some() {
            return;
        }
        self.replaced_last = Some((self.iteration, self.cost.total()));
        self.y.assign(&self.best);
        self.evaluate();
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let untouched = self.untouched();
        if untouched > 0 {
            notes.push(format!(
                "{untouched} of {} samples are in no triplet and keep their {} start (t-STE \
                 sees only the triplets; docs/models.md §3.6)",
                self.y.nrows(),
                if self.warm { "given" } else { "random" }
            ));
        }
        if let Some((last, cost)) = self.replaced_last {
            notes.push(format!(
                "returned the best embedding seen, from iteration {} (cost {:.6e}), instead of \
                 the last one (iteration {last}, cost {cost:.6e})",
                self.best_iteration,
                self.best_cost.total()
            ));
        }
        if self.failures >= MAX_FAILURES {
            notes.push(format!(
                "stopped after {MAX_FAILURES} steps in a row that did not lower the cost by \
                 more than {MIN_DECREASE:e} (step size η halved to {:.3e}; {} such steps in \
                 all)",
                self.eta, self.total_failures
            ));
        }
        notes
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
