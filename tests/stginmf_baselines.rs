//! 2-STGINMF at its defaults against the two baselines a semi-supervised classifier must beat
//! (docs/models.md §7.8): the project's linear SVM on X (standardised on the given samples)
//! and label spreading (Zhou et al. 2004, 7-NN graph, α = 0.99), on the same splits: 10 % and
//! 30 % of the labels revealed (stratified, seeds derive_seed(0, r), r < 5), data preprocessed
//! by `auto` as `run --model stginmf` resolves it, accuracy on the samples not given.
//!
//! Long (every fit of 2-STGINMF on digits takes seconds), so ignored by default:
//! `cargo test --release --test stginmf_baselines -- --ignored --nocapture`. Skips with a
//! message when ../shared/data is absent. `SETS=glass,iris` limits the sets and
//! `PARAMS="name=value …"` sets parameters other than the defaults (to measure what was
//! tried).

use nmf_playground::engine::constraints::{SideInfo, reveal_stratified};
use nmf_playground::engine::data::{LoadOptions, load};
use nmf_playground::engine::eval::{
    SvmScaling, derive_seed, label_spreading_on_given, svm_on_given,
};
use nmf_playground::engine::jobs::experiment::{FitOptions, fit};
use nmf_playground::engine::models::{self, ModelKind, ModelSpec, ParamValue};
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

const SPLITS: u64 = 5;

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

#[test]
#[ignore = "long: run with --release -- --ignored"]
fn stginmf_reaches_the_better_baseline_minus_two_points() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    if !root.exists() {
        eprintln!("skipped: {} not found", root.display());
        return;
    }
    let only = std::env::var("SETS").unwrap_or_default();
    let kind = ModelKind::from_name("stginmf").expect("registered");
    // Settings other than the defaults, to measure what was tried (`PARAMS="sigma=centroids
    // lambda2=0.1"`, as `run --param` spells them).
    let params: Vec<(String, ParamValue)> = std::env::var("PARAMS")
        .unwrap_or_default()
        .split_whitespace()
        .map(|it| {
            let (name, v) = it.split_once('=').expect("PARAMS: NAME=VALUE");
            let hp = kind.param(name).expect("PARAMS: a parameter of 2-STGINMF");
            (
                name.to_owned(),
                hp.parse(kind.label(), v).expect("PARAMS: a value"),
            )
        })
        .collect();
    let mut short = Vec::new();
    println!("| data | labels | 2-STGINMF | SVM on X (std.) | label spreading | margin |");
    println!("|---|---|---|---|---|---|");
    for set in ["iris", "glass", "dermatology", "digits_sklearn"] {
        if !only.is_empty() && !only.split(',').any(|s| s == set) {
            continue;
        }
        let path = root.join(set).join(format!("{set}.csv"));
        // `auto` as `run --model stginmf` resolves it; the baselines see the same X.
        let opts = LoadOptions {
            auto_for: kind.auto_for(),
            ..LoadOptions::default()
        };
        let data = Arc::new(load(&path, &opts).expect("load"));
        let truth = data.labels.clone().expect("labelled");
        let k = data.n_classes();
        for share in [0.1, 0.3] {
            let (mut model_acc, mut svm_acc, mut ls_acc) = (Vec::new(), Vec::new(), Vec::new());
            for r in 0..SPLITS {
                let seed = derive_seed(0, r);
                let known = reveal_stratified(&truth, share, seed).expect("reveal");
                let mut spec = ModelSpec::new(kind, k, seed);
                for (name, value) in &params {
                    spec.params.insert(name.clone(), *value);
                }
                let side = SideInfo::new(Vec::new(), known.clone());
                let mut m = models::build(&spec, Arc::clone(&data), &side).expect("build");
                fit(m.as_mut(), &FitOptions::default(), |_, _, _| {
                    ControlFlow::Continue(())
                })
                .expect("fit");
                let pred = m
                    .outputs()
                    .predictions
                    .expect("a classifier")
                    .labels
                    .clone();
                let test: Vec<usize> = (0..truth.len()).filter(|&i| known[i].is_none()).collect();
                let right = test.iter().filter(|&&i| pred[i] == truth[i]).count();
                model_acc.push(right as f64 / test.len() as f64);
                let svm = svm_on_given(
                    data.x.view(),
                    &known,
                    &truth,
                    seed,
                    SvmScaling::Standardized,
                )
                .expect("svm");
                svm_acc.push(svm.accuracy);
                ls_acc.push(
                    label_spreading_on_given(data.x.view(), &known, &truth)
                        .expect("label spreading")
                        .accuracy,
                );
            }
            let (a, s, l) = (mean(&model_acc), mean(&svm_acc), mean(&ls_acc));
            let margin = 100.0 * (a - s.max(l));
            println!(
                "| {set} ({}) | {:.0} % | {:.1} | {:.1} | {:.1} | {margin:+.2} |",
                data.preprocess.name(),
                100.0 * share,
                100.0 * a,
                100.0 * s,
                100.0 * l
            );
            if margin < -2.0 {
                short.push(format!(
                    "{set} at {:.0} %: {margin:+.2} points",
                    100.0 * share
                ));
            }
        }
    }
    assert!(short.is_empty(), "below the better baseline − 2: {short:?}");
}
