//! A legend beside a plot, in as many columns as its entries need, so that every class is
//! listed (ORL's 40 people) without covering the points.

use super::FONT;
use super::text::text_width;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Text size of an entry.
const SIZE: f64 = 13.0;
/// Height of one entry.
const ROW: u32 = 18;
/// Space above the first entry (the plot's caption sits there).
const TOP: u32 = 44;
/// Marker, gap and padding around an entry's text.
const MARK: u32 = 22;
const PAD: u32 = 12;
/// Entries beyond this many are summed up in a last line "+ N more".
pub(crate) const MAX_ENTRIES: usize = 160;

/// The entries of a legend: name and colour of each.
pub(crate) struct Legend {
    pub entries: Vec<(String, RGBColor)>,
}

impl Legend {
    /// Entries drawn (the rest are counted in the last line).
    fn shown(&self) -> usize {
        self.entries.len().min(MAX_ENTRIES)
    }

    /// Rows per column in a legend `height` pixels tall.
    fn rows(height: u32) -> usize {
        (height.saturating_sub(TOP + 8) / ROW).max(1) as usize
    }

    /// Width of one column: the longest name, its marker and padding.
    fn column_width(&self) -> u32 {
        let text = self.entries[..self.shown()]
            .iter()
            .map(|(n, _)| text_width(n, SIZE))
            .fold(0.0f64, f64::max);
        text.ceil() as u32 + MARK + PAD
    }

    /// Width the legend needs beside a plot `height` pixels tall (0 without entries).
    pub fn width(&self, height: u32) -> u32 {
        if self.entries.is_empty() {
            return 0;
        }
        // One more slot for the "+ N more" line when entries are left out.
        let slots = self.shown() + usize::from(self.entries.len() > self.shown());
        let cols = slots.div_ceil(Self::rows(height)) as u32;
        cols * self.column_width() + PAD
    }

    /// Draw on `area` (the strip beside the plot).
    pub fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let (_, h) = area.dim_in_pixel();
        let rows = Self::rows(h);
        let col_w = self.column_width() as i32;
        let style =
            TextStyle::from((FONT, SIZE).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
        let at = |i: usize| {
            let (c, r) = ((i / rows) as i32, (i % rows) as i32);
            (
                PAD as i32 / 2 + c * col_w,
                (TOP + ROW / 2) as i32 + r * ROW as i32,
            )
        };
        for (i, (name, col)) in self.entries.iter().take(self.shown()).enumerate() {
            let (x, y) = at(i);
            area.draw(&Circle::new((x + 7, y), 5, col.filled()))
                .map_err(|e| e.to_string())?;
            area.draw(&Text::new(
                name.clone(),
                (x + MARK as i32, y),
                style.clone(),
            ))
            .map_err(|e| e.to_string())?;
        }
        let left_out = self.entries.len() - self.shown();
        if left_out > 0 {
            area.draw(&Text::new(
                format!("+ {left_out} more"),
                at(self.shown()),
                style,
            ))
            .map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}
