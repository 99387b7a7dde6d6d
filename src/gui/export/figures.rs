//! "Save figures" (results panel): the scatter, the convergence plot, the basis gallery and the
//! confusion matrix, drawn as the app shows them (the same points, colours and legend, the
//! same curves and stage boundaries, the bases sorted by the norm of their H row), to PNG or
//! SVG files in a typed folder. The UI thread only copies what the panels already hold into
//! plain figure data; ordering the bases, drawing ([`crate::figures`], the same drawing as
//! `report`) and the atomic writes run on a background thread.

use super::{Command, Exports};
use crate::engine::data::Dataset;
use crate::engine::eval::ConfusionMatrix;
use crate::engine::jobs::worker::Snapshot;
use crate::engine::machine::fsutil::write_atomic;
use crate::figures::{self, Format};
use crate::gui::command::Addressed;
use crate::gui::gallery::basis_order;
use crate::gui::shared::Shared;
use crate::gui::state::Convergence;
use crate::gui::view::scatter_cache::ScatterCache;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The basis gallery's input: the snapshot (W and H), the data's image shape and its feature
/// names (the heat map's row labels when the data are not images).
pub struct GalleryInput {
    pub title: String,
    pub snapshot: Arc<Snapshot>,
    pub image: Option<(usize, usize)>,
    pub feature_names: Vec<String>,
}

/// Everything one "Save figures" draws (owned: the thread borrows nothing from the UI).
pub struct FigureJob {
    pub dir: PathBuf,
    pub format: Format,
    pub scatter: Option<figures::Scatter>,
    pub convergence: Option<figures::Convergence>,
    pub gallery: Option<GalleryInput>,
    pub confusion: Option<figures::Confusion>,
}

/// How a "Save figures" ended: the folder and the files written, or the message.
#[derive(Debug)]
pub struct FiguresSaved {
    pub dir: PathBuf,
    pub result: Result<Vec<String>, String>,
}

impl Addressed for FiguresSaved {
    const FEATURE: &'static str = <Command as Addressed>::FEATURE;
}

impl FigureJob {
    /// Draw and write every figure there is; the file names written, in order.
    pub fn write(&self) -> Result<Vec<String>, String> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("cannot create the folder {}: {e}", self.dir.display()))?;
        let mut written = Vec::new();
        let mut put = |stem: &str, bytes: Result<Vec<u8>, figures::FigureError>| {
            let bytes = bytes.map_err(|e| e.to_string())?;
            let name = format!("{stem}.{}", self.format.extension());
            let path = self.dir.join(&name);
            write_atomic(&path, &bytes)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            written.push(name);
            Ok::<(), String>(())
        };
        if let Some(f) = &self.scatter {
            put("scatter", figures::render(f, self.format))?;
        }
        if let Some(f) = &self.convergence {
            put("convergence", figures::render(f, self.format))?;
        }
        if let Some(g) = &self.gallery
            && let Some(f) = gallery_figure(g)
        {
            put("gallery", figures::render(&f, self.format))?;
        }
        if let Some(f) = &self.confusion {
            put("confusion", figures::render(f, self.format))?;
        }
        if written.is_empty() {
            return Err("there is nothing to draw yet: load data or run a model first".into());
        }
        Ok(written)
    }
}

/// The scatter as shown: one figure class per non-empty scatter group, in the group's colour
/// (its opacity blended onto white), with the triplets when they are drawn.
pub fn scatter_figure(
    title: String,
    cache: &ScatterCache,
    triplets: Vec<(usize, usize, usize)>,
) -> figures::Scatter {
    let n = cache.by_sample.len();
    let mut points: Vec<[f64; 2]> = cache.by_sample.iter().map(|p| [p.x, p.y]).collect();
    let mut class = vec![None; n];
    let (mut names, mut colours) = (Vec::new(), Vec::new());
    for g in cache.groups.iter().filter(|g| !g.points.is_empty()) {
        let c = names.len();
        for (p, &i) in g.points.iter().zip(&g.indices) {
            if i >= points.len() {
                points.resize(i + 1, [f64::NAN, f64::NAN]);
                class.resize(i + 1, None);
            }
            points[i] = [p.x, p.y];
            class[i] = Some(c);
        }
        let a = f64::from(g.color.a()) / 255.0;
        let over_white = |v: u8| (a * f64::from(v) + (1.0 - a) * 255.0).round() as u8;
        let [r, gr, b, _] = g.color.to_srgba_unmultiplied();
        colours.push([over_white(r), over_white(gr), over_white(b)]);
        names.push(g.name.clone());
    }
    // Samples in no group (isolated away) are not drawn.
    for (p, c) in points.iter_mut().zip(&class) {
        if c.is_none() {
            *p = [f64::NAN, f64::NAN];
        }
    }
    figures::Scatter {
        title,
        points,
        class,
        class_names: names,
        class_colours: colours,
        triplets,
    }
}

/// The convergence plot as shown: the total, each term, and the stage and round boundaries.
pub fn convergence_figure(title: String, conv: &Convergence) -> Option<figures::Convergence> {
    if conv.total.linear.is_empty() {
        return None;
    }
    let xs: Vec<f64> = conv.total.linear.iter().map(|p| p.x).collect();
    let boundaries = conv
        .phases
        .iter()
        .skip(1)
        .filter_map(|&(first, _)| xs.iter().position(|&x| x >= first as f64))
        .filter(|&b| b > 0)
        .collect();
    Some(figures::Convergence {
        title,
        objective: conv.total.linear.iter().map(|p| p.y).collect(),
        terms: if conv.terms.len() > 1 {
            conv.terms
                .iter()
                .map(|(name, s)| (name.clone(), s.linear.iter().map(|p| p.y).collect()))
                .collect()
        } else {
            Vec::new()
        },
        boundaries,
    })
}

/// The basis gallery: W's columns by decreasing norm of their H row, captioned with the
/// basis number (as the app's gallery orders them). None without W.
pub fn gallery_figure(g: &GalleryInput) -> Option<figures::Gallery> {
    let w = g.snapshot.w.as_ref()?;
    let (order, _) = basis_order(g.snapshot.h.view());
    let order: Vec<usize> = if order.len() == w.ncols() {
        order
    } else {
        (0..w.ncols()).collect()
    };
    Some(figures::Gallery {
        title: g.title.clone(),
        w: w.select(ndarray::Axis(1), &order),
        image: g.image.filter(|&(a, b)| a * b == w.nrows()),
        feature_names: g.feature_names.clone(),
        column_names: order.iter().map(|c| format!("basis {}", c + 1)).collect(),
    })
}

/// The confusion matrix with the data's class names.
pub fn confusion_figure(title: String, cm: &ConfusionMatrix, data: &Dataset) -> figures::Confusion {
    let names: Vec<String> = cm
        .labels
        .iter()
        .map(|&l| {
            data.class_names
                .get(l)
                .cloned()
                .unwrap_or_else(|| format!("class {}", l + 1))
        })
        .collect();
    figures::Confusion {
        title,
        counts: cm.counts.clone(),
        row_names: names.clone(),
        col_names: names,
    }
}

/// The model of what the scatter and results show: the shown history run's, else the
/// evaluated run's, else the last result's, else the one picked for the next run.
fn shown_model(app: &Shared<'_>) -> String {
    {
        let s = &app.session;
        s.shown_run
            .or_else(|| s.evaluation.as_ref().map(|e| e.run))
            .and_then(|id| s.history.iter().find(|r| r.id == id))
            .map(|r| r.model.clone())
            .or_else(|| {
                app.run
                    .result
                    .as_ref()
                    .map(|r| r.spec.kind.label().to_owned())
            })
            .unwrap_or_else(|| app.settings.model.clone())
    }
}

impl Exports {
    /// Draw the shown figures into `dir` as `format`, on a background thread.
    pub(super) fn save_figures(&mut self, dir: &Path, format: Format, app: &mut Shared<'_>) {
        if dir.as_os_str().is_empty() {
            app.session
                .set_error("Type a folder for the figures first (the export folder)");
            return;
        }
        if self.saving_figures {
            app.session.set_error("Figures are still being written");
            return;
        }
        let Some(data) = app.session.dataset.clone() else {
            app.session
                .set_error("No data loaded: load a dataset to draw its figures");
            return;
        };
        let model = shown_model(app);
        let view = &app.view;
        let scatter = (!view.scatter.groups.is_empty()).then(|| {
            let triplets = match (&app.session.store, view.hide_triplets) {
                (Some(st), false) => st
                    .triplets()
                    .iter()
                    .take(crate::gui::style::MAX_DRAWN)
                    .map(|t| (t.i, t.j, t.q))
                    .collect(),
                _ => Vec::new(),
            };
            let title = if view.scatter.of_data {
                view.scatter_caption()
            } else {
                format!("{model}: {}", view.scatter_caption())
            };
            scatter_figure(title, &view.scatter, triplets)
        });
        let convergence = convergence_figure(format!("{model}: convergence"), &app.run.convergence);
        let gallery = app
            .run
            .snapshot
            .as_ref()
            .filter(|s| s.w.is_some() && s.h.ncols() == data.n())
            .map(|s| GalleryInput {
                title: format!(
                    "{model}: basis W · iteration {} (by norm of its H row)",
                    s.iteration
                ),
                snapshot: Arc::clone(s),
                image: data.image_shape,
                feature_names: (0..data.m()).map(|f| data.feature_name(f)).collect(),
            });
        let confusion = app.session.evaluation.as_ref().and_then(|ev| {
            let (what, cm) = match (&ev.scores.semi, &ev.scores.classification) {
                (Some(semi), _) => ("samples not given", &semi.model.confusion),
                (None, Some(c)) => ("linear SVM on H, 20 % held out", &c.confusion),
                _ => return None,
            };
            Some(confusion_figure(
                format!("{model}: confusion matrix ({what})"),
                cm,
                &data,
            ))
        });
        let job = FigureJob {
            dir: dir.to_path_buf(),
            format,
            scatter,
            convergence,
            gallery,
            confusion,
        };
        let spawned = app.tasks.spawn("figures", move || FiguresSaved {
            dir: job.dir.clone(),
            result: job.write(),
        });
        match spawned {
            Ok(()) => {
                self.saving_figures = true;
                app.session
                    .set_status(format!("Drawing the figures into {}…", dir.display()));
            }
            Err(e) => app.session.set_error(e),
        }
    }

    /// "Save figures" finished: say what was written, or why not.
    pub(super) fn figures_saved(&mut self, done: FiguresSaved, app: &mut Shared<'_>) {
        let s = &mut *app.session;
        self.saving_figures = false;
        match done.result {
            Ok(files) => s.set_status(format!(
                "Saved figures to {}: {}",
                done.dir.display(),
                files.join(", ")
            )),
            Err(e) => s.set_error(format!("Could not save the figures: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gui::view::scatter_cache::ScatterGroup;
    use eframe::egui::Color32;
    use egui_plot::{MarkerShape, PlotPoint};

    fn group(name: &str, color: Color32, pts: &[(usize, f64, f64)]) -> ScatterGroup {
        ScatterGroup {
            name: name.into(),
            color,
            marker: MarkerShape::Circle,
            points: pts.iter().map(|&(_, x, y)| PlotPoint::new(x, y)).collect(),
            indices: pts.iter().map(|&(i, _, _)| i).collect(),
        }
    }

    #[test]
    fn scatter_figure_keeps_groups_colours_and_drops_empty_groups() {
        let cache = ScatterCache {
            by_sample: vec![PlotPoint::new(0.0, 0.0); 3],
            groups: vec![
                group("a", Color32::from_rgb(10, 20, 30), &[(2, 1.0, 2.0)]),
                group("empty", Color32::from_rgb(1, 1, 1), &[]),
                // Half-transparent pure red over white: (255, 128, 128).
                group(
                    "b",
                    Color32::from_rgba_unmultiplied(255, 0, 0, 128),
                    &[(0, 3.0, 4.0)],
                ),
            ],
            ..ScatterCache::default()
        };
        let f = scatter_figure("t".into(), &cache, vec![(0, 1, 2)]);
        assert_eq!(f.class_names, ["a", "b"]);
        assert_eq!(f.class_colours[0], [10, 20, 30]);
        assert_eq!(f.class_colours[1], [255, 127, 127]);
        assert_eq!(f.class, [Some(1), None, Some(0)]);
        assert_eq!(f.points[0], [3.0, 4.0]);
        assert_eq!(f.points[2], [1.0, 2.0]);
        assert!(f.points[1][0].is_nan(), "a sample in no group is not drawn");
        assert_eq!(f.triplets, [(0, 1, 2)]);
    }

    #[test]
    fn convergence_figure_places_boundaries_at_the_phase_starts() {
        use crate::engine::models::Phase;
        let mut c = Convergence::default();
        for t in 1..=6 {
            c.total.push(t, 10.0 - t as f64);
            c.terms.entry("fit".into()).or_default().push(t, 1.0);
            c.terms.entry("rank".into()).or_default().push(t, 2.0);
        }
        c.mark_phase(1, Phase { round: 0, stage: 1 });
        c.mark_phase(4, Phase { round: 0, stage: 2 });
        let f = convergence_figure("c".into(), &c).expect("figure");
        assert_eq!(f.objective, [9.0, 8.0, 7.0, 6.0, 5.0, 4.0]);
        // Stage 2 begins at iteration 4: a line between iterations 3 and 4.
        assert_eq!(f.boundaries, [3]);
        assert_eq!(f.terms.len(), 2);
        assert!(convergence_figure("c".into(), &Convergence::default()).is_none());
    }
}
