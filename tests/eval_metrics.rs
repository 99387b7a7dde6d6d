//! The evaluation stack (docs/models.md §8) against scikit-learn, and smoke tests on Iris (§9.3).

#![expect(clippy::unwrap_used, reason = "tests fail loudly on unexpected errors")]

use ndarray::Array2;
use nmf_playground::engine::eval::{
    KMeansParams, LinearSvmParams, accuracy, classification_report, classify_repeated,
    classify_split, cluster_and_score, clustering_scores, repeated_kmeans,
    summarize_repeated_kmeans,
};

/// Expected values of one labeling pair.
struct Case {
    name: &'static str,
    truth: &'static [usize],
    pred: &'static [usize],
    acc: f64,
    nmi_max: f64,
    nmi_sqrt: f64,
    nmi_arith: f64,
    macro_f1: f64,
    macro_f1_of_means: f64,
    accuracy: f64,
}

/// Expected numbers from scikit-learn 1.9.1 / scipy 1.17.1 / numpy 2.4.6 (Python 3, pip venv),
/// printed with `repr(float(v))` by this script, for each (t, p) below:
///
/// ```python
/// c = sklearn.metrics.cluster.contingency_matrix(t, p)
/// r, col = scipy.optimize.linear_sum_assignment(-c)
/// acc = c[r, col].sum() / len(t)
/// nmi_max   = normalized_mutual_info_score(t, p, average_method="max")
/// nmi_sqrt  = normalized_mutual_info_score(t, p, average_method="geometric")
/// nmi_arith = normalized_mutual_info_score(t, p, average_method="arithmetic")
/// macro_f1  = f1_score(t, p, average="macro", zero_division=0)
/// P = precision_score(t, p, average="macro", zero_division=0)
/// R = recall_score(t, p, average="macro", zero_division=0)
/// macro_f1_of_means = 2*P*R/(P+R) if P+R > 0 else 0.0
/// accuracy  = accuracy_score(t, p)
/// ```
const CASES: &[Case] = &[
    Case {
        name: "ten",
        truth: &[0, 0, 0, 1, 1, 1, 2, 2, 2, 2],
        pred: &[1, 1, 1, 0, 2, 2, 2, 1, 0, 1],
        acc: 0.6,
        nmi_max: 0.3882913626718701,
        nmi_sqrt: 0.39930640496752745,
        nmi_arith: 0.3991502288153316,
        macro_f1: 0.09523809523809523,
        macro_f1_of_means: 0.09523809523809525,
        accuracy: 0.1,
    },
    Case {
        // A classifier's output with a predicted class (4) absent from the truth.
        name: "classifier",
        truth: &[0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3],
        pred: &[0, 0, 1, 0, 1, 1, 4, 2, 2, 2, 0, 2, 3, 3, 1],
        acc: 0.7333333333333333,
        nmi_max: 0.6207590757264697,
        nmi_sqrt: 0.6527719219668429,
        nmi_arith: 0.6519475054839197,
        macro_f1: 0.6020634920634921,
        macro_f1_of_means: 0.6111413043478262,
        accuracy: 0.7333333333333333,
    },
    Case {
        // Arbitrary ids; 3 classes, 4 clusters.
        name: "ids_3_vs_4",
        truth: &[3, 3, 3, 3, 7, 7, 7, 9, 9, 9, 9, 9],
        pred: &[0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 0, 1],
        acc: 0.5,
        nmi_max: 0.30392664440266176,
        nmi_sqrt: 0.3411890843887368,
        nmi_arith: 0.33892002475722166,
        macro_f1: 0.0,
        macro_f1_of_means: 0.0,
        accuracy: 0.0,
    },
    Case {
        // 5 classes, 3 clusters.
        name: "five_classes_three_clusters",
        truth: &[0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4],
        pred: &[0, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 0, 2, 2],
        acc: 0.5,
        nmi_max: 0.3807972011390304,
        nmi_sqrt: 0.4629529623550898,
        nmi_arith: 0.4542570115014974,
        macro_f1: 0.23333333333333334,
        macro_f1_of_means: 0.23389830508474577,
        accuracy: 0.3,
    },
    Case {
        // 35 samples, 4 classes, 6 clusters.
        name: "thirty_five",
        truth: &[
            0, 2, 0, 0, 1, 1, 3, 3, 3, 3, 0, 0, 3, 0, 0, 0, 3, 1, 1, 0, 1, 2, 3, 2, 3, 0, 1, 2, 2,
            0, 0, 1, 0, 3, 2,
        ],
        pred: &[
            2, 5, 1, 1, 2, 2, 0, 2, 1, 2, 0, 2, 2, 2, 0, 1, 0, 4, 4, 1, 2, 4, 0, 4, 0, 2, 3, 0, 4,
            1, 2, 3, 0, 1, 0,
        ],
        acc: 0.42857142857142855,
        nmi_max: 0.32784896999954116,
        nmi_sqrt: 0.3556021276061727,
        nmi_arith: 0.3544313114257701,
        macro_f1: 0.04545454545454545,
        macro_f1_of_means: 0.04545454545454546,
        accuracy: 0.08571428571428572,
    },
];

fn assert_close(name: &str, what: &str, got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-12,
        "{name}: {what} = {got:.17} but scikit-learn gives {want:.17}"
    );
}

#[test]
fn agrees_with_scikit_learn() {
    for c in CASES {
        assert_eq!(c.truth.len(), c.pred.len(), "{}", c.name);
        let s = clustering_scores(c.truth, c.pred).unwrap();
        assert_close(c.name, "ACC", s.acc, c.acc);
        assert_close(c.name, "NMI max", s.nmi_max, c.nmi_max);
        assert_close(c.name, "NMI sqrt", s.nmi_sqrt, c.nmi_sqrt);
        assert_close(c.name, "NMI arith", s.nmi_arith, c.nmi_arith);
        let r = classification_report(c.truth, c.pred).unwrap();
        assert_close(c.name, "macro-F1", r.macro_f1, c.macro_f1);
        assert_close(
            c.name,
            "macro_f1_of_means",
            r.macro_f1_of_means,
            c.macro_f1_of_means,
        );
        assert_close(c.name, "accuracy", r.accuracy, c.accuracy);
        assert_close(
            c.name,
            "accuracy()",
            accuracy(c.truth, c.pred).unwrap(),
            c.accuracy,
        );
        // Clustering metrics are symmetric in their arguments.
        let swapped = clustering_scores(c.pred, c.truth).unwrap();
        assert_close(c.name, "ACC swapped", swapped.acc, c.acc);
        assert_close(c.name, "NMI sqrt swapped", swapped.nmi_sqrt, c.nmi_sqrt);
    }
}

/// Iris as 4×150 (columns = samples) and its labels, or None if the file is absent.
fn iris() -> Option<(Array2<f64>, Vec<usize>)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/iris/iris.csv");
    let Ok(mut reader) = csv::Reader::from_path(path) else {
        eprintln!("skipping: {path} not found");
        return None;
    };
    let mut values = Vec::new();
    let mut labels = Vec::new();
    for record in reader.records() {
        let record = record.unwrap();
        for f in record.iter().take(4) {
            values.push(f.parse::<f64>().unwrap());
        }
        labels.push(record[4].parse::<usize>().unwrap());
    }
    let n = labels.len();
    let x = Array2::from_shape_vec((n, 4), values)
        .unwrap()
        .reversed_axes();
    Some((x, labels))
}

/// A known answer: k-means on raw Iris averages about 82% ACC over random starts; its best
/// optimum (lowest inertia, 78.85) has ACC 134/150 = 89.33%.
#[test]
fn kmeans_on_iris() {
    let Some((x, y)) = iris() else { return };
    assert_eq!(x.dim(), (4, 150));
    let mut params = KMeansParams::new(3);
    params.restarts = 200;
    params.seed = 2018;
    let rep = repeated_kmeans(x.view(), &params).unwrap();
    let s = summarize_repeated_kmeans(&y, &rep).unwrap();
    eprintln!(
        "Iris k-means, {} restarts: ACC {:.4} ± {:.4}, NMI(sqrt) {:.4} ± {:.4}, NMI(max) {:.4}, \
         NMI(arith) {:.4}; best restart ACC {:.4} (inertia {:.4})",
        s.restarts,
        s.acc.mean,
        s.acc.std,
        s.nmi_sqrt.mean,
        s.nmi_sqrt.std,
        s.nmi_max.mean,
        s.nmi_arith.mean,
        s.best.acc,
        rep.runs[rep.best].inertia
    );
    assert!((s.best.acc - 134.0 / 150.0).abs() < 1e-12);
    assert!((rep.runs[rep.best].inertia - 78.85).abs() < 0.01);
    assert!(
        (0.75..0.90).contains(&s.acc.mean),
        "mean ACC {}",
        s.acc.mean
    );
    // The 50-restart default of the RPNMF protocol gives the same best optimum.
    let rep50 = repeated_kmeans(x.view(), &KMeansParams::new(3)).unwrap();
    assert_eq!(rep50.runs.len(), 50);
    assert!((rep50.runs[rep50.best].inertia - 78.85).abs() < 0.01);
}

/// docs/models.md §8.3 on Iris: 80/20 stratified split, linear SVM (C = 1, bias, eps 0.1).
#[test]
fn svm_on_iris() {
    let Some((x, y)) = iris() else { return };
    let out = classify_split(x.view(), &y, 0.8, 7, &LinearSvmParams::default()).unwrap();
    assert_eq!(out.split.test.len(), 30);
    assert_eq!(out.split.train.len(), 120);
    eprintln!(
        "Iris linear SVM: test accuracy {:.4}, macro-F1 {:.4}; test indices {:?}; predictions {:?}",
        out.report.accuracy, out.report.macro_f1, out.split.test, out.predictions
    );
    assert!(out.report.accuracy >= 0.85, "{}", out.report.accuracy);
    for c in 0..3 {
        assert_eq!(out.split.test.iter().filter(|&&i| y[i] == c).count(), 10);
    }
    // §8.3 step 4: 10 repetitions; identical on a 1-thread pool.
    let svm = LinearSvmParams::default();
    let rep = classify_repeated(x.view(), &y, 0.8, 7, 10, &svm).unwrap();
    eprintln!(
        "Iris linear SVM, 10 splits: accuracy {:.4} ± {:.4}, macro-F1 {:.4} ± {:.4}",
        rep.accuracy.mean, rep.accuracy.std, rep.macro_f1.mean, rep.macro_f1.std
    );
    assert!(rep.accuracy.mean >= 0.85);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let one = pool.install(|| classify_repeated(x.view(), &y, 0.8, 7, 10, &svm).unwrap());
    assert_eq!(rep, one);
}

#[test]
fn cluster_and_score_on_iris_is_thread_count_independent() {
    let Some((x, y)) = iris() else { return };
    let params = KMeansParams::new(3);
    let (rep, summary) = cluster_and_score(x.view(), &y, &params).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let (rep1, summary1) = pool.install(|| cluster_and_score(x.view(), &y, &params).unwrap());
    assert_eq!(rep, rep1);
    assert_eq!(summary, summary1);
    assert_eq!(summary.restarts, 50);
    assert!(cluster_and_score(x.view(), &y[..10], &params).is_err());
}

/// At a tight tolerance the dual solver reaches the unique optimum, so its weights must equal
/// LIBLINEAR's. Expected: scikit-learn 1.9.1 `LinearSVC(C=1.0, dual=True, tol=1e-10,
/// max_iter=1000000, random_state=0).fit(X, y)` on all 150 Iris samples (loss squared hinge,
/// one-vs-rest, intercept_scaling 1): rows `coef_[k] + [intercept_[k]]`, printed with `repr`.
#[test]
fn svm_weights_match_liblinear_on_iris() {
    let Some((x, y)) = iris() else { return };
    let want = [
        [
            0.18424468597052485,
            0.4512225233798643,
            -0.8079372265728468,
            -0.45072813407945234,
            0.10955235132155593,
        ],
        [
            0.05524624778117094,
            -0.9008946045050897,
            0.409233845869917,
            -0.9606271037962039,
            1.6873716412797921,
        ],
        [
            -0.8505912013660066,
            -0.9865548798916103,
            1.3810373307374861,
            1.8651201785330995,
            -1.7107926612075401,
        ],
    ];
    let params = LinearSvmParams {
        eps: 1e-10,
        max_iter: 1_000_000,
        scaling: nmf_playground::engine::eval::SvmScaling::Raw,
        ..LinearSvmParams::default()
    };
    let m = nmf_playground::engine::eval::LinearSvm::fit(x.view(), &y, &params).unwrap();
    eprintln!("passes per class: {:?}", m.passes);
    for (k, row) in want.iter().enumerate() {
        for (a, &w) in row.iter().enumerate() {
            let got = m.weights[k][a];
            assert!(
                (got - w).abs() < 1e-6,
                "class {k} weight {a}: {got} vs LIBLINEAR {w}"
            );
        }
    }
}
