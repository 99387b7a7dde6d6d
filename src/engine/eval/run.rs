//! The one evaluation of a finished run, the evaluation stage of the pipeline every front end
//! runs ([`crate::engine::jobs::trial`]; docs/models.md §8): clustering scores (repeated
//! k-means on H, or the model's own labels), the 80/20 stratified split with a linear SVM, and
//! the share of the run's triplets kept. A metric that cannot be computed becomes a note,
//! never an error: a run is never lost to its score.

use super::classify::{LinearSvmParams, SvmScaling, classify_split_with};
use super::kmeans::{KMeansParams, repeated_kmeans_with};
use super::metrics::{
    ClassificationReport, ClusteringSummary, MeanStd, best_map, clustering_scores,
    summarize_repeated_kmeans,
};
use super::semi::{ClassifierOutput, SemiReport, score_semi};
use super::triplets::triplets_kept;
use crate::engine::constraints::Triplet;
use ndarray::ArrayView2;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// How far an evaluation has got, read by a front end while it runs on another thread: the
/// k-means restarts and the binary SVMs done, out of all of them.
#[derive(Debug, Default)]
pub struct EvalProgress {
    done: AtomicUsize,
    total: AtomicUsize,
}

impl EvalProgress {
    /// The share done, in 0..=1 (0 before the evaluation has counted its steps).
    pub fn fraction(&self) -> f64 {
        let total = self.total.load(Ordering::Relaxed);
        if total == 0 {
            return 0.0;
        }
        (self.done.load(Ordering::Relaxed) as f64 / total as f64).min(1.0)
    }

    fn start(&self, total: usize) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
    }

    fn step(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
    }
}

/// Share of each class used for training in the classification protocol (docs/models.md §8.3).
pub const TRAIN_FRACTION: f64 = 0.8;
/// Lloyd passes per k-means restart (docs/models.md §2.6).
pub const KMEANS_MAX_ITER: usize = 100;

/// What the evaluation computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Protocol {
    /// k-means restarts on H (50 in the RPNMF protocol, docs/models.md §8.2).
    pub kmeans_restarts: usize,
    /// Also run the classification protocol (labelled data only).
    pub classify: bool,
    /// Feature scaling of every linear SVM (on H, and the baselines on X and NMF's H).
    pub svm: SvmScaling,
}

impl Default for Protocol {
    fn default() -> Self {
        Self {
            kmeans_restarts: 50,
            classify: true,
            svm: SvmScaling::Standardized,
        }
    }
}

/// How the clusters that were scored came about (`metrics.cluster_method`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClusterMethod {
    /// Repeated k-means on H.
    #[default]
    Kmeans,
    /// The model's own labelling (e.g. argmax of an indicator matrix).
    Model,
}

/// A finished run, as the evaluation needs it.
#[derive(Clone, Copy, Debug)]
pub struct RunInput<'a> {
    /// H, k×n (columns are samples).
    pub h: ArrayView2<'a, f64>,
    /// X, when the share of triplets kept in X is wanted too (m×n).
    pub x: Option<ArrayView2<'a, f64>>,
    /// The model's own labels of the samples, when it outputs them (scored instead of k-means).
    pub assignments: Option<&'a [usize]>,
    /// Ground truth, for scoring only.
    pub truth: Option<&'a [usize]>,
    /// Classes in the truth (0 when unlabelled); k-means uses this many clusters, else k.
    pub n_classes: usize,
    /// The triplets the run was given.
    pub triplets: &'a [Triplet],
    /// Seed of k-means and of the split.
    pub seed: u64,
    /// A classifier's predictions and the labels it was given (models whose output is class
    /// predictions): scored on the samples not given, instead of the 80/20 split on H.
    pub classifier: Option<ClassifierOutput<'a>>,
    /// H (k×n) of an NMF fit on the same data, for a classifier's linear-SVM baseline on H.
    pub baseline_h: Option<ArrayView2<'a, f64>>,
}

/// Every score of a run that applies to it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunEvaluation {
    pub cluster_method: ClusterMethod,
    /// Number of clusters c (classes when labelled, else k).
    pub n_clusters: usize,
    /// k-means restarts (1 when the model's own labels are scored).
    pub restarts: usize,
    /// ACC / NMI mean ± std over the restarts (labelled data only).
    pub clustering: Option<ClusteringSummary>,
    /// Cluster of each sample: the lowest-inertia restart, or the model's labels.
    pub clusters: Vec<usize>,
    /// Per sample: its best-map class differs from the truth (labelled data only).
    pub misassigned: Vec<bool>,
    /// 80/20 stratified split, linear SVM (labelled data, when the protocol asks).
    pub classification: Option<ClassificationReport>,
    /// A classifier's scores on the samples not given, with the SVM baselines on the same
    /// split (classifier runs on labelled data).
    pub semi: Option<SemiReport>,
    /// Share of the run's triplets H keeps (runs with triplets only).
    pub kept_h: Option<f64>,
    /// Share of them X keeps (when X was given).
    pub kept_x: Option<f64>,
    /// Feature scaling of the linear SVMs that were trained.
    pub svm: SvmScaling,
    /// Non-fatal problems (one metric could not be computed).
    pub notes: Vec<String>,
    pub seconds: f64,
}

/// Evaluate a finished run by the protocol.
pub fn evaluate_run(input: &RunInput<'_>, protocol: &Protocol) -> RunEvaluation {
    evaluate_run_with(input, protocol, &EvalProgress::default())
}

/// [`evaluate_run`], counting its k-means restarts and binary SVMs into `progress`.
pub fn evaluate_run_with(
    input: &RunInput<'_>,
    protocol: &Protocol,
    progress: &EvalProgress,
) -> RunEvaluation {
    let t0 = Instant::now();
    let n = input.h.ncols();
    let truth = input.truth.filter(|t| t.len() == n);
    let c = if truth.is_some() && input.n_classes > 0 {
        input.n_classes
    } else {
        input.h.nrows()
    }
    .clamp(1, n.max(1));
    let mut ev = RunEvaluation {
        n_clusters: c,
        restarts: protocol.kmeans_restarts.max(1),
        svm: protocol.svm,
        ..RunEvaluation::default()
    };
    let own = input.assignments.filter(|a| a.len() == n);
    let svms = match truth {
        Some(_) if protocol.classify && input.classifier.is_none() => {
            input.n_classes.max(2) - usize::from(input.n_classes <= 2)
        }
        _ => 0,
    };
    progress.start(if own.is_some() { 0 } else { ev.restarts } + svms);
    match own {
        Some(own) => ev.score_own_labels(own, truth),
        None => ev.cluster_h(input, truth, progress),
    }
    if let Some(t) = truth
        && !ev.clusters.is_empty()
    {
        ev.mark_misassigned(t);
    }
    if let (Some(t), Some(out)) = (truth, input.classifier.as_ref()) {
        match score_semi(out, t, input.x, input.baseline_h, input.seed, protocol.svm) {
            Ok((report, notes)) => {
                ev.semi = Some(report);
                ev.notes.extend(notes);
            }
            Err(e) => ev
                .notes
                .push(format!("classification of the samples not given: {e}")),
        }
    }
    // A classifier is scored on its own split above; the 80/20 split on its H (class
    // confidences) would score something else.
    if let (Some(t), true, None) = (truth, protocol.classify, input.classifier.as_ref()) {
        let svm = LinearSvmParams {
            seed: input.seed,
            scaling: protocol.svm,
            ..LinearSvmParams::default()
        };
        match classify_split_with(input.h, t, TRAIN_FRACTION, input.seed, &svm, &|| {
            progress.step();
        }) {
            Ok(out) => ev.classification = Some(out.report),
            Err(e) => ev.notes.push(format!("classification: {e}")),
        }
    }
    if !input.triplets.is_empty() {
        ev.measure_triplets(input);
    }
    ev.seconds = t0.elapsed().as_secs_f64();
    ev
}

impl RunEvaluation {
    /// A model with its own labels: they are the clusters, scored once against the truth.
    fn score_own_labels(&mut self, own: &[usize], truth: Option<&[usize]>) {
        self.cluster_method = ClusterMethod::Model;
        self.restarts = 1;
        self.clusters = own.to_vec();
        let Some(t) = truth else { return };
        match clustering_scores(t, own) {
            Ok(s) => {
                let one = |v: f64| MeanStd::of(&[v]);
                self.clustering = Some(ClusteringSummary {
                    acc: one(s.acc),
                    nmi_max: one(s.nmi_max),
                    nmi_sqrt: one(s.nmi_sqrt),
                    nmi_arith: one(s.nmi_arith),
                    restarts: 1,
                    best_restart: 0,
                    best: s,
                    per_restart: vec![s],
                });
            }
            Err(e) => self.notes.push(format!("clustering scores: {e}")),
        }
    }

    /// The protocol's k-means restarts on H: the best restart's clusters, and the scores
    /// over every restart when the truth is known.
    fn cluster_h(
        &mut self,
        input: &RunInput<'_>,
        truth: Option<&[usize]>,
        progress: &EvalProgress,
    ) {
        let params = KMeansParams {
            n_clusters: self.n_clusters,
            max_iter: KMEANS_MAX_ITER,
            restarts: self.restarts,
            seed: input.seed,
        };
        match repeated_kmeans_with(input.h, &params, &|| progress.step()) {
            Ok(rep) => {
                if let Some(best) = rep.best_run() {
                    self.clusters = best.labels.clone();
                }
                if let Some(t) = truth {
                    match summarize_repeated_kmeans(t, &rep) {
                        Ok(summary) => self.clustering = Some(summary),
                        Err(e) => self.notes.push(format!("clustering scores: {e}")),
                    }
                }
            }
            Err(e) => self.notes.push(format!("k-means: {e}")),
        }
    }

    /// Which samples the Hungarian best map of the clusters to the classes gets wrong.
    fn mark_misassigned(&mut self, truth: &[usize]) {
        match best_map(truth, &self.clusters) {
            Ok(map) => {
                let to_class: HashMap<usize, usize> = map.pairs.into_iter().collect();
                self.misassigned = self
                    .clusters
                    .iter()
                    .zip(truth)
                    .map(|(g, t)| to_class.get(g) != Some(t))
                    .collect();
            }
            Err(e) => self.notes.push(format!("best map: {e}")),
        }
    }

    /// The share of the triplets kept in H, and in X when X is given.
    fn measure_triplets(&mut self, input: &RunInput<'_>) {
        match triplets_kept(input.h, input.triplets) {
            Ok(kept) => self.kept_h = Some(kept),
            Err(e) => self.notes.push(format!("triplets kept: {e}")),
        }
        if let Some(x) = input.x {
            match triplets_kept(x, input.triplets) {
                Ok(kept) => self.kept_x = Some(kept),
                Err(e) => self.notes.push(format!("triplets kept in X: {e}")),
            }
        }
    }
}

impl RunEvaluation {
    /// The `metrics` object of `run --json` and `run.json` (the README's `run` section lists
    /// the keys): means over the restarts, their standard deviations, and the rest.
    pub fn metrics_json(&self) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        m.insert("cluster_method".into(), json!(self.cluster_method));
        m.insert("kmeans_repeats".into(), json!(self.restarts));
        if self.classification.is_some() || self.semi.is_some() {
            m.insert("svm".into(), json!(self.svm.name()));
        }
        if let Some(s) = &self.clustering {
            for (name, v) in self.clustering_means() {
                m.insert(name.into(), json!(v.mean));
                m.insert(format!("{name}_std"), json!(v.std));
            }
            m.insert("acc_best_inertia".into(), json!(s.best.acc));
        }
        if let Some(r) = &self.classification {
            m.insert("accuracy".into(), json!(r.accuracy));
            m.insert("macro_f1".into(), json!(r.macro_f1));
            m.insert("macro_f1_of_means".into(), json!(r.macro_f1_of_means));
        }
        if let Some(r) = &self.semi {
            m.insert("class_acc".into(), json!(r.model.accuracy));
            m.insert("macro_f1".into(), json!(r.model.macro_f1));
            m.insert("macro_f1_of_means".into(), json!(r.model.macro_f1_of_means));
            m.insert("given".into(), json!(r.given));
            m.insert("scored".into(), json!(r.model.n));
            m.insert("train_share".into(), json!(r.train_share()));
            m.insert("confusion".into(), json!(r.model.confusion));
            for (name, b) in [("svm_x", &r.svm_x), ("svm_nmf_h", &r.svm_h)] {
                if let Some(b) = b {
                    m.insert(format!("{name}_acc"), json!(b.accuracy));
                    m.insert(format!("{name}_macro_f1"), json!(b.macro_f1));
                }
            }
        }
        if let Some(v) = self.kept_x {
            m.insert("triplets_kept_x".into(), json!(v));
        }
        if let Some(v) = self.kept_h {
            m.insert("triplets_kept_h".into(), json!(v));
        }
        if !self.notes.is_empty() {
            m.insert("notes".into(), json!(self.notes));
        }
        m
    }

    /// `(name, mean ± std)` of ACC and the three NMIs, when the data is labelled.
    pub fn clustering_means(&self) -> Vec<(&'static str, MeanStd)> {
        self.clustering.as_ref().map_or_else(Vec::new, |s| {
            vec![
                ("acc", s.acc),
                ("nmi_max", s.nmi_max),
                ("nmi_sqrt", s.nmi_sqrt),
                ("nmi_arith", s.nmi_arith),
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// The app's target size: a finished run's evaluation (50 k-means restarts, the 80/20
    /// split with the linear SVM) on a 10×200,000 H in 10 overlapping classes, within 10 s.
    /// `cargo test --release --lib eval::run -- --ignored --nocapture` prints the parts.
    #[test]
    #[ignore = "slow: the 200,000-sample evaluation (seconds in release)"]
    fn evaluation_at_200000_samples() {
        use rand::{Rng, SeedableRng};
        let (k, n, c) = (10, 200_000, 10);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let truth: Vec<usize> = (0..n).map(|_| rng.gen_range(0..c)).collect();
        let h = ndarray::Array2::from_shape_fn((k, n), |(r, i)| {
            let on = if r == truth[i] { 1.0 } else { 0.2 };
            on + 1.5 * rng.r#gen::<f64>()
        });
        let t0 = Instant::now();
        let params = KMeansParams {
            n_clusters: c,
            max_iter: KMEANS_MAX_ITER,
            restarts: 50,
            seed: 3,
        };
        let rep = super::super::kmeans::repeated_kmeans(h.view(), &params).expect("k-means");
        let passes: usize = rep.runs.iter().map(|r| r.iterations).sum();
        let t_km = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let svm = LinearSvmParams {
            seed: 3,
            ..LinearSvmParams::default()
        };
        let out = super::super::classify::classify_split(h.view(), &truth, TRAIN_FRACTION, 3, &svm)
            .expect("svm");
        let t_svm = t1.elapsed().as_secs_f64();
        eprintln!(
            "n = {n}: k-means 50 restarts {t_km:.2} s ({passes} passes), SVM split {t_svm:.2} s \
             (accuracy {:.3}), rayon threads {}",
            out.report.accuracy,
            rayon::current_num_threads()
        );
        assert!(t_km + t_svm < 10.0, "evaluation took {:.1} s", t_km + t_svm);
    }

    /// Two well separated groups in 2-D: k-means finds them, and every score is known.
    fn two_groups() -> ndarray::Array2<f64> {
        array![
            [0.0, 0.1, 0.2, 0.1, 5.0, 5.1, 5.2, 5.1, 0.0, 5.0],
            [0.0, 0.1, 0.0, 0.2, 5.0, 5.0, 5.1, 5.2, 0.1, 5.1]
        ]
    }

    #[test]
    fn kmeans_scores_two_separated_groups_perfectly() {
        let h = two_groups();
        let truth = [0, 0, 0, 0, 1, 1, 1, 1, 0, 1];
        // (0, 1, 4): 0 is nearer 1 than 4 (kept); (0, 4, 1) is not.
        let ts = [Triplet::new(0, 1, 4), Triplet::new(0, 4, 1)];
        let input = RunInput {
            classifier: None,
            baseline_h: None,
            h: h.view(),
            x: Some(h.view()),
            assignments: None,
            truth: Some(&truth),
            n_classes: 2,
            triplets: &ts,
            seed: 1,
        };
        let ev = evaluate_run(&input, &Protocol::default());
        assert_eq!(ev.cluster_method, ClusterMethod::Kmeans);
        let c = ev.clustering.as_ref().unwrap();
        assert_eq!(c.acc.mean, 1.0);
        assert!((c.nmi_sqrt.mean - 1.0).abs() < 1e-12);
        assert!(ev.misassigned.iter().all(|&m| !m));
        assert_eq!(ev.kept_h, Some(0.5));
        assert_eq!(ev.kept_x, Some(0.5));
        assert!(ev.classification.is_some(), "{:?}", ev.notes);
        let m = ev.metrics_json();
        assert_eq!(m["acc"], json!(1.0));
        assert_eq!(m["cluster_method"], json!("kmeans"));
    }

    #[test]
    fn a_models_own_labels_are_scored_instead_of_kmeans() {
        let h = two_groups();
        let truth = [0, 0, 0, 0, 1, 1, 1, 1, 0, 1];
        // One of ten wrong: ACC 0.9 whatever the cluster ids are called.
        let own = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0];
        let input = RunInput {
            classifier: None,
            baseline_h: None,
            h: h.view(),
            x: None,
            assignments: Some(&own),
            truth: Some(&truth),
            n_classes: 2,
            triplets: &[],
            seed: 1,
        };
        let p = Protocol {
            kmeans_restarts: 50,
            classify: false,
            ..Protocol::default()
        };
        let ev = evaluate_run(&input, &p);
        assert_eq!(ev.cluster_method, ClusterMethod::Model);
        assert_eq!(ev.restarts, 1);
        assert!((ev.clustering.as_ref().unwrap().acc.mean - 0.9).abs() < 1e-15);
        assert_eq!(ev.misassigned.iter().filter(|&&m| m).count(), 1);
        assert!(ev.misassigned[8]);
        assert!(ev.classification.is_none());
        assert_eq!(ev.metrics_json()["cluster_method"], json!("model"));
    }

    #[test]
    fn unlabelled_data_gets_clusters_but_no_scores() {
        let h = two_groups();
        let input = RunInput {
            classifier: None,
            baseline_h: None,
            h: h.view(),
            x: None,
            assignments: None,
            truth: None,
            n_classes: 0,
            triplets: &[],
            seed: 0,
        };
        let ev = evaluate_run(&input, &Protocol::default());
        assert_eq!(ev.n_clusters, 2, "k = 2 rows of H");
        assert_eq!(ev.clusters.len(), 10);
        assert!(ev.clustering.is_none() && ev.classification.is_none());
        assert!(ev.notes.is_empty());
    }
}
