//! The figures' data and their drawing on a plotters drawing area.

use super::legend::Legend;
use super::{FONT, Figure};
use ndarray::Array2;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Forty class colours, the app's own (its scatter's `CLASS_COLOURS`): Tab10, its light
/// companions (Tab20's second half), then Tab20b's twenty: ORL's 40 people without a repeat.
const PALETTE: [(u8, u8, u8); 40] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
    (174, 199, 232),
    (255, 187, 120),
    (152, 223, 138),
    (255, 152, 150),
    (197, 176, 213),
    (196, 156, 148),
    (247, 182, 210),
    (199, 199, 199),
    (219, 219, 141),
    (158, 218, 229),
    (57, 59, 121),
    (82, 84, 163),
    (107, 110, 207),
    (156, 158, 222),
    (99, 121, 57),
    (140, 162, 82),
    (181, 207, 107),
    (206, 219, 156),
    (140, 109, 49),
    (189, 158, 57),
    (231, 186, 82),
    (231, 203, 148),
    (132, 60, 57),
    (173, 73, 74),
    (214, 97, 107),
    (231, 150, 156),
    (123, 65, 115),
    (165, 81, 148),
    (206, 109, 189),
    (222, 158, 214),
];

/// The colour of class (or cluster, or series) `i`; beyond forty the colours repeat.
pub(crate) fn class_colour(i: usize) -> RGBColor {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    RGBColor(r, g, b)
}

pub(super) fn s<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// A figure with nothing to show: its title and a line saying why.
pub(super) fn note<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    text: &str,
) -> Result<(), String> {
    let (w, h) = root.dim_in_pixel();
    let centre = TextStyle::from((FONT, 18).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
    root.draw(&Text::new(
        title.to_owned(),
        (w as i32 / 2, 30),
        centre.clone(),
    ))
    .map_err(s)?;
    root.draw(&Text::new(
        text.to_owned(),
        (w as i32 / 2, h as i32 / 2),
        centre,
    ))
    .map_err(s)
}

/// (min, max) of finite values, widened by 5 % (or by 1 when flat); None when there are none.
pub(super) fn padded_range(vals: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = vals
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if lo > hi {
        return None;
    }
    let pad = if hi > lo { (hi - lo) * 0.05 } else { 1.0 };
    Some((lo - pad, hi + pad))
}

/// The label of an axis tick at `value` on ticks `step` apart: as many decimals as the step
/// needs (a step of 0.5 reads "0.5", not "0" and "-0"), and a value within rounding of zero
/// reads "0". Shared by the figures and the app's plots, so both label their axes alike.
pub fn tick_label(value: f64, step: f64) -> String {
    let decimals = if step.is_finite() && step > 0.0 {
        (-step.log10() - 1e-9).ceil().clamp(0.0, 12.0) as usize
    } else {
        1
    };
    let v = if value.abs() < step.abs() * 1e-6 {
        0.0
    } else {
        value
    };
    format!("{v:.decimals$}")
}

/// Tick labels for an axis spanning `span` (plotters draws about five ticks on it).
pub(super) fn tick_format(span: f64) -> impl Fn(&f64) -> String {
    move |v: &f64| tick_label(*v, span / 5.0)
}

/// 2-D points coloured by class or cluster, with a legend and optional triplet lines.
#[derive(Debug, Clone)]
pub struct Scatter {
    pub title: String,
    /// One (x, y) per sample.
    pub points: Vec<[f64; 2]>,
    /// The class or cluster of each sample (None: unlabelled, drawn grey).
    pub class: Vec<Option<usize>>,
    /// Legend names by class index (missing ones are called "class i").
    pub class_names: Vec<String>,
    /// RGB colour by class index, so a figure can match the app's colours (classes beyond
    /// it take the palette's).
    pub class_colours: Vec<[u8; 3]>,
    /// Triplets (anchor, positive, negative) by sample index: anchor–positive drawn green,
    /// anchor–negative red.
    pub triplets: Vec<(usize, usize, usize)>,
}

impl Scatter {
    /// Number of classes: the largest class index + 1, or the names given.
    fn n_classes(&self) -> usize {
        self.class
            .iter()
            .flatten()
            .max()
            .map_or(0, |m| m + 1)
            .max(self.class_names.len())
    }

    fn colour(&self, c: usize) -> RGBColor {
        self.class_colours
            .get(c)
            .map_or_else(|| class_colour(c), |&[r, g, b]| RGBColor(r, g, b))
    }

    /// Every class, named and coloured as drawn.
    fn legend(&self) -> Legend {
        Legend {
            entries: (0..self.n_classes())
                .map(|c| {
                    let name = self
                        .class_names
                        .get(c)
                        .cloned()
                        .unwrap_or_else(|| format!("class {c}"));
                    (name, self.colour(c))
                })
                .collect(),
        }
    }
}

/// Size of a scatter's plot; its legend goes beside it.
const SCATTER_PLOT: (u32, u32) = (760, 560);

impl Figure for Scatter {
    fn name(&self) -> &'static str {
        "scatter"
    }
    fn size(&self) -> (u32, u32) {
        let (w, h) = SCATTER_PLOT;
        (w + self.legend().width(h), h)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let (Some((x0, x1)), Some((y0, y1))) = (
            padded_range(self.points.iter().map(|p| p[0])),
            padded_range(self.points.iter().map(|p| p[1])),
        ) else {
            return note(root, &self.title, "no points");
        };
        let (plot, legend_area) = root.split_horizontally(SCATTER_PLOT.0);
        let mut chart = ChartBuilder::on(&plot)
            .caption(&self.title, (FONT, 20))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(52)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(s)?;
        let (fx, fy) = (tick_format(x1 - x0), tick_format(y1 - y0));
        chart
            .configure_mesh()
            .x_desc("PC 1")
            .y_desc("PC 2")
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .label_style((FONT, 13))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(s)?;
        let at = |i: usize| self.points.get(i).map(|p| (p[0], p[1]));
        for &(a, p, n) in &self.triplets {
            if let (Some(pa), Some(pp), Some(pn)) = (at(a), at(p), at(n)) {
                // Faint, so that many triplets leave the points readable.
                chart
                    .draw_series(LineSeries::new([pa, pp], GREEN.mix(0.25)))
                    .map_err(s)?;
                chart
                    .draw_series(LineSeries::new([pa, pn], RED.mix(0.18)))
                    .map_err(s)?;
            }
        }
        let grey = RGBColor(170, 170, 170);
        // Samples at a non-finite position (left out of the view) are not drawn.
        let drawn = |p: &&[f64; 2]| p[0].is_finite() && p[1].is_finite();
        chart
            .draw_series(
                self.points
                    .iter()
                    .zip(&self.class)
                    .filter(|(p, c)| c.is_none() && drawn(p))
                    .map(|(p, _)| Circle::new((p[0], p[1]), 3, grey.filled())),
            )
            .map_err(s)?;
        for c in 0..self.n_classes() {
            let col = self.colour(c);
            chart
                .draw_series(
                    self.points
                        .iter()
                        .zip(&self.class)
                        .filter(|(p, k)| **k == Some(c) && drawn(p))
                        .map(|(p, _)| Circle::new((p[0], p[1]), 3, col.filled())),
                )
                .map_err(s)?;
        }
        self.legend().draw(&legend_area)
    }
}

/// The objective and its named terms per iteration (log y), with phase boundaries.
#[derive(Debug, Clone)]
pub struct Convergence {
    pub title: String,
    /// Objective after each iteration (iteration 1 first).
    pub objective: Vec<f64>,
    /// Named terms, each one value per iteration.
    pub terms: Vec<(String, Vec<f64>)>,
    /// Iterations after which a new phase (stage, round) begins: a dashed line between
    /// iteration b and b + 1.
    pub boundaries: Vec<usize>,
}

impl Figure for Convergence {
    fn name(&self) -> &'static str {
        "convergence plot"
    }
    fn size(&self) -> (u32, u32) {
        (760, 480)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let positive = |v: &f64| v.is_finite() && *v > 0.0;
        let all = self
            .objective
            .iter()
            .chain(self.terms.iter().flat_map(|(_, v)| v.iter()))
            .copied()
            .filter(positive);
        let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
        if lo > hi {
            return note(root, &self.title, "no positive objective values to plot");
        }
        let (lo, hi) = if hi > lo {
            (lo / 1.2, hi * 1.2)
        } else {
            (lo / 10.0, hi * 10.0)
        };
        let n = self
            .objective
            .len()
            .max(self.terms.iter().map(|(_, v)| v.len()).max().unwrap_or(0));
        let x1 = (n as f64).max(2.0);
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, 20))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(70)
            .build_cartesian_2d(1f64..x1, (lo..hi).log_scale())
            .map_err(s)?;
        chart
            .configure_mesh()
            .x_desc("iteration")
            .y_desc("objective (log)")
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.0e}"))
            .label_style((FONT, 13))
            .draw()
            .map_err(s)?;
        for &b in &self.boundaries {
            let x = b as f64 + 0.5;
            chart
                .draw_series(DashedLineSeries::new(
                    [(x, lo), (x, hi)],
                    4,
                    4,
                    RGBColor(120, 120, 120).into(),
                ))
                .map_err(s)?;
        }
        let line = |v: &[f64]| -> Vec<(f64, f64)> {
            v.iter()
                .enumerate()
                .filter(|(_, y)| positive(y))
                .map(|(i, y)| ((i + 1) as f64, *y))
                .collect()
        };
        chart
            .draw_series(LineSeries::new(
                line(&self.objective),
                BLACK.stroke_width(2),
            ))
            .map_err(s)?
            .label("objective")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLACK.stroke_width(2)));
        for (i, (name, v)) in self.terms.iter().enumerate() {
            let col = class_colour(i);
            chart
                .draw_series(LineSeries::new(line(v), col.stroke_width(2)))
                .map_err(s)?
                // A log axis cannot show a term that is never positive (a reward).
                .label(if v.iter().any(positive) {
                    name.clone()
                } else {
                    format!("{name} (≤ 0, not drawn)")
                })
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], col.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((FONT, 13))
            .draw()
            .map_err(s)
    }
}

/// A grid of coloured cells with row and column names and optional text in each cell.
struct CellGrid<'a> {
    title: &'a str,
    rows: usize,
    cols: usize,
    row_names: &'a [String],
    col_names: &'a [String],
    x_desc: &'a str,
    y_desc: &'a str,
}

impl CellGrid<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        cell: impl Fn(usize, usize) -> (RGBColor, Option<String>),
    ) -> Result<(), String> {
        let (nr, nc) = (self.rows, self.cols);
        if nr == 0 || nc == 0 {
            return note(root, self.title, "nothing to show");
        }
        let name_width = self
            .row_names
            .iter()
            .map(|n| n.chars().count())
            .max()
            .unwrap_or(2) as u32;
        let mut chart = ChartBuilder::on(root)
            .caption(self.title, (FONT, 20))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size((name_width * 8 + 30).clamp(40, 220))
            .build_cartesian_2d(Cells(nc), Cells(nr))
            .map_err(s)?;
        let name_of =
            |names: &[String], i: usize| names.get(i).cloned().unwrap_or_else(|| i.to_string());
        // The cell a key point is the centre of (None off the grid).
        let cell_of = |v: f64, n: usize| {
            let i = v.floor();
            (i >= 0.0 && (i as usize) < n).then_some(i as usize)
        };
        let x_fmt =
            |v: &f64| cell_of(*v, nc).map_or_else(String::new, |j| name_of(self.col_names, j));
        let y_fmt = |v: &f64| {
            cell_of(*v, nr).map_or_else(String::new, |i| name_of(self.row_names, nr - 1 - i))
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(nc.min(40))
            .y_labels(nr.min(40))
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .x_desc(self.x_desc)
            .y_desc(self.y_desc)
            .label_style((FONT, 12))
            .draw()
            .map_err(s)?;
        let mut texts = Vec::new();
        for i in 0..nr {
            for j in 0..nc {
                let (col, text) = cell(i, j);
                let (x, y) = (j as f64, (nr - 1 - i) as f64);
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x, y), (x + 1.0, y + 1.0)],
                        col.filled(),
                    )))
                    .map_err(s)?;
                if let Some(t) = text {
                    let lum = 0.299 * col.0 as f64 + 0.587 * col.1 as f64 + 0.114 * col.2 as f64;
                    let ink = if lum < 128.0 { WHITE } else { BLACK };
                    texts.push((t, x + 0.5, y + 0.5, ink));
                }
            }
        }
        for (t, x, y, ink) in texts {
            let style = TextStyle::from((FONT, 14).into_font())
                .color(&ink)
                .pos(Pos::new(HPos::Center, VPos::Center));
            chart
                .draw_series(std::iter::once(Text::new(t, (x, y), style)))
                .map_err(s)?;
        }
        Ok(())
    }
}

/// An axis of `n` cells: continuous coordinates 0..n with one key point (tick) at each
/// cell's centre, so a grid has exactly n cells. (plotters' segmented integer ranges are
/// inclusive, which drew an empty extra row and column, and map a single segment wrongly.)
#[derive(Clone, Copy)]
pub(super) struct Cells(pub(super) usize);

impl Ranged for Cells {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = value / self.0.max(1) as f64;
        limit.0 + (t * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        let step = self.0.div_ceil(hint.max_num_points().max(1)).max(1);
        (0..self.0).step_by(step).map(|i| i as f64 + 0.5).collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        0.0..self.0 as f64
    }
}

/// White → dark blue by `t` in [0, 1].
fn blue_ramp(t: f64) -> RGBColor {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    RGBColor(mix(247.0, 8.0), mix(251.0, 48.0), mix(255.0, 107.0))
}

/// A confusion matrix: counts of (true class, predicted class).
#[derive(Debug, Clone)]
pub struct Confusion {
    pub title: String,
    /// counts[true][predicted].
    pub counts: Vec<Vec<usize>>,
    pub row_names: Vec<String>,
    pub col_names: Vec<String>,
}

impl Figure for Confusion {
    fn name(&self) -> &'static str {
        "confusion matrix"
    }
    fn size(&self) -> (u32, u32) {
        let n = self.counts.len().max(1) as u32;
        let side = (n * 48 + 200).clamp(360, 1000);
        (side + 60, side)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let cols = self.counts.iter().map(Vec::len).max().unwrap_or(0);
        let max = self
            .counts
            .iter()
            .flatten()
            .copied()
            .max()
            .unwrap_or(0)
            .max(1);
        CellGrid {
            title: &self.title,
            rows: self.counts.len(),
            cols,
            row_names: &self.row_names,
            col_names: &self.col_names,
            x_desc: "predicted",
            y_desc: "true",
        }
        .draw(root, |i, j| {
            let c = self.counts[i].get(j).copied().unwrap_or(0);
            (blue_ramp(c as f64 / max as f64), Some(c.to_string()))
        })
    }
}

/// The columns of W: grey images in a grid when the data are images (bright = large), else a
/// heat map (features × components) with the feature names.
#[derive(Debug, Clone)]
pub struct Gallery {
    pub title: String,
    /// m×k basis (features × components).
    pub w: Array2<f64>,
    /// (height, width) of one image, row-major pixels, when the features are pixels.
    pub image: Option<(usize, usize)>,
    pub feature_names: Vec<String>,
    /// Caption of each column (empty: 1, 2, …), e.g. the basis numbers when the columns
    /// were reordered.
    pub column_names: Vec<String>,
}

impl Gallery {
    fn column_name(&self, j: usize) -> String {
        self.column_names
            .get(j)
            .cloned()
            .unwrap_or_else(|| (j + 1).to_string())
    }

    fn grid(&self) -> (usize, usize) {
        let k = self.w.ncols().max(1);
        let cols = (k as f64).sqrt().ceil() as usize;
        (k.div_ceil(cols), cols)
    }
}

impl Figure for Gallery {
    fn name(&self) -> &'static str {
        "basis gallery"
    }
    fn size(&self) -> (u32, u32) {
        match self.image {
            Some((h, w)) => {
                let (gr, gc) = self.grid();
                let scale = (96 / h.max(w).max(1)).max(1);
                let cell_w = (w * scale + 12) as u32;
                let cell_h = (h * scale + 28) as u32;
                ((gc as u32 * cell_w).max(320), gr as u32 * cell_h + 40)
            }
            None => {
                let m = self.w.nrows() as u32;
                let k = self.w.ncols() as u32;
                (
                    (k * 40 + 300).clamp(420, 1200),
                    (m * 16 + 140).clamp(300, 1000),
                )
            }
        }
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let (m, k) = self.w.dim();
        if m == 0 || k == 0 {
            return note(root, &self.title, "no basis");
        }
        let Some((ih, iw)) = self.image.filter(|(h, w)| h * w == m) else {
            let max = self
                .w
                .iter()
                .copied()
                .filter(|v| v.is_finite())
                .fold(0.0f64, f64::max);
            let comps: Vec<String> = (0..k).map(|j| self.column_name(j)).collect();
            return CellGrid {
                title: &self.title,
                rows: m,
                cols: k,
                row_names: &self.feature_names,
                col_names: &comps,
                x_desc: "component",
                y_desc: "feature",
            }
            .draw(root, |i, j| {
                let v = self.w[[i, j]];
                let t = if max > 0.0 { v / max } else { 0.0 };
                (blue_ramp(t), None)
            });
        };
        let centre = TextStyle::from((FONT, 18).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        let (w_px, _) = root.dim_in_pixel();
        root.draw(&Text::new(self.title.clone(), (w_px as i32 / 2, 8), centre))
            .map_err(s)?;
        let body = root.margin(36, 4, 4, 4);
        let (gr, gc) = self.grid();
        let panels = body.split_evenly((gr, gc));
        let label = TextStyle::from((FONT, 12).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        for (j, panel) in panels.iter().enumerate().take(k) {
            let (pw, ph) = panel.dim_in_pixel();
            let scale = ((pw as usize).saturating_sub(8) / iw)
                .min((ph as usize).saturating_sub(22) / ih)
                .max(1) as i32;
            let x0 = (pw as i32 - scale * iw as i32) / 2;
            let col = self.w.column(j);
            let max = col
                .iter()
                .copied()
                .filter(|v| v.is_finite())
                .fold(0.0f64, f64::max);
            for r in 0..ih {
                for c in 0..iw {
                    let v = col[r * iw + c];
                    let t = if max > 0.0 && v.is_finite() {
                        (v / max).clamp(0.0, 1.0)
                    } else {
                        0.0
                    };
                    let g = (t * 255.0).round() as u8;
                    let (x, y) = (x0 + c as i32 * scale, r as i32 * scale);
                    panel
                        .draw(&Rectangle::new(
                            [(x, y), (x + scale, y + scale)],
                            RGBColor(g, g, g).filled(),
                        ))
                        .map_err(s)?;
                }
            }
            panel
                .draw(&Text::new(
                    self.column_name(j),
                    (pw as i32 / 2, ih as i32 * scale + 3),
                    label.clone(),
                ))
                .map_err(s)?;
        }
        Ok(())
    }
}

/// One line of a sweep's `k_selection.csv` (means over the repeats).
#[derive(Debug, Clone)]
pub struct KSelectionRow {
    pub k: usize,
    pub recon_error: Option<f64>,
    pub acc: Option<f64>,
    pub nmi: Option<f64>,
    pub cophenetic: Option<f64>,
}

/// Choosing k: reconstruction error, ACC/NMI and cophenetic correlation against k.
#[derive(Debug, Clone)]
pub struct KSelectionPlot {
    pub title: String,
    pub rows: Vec<KSelectionRow>,
}

/// One line of a line chart, with an optional band (x, low, high).
struct Line {
    name: String,
    colour: RGBColor,
    points: Vec<(f64, f64)>,
    band: Vec<(f64, f64, f64)>,
}

fn line_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
) -> Result<(), String> {
    let xs = lines.iter().flat_map(|l| {
        l.points
            .iter()
            .map(|p| p.0)
            .chain(l.band.iter().map(|b| b.0))
    });
    let ys = lines.iter().flat_map(|l| {
        l.points
            .iter()
            .map(|p| p.1)
            .chain(l.band.iter().flat_map(|b| [b.1, b.2]))
    });
    let (Some((x0, x1)), Some((y0, y1))) = (padded_range(xs), padded_range(ys)) else {
        return note(area, title, "no values");
    };
    let mut chart = ChartBuilder::on(area)
        .caption(title, (FONT, 17))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(s)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style((FONT, 12))
        .draw()
        .map_err(s)?;
    for l in lines {
        if l.band.len() >= 2 {
            let mut poly: Vec<(f64, f64)> = l.band.iter().map(|b| (b.0, b.2)).collect();
            poly.extend(l.band.iter().rev().map(|b| (b.0, b.1)));
            chart
                .draw_series(std::iter::once(Polygon::new(
                    poly,
                    l.colour.mix(0.18).filled(),
                )))
                .map_err(s)?;
        }
    }
    for l in lines {
        let col = l.colour;
        chart
            .draw_series(LineSeries::new(l.points.clone(), col.stroke_width(2)))
            .map_err(s)?
            .label(l.name.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], col.stroke_width(2)));
        chart
            .draw_series(l.points.iter().map(|&p| Circle::new(p, 4, col.filled())))
            .map_err(s)?;
    }
    if lines.iter().any(|l| !l.name.is_empty()) {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((FONT, 12))
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(s)?;
    }
    Ok(())
}

impl Figure for KSelectionPlot {
    fn name(&self) -> &'static str {
        "k-selection plot"
    }
    fn size(&self) -> (u32, u32) {
        (1200, 420)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        if self.rows.is_empty() {
            return note(root, &self.title, "no k-selection rows");
        }
        let (title_area, body) = root.split_vertically(36);
        let centre =
            TextStyle::from((FONT, 20).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
        let (w, _) = title_area.dim_in_pixel();
        title_area
            .draw(&Text::new(self.title.clone(), (w as i32 / 2, 18), centre))
            .map_err(s)?;
        let panels = body.split_evenly((1, 3));
        let pick = |f: &dyn Fn(&KSelectionRow) -> Option<f64>| -> Vec<(f64, f64)> {
            self.rows
                .iter()
                .filter_map(|r| f(r).filter(|v| v.is_finite()).map(|v| (r.k as f64, v)))
                .collect()
        };
        let one = |name: &str, i: usize, points| Line {
            name: name.to_owned(),
            colour: class_colour(i),
            points,
            band: vec![],
        };
        line_chart(
            &panels[0],
            "reconstruction error",
            "k",
            "‖X − WH‖ / ‖X‖",
            &[one("", 0, pick(&|r| r.recon_error))],
        )?;
        line_chart(
            &panels[1],
            "clustering scores",
            "k",
            "score",
            &[
                one("ACC", 1, pick(&|r| r.acc)),
                one("NMI", 2, pick(&|r| r.nmi)),
            ],
        )?;
        line_chart(
            &panels[2],
            "stability across seeds",
            "k",
            "cophenetic correlation",
            &[one("", 4, pick(&|r| r.cophenetic))],
        )
    }
}

/// One share of revealed labels: mean and std of accuracy over the repeats.
#[derive(Debug, Clone, Copy)]
pub struct BudgetPoint {
    pub share: f64,
    pub mean: f64,
    pub std: f64,
}

/// One model's (or baseline's) accuracy against the share of labels given.
#[derive(Debug, Clone)]
pub struct BudgetSeries {
    pub name: String,
    pub points: Vec<BudgetPoint>,
}

/// The label-budget curve: share of labels given → accuracy, mean ± std band per series.
#[derive(Debug, Clone)]
pub struct LabelBudget {
    pub title: String,
    pub series: Vec<BudgetSeries>,
}

impl Figure for LabelBudget {
    fn name(&self) -> &'static str {
        "label-budget curve"
    }
    fn size(&self) -> (u32, u32) {
        (760, 500)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let lines: Vec<Line> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, ser)| {
                let mut pts = ser.points.clone();
                pts.sort_by(|a, b| a.share.total_cmp(&b.share));
                Line {
                    name: ser.name.clone(),
                    colour: class_colour(i),
                    points: pts
                        .iter()
                        .map(|p| (p.share * 100.0, p.mean * 100.0))
                        .collect(),
                    band: pts
                        .iter()
                        .map(|p| {
                            (
                                p.share * 100.0,
                                (p.mean - p.std) * 100.0,
                                (p.mean + p.std) * 100.0,
                            )
                        })
                        .collect(),
                }
            })
            .collect();
        line_chart(
            root,
            &self.title,
            "labels given (% of samples)",
            "accuracy on the rest (%), mean ± std",
            &lines,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{Cells, tick_format};
    use plotters::prelude::Ranged;

    #[test]
    fn a_cell_axis_has_one_tick_per_cell_centre_and_spans_its_limits() {
        let a = Cells(3);
        assert_eq!(a.key_points(10usize), [0.5, 1.5, 2.5]);
        assert_eq!((a.map(&0.0, (40, 340)), a.map(&3.0, (40, 340))), (40, 340));
        assert_eq!(a.map(&1.5, (40, 340)), 190);
        assert_eq!(Cells(1).map(&0.5, (0, 100)), 50);
        assert_eq!(Cells(100).key_points(10usize).len(), 10);
    }

    #[test]
    fn tick_labels_have_the_decimals_of_the_span_and_no_negative_zero() {
        let f = tick_format(1.2);
        assert_eq!(f(&0.2), "0.2");
        assert_eq!(f(&-0.0), "0.0");
        assert_eq!(f(&-1e-17), "0.0");
        assert_eq!(f(&-0.4), "-0.4");
        assert_eq!(tick_format(300.0)(&40.0), "40");
        assert_eq!(tick_format(0.03)(&0.015), "0.015");
    }
}
