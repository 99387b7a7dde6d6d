//! Constraint files: save and load (JSON), import and export triplets (CSV), at a typed path
//! or one chosen in the native dialog (off the UI thread). Errors name the file and the
//! place.

use super::{Done, Shared};
use crate::engine::constraints::io as cio;
use crate::gui::command::FileAction;
use std::path::PathBuf;

/// Show the native dialog for a constraint file action, off the UI thread; the choice
/// arrives as [`Done::Picked`].
pub(super) fn open_dialog(action: FileAction, app: &mut Shared<'_>) {
    if app.view.dialog_open {
        return;
    }
    let spawned = app.tasks.spawn("file-dialog", move || {
        let (title, json) = match action {
            FileAction::Save => ("Save constraints", true),
            FileAction::Load => ("Load constraints", true),
            FileAction::ImportCsv => ("Import triplets (CSV)", false),
            FileAction::ExportCsv => ("Export triplets (CSV)", false),
        };
        let dialog = rfd::FileDialog::new().set_title(title);
        let dialog = if json {
            dialog.add_filter("Constraints", &["json"])
        } else {
            dialog.add_filter("CSV", &["csv"])
        };
        let picked = match action {
            FileAction::Save | FileAction::ExportCsv => dialog.save_file(),
            FileAction::Load | FileAction::ImportCsv => dialog.pick_file(),
        };
        Done::Picked(action, picked)
    });
    match spawned {
        Ok(()) => app.view.dialog_open = true,
        Err(e) => app.session.set_error(e),
    }
}

/// Save, load, import or export at `path`; whether a save succeeded.
pub(super) fn file(action: FileAction, path: PathBuf, app: &mut Shared<'_>) -> bool {
    let Some(data) = app.session.dataset.clone() else {
        app.session.set_error("Load a dataset first");
        return false;
    };
    let Some(store) = app.session.store.as_mut() else {
        return false;
    };
    let shown = path.display().to_string();
    match action {
        FileAction::Save => match cio::save_json(store, &path) {
            Ok(()) => {
                app.session.constraints_path = Some(path);
                app.session
                    .set_status(format!("Saved constraints to {shown}"));
                return true;
            }
            Err(e) => app.session.set_error(format!("Could not save: {e}")),
        },
        FileAction::Load => match cio::load_json(&path, &data.fingerprint) {
            Ok(loaded) => {
                let what = format!("load constraints from {shown}");
                match store.replace_with(&what, loaded.triplets(), loaded.labels()) {
                    Ok(()) => {
                        store.mark_saved();
                        app.session.constraints_rev += 1;
                        app.session.constraints_path = Some(path);
                        app.session.set_status(format!(
                            "Loaded {} triplets and {} labels from {shown} (Ctrl+Z undoes)",
                            loaded.triplets().len(),
                            loaded.labels().n_labelled()
                        ));
                    }
                    Err(e) => app.session.set_error(format!("{shown}: {e}")),
                }
            }
            Err(e) => app.session.set_error(format!("Could not load: {e}")),
        },
        FileAction::ImportCsv => match cio::import_triplets_csv(&path, &data) {
            Ok(ts) => {
                let new: Vec<_> = ts.into_iter().filter(|t| !store.contains(t)).collect();
                let what = format!("import {} triplets from {shown}", new.len());
                match store.add_triplets(&what, new) {
                    Ok(k) => {
                        app.session.constraints_rev += 1;
                        app.session
                            .set_status(format!("Imported {k} new triplets from {shown}"));
                    }
                    Err(e) => app.session.set_error(format!("{shown}: {e}")),
                }
            }
            Err(e) => app.session.set_error(format!("Could not import: {e}")),
        },
        FileAction::ExportCsv => {
            let count = store.triplets().len();
            match cio::export_triplets_csv(store.triplets(), &path) {
                Ok(()) => app
                    .session
                    .set_status(format!("Exported {count} triplets to {shown}")),
                Err(e) => app.session.set_error(format!("Could not export: {e}")),
            }
        }
    }
    false
}
