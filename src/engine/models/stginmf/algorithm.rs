//! 2-STGINMF's iteration (docs/models.md §7): one [`Model::step`] is one ALS step of the
//! current stage; a round's similarities are built at the start of its first step, so that a
//! cancel during the build leaves the previous iterate untouched.

use super::KIND;
use super::params::{Priors, SimKind, StginmfParams};
use super::similarity::{
    Points, Sim, dual_sparse, relative, row_sparse, sigma, symmetrise_max, train_matrix,
};
use crate::engine::data::Dataset;
use crate::engine::linalg::{Csr, Op};
use crate::engine::models::{Outputs, 
    EPS_DIV, Export, Interrupt, LabelOrigin, Model, ModelError, ModelKind, Objective, Phase,
    Predictions, Term,
};
use ndarray::{Array2, ArrayView2, Zip};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Names of the objective terms, stage 1 then stage 2 (docs/models.md §7.2, §7.3).
pub const TERM_NAMES: [&str; 6] = [
    "S fit",
    "label reward",
    "V sparsity",
    "P fit",
    "K fit",
    "U sparsity",
];

/// Spread ρ of the random part of the initial V (docs/models.md §7.2 init): `V = Y_L + ρ·U[0, 1)`.
pub const INIT_SPREAD: f64 = 0.5;

/// A class column (training row) of V whose sum is below this share of the mean counts as
/// collapsed ([`Stginmf::restart_if_collapsed`]).
const COLLAPSED: f64 = 1e-3;

/// Relative ridge of the ALS solves, ε_r = RIDGE·Tr(G)/k (docs/models.md §7.2).
const RIDGE: f64 = 1e-10;

/// A step whose factor (V or U) comes out more than this many times larger in Frobenius norm
/// than it went in has blown up: the Gram matrix was nearly singular (few labels per class, e.g.
/// one per class on ORL makes V square), and the fit terms, quartic in the factor, would jump by
/// 10⁴ or more. The step is solved again with the ridge raised ([`RIDGE_STEP`]).
const BLOWUP: f64 = 10.0;

/// Factor by which the relative ridge is raised after a blown-up step, up to [`RIDGE_MAX`].
const RIDGE_STEP: f64 = 1e3;

/// Largest relative ridge the blow-up guard uses (then the step is taken as it is).
const RIDGE_MAX: f64 = 0.1;

/// The matrices of one round: training and test samples, S, Y_L, P, K and the factors.
struct Round {
    /// Sample indices of the training set (given and self-trained) and of the test set.
    train: Vec<usize>,
    test: Vec<usize>,
    /// The training labels, in the order of `train`.
    labels: Vec<usize>,
    /// One-hot training labels, n_L×k.
    y: Array2<f64>,
    s: Array2<f64>,
    s_sq: f64,
    p: Csr,
    p_sq: f64,
    kk: Csr,
    kk_sq: f64,
    /// Per test sample, the position in `train` of its most similar training sample.
    nearest: Vec<usize>,
    /// CMN priors per class.
    priors: Vec<f64>,
    v: Array2<f64>,
    u: Array2<f64>,
    sigma: f64,
}

/// Where the fit is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// The next step builds round `0` matrices, then runs stage 1.
    Build,
    One,
    Two,
    Done,
}

/// The 2-STGINMF classifier ([`Model`]).
pub struct Stginmf {
    data: Arc<Dataset>,
    k: usize,
    params: StginmfParams,
    rng: ChaCha8Rng,
    given_frac: Vec<f64>,
    /// The training label of every sample (given or self-trained), `None` for test samples.
    label: Vec<Option<usize>>,
    origin: Vec<LabelOrigin>,
    /// Confidence with which a self-trained sample joined the training set.
    joined_conf: Vec<f64>,
    round_no: usize,
    round: Round,
    stage: Stage,
    iter: usize,
    last_phase: Phase,
    terms: [f64; 6],
    h: Array2<f64>,
    preds: Predictions,
    notes: Vec<String>,
    interrupt: Interrupt,
    /// S·V of the current V, kept from the objective for the next stage-1 step (S is the
    /// one dense n_L×n_L matrix: its product is the cost of a step, docs/models.md §7.6).
    sv: Option<Array2<f64>>,
    /// Relative ridge of the current stage's solves ([`RIDGE`], raised by the blow-up guard).
    ridge: f64,
    /// Steps that blew up and were solved again with a larger ridge, and the largest ridge.
    blowups: usize,
    ridge_used: f64,
    /// Stage-1 steps of the current round, restarts included (a stage with its restarts is
    /// held to 2.25 × `stage_iters`, [`Stginmf::restart_if_collapsed`]).
    stage1_steps: usize,
}

impl Stginmf {
    /// A model on `data` (m×n) with the partial labels `known` (length n or empty) and k
    /// classes. Refuses without any known label, or with only one class among them, saying
    /// how to give labels; refuses a label ≥ k.
    pub fn new(
        data: Arc<Dataset>,
        known: &[Option<usize>],
        k: usize,
        seed: u64,
        params: StginmfParams,
    ) -> Result<Self, ModelError> {
        let n = data.n();
        let label: Vec<Option<usize>> = (0..n).map(|i| known.get(i).copied().flatten()).collect();
        let how = "paint labels in Label mode or reveal a share of them in the app, or on the \
                   command line --reveal P or --known-labels FILE";
        if let Some((i, c)) = label.iter().enumerate().find_map(|(i, c)| c.filter(|&c| c >= k).map(|c| (i, c))) {
            return Err(ModelError::BadData {
                why: format!(
                    "sample {} has the known label {c}, but k = {k} classes (labels 0..{}); \
                     set k to the number of classes",
                    i + 1,
                    k.saturating_sub(1)
                ),
            });
        }
        let mut counts = vec![0usize; k];
        for c in label.iter().flatten() {
            counts[*c] += 1;
        }
        let n_l: usize = counts.iter().sum();
        if n_l == 0 {
            return Err(ModelError::MissingSideInfo {
                model: KIND.label(),
                what: format!(
                    "some known labels to learn from (docs/models.md §7): {how}"
                ),
            });
        }
        if counts.iter().filter(|&&c| c > 0).count() < 2 {
            return Err(ModelError::MissingSideInfo {
                model: KIND.label(),
                what: format!(
                    "known labels of at least two classes (all {n_l} given labels are of one \
                     class; docs/models.md §7): {how}"
                ),
            });
        }
        let given_frac = counts.iter().map(|&c| c as f64 / n_l as f64).collect();
        let origin = label
            .iter()
            .map(|c| {
                if c.is_some() {
                    LabelOrigin::Given
                } else {
                    LabelOrigin::Predicted
                }
            })
            .collect();
        let mut model = Self {
            k,
            params,
            rng: ChaCha8Rng::seed_from_u64(seed),
            given_frac,
            origin,
            joined_conf: vec![1.0; n],
            round_no: 0,
            round: Round::empty(k),
            stage: Stage::Build,
            iter: 0,
            last_phase: Phase { round: 0, stage: 1 },
            terms: [0.0; 6],
            h: Array2::zeros((k, n)),
            preds: Predictions {
                labels: vec![0; n],
                confidence: vec![0.0; n],
                origin: Vec::new(),
            },
            notes: Vec::new(),
            interrupt: Interrupt::new(),
            sv: None,
            ridge: RIDGE,
            blowups: 0,
            ridge_used: RIDGE,
            stage1_steps: 0,
            label,
            data,
        };
        // The first round's matrices now, so that the initial objective is that of the
        // initial V (nothing to interrupt yet).
        model.start_round()?;
        Ok(model)
    }

    /// Build the current round's matrices and its initial V (docs/models.md §7.1, §7.2 init),
    /// then make stage 1 current. Interruptible; nothing changes when interrupted.
    fn start_round(&mut self) -> Result<(), ModelError> {
        let stop_flag = self.interrupt.clone();
        let stop = move || stop_flag.is_raised();
        let round = build_round(
            &self.data,
            &self.label,
            &self.given_frac,
            self.k,
            &self.params,
            &mut self.rng,
            &stop,
        )?;
        if round.sigma_fallback() && self.notes.is_empty() {
            self.notes.push(format!(
                "σ of the Gaussian similarity fell back to {:.3e}: training samples of \
                 different classes coincide (docs/models.md §7.1)",
                round.sigma
            ));
        }
        self.round = round;
        self.stage = Stage::One;
        self.iter = 0;
        self.stage1_steps = 0;
        self.ridge = RIDGE;
        self.refresh_stage1_terms();
        self.refresh_stage2_terms();
        self.refresh_outputs();
        Ok(())
    }

    fn refresh_stage1_terms(&mut self) {
        let r = &self.round;
        let sv = s_times(&r.s, &r.v);
        let g = r.v.t().dot(&r.v);
        let fit = r.s_sq - 2.0 * (&sv * &r.v).sum() + g.iter().map(|x| x * x).sum::<f64>();
        self.terms[0] = fit.max(0.0);
        self.terms[1] = -self.params.lambda1 * (&r.y * &r.v).sum();
        self.terms[2] = self.params.lambda2 * r.v.sum();
        self.sv = Some(sv);
    }

    fn refresh_stage2_terms(&mut self) {
        let r = &self.round;
        let gv = r.v.t().dot(&r.v);
        let gu = r.u.t().dot(&r.u);
        let cross_p = sparse_inner(&r.p, &r.u, &r.v);
        let cross_k = sparse_inner(&r.kk, &r.u, &r.u);
        let uvuv = (&gu * &gv).sum();
        let uuuu = gu.iter().map(|x| x * x).sum::<f64>();
        self.terms[3] = (r.p_sq - 2.0 * cross_p + uvuv).max(0.0);
        self.terms[4] = (r.kk_sq - 2.0 * cross_k + uuuu).max(0.0);
        self.terms[5] = self.params.lambda3 * r.u.sum();
    }

    /// One stage-1 ALS step (docs/models.md §7.2): `V ← [(SV + λ1 Y_L − λ2 E_L)(VᵀV + ε_r
    /// I)⁻¹]_+`, damped by default; returns the relative change.
    fn stage1_step(&mut self) -> f64 {
        let p = self.params;
        let cached = self.sv.take();
        let r = &mut self.round;
        let mut rhs = cached.unwrap_or_else(|| s_times(&r.s, &r.v));
        Zip::from(&mut rhs)
            .and(&r.y)
            .for_each(|a, &y| *a += p.lambda1 * y - p.lambda2);
        let g = r.v.t().dot(&r.v);
        let (new, blew) = guarded_solve(&rhs, &g, &r.v, &mut self.ridge);
        self.note_blowup(blew);
        update(&mut self.round.v, new, p.damping)
    }

    /// Count a step the guard solved again ([`guarded_solve`]), for the run's note.
    fn note_blowup(&mut self, blew: bool) {
        if blew {
            self.blowups += 1;
            self.ridge_used = self.ridge_used.max(self.ridge);
        }
    }

    /// The collapse guard of stage 1 [C] (docs/models.md §7.2): when a class that has
    /// training samples ends stage 1 with an all-zero column of V, or a training sample with
    /// an all-zero row (up to [`COLLAPSED`]), the l1 term λ2·E_L has outweighed S·V (few labels per class: S's row
    /// sums are then small next to λ2). λ2 is halved (set to 0 below 1e-3), V is drawn again
    /// and stage 1 restarts; the note says so. Returns whether it restarted.
    fn restart_if_collapsed(&mut self) -> bool {
        let r = &self.round;
        let mut present = vec![false; self.k];
        for &c in &r.labels {
            present[c] = true;
        }
        // "All zero" up to damping, which halves a dying entry each step instead of zeroing
        // it: below COLLAPSED times the mean column (row) sum.
        let total = r.v.sum();
        let n_present = present.iter().filter(|&&p| p).count().max(1) as f64;
        let col_floor = COLLAPSED * total / n_present;
        let row_floor = COLLAPSED * total / r.labels.len().max(1) as f64;
        let dead_col = (0..self.k).any(|a| present[a] && r.v.column(a).sum() <= col_floor);
        let dead_row = r.v.rows().into_iter().any(|row| row.sum() <= row_floor);
        if !(dead_col || dead_row) || self.params.lambda2 == 0.0 {
            return false;
        }
        let from = self.params.lambda2;
        // Halving restarts while the stage is young; after a quarter of `stage_iters` one last
        // restart without the l1 term (which cannot collapse V), so that stage 1 with its
        // restarts stays within 2.25 × `stage_iters` (450 at the defaults, under the loop's
        // per-phase cap of 500).
        self.params.lambda2 = if from > 1e-3 && self.stage1_steps < self.params.stage_iters / 4 {
            from / 2.0
        } else {
            0.0
        };
        let v = init_v(&r.labels, self.k, r.s_sq, &mut self.rng);
        self.round.v = v;
        self.sv = None;
        self.iter = 0;
        self.ridge = RIDGE;
        let note = format!(
            "stage 1 left a class without confidence at λ2 = {from}; λ2 lowered to {} and \
             stage 1 restarted (few labels per class, docs/models.md §7.2)",
            self.params.lambda2
        );
        if let Some(last) = self.notes.iter_mut().find(|n| n.starts_with("stage 1 left")) {
            *last = note;
        } else {
            self.notes.push(note);
        }
        true
    }

    /// One stage-2 ALS step (docs/models.md §7.3): `U ← [(PV + KU − λ3 E_T)(VᵀV + UᵀU + ε_r
    /// I)⁻¹]_+`, damped by default; returns the relative change.
    fn stage2_step(&mut self) -> f64 {
        let p = self.params;
        let r = &mut self.round;
        let (nt, k) = r.u.dim();
        let mut rhs = Array2::zeros((nt, k));
        r.p.mul_dense_into(r.v.view(), &mut rhs.view_mut());
        let mut ku = Array2::zeros((nt, k));
        r.kk.mul_dense_into(r.u.view(), &mut ku.view_mut());
        rhs += &ku;
        rhs.mapv_inplace(|a| a - p.lambda3);
        let g = r.v.t().dot(&r.v) + r.u.t().dot(&r.u);
        let (new, blew) = guarded_solve(&rhs, &g, &r.u, &mut self.ridge);
        self.note_blowup(blew);
        update(&mut self.round.u, new, p.damping)
    }

    /// Draw U for stage 2 (random nonnegative [C]), scaled so that ‖UVᵀ‖_F = ‖P‖_F (or
    /// ‖UUᵀ‖_F = ‖K‖_F when P is empty), the scale the rule's fixed point has.
    fn init_u(&mut self) {
        let r = &mut self.round;
        let (nt, k) = (r.test.len(), self.k);
        let mut u = Array2::from_shape_simple_fn((nt, k), || self.rng.r#gen::<f64>());
        let gu = u.t().dot(&u);
        let gv = r.v.t().dot(&r.v);
        let uv = (&gu * &gv).sum().max(0.0).sqrt();
        let uu = gu.iter().map(|x| x * x).sum::<f64>().sqrt();
        let c = if r.p_sq > 0.0 && uv > 0.0 {
            r.p_sq.sqrt() / uv
        } else if r.kk_sq > 0.0 && uu > 0.0 {
            (r.kk_sq.sqrt() / uu).sqrt()
        } else {
            1.0
        };
        u.mapv_inplace(|x| x * c);
        r.u = u;
    }

    /// CMN (docs/models.md §7.4) of the current U: each column scaled to its prior.
    pub fn cmn(&self) -> Array2<f64> {
        cmn(&self.round.u, &self.round.priors)
    }

    /// H (confidences per sample, k×n) and the predictions from the current V and U.
    fn refresh_outputs(&mut self) {
        let n = self.data.n();
        let r = &self.round;
        let mut labels = vec![0usize; n];
        let mut conf = vec![0.0f64; n];
        let mut h = Array2::zeros((self.k, n));
        for (row, &i) in r.train.iter().enumerate() {
            let v = r.v.row(row);
            let sum: f64 = v.sum();
            for a in 0..self.k {
                h[[a, i]] = if sum > 0.0 { v[a] / sum } else { 0.0 };
            }
            labels[i] = self.label[i].unwrap_or(0);
            conf[i] = self.joined_conf[i];
        }
        if matches!(self.stage, Stage::Two | Stage::Done) {
            let c = cmn(&r.u, &r.priors);
            for (t, &i) in r.test.iter().enumerate() {
                let (lab, cf, row) = confidence_row(c.row(t).as_slice().unwrap_or(&[]));
                if let Some(row) = row {
                    labels[i] = lab;
                    conf[i] = cf;
                    for a in 0..self.k {
                        h[[a, i]] = row[a];
                    }
                } else {
                    labels[i] = self.label[r.train[r.nearest[t]]].unwrap_or(0);
                    conf[i] = 0.0;
                }
            }
        } else if self.round_no > 0 && self.preds.labels.len() == n {
            // Stage 1 of a self-training round: the previous round's predictions stand.
            for &i in &r.test {
                labels[i] = self.preds.labels[i];
                conf[i] = self.preds.confidence[i];
            }
        } else {
            // Before the first stage 2: the label of the most similar training sample, no
            // confidence.
            for (t, &i) in r.test.iter().enumerate() {
                labels[i] = self.label[r.train[r.nearest[t]]].unwrap_or(0);
                conf[i] = 0.0;
            }
        }
        self.h = h;
        self.preds = Predictions {
            labels,
            confidence: conf,
            origin: self.origin.clone(),
        };
    }

    /// The end of a round's stage 2: move the test samples above μ into the training set
    /// (docs/models.md §7.5), or finish.
    fn end_round(&mut self) {
        self.refresh_outputs();
        if self.round_no >= self.params.rounds {
            self.stage = Stage::Done;
            return;
        }
        let mut moved = 0;
        for &i in &self.round.test {
            if self.preds.confidence[i] > self.params.mu {
                self.label[i] = Some(self.preds.labels[i]);
                self.origin[i] = LabelOrigin::SelfTrained {
                    round: self.round_no + 1,
                };
                self.joined_conf[i] = self.preds.confidence[i];
                moved += 1;
            }
        }
        if moved == 0 || moved == self.round.test.len() {
            self.stage = Stage::Done;
            self.preds.origin = self.origin.clone();
            return;
        }
        self.round_no += 1;
        self.stage = Stage::Build;
        self.preds.origin = self.origin.clone();
    }

    fn objective_now(&self, stage: usize) -> Objective {
        let t = &self.terms;
        let total = if stage == 1 {
            t[0] + t[1] + t[2]
        } else {
            t[3] + t[4] + t[5]
        };
        Objective {
            total,
            terms: TERM_NAMES
                .iter()
                .zip(t)
                .map(|(name, &value)| Term {
                    name: (*name).to_owned(),
                    value,
                })
                .collect(),
        }
    }

    /// The current training-sample confidences V (n_L×k) and their sample indices.
    pub fn v(&self) -> (ArrayView2<'_, f64>, &[usize]) {
        (self.round.v.view(), &self.round.train)
    }

    /// The current test-sample confidences U (n_T×k, before CMN) and their sample indices.
    pub fn u(&self) -> (ArrayView2<'_, f64>, &[usize]) {
        (self.round.u.view(), &self.round.test)
    }

    /// The self-training round in progress (0 for the first pass).
    pub fn round(&self) -> usize {
        self.round_no
    }

    /// The current P, K and S (for tests and the docs' cost figures).
    pub fn similarities(&self) -> (&Array2<f64>, &Csr, &Csr) {
        (&self.round.s, &self.round.p, &self.round.kk)
    }

    /// The CMN priors of the current round.
    pub fn priors(&self) -> &[f64] {
        &self.round.priors
    }
}

impl Round {
    fn empty(k: usize) -> Self {
        Self {
            train: Vec::new(),
            test: Vec::new(),
            labels: Vec::new(),
            y: Array2::zeros((0, k)),
            s: Array2::zeros((0, 0)),
            s_sq: 0.0,
            p: Csr::from_entries(0, 0, &[]),
            p_sq: 0.0,
            kk: Csr::from_entries(0, 0, &[]),
            kk_sq: 0.0,
            nearest: Vec::new(),
            priors: vec![0.0; k],
            v: Array2::zeros((0, k)),
            u: Array2::zeros((0, k)),
            sigma: 1.0,
        }
    }

    fn sigma_fallback(&self) -> bool {
        self.sigma.is_nan()
    }
}

/// The matrices and initial V of a round from the current training labels.
fn build_round(
    data: &Dataset,
    label: &[Option<usize>],
    given_frac: &[f64],
    k: usize,
    params: &StginmfParams,
    rng: &mut ChaCha8Rng,
    stop: &dyn Fn() -> bool,
) -> Result<Round, ModelError> {
    let x = data.x.view();
    let train: Vec<usize> = (0..label.len()).filter(|&i| label[i].is_some()).collect();
    let test: Vec<usize> = (0..label.len()).filter(|&i| label[i].is_none()).collect();
    let labels: Vec<usize> = train.iter().filter_map(|&i| label[i]).collect();
    let (n_l, n_t) = (train.len(), test.len());
    let tr = Points::gather(x, &train);
    let te = Points::gather(x, &test);
    let (sig, fell_back) = match params.similarity {
        SimKind::Gaussian => sigma(&tr, &labels, k, params.sigma),
        SimKind::Cosine => (1.0, false),
    };
    let sim = Sim {
        kind: params.similarity,
        sigma: sig,
    };
    let s = train_matrix(&tr, &labels, &sim, params.a);
    let s_sq: f64 = s.iter().map(|v| v * v).sum();
    let mut y = Array2::zeros((n_l, k));
    for (r, &c) in labels.iter().enumerate() {
        y[[r, c]] = 1.0;
    }
    // P: test–train, relative by row, dual-sparse; the nearest training sample on the way.
    let nearest: Vec<AtomicUsize> = (0..n_t).map(|_| AtomicUsize::new(0)).collect();
    let p = dual_sparse(
        n_t,
        n_l,
        params.n_p,
        &|r0, r1| {
            let mut b = sim.block(&te, r0, r1, &tr);
            for (r, mut row) in b.rows_mut().into_iter().enumerate() {
                nearest[r0 + r].store(argmax(row.iter().copied()), Ordering::Relaxed);
                if let Some(sl) = row.as_slice_mut() {
                    relative(sl, None);
                }
            }
            b
        },
        stop,
    )?;
    // K: test–test without the diagonal, relative, row-sparse, symmetrised.
    let nearest: Vec<usize> = nearest.into_iter().map(AtomicUsize::into_inner).collect();
    let kk = row_sparse(
        n_t,
        test_neighbours(params.n_k, label.len(), given_frac),
        &|r0, r1| {
            let mut b = sim.block(&te, r0, r1, &te);
            for (r, mut row) in b.rows_mut().into_iter().enumerate() {
                row[r0 + r] = 0.0;
                if let Some(sl) = row.as_slice_mut() {
                    relative(sl, Some(r0 + r));
                }
            }
            b
        },
        stop,
    )?;
    let kk = symmetrise_max(&kk);
    let p_sq = p.values().iter().map(|v| v * v).sum();
    let kk_sq = kk.values().iter().map(|v| v * v).sum();
    // Priors (docs/models.md §7.4, §7.5b).
    let mut counts = vec![0.0f64; k];
    for &c in &labels {
        counts[c] += 1.0;
    }
    let training: Vec<f64> = counts.iter().map(|&c| c / n_l.max(1) as f64).collect();
    let priors = match params.priors {
        Priors::Training => training,
        Priors::Residual => {
            let n = label.len() as f64;
            let res: Vec<f64> = (0..k)
                .map(|a| (n * given_frac[a] - counts[a]).max(0.0))
                .collect();
            let total: f64 = res.iter().sum();
            if total > 0.0 {
                res.iter().map(|r| r / total).collect()
            } else {
                training
            }
        }
    };
    let v = init_v(&labels, k, s_sq, rng);
    Ok(Round {
        train,
        test,
        labels,
        y,
        s,
        s_sq,
        p,
        p_sq,
        kk,
        kk_sq,
        nearest,
        priors,
        v,
        u: Array2::zeros((n_t, k)),
        sigma: if fell_back { f64::NAN } else { sig },
    })
}

/// Most neighbours per test sample in K when `n_k` = 0 (auto, docs/models.md §7.1).
pub const AUTO_N_K: usize = 10;

/// N_K: `n_k` as set, or for `n_k` = 0 (auto) [`AUTO_N_K`] capped at half the smallest class's
/// size as the given labels estimate it (n·g_a, g the given fractions), at least 1. A class of
/// s samples can give a member at most s − 1 neighbours of its own class, so a larger N_K ties
/// every sample of a small class to other classes (glass: classes of 9, 13 and 17; ORL: 10
/// images a person); on the sets whose classes all have 20 samples or more it is
/// [`AUTO_N_K`].
fn test_neighbours(n_k: usize, n: usize, given_frac: &[f64]) -> usize {
    if n_k > 0 {
        return n_k;
    }
    let smallest = given_frac
        .iter()
        .copied()
        .filter(|&g| g > 0.0)
        .fold(f64::INFINITY, f64::min);
    let half = (n as f64 * smallest / 2.0).round();
    if half.is_finite() {
        (half as usize).clamp(1, AUTO_N_K)
    } else {
        AUTO_N_K
    }
}

/// The initial V (docs/models.md §7.2 init, [C]): random nonnegative with the own class
/// holding each row's maximum by construction, `V = Y_L + ρ·U[0, 1)` with ρ = [`INIT_SPREAD`]
/// < 1, scaled so that ‖VVᵀ‖_F = ‖S‖_F (the scale of the rule's fixed point).
fn init_v(labels: &[usize], k: usize, s_sq: f64, rng: &mut ChaCha8Rng) -> Array2<f64> {
    let n_l = labels.len();
    let mut v = Array2::from_shape_simple_fn((n_l, k), || INIT_SPREAD * rng.r#gen::<f64>());
    for (mut row, &c) in v.rows_mut().into_iter().zip(labels) {
        row[c] += 1.0;
    }
    let g = v.t().dot(&v);
    let vv = g.iter().map(|x| x * x).sum::<f64>().sqrt();
    if vv > 0.0 {
        let c = (s_sq.sqrt() / vv).sqrt();
        v.mapv_inplace(|x| x * c);
    }
    v
}

/// Index of the largest value (the first of ties; 0 for an empty iterator).
fn argmax(it: impl Iterator<Item = f64>) -> usize {
    it.enumerate()
        .fold((0, f64::NEG_INFINITY), |(bi, bv), (j, v)| {
            if v > bv { (j, v) } else { (bi, bv) }
        })
        .0
}

/// `[A]_+`.
/// S·V through faer's GEMM: for this n_L×n_L by n_L×k product the `ndarray` (matrixmultiply)
/// path spent half its time packing S again at every step (perf on digits: 52 % in
/// `pack_avx2`), so a fit with self-training took 6.2 s instead of the figure in
/// docs/performance.md.
fn s_times(s: &Array2<f64>, v: &Array2<f64>) -> Array2<f64> {
    crate::engine::linalg::gemm(s.view(), Op::N, v.view(), Op::N)
}

fn clipped(mut a: Array2<f64>) -> Array2<f64> {
    a.mapv_inplace(|v| v.max(0.0));
    a
}

/// `z ← new` or, damped, `z ← ½(new + z)`; returns `‖z_new − z_old‖_F / ‖z_old‖_F` (0 when
/// both are zero, ∞ when only the old one is).
fn update(z: &mut Array2<f64>, mut new: Array2<f64>, damping: bool) -> f64 {
    if damping {
        Zip::from(&mut new).and(&*z).for_each(|a, &b| *a = 0.5 * (*a + b));
    }
    let old = z.iter().map(|v| v * v).sum::<f64>().sqrt();
    let diff = Zip::from(&new)
        .and(&*z)
        .fold(0.0, |s, &a, &b| s + (a - b) * (a - b))
        .sqrt();
    *z = new;
    if old > 0.0 {
        diff / old
    } else if diff > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}

/// `[rhs (G + ε_r I)⁻¹]_+` with the relative ridge `*ridge`; when the result's norm exceeds
/// [`BLOWUP`] times the norm of `old` (the factor it replaces), the ridge is raised by
/// [`RIDGE_STEP`] (up to [`RIDGE_MAX`]) and the solve made again. Returns the new factor and
/// whether the ridge was raised; the raised ridge stays for the rest of the stage.
fn guarded_solve(
    rhs: &Array2<f64>,
    g: &Array2<f64>,
    old: &Array2<f64>,
    ridge: &mut f64,
) -> (Array2<f64>, bool) {
    let norm = |a: &Array2<f64>| a.iter().map(|v| v * v).sum::<f64>().sqrt();
    let limit = BLOWUP * norm(old);
    let mut new = clipped(rhs.dot(&ridge_inverse_rel(g, *ridge)));
    let mut raised = false;
    while limit > 0.0 && norm(&new) > limit && *ridge < RIDGE_MAX {
        *ridge = (*ridge * RIDGE_STEP).min(RIDGE_MAX);
        new = clipped(rhs.dot(&ridge_inverse_rel(g, *ridge)));
        raised = true;
    }
    (new, raised)
}

/// `(G + ε_r I)⁻¹` of a symmetric positive semi-definite k×k Gram matrix, ε_r = 1e-10·Tr(G)/k
/// (docs/models.md §7.2), by Gauss–Jordan with partial pivoting (k is the number of classes).
/// A zero G gives a zero inverse (the factor has collapsed; its update is then 0).
pub fn ridge_inverse(g: &Array2<f64>) -> Array2<f64> {
    ridge_inverse_rel(g, RIDGE)
}

/// [`ridge_inverse`] with the relative ridge `rel`: ε_r = rel·Tr(G)/k.
fn ridge_inverse_rel(g: &Array2<f64>, rel: f64) -> Array2<f64> {
    let k = g.nrows();
    let tr: f64 = (0..k).map(|i| g[[i, i]]).sum();
    let eps = rel * tr / k.max(1) as f64;
    let mut a = g.clone();
    for i in 0..k {
        a[[i, i]] += eps;
    }
    let mut inv = Array2::<f64>::eye(k);
    for col in 0..k {
        let piv = (col..k)
            .max_by(|&i, &j| a[[i, col]].abs().total_cmp(&a[[j, col]].abs()))
            .unwrap_or(col);
        if a[[piv, col]].abs() <= f64::MIN_POSITIVE {
            return Array2::zeros((k, k));
        }
        if piv != col {
            for j in 0..k {
                a.swap([piv, j], [col, j]);
                inv.swap([piv, j], [col, j]);
            }
        }
        let d = a[[col, col]];
        for j in 0..k {
            a[[col, j]] /= d;
            inv[[col, j]] /= d;
        }
        for i in 0..k {
            if i != col {
                let f = a[[i, col]];
                if f != 0.0 {
                    for j in 0..k {
                        a[[i, j]] -= f * a[[col, j]];
                        inv[[i, j]] -= f * inv[[col, j]];
                    }
                }
            }
        }
    }
    inv
}

/// `Σ_{(i,j) ∈ nnz(M)} M_ij (a_i · b_j)` for a sparse M and dense A, B (rows = samples).
fn sparse_inner(m: &Csr, a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    let mut s = 0.0;
    for i in 0..m.nrows() {
        let (cols, vals) = m.row(i);
        let ai = a.row(i);
        for (&j, &v) in cols.iter().zip(vals) {
            s += v * ai.dot(&b.row(j));
        }
    }
    s
}

/// Class mass normalisation (docs/models.md §7.4): column a of U scaled so that it sums to
/// `priors[a]`.
pub fn cmn(u: &Array2<f64>, priors: &[f64]) -> Array2<f64> {
    let mut c = u.clone();
    for (a, mut col) in c.columns_mut().into_iter().enumerate() {
        let sum: f64 = col.sum();
        let f = priors.get(a).copied().unwrap_or(0.0) / sum.max(EPS_DIV);
        col.mapv_inplace(|v| v * f);
    }
    c
}

/// `(argmax, confidence, row / Σ row)` of one CMN row; `None` for an all-zero row (no
/// information: the caller falls back to the nearest training sample, docs/models.md §7.4).
fn confidence_row(row: &[f64]) -> (usize, f64, Option<Vec<f64>>) {
    let sum: f64 = row.iter().sum();
    if sum <= 0.0 || !sum.is_finite() {
        return (0, 0.0, None);
    }
    let norm: Vec<f64> = row.iter().map(|v| v / sum).collect();
    let a = argmax(norm.iter().copied());
    (a, norm[a], Some(norm))
}

impl Model for Stginmf {
    fn kind(&self) -> ModelKind {
        KIND
    }

    fn step(&mut self) -> Result<Objective, ModelError> {
        if self.stage == Stage::Build {
            if self.interrupt.is_raised() {
                return Err(ModelError::Interrupted);
            }
            self.start_round()?;
        }
        match self.stage {
            Stage::One => {
                let change = self.stage1_step();
                self.iter += 1;
                self.stage1_steps += 1;
                self.refresh_stage1_terms();
                self.last_phase = Phase {
                    round: self.round_no,
                    stage: 1,
                };
                if (change < self.params.stage_tol || self.iter >= self.params.stage_iters)
                    && !self.restart_if_collapsed()
                {
                    self.iter = 0;
                    if self.round.test.is_empty() {
                        self.stage = Stage::Done;
                        self.refresh_outputs();
                    } else {
                        self.stage = Stage::Two;
                        self.ridge = RIDGE;
                        self.init_u();
                        self.refresh_stage2_terms();
                        self.refresh_outputs();
                    }
                } else {
                    self.refresh_outputs();
                }
                Ok(self.objective_now(1))
            }
            Stage::Two => {
                let change = self.stage2_step();
                self.iter += 1;
                self.refresh_stage2_terms();
                self.last_phase = Phase {
                    round: self.round_no,
                    stage: 2,
                };
                if change < self.params.stage_tol || self.iter >= self.params.stage_iters {
                    self.iter = 0;
                    self.end_round();
                } else {
                    self.refresh_outputs();
                }
                Ok(self.objective_now(2))
            }
            Stage::Build | Stage::Done => Ok(self.objective()),
        }
    }

    fn h(&self) -> ArrayView2<'_, f64> {
        self.h.view()
    }

    fn w(&self) -> Option<ArrayView2<'_, f64>> {
        None
    }

    fn objective(&self) -> Objective {
        self.objective_now(self.last_phase.stage)
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = self.notes.clone();
        if self.blowups > 0 {
            notes.push(format!(
                "{} ALS step(s) blew up (the factor grew more than {BLOWUP}× in one step: its \
                 Gram matrix was nearly singular, as with few labels per class) and were solved \
                 again with a larger ridge, up to {:.0e}·Tr(G)/k (docs/models.md §7.2)",
                self.blowups, self.ridge_used
            ));
        }
        let moved: Vec<usize> = self
            .origin
            .iter()
            .filter_map(|o| match o {
                LabelOrigin::SelfTrained { round } => Some(*round),
                _ => None,
            })
            .collect();
        if let Some(rounds) = moved.iter().max() {
            notes.push(format!(
                "self-training moved {} sample(s) into the training set in {rounds} round(s)",
                moved.len()
            ));
        }
        notes
    }

    fn outputs(&self) -> Outputs {
        Outputs {
            assignments: Some(self.preds.labels.clone()),
            predictions: Some(Arc::new(self.preds.clone())),
            ..Outputs::default()
        }
    }

    fn has_converged(&self) -> bool {
        self.stage == Stage::Done
    }

    fn exports(&self) -> Vec<Export> {
        let r = &self.round;
        let mut out = vec![Export {
            name: "V",
            array: r.v.clone(),
        }];
        if !r.test.is_empty() {
            out.push(Export {
                name: "U",
                array: r.u.clone(),
            });
            out.push(Export {
                name: "U_cmn",
                array: cmn(&r.u, &r.priors),
            });
        }
        out
    }

    fn set_interrupt(&mut self, interrupt: Interrupt) {
        self.interrupt = interrupt;
    }

    fn phase(&self) -> Option<Phase> {
        Some(self.last_phase)
    }

    fn stops_itself(&self) -> bool {
        true
    }
}

#[cfg(test)]
#[path = "tests.rs"]
pub(crate) mod tests;
