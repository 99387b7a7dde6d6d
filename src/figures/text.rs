//! Text on bitmaps, drawn with each glyph where the font puts it.
//!
//! plotters' `ab_glyph` text drawing places each glyph's pixels at the pen position plus the
//! pixel's offset *inside the glyph's ink box*, dropping the glyph's left side bearing (the
//! gap between the pen and the ink). Ubuntu-Light's digits are narrow ink in a wide, fixed
//! advance, so "10" drew its "1" a few pixels too far left and read "1 0" ("s1 0",
//! "basis 1 6"). [`GlyphText`] wraps a bitmap backend and draws text itself: the pen advances
//! by the advance and the kerning (as plotters' own layout measures it, so boxes and anchors
//! stay the same), and each glyph's ink goes at its true pixel bounds. Everything else is
//! passed to the wrapped backend. SVG needs none of this: it writes `<text>` and the viewer
//! lays the glyphs out.

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
    text_anchor::{HPos, VPos},
};

/// The figures' font (egui's bundled Ubuntu-Light), parsed once; None if it ever failed to
/// parse, and then text is left undrawn, as plotters does.
fn font() -> Option<&'static FontRef<'static>> {
    static FONT: std::sync::OnceLock<Option<FontRef<'static>>> = std::sync::OnceLock::new();
    FONT.get_or_init(|| FontRef::try_from_slice(epaint_default_fonts::UBUNTU_LIGHT).ok())
        .as_ref()
}

/// Width in pixels of `text` at pixel size `size`: the advances and the kerning, as plotters'
/// layout measures it (0 when the font is missing).
pub(crate) fn text_width(text: &str, size: f64) -> f64 {
    let Some(font) = font() else { return 0.0 };
    let scaled = font.as_scaled(PxScale::from(size as f32));
    let mut w = 0.0f32;
    let mut prev = None;
    for c in text.chars() {
        let id = font.glyph_id(c);
        if let Some(p) = prev {
            w += scaled.kern(p, id);
        }
        prev = Some(id);
        w += scaled.h_advance(id);
    }
    f64::from(w)
}

/// Rasterise `text` at pixel size `size` with the pen starting at x = 0 and the baseline at
/// y = `size / 2` (where plotters puts it, so text sits where plotters' layout expects);
/// `put(x, y, coverage)` for every pixel with ink.
pub(crate) fn rasterise(text: &str, size: f64, mut put: impl FnMut(i32, i32, f32)) {
    let Some(font) = font() else { return };
    let scale = PxScale::from(size as f32);
    let scaled = font.as_scaled(scale);
    let baseline = size as f32 / 2.0;
    let mut pen = 0.0f32;
    let mut prev = None;
    for c in text.chars() {
        let id = font.glyph_id(c);
        if let Some(p) = prev {
            pen += scaled.kern(p, id);
        }
        prev = Some(id);
        let glyph = id.with_scale_and_position(scale, point(pen, baseline));
        if let Some(outlined) = font.outline_glyph(glyph) {
            let b = outlined.px_bounds();
            let (x0, y0) = (b.min.x as i32, b.min.y as i32);
            outlined.draw(|x, y, cov| put(x0 + x as i32, y0 + y as i32, cov));
        }
        pen += scaled.h_advance(id);
    }
}

/// A drawing backend whose text is drawn by [`rasterise`]; all else goes to `B`.
pub(crate) struct GlyphText<B>(pub B);

impl<B: DrawingBackend> DrawingBackend for GlyphText<B> {
    type ErrorType = B::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.present()
    }
    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.fill_polygon(vert, style)
    }
    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.blit_bitmap(pos, size, src)
    }

    /// plotters' own text placement (layout box, anchor, rotation), with [`rasterise`]'s
    /// glyphs.
    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let trans = style.transform();
        let (w, h) = self.get_size();
        let mut result = Ok(());
        rasterise(text, style.size(), |x, y, cov| {
            if result.is_err() {
                return;
            }
            let (x, y) = trans.transform(x + dx - min_x, y + dy - min_y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if x >= 0 && x < w as i32 && y >= 0 && y < h as i32 {
                let ink = BackendColor {
                    alpha: color.alpha * f64::from(cov.clamp(0.0, 1.0)),
                    rgb: color.rgb,
                };
                result = self.0.draw_pixel((x, y), ink);
            }
        });
        result
    }
}

#[cfg(test)]
mod tests {
    use super::rasterise;

    /// The columns with ink, left to right, of `text` at 20 px.
    fn ink_columns(text: &str) -> Vec<i32> {
        let mut cols = std::collections::BTreeSet::new();
        rasterise(text, 20.0, |x, _, c| {
            if c > 0.3 {
                cols.insert(x);
            }
        });
        cols.into_iter().collect()
    }

    /// The widest run of empty columns between the first and the last ink.
    fn widest_gap(cols: &[i32]) -> i32 {
        cols.windows(2).map(|w| w[1] - w[0] - 1).max().unwrap_or(0)
    }

    #[test]
    fn each_glyph_is_inked_at_its_pen_position_plus_its_bearing() {
        // Ubuntu's "1" is narrow ink in a digit-wide advance: its ink starts right of the pen
        // (plotters' drawing put it at the pen, a few pixels left, and "10" read "1 0").
        let one = ink_columns("1");
        assert!(one[0] >= 2, "the 1's ink starts at {}", one[0]);
        let zero = ink_columns("0");
        let ten = ink_columns("10");
        assert_eq!(ten[0], one[0], "the 1 of \"10\" keeps its bearing");
        // The 0 of "10" is the 0 alone moved by the 1's advance.
        let shift = super::text_width("1", 20.0).round() as i32;
        let last = *ten.last().expect("ink");
        assert!(
            (last - (zero.last().expect("ink") + shift)).abs() <= 1,
            "the 0 of \"10\" ends at {last}, expected {} + {shift}",
            zero.last().expect("ink")
        );
        // So the digits of "10" sit closer than two words: less than a space apart.
        let (gap_10, space) = (widest_gap(&ten), widest_gap(&ink_columns("0 0")));
        assert!(gap_10 < space, "1–0 gap {gap_10} px, a space {space} px");
    }
}
