//! Figures of a sweep: scores (or times) per cell as dots with error bars, and the kept runs'
//! objective curves overlaid.

use super::draw::{Cells, class_colour, note, padded_range, s};
use super::legend::Legend;
use super::text::text_width;
use super::{FONT, Figure};
use plotters::coord::Shift;
use plotters::coord::cartesian::Cartesian2d;
use plotters::prelude::*;

/// One quantity (ACC, NMI, seconds, ...) over the cells of a sweep.
#[derive(Debug, Clone)]
pub struct ScoreSeries {
    pub name: String,
    /// Per cell: mean and std over its runs (None: not measured in that cell).
    pub stats: Vec<Option<(f64, f64)>>,
    /// Per cell: each run's value (drawn as small rings behind the mean; may be empty).
    pub runs: Vec<Vec<f64>>,
}

/// A dot plot: one row per cell, a dot at each series' mean with a bar of ± one std, and the
/// single runs as rings.
#[derive(Debug, Clone)]
pub struct CellScores {
    pub title: String,
    pub x_desc: String,
    /// Cell names, drawn top to bottom.
    pub cells: Vec<String>,
    pub series: Vec<ScoreSeries>,
    /// A logarithmic x axis (times spanning orders of magnitude).
    pub log_x: bool,
}

/// Height of one cell's row.
const ROW_PX: u32 = 34;
/// Width of the plot beside the legend.
const PLOT_W: u32 = 760;

impl CellScores {
    fn legend(&self) -> Legend {
        Legend {
            entries: self
                .series
                .iter()
                .enumerate()
                .map(|(i, ser)| (ser.name.clone(), class_colour(i)))
                .collect(),
        }
    }

    fn name_width(&self) -> u32 {
        let w = self
            .cells
            .iter()
            .map(|c| text_width(c, 13.0))
            .fold(0.0f64, f64::max);
        (w.ceil() as u32 + 16).clamp(40, 420)
    }

    /// Every value drawn (means ± std and the runs), for the axis range.
    fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.series.iter().flat_map(|ser| {
            ser.stats
                .iter()
                .flatten()
                .flat_map(|&(m, sd)| [m - sd, m, m + sd])
                .chain(ser.runs.iter().flatten().copied())
        })
    }

    /// The y position of series `j` in cell `i` (cells top to bottom, series spread within).
    fn y(&self, i: usize, j: usize) -> f64 {
        let n = self.cells.len();
        let k = self.series.len().max(1) as f64;
        let offset = (j as f64 - (k - 1.0) / 2.0) * (0.6 / k);
        (n - 1 - i) as f64 + 0.5 - offset
    }

    fn draw_on<DB: DrawingBackend, X: Ranged<ValueType = f64>>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<X, Cells>>,
    ) -> Result<(), String> {
        for (j, ser) in self.series.iter().enumerate() {
            let col = class_colour(j);
            for (i, runs) in ser.runs.iter().enumerate().take(self.cells.len()) {
                let y = self.y(i, j);
                chart
                    .draw_series(
                        runs.iter()
                            .filter(|v| v.is_finite())
                            .map(|&v| Circle::new((v, y), 3, col.mix(0.55).stroke_width(1))),
                    )
                    .map_err(s)?;
            }
            for (i, stat) in ser.stats.iter().enumerate().take(self.cells.len()) {
                let Some((m, sd)) = stat.filter(|(m, sd)| m.is_finite() && sd.is_finite()) else {
                    continue;
                };
                let y = self.y(i, j);
                let cap = 0.08;
                let bar = [
                    vec![(m - sd, y), (m + sd, y)],
                    vec![(m - sd, y - cap), (m - sd, y + cap)],
                    vec![(m + sd, y - cap), (m + sd, y + cap)],
                ];
                for line in bar {
                    chart
                        .draw_series(LineSeries::new(line, col.stroke_width(2)))
                        .map_err(s)?;
                }
                chart
                    .draw_series(std::iter::once(Circle::new((m, y), 5, col.filled())))
                    .map_err(s)?;
            }
        }
        Ok(())
    }
}

/// A short label for a value on a log axis (0.001, 0.05, 0.3, 2, 40, 1500): the decimals of
/// its first significant digit.
fn log_tick(v: f64) -> String {
    if !(v.is_finite() && v > 0.0) {
        return String::new();
    }
    let decimals = (-(v.log10() + 1e-9).floor()).clamp(0.0, 12.0) as usize;
    format!("{v:.decimals$}")
}

impl Figure for CellScores {
    fn name(&self) -> &'static str {
        "score plot"
    }
    fn size(&self) -> (u32, u32) {
        let h = (self.cells.len() as u32 * ROW_PX + 110).clamp(260, 2000);
        (PLOT_W + self.name_width() + self.legend().width(h), h)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let n = self.cells.len();
        let range = if self.log_x {
            let (lo, hi) = self
                .values()
                .filter(|v| v.is_finite() && *v > 0.0)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                    (a.min(v), b.max(v))
                });
            (lo <= hi).then_some((lo / 1.5, hi * 1.5))
        } else {
            padded_range(self.values())
        };
        let (Some((x0, x1)), true) = (range, n > 0) else {
            return note(root, &self.title, "no values");
        };
        let (plot, legend_area) = root.split_horizontally(PLOT_W + self.name_width());
        let mut builder = ChartBuilder::on(&plot);
        builder
            .caption(&self.title, (FONT, 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(self.name_width());
        let cell_name = |v: &f64| {
            let i = v.floor();
            if i >= 0.0 && (i as usize) < n {
                self.cells[n - 1 - i as usize].clone()
            } else {
                String::new()
            }
        };
        if self.log_x {
            let mut chart = builder
                .build_cartesian_2d((x0..x1).log_scale(), Cells(n))
                .map_err(s)?;
            chart
                .configure_mesh()
                .y_labels(n)
                .y_label_formatter(&cell_name)
                .x_label_formatter(&|v| log_tick(*v))
                .x_desc(self.x_desc.as_str())
                .label_style((FONT, 13))
                .light_line_style(WHITE.mix(0.0))
                .draw()
                .map_err(s)?;
            self.draw_on(&mut chart)?;
        } else {
            let mut chart = builder.build_cartesian_2d(x0..x1, Cells(n)).map_err(s)?;
            let fx = super::draw::tick_format(x1 - x0);
            chart
                .configure_mesh()
                .y_labels(n)
                .y_label_formatter(&cell_name)
                .x_label_formatter(&fx)
                .x_desc(self.x_desc.as_str())
                .label_style((FONT, 13))
                .light_line_style(WHITE.mix(0.0))
                .draw()
                .map_err(s)?;
            self.draw_on(&mut chart)?;
        }
        self.legend().draw(&legend_area)
    }
}

/// The objective of every kept run, divided by its first value (so models of different
/// scales share the axis), one colour per cell.
#[derive(Debug, Clone)]
pub struct RunCurves {
    pub title: String,
    /// Per cell: its name and the objective per iteration of each of its runs.
    pub groups: Vec<(String, Vec<Vec<f64>>)>,
}

impl RunCurves {
    fn legend(&self) -> Legend {
        Legend {
            entries: self
                .groups
                .iter()
                .enumerate()
                .map(|(i, (name, _))| (name.clone(), class_colour(i)))
                .collect(),
        }
    }

    /// A run's curve as (iteration, objective ÷ first), positive values only.
    fn relative(run: &[f64]) -> Vec<(f64, f64)> {
        let Some(&first) = run.first().filter(|v| v.is_finite() && **v > 0.0) else {
            return Vec::new();
        };
        run.iter()
            .enumerate()
            .map(|(t, v)| ((t + 1) as f64, v / first))
            .filter(|(_, r)| r.is_finite() && *r > 0.0)
            .collect()
    }
}

impl Figure for RunCurves {
    fn name(&self) -> &'static str {
        "run curves"
    }
    fn size(&self) -> (u32, u32) {
        let h = 480;
        (PLOT_W + self.legend().width(h), h)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let curves: Vec<Vec<Vec<(f64, f64)>>> = self
            .groups
            .iter()
            .map(|(_, runs)| runs.iter().map(|r| Self::relative(r)).collect())
            .collect();
        let all = || curves.iter().flatten().flatten();
        let (lo, hi) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.1), b.max(p.1))
        });
        if lo > hi {
            return note(root, &self.title, "no positive objective values to plot");
        }
        let (lo, hi) = if hi > lo {
            (lo / 1.2, hi * 1.2)
        } else {
            (lo / 10.0, hi * 10.0)
        };
        let x1 = all().map(|p| p.0).fold(2.0f64, f64::max);
        let (plot, legend_area) = root.split_horizontally(PLOT_W);
        let mut chart = ChartBuilder::on(&plot)
            .caption(&self.title, (FONT, 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(1f64..x1, (lo..hi).log_scale())
            .map_err(s)?;
        chart
            .configure_mesh()
            .x_desc("iteration")
            .y_desc("objective ÷ its first value (log)")
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| log_tick(*v))
            .label_style((FONT, 13))
            .draw()
            .map_err(s)?;
        for (i, runs) in curves.into_iter().enumerate() {
            let col = class_colour(i);
            for run in runs {
                chart
                    .draw_series(LineSeries::new(run, col.mix(0.7).stroke_width(1)))
                    .map_err(s)?;
            }
        }
        self.legend().draw(&legend_area)
    }
}

#[cfg(test)]
mod tests {
    use super::log_tick;

    #[test]
    fn log_ticks_show_their_first_significant_digit() {
        assert_eq!(log_tick(0.001), "0.001");
        assert_eq!(log_tick(0.01), "0.01");
        assert_eq!(log_tick(0.05), "0.05");
        assert_eq!(log_tick(1.0), "1");
        assert_eq!(log_tick(40.0), "40");
        assert_eq!(log_tick(0.0), "");
    }
}
