//! Triplets made by the protocol (on a background thread: kNN of X is O(n² m)) and labels
//! revealed from the ground truth, each added as one undo step.

use super::{Done, Shared, edit};
use crate::engine::constraints::{
    self as cons, ProtocolOptions, generate_triplets, labels_from_truth, reveal_stratified,
};
use crate::engine::data::Fingerprint;

/// Triplets generated for the dataset `fingerprint`.
pub(super) struct Generated {
    fingerprint: Fingerprint,
    source: &'static str,
    seed: u64,
    result: Result<cons::Generated, String>,
}

/// Generate triplets by the protocol on a background thread, from the ground truth or from
/// the painted labels.
pub(super) fn start(opts: ProtocolOptions, from_truth: bool, app: &mut Shared<'_>) {
    if app.session.generating {
        return;
    }
    let (Some(data), Some(store)) = (app.session.dataset.clone(), &app.session.store) else {
        app.session.set_error("Load a dataset first");
        return;
    };
    let labels: Vec<Option<usize>> = if from_truth {
        match &data.labels {
            Some(truth) => labels_from_truth(truth),
            None => {
                app.session.set_error(
                    "This dataset has no ground-truth labels: generate from painted labels \
                     (or only kNN-based triplets are made)",
                );
                return;
            }
        }
    } else if store.labels().n_labelled() == 0 {
        Vec::new()
    } else {
        store.labels().as_slice().to_vec()
    };
    let existing = store.triplets().to_vec();
    let fingerprint = data.fingerprint;
    let source = if from_truth {
        "ground truth"
    } else {
        "painted labels"
    };
    let spawned = app.tasks.spawn("generate", move || {
        let result =
            generate_triplets(data.x.view(), &labels, &opts, &existing).map_err(|e| e.to_string());
        Done::Generated(Generated {
            fingerprint,
            source,
            seed: opts.seed,
            result,
        })
    });
    match spawned {
        Ok(()) => {
            app.session.generating = true;
            app.session
                .set_status(format!("Generating triplets from the {source}…"));
        }
        Err(e) => app.session.set_error(e),
    }
}

/// Add generated triplets as one undo step (unless another dataset was loaded meanwhile).
pub(super) fn generated(done: Generated, app: &mut Shared<'_>) {
    let Generated {
        fingerprint,
        source,
        seed,
        result,
    } = done;
    let g = match result {
        Ok(g) => g,
        Err(e) => {
            app.session
                .set_error(format!("Could not generate triplets: {e}"));
            return;
        }
    };
    let Some(store) = app.session.store.as_mut() else {
        return;
    };
    if store.fingerprint() != fingerprint {
        app.session
            .set_status("Generated triplets dropped: another dataset was loaded meanwhile");
        return;
    }
    // Triplets added by hand while generating are skipped, not refused.
    let new: Vec<_> = g
        .triplets
        .iter()
        .copied()
        .filter(|t| !store.contains(t))
        .collect();
    let what = format!(
        "generate {} triplets ({} anchors, seed {seed}, from the {source})",
        new.len(),
        g.anchors.len()
    );
    match store.add_triplets(&what, new) {
        Ok(k) => {
            app.session.constraints_rev += 1;
            let short = if g.shortfall > 0 {
                format!(", {} could not be drawn", g.shortfall)
            } else {
                String::new()
            };
            app.session.set_status(format!(
                "Generated {k} triplets ({} from labels, {} from the 5-NN graph, {} anchors){short}",
                g.label_based,
                g.neighbour_based,
                g.anchors.len()
            ));
        }
        Err(e) => app
            .session
            .set_error(format!("Could not add the triplets: {e}")),
    }
}

/// Paint the true labels of `fraction` of the samples (seeded, stratified) as one undo step.
pub(super) fn reveal(fraction: f64, seed: u64, app: &mut Shared<'_>) {
    let Some(data) = app.session.dataset.clone() else {
        app.session.set_error("Load a dataset first");
        return;
    };
    let Some(truth) = &data.labels else {
        app.session
            .set_error("This dataset has no ground-truth labels to reveal");
        return;
    };
    // Stratified, as `run --reveal P` draws it: every class gets its share (at least one
    // sample), so a small budget never leaves a class without a training sample.
    let pairs: Vec<(usize, usize)> = match reveal_stratified(truth, fraction, seed) {
        Ok(given) => given
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.map(|c| (i, c)))
            .collect(),
        Err(e) => {
            app.session.set_error(format!("Cannot reveal labels: {e}"));
            return;
        }
    };
    let names = data.class_names.clone();
    let pct = fraction * 100.0;
    edit(app, |st| {
        let what = format!("reveal the labels of {} samples ({pct:.0} %)", pairs.len());
        st.transaction(&what, |tx| {
            for &(i, c) in &pairs {
                let name = names
                    .get(c)
                    .cloned()
                    .unwrap_or_else(|| format!("class {c}"));
                let class = tx.class_named(&name)?;
                tx.set_label(i, Some(class))?;
            }
            Ok(())
        })
        .map(|()| format!("Revealed the true labels of {} samples", pairs.len()))
    });
}
