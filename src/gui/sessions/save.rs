//! Writing a session file: the data reference (with the resolved loader options), the
//! constraints, the model settings and the run history of the loaded data.

use crate::engine::files::session::{
    Constraints, DatasetRef, ModelSettings, RunFactors, RunRecord, SessionFile,
};
use crate::engine::models::ModelKind;
use crate::gui::feature::Shared;
use crate::gui::state::DataSource;
use std::collections::BTreeMap;
use std::path::Path;

/// Write the session (data reference, constraints, model settings, run history; with
/// `Settings::session_factors` each run's H and W as `.npy` beside it) to `path`.
pub(super) fn save(path: &Path, app: &mut Shared<'_>) -> Result<(), String> {
    let Some(data) = app.session.dataset.clone() else {
        return Err("Load a dataset first".into());
    };
    let Some(store) = app.session.store.as_mut() else {
        return Err("Load a dataset first".into());
    };
    let opts = app.session.labels.apply(app.settings.load_options());
    let dataset_path = match &app.session.source {
        Some(DataSource::Path(p)) => std::path::absolute(p)
            .unwrap_or_else(|_| p.clone())
            .display()
            .to_string(),
        Some(DataSource::Sample(s)) => format!("sample:{}", s.name()),
        None => data.source.clone(),
    };
    let model = app.settings.model.clone();
    let mut file = SessionFile {
        version: crate::engine::files::session::VERSION,
        dataset: DatasetRef {
            path: dataset_path,
            // The resolved choice (never `auto`), so the session reopens as it was.
            preprocess: data.preprocess,
            label_column: DatasetRef::label_column_text(&opts.label_column),
            labels_file: opts.labels_file.clone(),
            resize: opts.resize,
            fingerprint: data.fingerprint,
        },
        constraints: Constraints::of(store),
        model: ModelSettings {
            model: model.clone(),
            k: app.settings.k,
            seed: app.settings.seed,
            max_iter: app.settings.max_iter,
            tol: app.settings.tol,
            params: app.settings.params.get(&model).cloned().unwrap_or_default(),
        },
        runs: app
            .session
            .history
            .iter()
            .filter(|r| r.data == Some(data.fingerprint))
            .map(|r| {
                let mut scores = BTreeMap::new();
                for (name, v) in [("acc", r.acc), ("nmi", r.nmi), ("kept", r.kept)] {
                    if let Some(v) = v {
                        scores.insert(name.to_owned(), v);
                    }
                }
                // The number of triplets the run had (for the suggestions' per-batch deltas).
                scores.insert("triplets".to_owned(), r.triplets as f64);
                RunRecord {
                    id: r.id,
                    model: ModelKind::all()
                        .find(|k| k.label() == r.model)
                        .map_or_else(|| r.model.clone(), |k| k.name().to_owned()),
                    k: r.k,
                    seed: r.seed,
                    params: r.params.clone(),
                    iterations: r.iterations,
                    seconds: r.seconds,
                    stop: r.stop.clone(),
                    preprocess: r.preprocess,
                    scores,
                    factors: None,
                }
            })
            .collect(),
    };
    let factors: Vec<RunFactors<'_>> = if app.settings.session_factors {
        app.session
            .history
            .iter()
            .filter(|r| r.data == Some(data.fingerprint) && !r.factors.h.is_empty())
            .map(|r| RunFactors {
                id: r.id,
                w: r.factors.w.as_ref(),
                h: &r.factors.h,
            })
            .collect()
    } else {
        Vec::new()
    };
    file.save(path, &factors).map_err(|e| e.to_string())?;
    store.mark_saved();
    app.session.session_path = Some(path.to_path_buf());
    Ok(())
}
