//! Clustering and classification metrics (docs/models.md §8.1, §8.5).
//!
//! Labels are `&[usize]` with arbitrary ids (not necessarily `0..c`, not necessarily the same
//! set in both labelings). Clustering metrics (ACC, NMI) are invariant to renaming the clusters;
//! classification metrics (accuracy, F1, confusion matrix) compare ids literally.

use super::kmeans::RepeatedKMeans;
use super::{EvalError, check_same_len};
use pathfinding::prelude::{Matrix, kuhn_munkres};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Map arbitrary ids to `0..k` in increasing id order; returns the codes and the sorted ids.
/// Each label's code (its rank among the distinct ids) and the distinct ids, ascending.
fn encode(labels: &[usize]) -> (Vec<usize>, Vec<usize>) {
    // Ids below a few times n (class and cluster numbers): a table indexed by id, one pass
    // each way, instead of a sort and a tree lookup per label (the scores of 50 k-means
    // restarts at 200,000 samples encode 100 labelings).
    let max = labels.iter().copied().max().unwrap_or(0);
    if max <= 4 * labels.len() + 1024 {
        let mut code = vec![usize::MAX; max + 1];
        for &l in labels {
            code[l] = 0;
        }
        let mut ids = Vec::new();
        for (id, c) in code.iter_mut().enumerate() {
            if *c == 0 {
                *c = ids.len();
                ids.push(id);
            }
        }
        let codes = labels.iter().map(|&l| code[l]).collect();
        return (codes, ids);
    }
    let mut ids: Vec<usize> = labels.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let index: BTreeMap<usize, usize> = ids.iter().enumerate().map(|(k, &id)| (id, k)).collect();
    let codes = labels.iter().map(|l| index[l]).collect();
    (codes, ids)
}

/// Contingency table of two labelings: `counts[a][b]` = samples with class a and cluster b
/// (a, b index the sorted distinct ids of each labeling).
struct Contingency {
    /// The distinct ids of the truth (rows) and of the prediction (columns), ascending.
    t_ids: Vec<usize>,
    p_ids: Vec<usize>,
    counts: Vec<Vec<usize>>,
    row_sums: Vec<usize>,
    col_sums: Vec<usize>,
    n: usize,
}

impl Contingency {
    fn new(truth: &[usize], pred: &[usize]) -> Result<Self, EvalError> {
        check_same_len("truth", truth.len(), "prediction", pred.len())?;
        if truth.is_empty() {
            return Err(EvalError::Empty);
        }
        let (t, t_ids) = encode(truth);
        let (p, p_ids) = encode(pred);
        let mut counts = vec![vec![0usize; p_ids.len()]; t_ids.len()];
        for (&a, &b) in t.iter().zip(&p) {
            counts[a][b] += 1;
        }
        let row_sums = counts.iter().map(|r| r.iter().sum()).collect();
        let col_sums = (0..p_ids.len())
            .map(|b| counts.iter().map(|r| r[b]).sum())
            .collect();
        Ok(Self {
            t_ids,
            p_ids,
            counts,
            row_sums,
            col_sums,
            n: truth.len(),
        })
    }

    /// Mutual information in nats. As scikit-learn does: exactly 0 when either labeling is a
    /// single cluster, terms below machine epsilon in magnitude dropped, clipped at 0.
    fn mutual_info(&self) -> f64 {
        if self.row_sums.len() == 1 || self.col_sums.len() == 1 {
            return 0.0;
        }
        let n = self.n as f64;
        let mut mi = 0.0;
        for (a, row) in self.counts.iter().enumerate() {
            for (b, &nab) in row.iter().enumerate() {
                if nab > 0 {
                    let nab = nab as f64;
                    let outer = self.row_sums[a] as f64 * self.col_sums[b] as f64;
                    let term = nab / n * ((nab * n).ln() - outer.ln());
                    if term.abs() >= f64::EPSILON {
                        mi += term;
                    }
                }
            }
        }
        mi.max(0.0)
    }
}

/// Entropy in nats of a labeling given its class sizes.
fn entropy_of_counts(counts: &[usize], n: usize) -> f64 {
    let n = n as f64;
    -counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let c = c as f64;
            c / n * (c.ln() - n.ln())
        })
        .sum::<f64>()
}

/// Entropy (nats) of a labeling.
pub fn entropy(labels: &[usize]) -> f64 {
    let mut counts: BTreeMap<usize, usize> = BTreeMap::new();
    labels
        .iter()
        .for_each(|&l| *counts.entry(l).or_default() += 1);
    let c: Vec<usize> = counts.into_values().collect();
    entropy_of_counts(&c, labels.len())
}

/// Mutual information (nats) of two labelings.
pub fn mutual_info(truth: &[usize], pred: &[usize]) -> Result<f64, EvalError> {
    Ok(Contingency::new(truth, pred)?.mutual_info())
}

/// The best one-to-one map between clusters and classes (docs/models.md §8.1, Hungarian on the
/// zero-padded square contingency table).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BestMap {
    /// (cluster id, class id) pairs that the assignment matched; clusters beyond the number of
    /// classes (or classes beyond the number of clusters) are left out.
    pub pairs: Vec<(usize, usize)>,
    /// Samples on the matched cells.
    pub matched: usize,
    /// Number of samples.
    pub n: usize,
}

/// Hungarian best map between the clusters of `pred` and the classes of `truth` (pairs sorted
/// by cluster id).
pub fn best_map(truth: &[usize], pred: &[usize]) -> Result<BestMap, EvalError> {
    Ok(best_map_of(&Contingency::new(truth, pred)?))
}

/// [`best_map`] from the contingency table.
fn best_map_of(cont: &Contingency) -> BestMap {
    let (t_ids, p_ids) = (&cont.t_ids, &cont.p_ids);
    // Rectangular weight matrix with the smaller side as rows (kuhn_munkres needs rows ≤
    // columns): the same optimum as the zero-padded square table of §8.1, in O(r²c) not O(c³).
    let (nt, np) = (t_ids.len(), p_ids.len());
    let clusters_as_rows = np <= nt;
    let (rows, cols) = if clusters_as_rows { (np, nt) } else { (nt, np) };
    let mut weights = Matrix::new(rows, cols, 0i64);
    for (a, row) in cont.counts.iter().enumerate() {
        for (b, &nab) in row.iter().enumerate() {
            let cell = if clusters_as_rows { (b, a) } else { (a, b) };
            weights[cell] = i64::try_from(nab).unwrap_or(i64::MAX);
        }
    }
    let (_, assignment) = kuhn_munkres(&weights);
    let mut pairs = Vec::with_capacity(rows);
    let mut matched = 0;
    for (r, &c) in assignment.iter().enumerate() {
        let (b, a) = if clusters_as_rows { (r, c) } else { (c, r) };
        pairs.push((p_ids[b], t_ids[a]));
        matched += cont.counts[a][b];
    }
    pairs.sort_unstable();
    BestMap {
        pairs,
        matched,
        n: cont.n,
    }
}

/// Clustering accuracy ACC = (samples on the best-map cells) / n (docs/models.md §8.1).
pub fn clustering_accuracy(truth: &[usize], pred: &[usize]) -> Result<f64, EvalError> {
    let m = best_map(truth, pred)?;
    Ok(m.matched as f64 / m.n as f64)
}

/// NMI normalisations (docs/models.md §8.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NmiNorm {
    /// I / max(H₁, H₂): Cai's `MutualInfo.m`; use for RPNMF's tables.
    Max,
    /// I / √(H₁H₂): Strehl–Ghosh; use for PSMF's tables (scikit-learn's 'geometric').
    Sqrt,
    /// 2I / (H₁ + H₂): scikit-learn's default 'arithmetic'.
    Arith,
}

/// Normalised mutual information (docs/models.md §8.1), natural log, clean definition (no Cai
/// smoothing). Edge cases as in scikit-learn's `normalized_mutual_info_score` (1.x): if both
/// labelings consist of a single cluster the NMI is 1; otherwise if the mutual information is
/// 0 (in particular when either labeling is a single cluster) the NMI is 0.
pub fn nmi(truth: &[usize], pred: &[usize], norm: NmiNorm) -> Result<f64, EvalError> {
    let cont = Contingency::new(truth, pred)?;
    Ok(nmi_of(&cont, norm))
}

fn nmi_of(cont: &Contingency, norm: NmiNorm) -> f64 {
    if cont.row_sums.len() == 1 && cont.col_sums.len() == 1 {
        return 1.0;
    }
    let mi = cont.mutual_info();
    if mi == 0.0 {
        return 0.0;
    }
    let h1 = entropy_of_counts(&cont.row_sums, cont.n);
    let h2 = entropy_of_counts(&cont.col_sums, cont.n);
    let den = match norm {
        NmiNorm::Max => h1.max(h2),
        NmiNorm::Sqrt => (h1 * h2).sqrt(),
        NmiNorm::Arith => 0.5 * (h1 + h2),
    };
    if den > 0.0 { mi / den } else { 0.0 }
}

/// ACC and the three NMIs of one clustering.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusteringScores {
    pub acc: f64,
    pub nmi_max: f64,
    pub nmi_sqrt: f64,
    pub nmi_arith: f64,
}

/// ACC and NMI (max, sqrt, arith) of a clustering against the truth.
pub fn clustering_scores(truth: &[usize], pred: &[usize]) -> Result<ClusteringScores, EvalError> {
    let cont = Contingency::new(truth, pred)?;
    let map = best_map_of(&cont);
    Ok(ClusteringScores {
        acc: map.matched as f64 / map.n as f64,
        nmi_max: nmi_of(&cont, NmiNorm::Max),
        nmi_sqrt: nmi_of(&cont, NmiNorm::Sqrt),
        nmi_arith: nmi_of(&cont, NmiNorm::Arith),
    })
}

/// Mean and standard deviation of a metric over repetitions. `std` is the sample standard
/// deviation (n − 1 denominator, MATLAB's `std`, as the source papers report); 0 for one value.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeanStd {
    pub mean: f64,
    pub std: f64,
}

impl MeanStd {
    /// Mean and sample std of `values` (NaN mean for an empty slice).
    pub fn of(values: &[f64]) -> Self {
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let std = if values.len() > 1 {
            (values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Self { mean, std }
    }
}

/// Clustering metrics over the restarts of repeated k-means (docs/models.md §8.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusteringSummary {
    pub acc: MeanStd,
    pub nmi_max: MeanStd,
    pub nmi_sqrt: MeanStd,
    pub nmi_arith: MeanStd,
    /// Number of restarts summarised.
    pub restarts: usize,
    /// Index of the lowest-inertia restart and its scores.
    pub best_restart: usize,
    pub best: ClusteringScores,
    /// Scores of every restart, in restart order.
    pub per_restart: Vec<ClusteringScores>,
}

/// Score every restart of repeated k-means against the truth: mean ± std per metric, and the
/// scores of the lowest-inertia restart.
pub fn summarize_repeated_kmeans(
    truth: &[usize],
    kmeans: &RepeatedKMeans,
) -> Result<ClusteringSummary, EvalError> {
    use rayon::prelude::*;
    // Each restart scored on its own (rayon keeps the order): the same values on any number
    // of threads.
    let per_restart = kmeans
        .runs
        .par_iter()
        .map(|run| clustering_scores(truth, &run.labels))
        .collect::<Result<Vec<_>, _>>()?;
    let best = *per_restart.get(kmeans.best).ok_or(EvalError::Empty)?;
    let col = |f: fn(&ClusteringScores) -> f64| {
        MeanStd::of(&per_restart.iter().map(f).collect::<Vec<_>>())
    };
    Ok(ClusteringSummary {
        acc: col(|s| s.acc),
        nmi_max: col(|s| s.nmi_max),
        nmi_sqrt: col(|s| s.nmi_sqrt),
        nmi_arith: col(|s| s.nmi_arith),
        restarts: per_restart.len(),
        best_restart: kmeans.best,
        best,
        per_restart,
    })
}

/// Fraction of samples whose predicted id equals the true id (docs/models.md §8.5).
pub fn accuracy(truth: &[usize], pred: &[usize]) -> Result<f64, EvalError> {
    check_same_len("truth", truth.len(), "prediction", pred.len())?;
    if truth.is_empty() {
        return Err(EvalError::Empty);
    }
    let hits = truth.iter().zip(pred).filter(|(a, b)| a == b).count();
    Ok(hits as f64 / truth.len() as f64)
}

/// Confusion matrix: `counts[a][b]` = samples of true label `labels[a]` predicted `labels[b]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfusionMatrix {
    /// Sorted union of the ids in truth and prediction.
    pub labels: Vec<usize>,
    /// Rows = true label, columns = predicted label.
    pub counts: Vec<Vec<usize>>,
}

/// Precision, recall, F1 and support of one class.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassScore {
    pub label: usize,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    /// Number of true samples of this class.
    pub support: usize,
}

/// Classification metrics of docs/models.md §8.5.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassificationReport {
    pub n: usize,
    pub accuracy: f64,
    /// Mean of the per-class F1 (2-STGINMF's MF1).
    pub macro_f1: f64,
    /// F1 of macro-precision and macro-recall (Zhou's textbook definition, §8.5).
    pub macro_f1_of_means: f64,
    pub per_class: Vec<ClassScore>,
    pub confusion: ConfusionMatrix,
}

fn ratio(num: usize, den: usize) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

fn f1(p: f64, r: f64) -> f64 {
    if p + r > 0.0 {
        2.0 * p * r / (p + r)
    } else {
        0.0
    }
}

/// Accuracy, per-class precision/recall/F1, macro-F1, `macro_f1_of_means` and the confusion
/// matrix (docs/models.md §8.5). A 0/0 precision, recall or F1 counts as 0.
///
/// The classes averaged are the sorted union of the ids in truth and prediction, as
/// scikit-learn's `f1_score(average="macro")` does. docs/models.md §8.5 averages over the
/// classes present in the test set; the two agree unless a class is predicted that has no
/// true sample (it then enters with F1 = 0).
pub fn classification_report(
    truth: &[usize],
    pred: &[usize],
) -> Result<ClassificationReport, EvalError> {
    let acc = accuracy(truth, pred)?;
    let mut all: Vec<usize> = truth.iter().chain(pred).copied().collect();
    all.sort_unstable();
    all.dedup();
    let index: BTreeMap<usize, usize> = all.iter().enumerate().map(|(k, &id)| (id, k)).collect();
    let c = all.len();
    let mut counts = vec![vec![0usize; c]; c];
    for (t, p) in truth.iter().zip(pred) {
        counts[index[t]][index[p]] += 1;
    }
    let per_class: Vec<ClassScore> = (0..c)
        .map(|a| {
            let tp = counts[a][a];
            let support: usize = counts[a].iter().sum();
            let predicted: usize = counts.iter().map(|r| r[a]).sum();
            let precision = ratio(tp, predicted);
            let recall = ratio(tp, support);
            ClassScore {
                label: all[a],
                precision,
                recall,
                f1: f1(precision, recall),
                support,
            }
        })
        .collect();
    let cf = c as f64;
    let macro_f1 = per_class.iter().map(|s| s.f1).sum::<f64>() / cf;
    let macro_p = per_class.iter().map(|s| s.precision).sum::<f64>() / cf;
    let macro_r = per_class.iter().map(|s| s.recall).sum::<f64>() / cf;
    Ok(ClassificationReport {
        n: truth.len(),
        accuracy: acc,
        macro_f1,
        macro_f1_of_means: f1(macro_p, macro_r),
        per_class,
        confusion: ConfusionMatrix {
            labels: all,
            counts,
        },
    })
}

/// Macro-F1: the mean of the per-class F1 (see [`classification_report`] for the class set).
pub fn macro_f1(truth: &[usize], pred: &[usize]) -> Result<f64, EvalError> {
    Ok(classification_report(truth, pred)?.macro_f1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// Small ids go through the table, large ones through the sort: the same codes and ids,
    /// and the same scores for a labelling renamed from one to the other.
    #[test]
    fn encoding_by_table_equals_encoding_by_sort() {
        let small = [3usize, 0, 7, 3, 3, 9, 0, 7];
        let big: Vec<usize> = small.iter().map(|&l| 1_000_000 + 10 * l).collect();
        let (codes_s, ids_s) = encode(&small);
        let (codes_b, ids_b) = encode(&big);
        assert_eq!(codes_s, vec![1, 0, 2, 1, 1, 3, 0, 2]);
        assert_eq!(codes_s, codes_b);
        assert_eq!(ids_s, vec![0, 3, 7, 9]);
        assert_eq!(ids_b, vec![1_000_000, 1_000_030, 1_000_070, 1_000_090]);
        let truth = [0usize, 0, 1, 1, 1, 2, 2, 2];
        let a = clustering_scores(&truth, &small).unwrap();
        let b = clustering_scores(&truth, &big).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.acc, clustering_accuracy(&truth, &small).unwrap());
    }

    #[test]
    fn perfect_clustering_with_permuted_ids() {
        let truth = [0, 0, 1, 1, 2, 2, 2];
        let pred = [7, 7, 3, 3, 10, 10, 10];
        let s = clustering_scores(&truth, &pred).unwrap();
        assert_eq!(s.acc, 1.0);
        assert!(close(s.nmi_max, 1.0) && close(s.nmi_sqrt, 1.0) && close(s.nmi_arith, 1.0));
    }

    /// Worked by hand. truth = [0,0,0,1,1,1], pred = [0,0,1,1,2,2] (n = 6).
    /// Contingency (rows = classes 0,1; columns = clusters 0,1,2): [[2,1,0],[0,1,2]].
    /// Best map: cluster 0 → class 0, cluster 2 → class 1 (cluster 1 unmatched): 2 + 2 = 4,
    /// so ACC = 4/6 = 2/3.
    /// H(Y) = ln 2; H(C) = ln 3 (three clusters of 2).
    /// I = Σ n_ab/n ln(n n_ab / (n_a n_b)):
    ///   cells with 2: 2 × (2/6) ln(6·2/(3·2)) = (2/3) ln 2;
    ///   cells with 1: 2 × (1/6) ln(6·1/(3·2)) = 0.
    /// So I = (2/3) ln 2, NMI_max = (2/3) ln 2 / ln 3, NMI_sqrt = (2/3) √(ln 2 / ln 3),
    /// NMI_arith = (4/3) ln 2 / (ln 2 + ln 3).
    #[test]
    fn six_samples_by_hand() {
        let truth = [0, 0, 0, 1, 1, 1];
        let pred = [0, 0, 1, 1, 2, 2];
        let (l2, l3) = (2f64.ln(), 3f64.ln());
        let s = clustering_scores(&truth, &pred).unwrap();
        assert!(close(s.acc, 2.0 / 3.0));
        assert!(close(mutual_info(&truth, &pred).unwrap(), 2.0 / 3.0 * l2));
        assert!(close(s.nmi_max, 2.0 / 3.0 * l2 / l3));
        assert!(close(s.nmi_sqrt, 2.0 / 3.0 * (l2 / l3).sqrt()));
        assert!(close(s.nmi_arith, 4.0 / 3.0 * l2 / (l2 + l3)));
        assert!(close(entropy(&pred), l3));
        let m = best_map(&truth, &pred).unwrap();
        assert_eq!(m.pairs, vec![(0, 0), (2, 1)]);
    }

    /// Unequal numbers of classes (3) and clusters (2): truth = [5,5,6,6,7,7], pred = [1,1,1,1,2,2].
    /// Contingency rows 5,6,7 × clusters 1,2: [[2,0],[2,0],[0,2]]; best map 1→5 (or 6), 2→7:
    /// ACC = 4/6.
    #[test]
    fn unequal_classes_and_clusters() {
        let truth = [5, 5, 6, 6, 7, 7];
        let pred = [1, 1, 1, 1, 2, 2];
        assert!(close(
            clustering_accuracy(&truth, &pred).unwrap(),
            4.0 / 6.0
        ));
        // And the other way round (more clusters than classes): symmetric here.
        assert!(close(
            clustering_accuracy(&pred, &truth).unwrap(),
            4.0 / 6.0
        ));
        // H(Y) = ln 3, H(C) = H(2/3, 1/3); C is a function of Y, so I = H(C).
        let hc = -(2.0 / 3.0 * (2f64 / 3.0).ln() + 1.0 / 3.0 * (1f64 / 3.0).ln());
        assert!(close(
            nmi(&truth, &pred, NmiNorm::Max).unwrap(),
            hc / 3f64.ln()
        ));
    }

    #[test]
    fn single_cluster_edge_cases() {
        // Both single: NMI = 1 (scikit-learn's convention); ACC = 1.
        let s = clustering_scores(&[4, 4, 4], &[9, 9, 9]).unwrap();
        assert_eq!(
            (s.acc, s.nmi_max, s.nmi_sqrt, s.nmi_arith),
            (1.0, 1.0, 1.0, 1.0)
        );
        // One single cluster against two classes: NMI = 0; ACC = majority share.
        let s = clustering_scores(&[0, 0, 0, 1], &[3, 3, 3, 3]).unwrap();
        assert_eq!(s.acc, 0.75);
        assert_eq!((s.nmi_max, s.nmi_sqrt, s.nmi_arith), (0.0, 0.0, 0.0));
        // Independent labelings: I = 0 exactly, NMI = 0.
        let s = clustering_scores(&[0, 0, 1, 1], &[0, 1, 0, 1]).unwrap();
        assert_eq!(s.nmi_max, 0.0);
        assert_eq!(s.acc, 0.5);
    }

    #[test]
    fn errors() {
        assert!(matches!(
            clustering_scores(&[0, 1], &[0]),
            Err(EvalError::LengthMismatch {
                len_a: 2,
                len_b: 1,
                ..
            })
        ));
        assert_eq!(clustering_scores(&[], &[]), Err(EvalError::Empty));
        assert_eq!(accuracy(&[], &[]), Err(EvalError::Empty));
    }

    /// truth = [0,0,1,1,2,2], pred = [0,1,1,1,2,0].
    /// Class 0: TP 1, predicted 2, support 2 → P = R = F1 = 1/2.
    /// Class 1: TP 2, predicted 3, support 2 → P = 2/3, R = 1, F1 = 0.8.
    /// Class 2: TP 1, predicted 1, support 2 → P = 1, R = 1/2, F1 = 2/3.
    /// macro-F1 = (1/2 + 4/5 + 2/3)/3 = 59/90; macro-P = 13/18, macro-R = 2/3,
    /// macro_f1_of_means = 2·(13/18)(2/3)/(13/18 + 12/18) = (26/27)(18/25) = 52/75.
    #[test]
    fn classification_by_hand() {
        let r = classification_report(&[0, 0, 1, 1, 2, 2], &[0, 1, 1, 1, 2, 0]).unwrap();
        assert!(close(r.accuracy, 4.0 / 6.0));
        assert!(close(r.per_class[1].precision, 2.0 / 3.0));
        assert!(close(r.per_class[2].f1, 2.0 / 3.0));
        assert!(close(r.macro_f1, 59.0 / 90.0));
        assert!(close(r.macro_f1_of_means, 52.0 / 75.0));
        assert_eq!(
            r.confusion.counts,
            vec![vec![1, 1, 0], vec![0, 2, 0], vec![1, 0, 1]]
        );
        // A predicted label absent from the truth enters with F1 = 0.
        let r = classification_report(&[0, 0, 1], &[0, 0, 5]).unwrap();
        assert_eq!(r.confusion.labels, vec![0, 1, 5]);
        assert!(close(r.macro_f1, 1.0 / 3.0));
    }

    #[test]
    fn mean_std() {
        let m = MeanStd::of(&[1.0, 2.0, 3.0, 4.0]);
        assert!(close(m.mean, 2.5));
        assert!(close(m.std, (5.0f64 / 3.0).sqrt()));
        assert_eq!(MeanStd::of(&[2.0]).std, 0.0);
    }
}
