//! Classification protocol (docs/models.md §8.3, §8.5): a seeded stratified split and a linear SVM
//! trained on the training columns of H, scored on the test columns.
//!
//! The SVM is our own implementation of LIBLINEAR's solver for the L2-regularised L2-loss
//! (squared hinge) SVC in the dual, by dual coordinate descent (Hsieh, Chang, Lin, Keerthi,
//! Sundararajan, ICML 2008; `solve_l2r_l1l2_svc` in LIBLINEAR's `linear.cpp`), one-vs-rest.
//! No well-maintained Rust crate implements exactly this solver (linfa-svm is a kernel SMO
//! solver without LIBLINEAR's stopping rule), so it is written here.

use super::metrics::{ClassificationReport, MeanStd, classification_report};
use super::{EvalError, check_same_len, derive_seed};
use ndarray::{Array2, ArrayView2};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Indices of the training and test samples, each sorted increasingly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Split {
    pub train: Vec<usize>,
    pub test: Vec<usize>,
}

/// Stratified split (docs/models.md §8.3): per class, `round(train_fraction · n_c)` samples drawn
/// at random for training and the rest for testing, clamped so that every class with ≥ 2
/// samples has ≥ 1 sample in each part; a class with a single sample goes to training.
/// Classes are visited in increasing id order with one ChaCha8 stream seeded by `seed`.
pub fn stratified_split(
    labels: &[usize],
    train_fraction: f64,
    seed: u64,
) -> Result<Split, EvalError> {
    if !(train_fraction > 0.0 && train_fraction < 1.0) {
        return Err(EvalError::InvalidParam {
            name: "train_fraction",
            why: format!("must lie strictly between 0 and 1, got {train_fraction}"),
        });
    }
    if labels.is_empty() {
        return Err(EvalError::Empty);
    }
    let mut by_class: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, &l) in labels.iter().enumerate() {
        by_class.entry(l).or_default().push(i);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut train, mut test) = (Vec::new(), Vec::new());
    for members in by_class.values_mut() {
        let nc = members.len();
        members.shuffle(&mut rng);
        let n_train = if nc < 2 {
            nc
        } else {
            // `as` saturates; the clamp keeps one sample on each side.
            ((train_fraction * nc as f64).round() as usize).clamp(1, nc - 1)
        };
        train.extend_from_slice(&members[..n_train]);
        test.extend_from_slice(&members[n_train..]);
    }
    train.sort_unstable();
    test.sort_unstable();
    Ok(Split { train, test })
}

/// How the features are scaled before the linear SVM sees them (docs/models.md §8.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SvmScaling {
    /// Every feature to z-scores by the mean and (population) deviation of the **training**
    /// samples only, applied to the test samples too: scikit-learn's `StandardScaler` then
    /// `LinearSVC`. The score then does not depend on the scale of H (a model whose H is
    /// 1e-4 is not scored at chance). A feature constant on the training samples is centred
    /// and not scaled, as `StandardScaler` does.
    #[default]
    Standardized,
    /// The features as given: the RPNMF paper's protocol (its Table 2).
    Raw,
}

impl SvmScaling {
    /// The command-line and JSON spelling (`standardized`, `raw`).
    pub fn name(self) -> &'static str {
        match self {
            SvmScaling::Standardized => "standardized",
            SvmScaling::Raw => "raw",
        }
    }

    /// Both, in the order the app lists them.
    pub const ALL: [SvmScaling; 2] = [SvmScaling::Standardized, SvmScaling::Raw];

    /// Parse the command-line spelling (`standardized`, also `standardised`/`std`; `raw`).
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "standardized" | "standardised" | "std" => Ok(SvmScaling::Standardized),
            "raw" => Ok(SvmScaling::Raw),
            _ => Err(format!(
                "unknown SVM scaling `{s}` (one of: standardized, raw)"
            )),
        }
    }
}

/// Per-feature centre and scale learnt on the training samples (`StandardScaler`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FeatureScaler {
    pub mean: Vec<f64>,
    /// Population standard deviation; 1 for a feature constant on the training samples.
    pub scale: Vec<f64>,
}

impl FeatureScaler {
    /// Mean and population deviation of every row of `points` (d×n, columns are samples).
    pub fn fit(points: ArrayView2<'_, f64>) -> Self {
        let n = points.ncols().max(1) as f64;
        let (mean, scale) = points
            .rows()
            .into_iter()
            .map(|row| {
                let mean = row.sum() / n;
                let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
                let sd = var.sqrt();
                (mean, if sd > 0.0 && sd.is_finite() { sd } else { 1.0 })
            })
            .unzip();
        Self { mean, scale }
    }

    /// `(v − mean) / scale`, feature by feature (`points` is d×n).
    pub fn transform(&self, points: ArrayView2<'_, f64>) -> Array2<f64> {
        let mut out = points.to_owned();
        for ((mut row, &m), &s) in out.rows_mut().into_iter().zip(&self.mean).zip(&self.scale) {
            row.mapv_inplace(|v| (v - m) / s);
        }
        out
    }
}

/// Hyperparameters of the linear SVM (LIBLINEAR `-s 1` defaults, with a bias term).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinearSvmParams {
    /// Feature scaling before training (standardised on the training samples by default).
    #[serde(default)]
    pub scaling: SvmScaling,
    /// Cost C (LIBLINEAR default 1).
    pub c: f64,
    /// Value of the constant feature appended to every sample (LIBLINEAR `-B`); its weight is
    /// the bias, regularised like the other weights. ≤ 0 means no bias term.
    pub bias: f64,
    /// Stopping tolerance on the projected-gradient spread (LIBLINEAR default 0.1).
    pub eps: f64,
    /// Maximum number of passes over the data per binary problem (LIBLINEAR: 1000).
    pub max_iter: usize,
    /// LIBLINEAR's shrinking of the active set.
    pub shrinking: bool,
    /// Seed of the random visiting order (one stream per binary problem).
    pub seed: u64,
}

impl Default for LinearSvmParams {
    fn default() -> Self {
        Self {
            c: 1.0,
            bias: 1.0,
            eps: 0.1,
            max_iter: 1000,
            shrinking: true,
            seed: 0,
            scaling: SvmScaling::Standardized,
        }
    }
}

impl LinearSvmParams {
    fn check(&self) -> Result<(), EvalError> {
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err(EvalError::InvalidParam {
                name: "c",
                why: format!("must be finite and > 0, got {}", self.c),
            });
        }
        if !(self.eps.is_finite() && self.eps > 0.0) {
            return Err(EvalError::InvalidParam {
                name: "eps",
                why: format!("must be finite and > 0, got {}", self.eps),
            });
        }
        if !self.bias.is_finite() {
            return Err(EvalError::InvalidParam {
                name: "bias",
                why: "must be finite".into(),
            });
        }
        if self.max_iter == 0 {
            return Err(EvalError::InvalidParam {
                name: "max_iter",
                why: "must be at least 1".into(),
            });
        }
        Ok(())
    }
}

/// A trained one-vs-rest linear SVM (two classes: a single binary model, as LIBLINEAR does).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinearSvm {
    /// Class ids, increasing.
    pub classes: Vec<usize>,
    /// One weight vector per binary model (length d, plus 1 with a bias term).
    pub weights: Vec<Vec<f64>>,
    /// The constant feature value (≤ 0: none).
    pub bias: f64,
    /// Number of features d.
    pub dim: usize,
    /// Passes made by each binary problem (`max_iter` means it stopped without converging).
    pub passes: Vec<usize>,
    /// The training samples' feature scaling, applied to every point before the weights
    /// (`None`: raw features).
    #[serde(default)]
    pub scaler: Option<FeatureScaler>,
}

/// Samples as rows of a row-major buffer, with the bias feature appended.
fn design(points: ArrayView2<'_, f64>, bias: f64) -> Result<(Vec<f64>, usize), EvalError> {
    let (d, n) = points.dim();
    let width = if bias > 0.0 { d + 1 } else { d };
    let mut x = Vec::with_capacity(n * width);
    for (sample, col) in points.columns().into_iter().enumerate() {
        for (coordinate, &v) in col.iter().enumerate() {
            if !v.is_finite() {
                return Err(EvalError::NonFinite { sample, coordinate });
            }
            x.push(v);
        }
        if bias > 0.0 {
            x.push(bias);
        }
    }
    Ok((x, width))
}

/// At most this many training samples: from there on the model trains on a seeded stratified
/// sample of this size. The dual coordinate descent is sequential, one sample after another,
/// and on 160,000 overlapping samples its passes up to the cap took tens of seconds per model;
/// 20,000 samples of a handful of features pin a linear model's weights as well
/// (docs/performance.md, "k-means and the SVM at 200,000 samples").
pub const MAX_TRAIN: usize = 20_000;

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// LIBLINEAR's dual coordinate descent for the L2-loss SVC (D_ii = 1/(2C), no upper bound).
/// `y` is ±1. Returns the weights and the number of passes.
fn solve_l2_loss_dual(
    x: &[f64],
    width: usize,
    y: &[f64],
    params: &LinearSvmParams,
    seed: u64,
) -> (Vec<f64>, usize) {
    let l = y.len();
    let diag = 0.5 / params.c;
    let mut w = vec![0.0; width];
    let mut alpha = vec![0.0; l];
    let qd: Vec<f64> = (0..l)
        .map(|i| {
            let xi = &x[i * width..(i + 1) * width];
            diag + dot(xi, xi)
        })
        .collect();
    let mut index: Vec<usize> = (0..l).collect();
    let mut active = l;
    let mut pg_max_old = f64::INFINITY;
    // LIBLINEAR's PGmin_old is only read at the upper bound C of the L1-loss variant; the
    // L2-loss dual has no upper bound, so it is not kept here.
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut iter = 0;
    while iter < params.max_iter {
        let mut pg_max_new = f64::NEG_INFINITY;
        let mut pg_min_new = f64::INFINITY;
        for i in 0..active {
            let j = rng.gen_range(i..active);
            index.swap(i, j);
        }
        let mut s = 0;
        while s < active {
            let i = index[s];
            let xi = &x[i * width..(i + 1) * width];
            let g = y[i] * dot(&w, xi) - 1.0 + alpha[i] * diag;
            let mut pg = 0.0;
            if alpha[i] == 0.0 {
                if params.shrinking && g > pg_max_old {
                    active -= 1;
                    index.swap(s, active);
                    continue;
                } else if g < 0.0 {
                    pg = g;
                }
            } else {
                pg = g;
            }
            pg_max_new = pg_max_new.max(pg);
            pg_min_new = pg_min_new.min(pg);
            if pg.abs() > 1e-12 {
                let old = alpha[i];
                alpha[i] = (alpha[i] - g / qd[i]).max(0.0);
                let d = (alpha[i] - old) * y[i];
                w.iter_mut().zip(xi).for_each(|(wk, &xk)| *wk += d * xk);
            }
            s += 1;
        }
        iter += 1;
        if pg_max_new - pg_min_new <= params.eps {
            if active == l {
                break;
            }
            // Converged on the shrunk set: check once more on everything.
            active = l;
            pg_max_old = f64::INFINITY;
            continue;
        }
        pg_max_old = if pg_max_new <= 0.0 {
            f64::INFINITY
        } else {
            pg_max_new
        };
    }
    (w, iter)
}

impl LinearSvm {
    /// Train on the columns of `points` (d×n) with labels `labels` (docs/models.md §8.3 step 3).
    pub fn fit(
        points: ArrayView2<'_, f64>,
        labels: &[usize],
        params: &LinearSvmParams,
    ) -> Result<Self, EvalError> {
        Self::fit_with(points, labels, params, &|| {})
    }

    /// [`Self::fit`], calling `on_model` as each binary model is trained (from the rayon
    /// threads; for a progress display).
    pub fn fit_with(
        points: ArrayView2<'_, f64>,
        labels: &[usize],
        params: &LinearSvmParams,
        on_model: &(dyn Fn() + Sync),
    ) -> Result<Self, EvalError> {
        params.check()?;
        check_same_len("labels", labels.len(), "samples", points.ncols())?;
        if labels.len() > MAX_TRAIN {
            // A seeded stratified sample of MAX_TRAIN samples trains the model.
            let share = MAX_TRAIN as f64 / labels.len() as f64;
            let keep = stratified_split(labels, share, derive_seed(params.seed, u64::MAX))?.train;
            let sub = points.select(ndarray::Axis(1), &keep);
            let sub_labels: Vec<usize> = keep.iter().map(|&i| labels[i]).collect();
            return Self::fit_all(sub.view(), &sub_labels, params, on_model);
        }
        Self::fit_all(points, labels, params, on_model)
    }

    /// [`Self::fit_with`] on every given sample.
    fn fit_all(
        points: ArrayView2<'_, f64>,
        labels: &[usize],
        params: &LinearSvmParams,
        on_model: &(dyn Fn() + Sync),
    ) -> Result<Self, EvalError> {
        let mut classes = labels.to_vec();
        classes.sort_unstable();
        classes.dedup();
        if classes.len() < 2 {
            return Err(EvalError::TooFewClasses {
                found: classes.len(),
            });
        }
        let scaler = match params.scaling {
            SvmScaling::Standardized => Some(FeatureScaler::fit(points)),
            SvmScaling::Raw => None,
        };
        let scaled = scaler.as_ref().map(|s| s.transform(points));
        let (x, width) = match &scaled {
            Some(s) => design(s.view(), params.bias)?,
            None => design(points, params.bias)?,
        };
        // Binary: one model with classes[1] as the positive class; else one per class.
        let positives: Vec<usize> = if classes.len() == 2 {
            vec![classes[1]]
        } else {
            classes.clone()
        };
        // The one-vs-rest models are independent, each seeded by its index: solved in
        // parallel with rayon, the same weights on any number of threads.
        let (weights, passes): (Vec<Vec<f64>>, Vec<usize>) = {
            use rayon::prelude::*;
            positives
                .par_iter()
                .enumerate()
                .map(|(m, &pos)| {
                    let y: Vec<f64> = labels
                        .iter()
                        .map(|&l| if l == pos { 1.0 } else { -1.0 })
                        .collect();
                    let solved = solve_l2_loss_dual(
                        &x,
                        width,
                        &y,
                        params,
                        derive_seed(params.seed, m as u64),
                    );
                    on_model();
                    solved
                })
                .unzip()
        };
        Ok(Self {
            classes,
            weights,
            bias: params.bias,
            dim: points.nrows(),
            passes,
            scaler,
        })
    }

    /// Decision values, one row per binary model and one column per sample.
    pub fn decision_function(&self, points: ArrayView2<'_, f64>) -> Result<Array2<f64>, EvalError> {
        check_same_len("model features", self.dim, "point features", points.nrows())?;
        let (x, width) = match &self.scaler {
            Some(s) => design(s.transform(points).view(), self.bias)?,
            None => design(points, self.bias)?,
        };
        let n = points.ncols();
        let mut out = Array2::zeros((self.weights.len(), n));
        for (m, w) in self.weights.iter().enumerate() {
            for i in 0..n {
                out[[m, i]] = dot(w, &x[i * width..(i + 1) * width]);
            }
        }
        Ok(out)
    }

    /// Predicted class of each column of `points` (argmax of the decision values; the first
    /// class on ties; for two classes, `classes[1]` when the decision value is > 0).
    pub fn predict(&self, points: ArrayView2<'_, f64>) -> Result<Vec<usize>, EvalError> {
        let dec = self.decision_function(points)?;
        Ok(dec
            .columns()
            .into_iter()
            .map(|col| {
                if self.classes.len() == 2 {
                    if col[0] > 0.0 {
                        self.classes[1]
                    } else {
                        self.classes[0]
                    }
                } else {
                    let mut best = 0;
                    for (k, &v) in col.iter().enumerate() {
                        if v > col[best] {
                            best = k;
                        }
                    }
                    self.classes[best]
                }
            })
            .collect())
    }
}

/// The result of one split-train-test round.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassificationOutcome {
    pub split: Split,
    /// Predicted class of each test sample, in the order of `split.test`.
    pub predictions: Vec<usize>,
    pub report: ClassificationReport,
}

/// docs/models.md §8.3: stratified split of the columns of `points` (seeded by `split_seed`), a
/// linear SVM trained on the training columns, scored on the test columns (§8.5).
pub fn classify_split(
    points: ArrayView2<'_, f64>,
    labels: &[usize],
    train_fraction: f64,
    split_seed: u64,
    svm: &LinearSvmParams,
) -> Result<ClassificationOutcome, EvalError> {
    classify_split_with(points, labels, train_fraction, split_seed, svm, &|| {})
}

/// [`classify_split`], calling `on_model` as each binary SVM is trained.
pub fn classify_split_with(
    points: ArrayView2<'_, f64>,
    labels: &[usize],
    train_fraction: f64,
    split_seed: u64,
    svm: &LinearSvmParams,
    on_model: &(dyn Fn() + Sync),
) -> Result<ClassificationOutcome, EvalError> {
    check_same_len("labels", labels.len(), "samples", points.ncols())?;
    let split = stratified_split(labels, train_fraction, split_seed)?;
    if split.test.is_empty() {
        return Err(EvalError::Empty);
    }
    let train_pts = points.select(ndarray::Axis(1), &split.train);
    let train_labels: Vec<usize> = split.train.iter().map(|&i| labels[i]).collect();
    let model = LinearSvm::fit_with(train_pts.view(), &train_labels, svm, on_model)?;
    let test_pts = points.select(ndarray::Axis(1), &split.test);
    let predictions = model.predict(test_pts.view())?;
    let truth: Vec<usize> = split.test.iter().map(|&i| labels[i]).collect();
    let report = classification_report(&truth, &predictions)?;
    Ok(ClassificationOutcome {
        split,
        predictions,
        report,
    })
}

/// Classification metrics over repeated splits (docs/models.md §8.3 step 4: 10 repetitions).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassificationSummary {
    pub accuracy: MeanStd,
    pub macro_f1: MeanStd,
    pub macro_f1_of_means: MeanStd,
    /// Every repetition, in order; repetition r uses split seed [`derive_seed`]`(seed, r)`.
    pub runs: Vec<ClassificationOutcome>,
}

/// [`classify_split`] repeated `repetitions` times with split seeds [`derive_seed`]`(seed, r)`
/// (run in parallel with rayon; the result does not depend on the thread count).
pub fn classify_repeated(
    points: ArrayView2<'_, f64>,
    labels: &[usize],
    train_fraction: f64,
    seed: u64,
    repetitions: usize,
    svm: &LinearSvmParams,
) -> Result<ClassificationSummary, EvalError> {
    use rayon::prelude::*;
    if repetitions == 0 {
        return Err(EvalError::InvalidParam {
            name: "repetitions",
            why: "must be at least 1".into(),
        });
    }
    let runs = (0..repetitions)
        .into_par_iter()
        .map(|r| {
            classify_split(
                points,
                labels,
                train_fraction,
                derive_seed(seed, r as u64),
                svm,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let col = |f: fn(&ClassificationReport) -> f64| {
        MeanStd::of(&runs.iter().map(|o| f(&o.report)).collect::<Vec<_>>())
    };
    Ok(ClassificationSummary {
        accuracy: col(|r| r.accuracy),
        macro_f1: col(|r| r.macro_f1),
        macro_f1_of_means: col(|r| r.macro_f1_of_means),
        runs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// Above MAX_TRAIN samples the model is the one trained on the seeded stratified sample.
    #[test]
    fn large_training_sets_train_on_a_seeded_stratified_sample() {
        use rand::{Rng, SeedableRng};
        let n = MAX_TRAIN + 5000;
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let labels: Vec<usize> = (0..n).map(|i| i % 3).collect();
        let points = Array2::from_shape_fn((2, n), |(r, i)| {
            let centre = if r == labels[i] % 2 { 1.0 } else { 0.0 };
            centre + rng.gen_range(-0.8..0.8)
        });
        let params = LinearSvmParams::default();
        let full = LinearSvm::fit(points.view(), &labels, &params).expect("fit");
        let share = MAX_TRAIN as f64 / n as f64;
        let keep = stratified_split(&labels, share, derive_seed(params.seed, u64::MAX))
            .expect("split")
            .train;
        assert!(keep.len().abs_diff(MAX_TRAIN) <= 3, "{}", keep.len());
        let sub_labels: Vec<usize> = keep.iter().map(|&i| labels[i]).collect();
        let sub = points.select(ndarray::Axis(1), &keep);
        let direct = LinearSvm::fit(sub.view(), &sub_labels, &params).expect("fit");
        assert_eq!(full.weights, direct.weights);
    }

    #[test]
    fn split_is_stratified_and_seeded() {
        // Class sizes 10, 5, 2, 1 with ids 3, 8, 1, 6.
        let mut labels = vec![3; 10];
        labels.extend([8; 5]);
        labels.extend([1; 2]);
        labels.push(6);
        let s = stratified_split(&labels, 0.8, 11).unwrap();
        let count = |idx: &[usize], c: usize| idx.iter().filter(|&&i| labels[i] == c).count();
        assert_eq!((count(&s.train, 3), count(&s.test, 3)), (8, 2));
        assert_eq!((count(&s.train, 8), count(&s.test, 8)), (4, 1));
        assert_eq!((count(&s.train, 1), count(&s.test, 1)), (1, 1));
        assert_eq!((count(&s.train, 6), count(&s.test, 6)), (1, 0));
        let mut all: Vec<usize> = s.train.iter().chain(&s.test).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..labels.len()).collect::<Vec<_>>());
        assert_eq!(s, stratified_split(&labels, 0.8, 11).unwrap());
        assert_ne!(s, stratified_split(&labels, 0.8, 12).unwrap());
        assert!(stratified_split(&labels, 1.0, 0).is_err());
    }

    #[test]
    fn separates_two_classes() {
        let x = array![
            [0.0, 1.0, 0.5, 4.0, 5.0, 4.5],
            [0.0, 0.5, 1.0, 4.0, 4.5, 5.0]
        ];
        let y = [2, 2, 2, 9, 9, 9];
        let m = LinearSvm::fit(x.view(), &y, &LinearSvmParams::default()).unwrap();
        assert_eq!(m.weights.len(), 1);
        assert_eq!(m.predict(x.view()).unwrap(), y.to_vec());
    }

    #[test]
    fn separates_three_classes() {
        // Three corners of a triangle, 4 points each.
        let mut cols = Vec::new();
        let mut y = Vec::new();
        for (c, (cx, cy)) in [(0.0, 0.0), (6.0, 0.0), (0.0, 6.0)].iter().enumerate() {
            for (dx, dy) in [(0.0, 0.0), (0.5, 0.0), (0.0, 0.5), (0.5, 0.5)] {
                cols.push(cx + dx);
                cols.push(cy + dy);
                y.push(c);
            }
        }
        let x = Array2::from_shape_vec((12, 2), cols)
            .unwrap()
            .reversed_axes();
        for shrinking in [true, false] {
            let p = LinearSvmParams {
                shrinking,
                ..LinearSvmParams::default()
            };
            let m = LinearSvm::fit(x.view(), &y, &p).unwrap();
            assert_eq!(m.weights.len(), 3);
            assert_eq!(m.predict(x.view()).unwrap(), y);
            assert_eq!(m, LinearSvm::fit(x.view(), &y, &p).unwrap());
        }
    }

    /// The standardisation by hand: training features (1, 2, 3) and (10, 10, 10) have means
    /// 2 and 10, deviations √(2/3) and 0 (kept at 1); a test point (4, 13) becomes
    /// ((4 − 2)/√(2/3), 3). The trained model then matches a raw-feature model trained on the
    /// hand-standardised points, weight for weight.
    #[test]
    fn standardised_features_by_hand() {
        let train = array![[1.0, 2.0, 3.0], [10.0, 10.0, 10.0]];
        let s = FeatureScaler::fit(train.view());
        let sd = (2.0f64 / 3.0).sqrt();
        assert_eq!(s.mean, vec![2.0, 10.0]);
        assert!(
            (s.scale[0] - sd).abs() < 1e-15 && s.scale[1] == 1.0,
            "{s:?}"
        );
        let t = s.transform(array![[4.0], [13.0]].view());
        assert!(
            (t[[0, 0]] - 2.0 / sd).abs() < 1e-14 && t[[1, 0]] == 3.0,
            "{t}"
        );

        // A scale of 1e-4 (FNMF's H): raw, the default C cannot separate the classes (the
        // weights would need norm ~1e4), standardised they are separated.
        let x = array![
            [0.0, 1.0, 0.5, 4.0, 5.0, 4.5],
            [0.0, 0.5, 1.0, 4.0, 4.5, 5.0]
        ] * 1e-4;
        let y = [0, 0, 0, 1, 1, 1];
        let std = LinearSvm::fit(x.view(), &y, &LinearSvmParams::default()).unwrap();
        assert_eq!(std.predict(x.view()).unwrap(), y.to_vec());
        let raw = LinearSvmParams {
            scaling: SvmScaling::Raw,
            ..LinearSvmParams::default()
        };
        let m = LinearSvm::fit(x.view(), &y, &raw).unwrap();
        assert!(m.scaler.is_none());
        assert_ne!(m.predict(x.view()).unwrap(), y.to_vec());
        // Standardised = raw on the hand-standardised points.
        let by_hand = FeatureScaler::fit(x.view()).transform(x.view());
        let twin = LinearSvm::fit(by_hand.view(), &y, &raw).unwrap();
        assert_eq!(std.weights, twin.weights);
        assert_eq!(SvmScaling::parse("raw"), Ok(SvmScaling::Raw));
        assert_eq!(
            SvmScaling::parse("Standardised"),
            Ok(SvmScaling::Standardized)
        );
        assert!(SvmScaling::parse("l2").is_err());
    }

    #[test]
    fn rejects_bad_inputs() {
        let x = array![[0.0, 1.0]];
        assert!(matches!(
            LinearSvm::fit(x.view(), &[1, 1], &LinearSvmParams::default()),
            Err(EvalError::TooFewClasses { found: 1 })
        ));
        let p = LinearSvmParams {
            c: 0.0,
            ..LinearSvmParams::default()
        };
        assert!(LinearSvm::fit(x.view(), &[0, 1], &p).is_err());
        let m = LinearSvm::fit(x.view(), &[0, 1], &LinearSvmParams::default()).unwrap();
        assert!(m.predict(array![[0.0], [1.0]].view()).is_err());
    }
}
