//! Figures drawn to files, headless: the scatter, the convergence plot, the confusion matrix,
//! the basis gallery, k selection and the label-budget curve. Each figure is plain data (no GUI
//! state) and renders to PNG bytes or an SVG string through `plotters`, so the CLI's `report`
//! and the app's export share one drawing. Text uses egui's default font, registered from bytes
//! (no system fonts are looked up).

mod draw;
mod legend;
mod sweep;
mod text;

pub use draw::{
    BudgetPoint, BudgetSeries, Confusion, Convergence, Gallery, KSelectionPlot, KSelectionRow,
    LabelBudget, Scatter, tick_label,
};
pub use sweep::{CellScores, RunCurves, ScoreSeries};

use plotters::coord::Shift;
use plotters::prelude::*;

/// Errors from rendering a figure.
#[derive(Debug, thiserror::Error)]
pub enum FigureError {
    #[error("cannot draw the {figure}: {message}")]
    Draw {
        figure: &'static str,
        message: String,
    },
    #[error("cannot encode the {figure} as PNG: {message}")]
    Encode {
        figure: &'static str,
        message: String,
    },
}

/// PNG or SVG.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Png,
    Svg,
}

impl Format {
    /// The file extension (no dot).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Svg => "svg",
        }
    }
}

/// A figure that can draw itself on any plotters backend.
pub trait Figure {
    /// What it is, for error messages ("scatter", "convergence plot", ...).
    fn name(&self) -> &'static str;
    /// Width and height in pixels.
    fn size(&self) -> (u32, u32);
    /// Draw on `root` (already filled white).
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// The font family every figure uses; registered once from egui's bundled Ubuntu-Light.
pub(crate) const FONT: &str = "sans-serif";

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The bytes are a known-good TTF shipped by the crate; should it ever fail to parse,
        // text is simply not drawn (plotters reports it per call), the lines still are.
        let _ = plotters::style::register_font(
            FONT,
            FontStyle::Normal,
            epaint_default_fonts::UBUNTU_LIGHT,
        );
    });
}

fn draw_err<E: std::fmt::Display>(figure: &'static str) -> impl Fn(E) -> FigureError {
    move |e| FigureError::Draw {
        figure,
        message: e.to_string(),
    }
}

/// Render `fig` as PNG bytes.
pub fn to_png(fig: &impl Figure) -> Result<Vec<u8>, FigureError> {
    register_font();
    let (w, h) = fig.size();
    let mut buf = vec![255u8; (w as usize) * (h as usize) * 3];
    {
        let root =
            text::GlyphText(BitMapBackend::with_buffer(&mut buf, (w, h))).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err(fig.name()))?;
        fig.draw(&root).map_err(draw_err(fig.name()))?;
        root.present().map_err(draw_err(fig.name()))?;
    }
    let img = image::RgbImage::from_raw(w, h, buf).ok_or_else(|| FigureError::Encode {
        figure: fig.name(),
        message: "buffer size".into(),
    })?;
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png)
        .map_err(|e| FigureError::Encode {
            figure: fig.name(),
            message: e.to_string(),
        })?;
    Ok(out.into_inner())
}

/// Render `fig` as an SVG document.
pub fn to_svg(fig: &impl Figure) -> Result<String, FigureError> {
    register_font();
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, fig.size()).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err(fig.name()))?;
        fig.draw(&root).map_err(draw_err(fig.name()))?;
        root.present().map_err(draw_err(fig.name()))?;
    }
    Ok(s)
}

/// Render `fig` in `format` as file bytes.
pub fn render(fig: &impl Figure, format: Format) -> Result<Vec<u8>, FigureError> {
    match format {
        Format::Png => to_png(fig),
        Format::Svg => to_svg(fig).map(String::into_bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(png: &[u8]) -> image::RgbaImage {
        image::load_from_memory(png).expect("decode").to_rgba8()
    }

    fn non_white(img: &image::RgbaImage) -> usize {
        img.pixels()
            .filter(|p| p.0[0] < 250 || p.0[1] < 250 || p.0[2] < 250)
            .count()
    }

    #[test]
    fn scatter_draws_points_of_each_class_colour() {
        let fig = Scatter {
            title: "t".into(),
            points: vec![[0.0, 0.0], [1.0, 1.0], [0.5, 0.2]],
            class: vec![Some(0), Some(1), None],
            class_names: vec!["a".into(), "b".into()],
            class_colours: vec![],
            triplets: vec![(0, 1, 2)],
        };
        let img = decode(&to_png(&fig).expect("png"));
        assert_eq!(img.dimensions(), fig.size());
        let c0 = draw::class_colour(0);
        let has = |c: RGBColor| img.pixels().any(|p| p.0[..3] == [c.0, c.1, c.2]);
        assert!(has(c0), "no pixel of class 0's colour");
        assert!(has(draw::class_colour(1)), "no pixel of class 1's colour");
        let svg = to_svg(&fig).expect("svg");
        assert!(
            svg.starts_with("<svg") && svg.contains("circle"),
            "{svg:.200}"
        );
    }

    #[test]
    fn every_figure_renders_something() {
        let conv = Convergence {
            title: "c".into(),
            objective: vec![10.0, 5.0, 2.0, 1.0],
            terms: vec![("fit".into(), vec![9.0, 4.0, 1.5, 0.8])],
            boundaries: vec![2],
        };
        let conf = Confusion {
            title: "m".into(),
            counts: vec![vec![3, 1], vec![0, 4]],
            row_names: vec!["a".into(), "b".into()],
            col_names: vec!["a".into(), "b".into()],
        };
        let gal = Gallery {
            title: "g".into(),
            w: ndarray::Array2::from_shape_fn((16, 3), |(i, j)| (i * (j + 1)) as f64),
            image: Some((4, 4)),
            feature_names: vec![],
            column_names: vec![],
        };
        let heat = Gallery {
            image: None,
            ..gal.clone()
        };
        let ks = KSelectionPlot {
            title: "k".into(),
            rows: (2..5)
                .map(|k| KSelectionRow {
                    k,
                    recon_error: Some(1.0 / k as f64),
                    acc: Some(0.5),
                    nmi: Some(0.4),
                    cophenetic: Some(0.9),
                })
                .collect(),
        };
        let lb = LabelBudget {
            title: "l".into(),
            series: vec![BudgetSeries {
                name: "m".into(),
                points: vec![
                    BudgetPoint {
                        share: 0.1,
                        mean: 0.7,
                        std: 0.1,
                    },
                    BudgetPoint {
                        share: 0.5,
                        mean: 0.9,
                        std: 0.02,
                    },
                ],
            }],
        };
        for png in [
            to_png(&conv),
            to_png(&conf),
            to_png(&gal),
            to_png(&heat),
            to_png(&ks),
            to_png(&lb),
        ] {
            let img = decode(&png.expect("png"));
            assert!(non_white(&img) > 500, "an almost blank figure");
        }
    }

    #[test]
    fn empty_data_draws_a_note_not_an_error() {
        let conv = Convergence {
            title: "c".into(),
            objective: vec![],
            terms: vec![],
            boundaries: vec![],
        };
        assert!(to_png(&conv).is_ok());
        let s = Scatter {
            title: "s".into(),
            points: vec![],
            class: vec![],
            class_names: vec![],
            class_colours: vec![],
            triplets: vec![],
        };
        assert!(to_svg(&s).is_ok());
    }
}
