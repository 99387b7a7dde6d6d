//! A large scatter group drawn as one image: its points stamped into a texture the size of the
//! pixels they cover, kept until the view, the points or the style change.
//!
//! egui_plot's `Points` makes one circle shape per point and egui tessellates each of them
//! every frame: at 200,000 points that is far beyond a frame's budget, while the screen shows
//! at most a few hundred thousand pixels and the points overlap by more than a pixel long
//! before then. Here each group is one textured quad: its points are stamped (anti-aliased
//! discs, or the group's marker, at sub-pixel positions) into an image of the group's pixel
//! bounding box, which is uploaded once and drawn every frame at the cost of one rectangle.
//! Restamping (a pan, a zoom, a new snapshot) costs a few stamps per point and an image the
//! size of the group's pixels: it runs on a background thread, and the frames meanwhile draw
//! the previous image (scaled to the current zoom), so the UI thread only hashes the points,
//! uploads a finished image and draws one rectangle per group.

use eframe::egui;
use egui::{Color32, ColorImage, Pos2, Rect, Shape, TextureHandle, TextureOptions, Ui};
use egui_plot::{
    MarkerShape, PlotBounds, PlotGeometry, PlotItem, PlotItemBase, PlotPoint, PlotPoints,
    PlotTransform, PlotUi, Points,
};
use std::borrow::Cow;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

/// From this many points on, the scatter draws each group as an image ([`PointImage`]) rather
/// than one egui shape per point.
pub const IMAGE_FROM: usize = 20_000;

/// Sub-pixel positions per axis of the precomputed stamps.
const SUB: usize = 4;

/// One scatter group as an image item of the plot (legend entry, bounds, hiding as a
/// `Points` item; no per-point hover: the scatter picks samples itself).
pub struct PointImage<'a> {
    base: PlotItemBase,
    points: Cow<'a, [PlotPoint]>,
    mark: Mark,
    /// Key of the kept image in egui's memory.
    id: egui::Id,
}

/// How a set of points is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mark {
    pub color: Color32,
    /// In UI points.
    pub radius: f32,
    pub marker: MarkerShape,
    /// Filled markers, or rings (circles only).
    pub filled: bool,
}

/// Add `points` to the plot as egui_plot `Points` when there are fewer than `from`, else as
/// one [`PointImage`]; `id` names the item (legend state, the kept image).
pub fn add_points<'a>(
    plot_ui: &mut PlotUi<'a>,
    name: &str,
    points: Cow<'a, [PlotPoint]>,
    mark: Mark,
    id: impl Hash,
    from: usize,
) {
    if points.len() < from {
        let series = match points {
            Cow::Borrowed(p) => PlotPoints::Borrowed(p),
            Cow::Owned(p) => PlotPoints::Owned(p),
        };
        plot_ui.points(
            Points::new(name, series)
                .color(mark.color)
                .radius(mark.radius)
                .shape(mark.marker)
                .filled(mark.filled)
                .id(id),
        );
    } else {
        plot_ui.add(PointImage {
            base: PlotItemBase::new(name.to_owned()),
            points,
            mark,
            id: egui::Id::unique(("point_image", {
                let mut h = std::hash::DefaultHasher::new();
                id.hash(&mut h);
                std::hash::Hasher::finish(&h)
            })),
        });
    }
}

impl PointImage<'_> {
    /// What the image depends on: the points (hashed), the zoom (pixels per unit), the pixel
    /// density and the style; and the view's bounds when the image covers only the view
    /// (`whole` false).
    fn key(&self, transform: &PlotTransform, ppp: f32, whole: bool) -> u64 {
        let mut h = Fold::default();
        for p in self.points.iter() {
            h.add(p.x.to_bits());
            h.add(p.y.to_bits());
        }
        // The zoom to about 5 significant digits: a pan translates the bounds, which moves
        // their width by a few ulps, and must not count as a zoom (the image is then off by
        // at most a tenth of a pixel across its 4096).
        let [sx, sy] = transform.dpos_dvalue();
        h.add(u64::from((sx as f32).to_bits() >> 6));
        h.add(u64::from((sy as f32).to_bits() >> 6));
        if !whole {
            let (b, f) = (transform.bounds(), transform.frame());
            for v in [b.min()[0], b.min()[1], b.max()[0], b.max()[1]] {
                h.add(v.to_bits());
            }
            for v in [f.min.x, f.min.y, f.max.x, f.max.y] {
                h.add(u64::from(v.to_bits()));
            }
        }
        for v in [ppp, self.mark.radius] {
            h.add(u64::from(v.to_bits()));
        }
        h.add(u64::from(u32::from_ne_bytes(self.mark.color.to_array())));
        h.add(self.mark.marker as u64);
        h.add(u64::from(self.mark.filled));
        h.add(u64::from(whole));
        h.add(self.points.len() as u64);
        h.0
    }

    /// Whether the image of all the points at this zoom stays within [`MAX_SIDE`] pixels a
    /// side: then it is stamped once for the zoom and a pan only moves it.
    fn fits_whole(&self, transform: &PlotTransform, ppp: f32) -> bool {
        let b = self.bounds();
        let [sx, sy] = transform.dpos_dvalue();
        let w = (b.width() * sx.abs()) as f32 * ppp;
        let h = (b.height() * sy.abs()) as f32 * ppp;
        w.is_finite() && h.is_finite() && w < MAX_SIDE as f32 && h < MAX_SIDE as f32
    }
}

/// Largest side, in pixels, of an image of all of a group's points; a group larger at the
/// current zoom is stamped for the view only, again after every pan.
const MAX_SIDE: usize = 4096;

/// A 64-bit multiply-xor fold (the image's cache key; not cryptographic).
#[derive(Default)]
struct Fold(u64);

impl Fold {
    fn add(&mut self, v: u64) {
        self.0 = (self.0 ^ v)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }
}

/// The image of one group kept between frames (egui memory, by the item's id).
#[derive(Clone, Default)]
struct Cached {
    /// Key of the image on screen.
    key: u64,
    texture: Option<TextureHandle>,
    /// Where the image's top-left corner is, in pixels, from the screen position of the data
    /// origin (0, 0), and its size in pixels.
    offset: [i64; 2],
    size: [usize; 2],
    /// Pixels per data unit (x, y) the image was stamped at.
    zoom: [f64; 2],
    /// The stamp being made on a background thread, if any.
    pending: Option<Pending>,
}

/// A stamp in progress: its key, its zoom and the slot its thread fills.
#[derive(Clone)]
struct Pending {
    key: u64,
    zoom: [f64; 2],
    slot: Arc<Mutex<Option<Stamped>>>,
}

/// A finished stamp: the image and its top-left corner (`None`: no point is drawn).
type Stamped = Option<(ColorImage, [i64; 2])>;

/// What a stamp needs, owned, so that it can run off the UI thread.
struct StampJob {
    points: Vec<PlotPoint>,
    mark: Mark,
    transform: PlotTransform,
    ppp: f32,
    whole: bool,
}

impl Cached {
    /// Put a finished stamp on screen (its texture replaced in place).
    fn install(&mut self, ctx: &egui::Context, name: &str) {
        let Some(p) = &self.pending else {
            return;
        };
        let Some(done) = p.slot.lock().ok().and_then(|mut s| s.take()) else {
            return;
        };
        self.key = p.key;
        self.zoom = p.zoom;
        self.pending = None;
        match done {
            Some((img, offset)) => {
                self.size = img.size;
                self.offset = offset;
                match &mut self.texture {
                    Some(t) => t.set(img, TextureOptions::NEAREST),
                    None => {
                        self.texture = Some(ctx.load_texture(
                            format!("points {name}"),
                            img,
                            TextureOptions::NEAREST,
                        ));
                    }
                }
            }
            None => self.texture = None,
        }
    }

    /// Start stamping `job` on a background thread; the frame after it finishes installs it.
    fn start(&mut self, ctx: &egui::Context, key: u64, job: StampJob) {
        let slot = Arc::new(Mutex::new(None));
        let zoom = pixel_zoom(&job.transform, job.ppp);
        self.pending = Some(Pending {
            key,
            zoom,
            slot: Arc::clone(&slot),
        });
        let ctx = ctx.clone();
        let spawned = std::thread::Builder::new()
            .name("point-image".into())
            .spawn(move || {
                let img = stamp(&job.points, job.mark, &job.transform, job.ppp, job.whole);
                if let Ok(mut s) = slot.lock() {
                    *s = Some(img);
                }
                ctx.request_repaint();
            });
        if spawned.is_err() {
            // No thread to stamp on: nothing new is drawn; the next frame tries again.
            self.pending = None;
        }
    }
}

/// Pixels per data unit along x and y (signed: y grows downwards on screen).
fn pixel_zoom(transform: &PlotTransform, ppp: f32) -> [f64; 2] {
    let [sx, sy] = transform.dpos_dvalue();
    [sx * f64::from(ppp), sy * f64::from(ppp)]
}

impl PlotItem for PointImage<'_> {
    fn shapes(&self, ui: &Ui, transform: &PlotTransform, shapes: &mut Vec<Shape>) {
        let ctx = ui.ctx();
        let ppp = ctx.pixels_per_point();
        let whole = self.fits_whole(transform, ppp);
        let key = self.key(transform, ppp, whole);
        let id = self.id;
        let mut cached = ctx.data(|d| d.get_temp::<Cached>(id)).unwrap_or_default();
        cached.install(ctx, self.name());
        // One stamp at a time per group: while one runs, newer views wait for it (a run's
        // snapshots or a zoom's frames do not pile up threads), then the latest is stamped.
        if cached.key != key && cached.pending.is_none() {
            let job = StampJob {
                points: self.points.to_vec(),
                mark: self.mark,
                transform: *transform,
                ppp,
                whole,
            };
            cached.start(ctx, key, job);
        }
        ctx.data_mut(|d| d.insert_temp(id, cached.clone()));
        if let Some(t) = &cached.texture {
            shapes.push(Shape::image(
                t.id(),
                placed(&cached, transform, ppp),
                Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0)),
                Color32::WHITE,
            ));
        }
    }

    fn initialize(&mut self, _x_range: std::ops::RangeInclusive<f64>) {}

    fn color(&self) -> Color32 {
        self.mark.color
    }

    fn geometry(&self) -> PlotGeometry<'_> {
        PlotGeometry::None
    }

    fn bounds(&self) -> PlotBounds {
        let mut b = PlotBounds::NOTHING;
        for p in self.points.iter() {
            b.extend_with(p);
        }
        b
    }

    fn base(&self) -> &PlotItemBase {
        &self.base
    }

    fn base_mut(&mut self) -> &mut PlotItemBase {
        &mut self.base
    }
}

/// Where the kept image goes on screen: at its pixels when it was stamped at this zoom (the
/// data origin snapped to the pixel grid, so that the texture's pixels land on the screen's),
/// else scaled from the zoom it was stamped at until the new stamp arrives.
fn placed(cached: &Cached, transform: &PlotTransform, ppp: f32) -> Rect {
    let o = transform.position_from_point(&PlotPoint::new(0.0, 0.0));
    let [zx, zy] = pixel_zoom(transform, ppp);
    let (rx, ry) = (zx / cached.zoom[0], zy / cached.zoom[1]);
    let same = |r: f64| r.is_finite() && (r - 1.0).abs() < 1e-4;
    let (w, h) = (cached.size[0] as f32, cached.size[1] as f32);
    if same(rx) && same(ry) {
        let (ox, oy) = ((o.x * ppp).round(), (o.y * ppp).round());
        let min = Pos2::new(
            (ox + cached.offset[0] as f32) / ppp,
            (oy + cached.offset[1] as f32) / ppp,
        );
        Rect::from_min_size(min, egui::vec2(w / ppp, h / ppp))
    } else {
        let (rx, ry) = (rx as f32, ry as f32);
        let min = Pos2::new(
            o.x + cached.offset[0] as f32 * rx / ppp,
            o.y + cached.offset[1] as f32 * ry / ppp,
        );
        Rect::from_min_size(min, egui::vec2(w * rx / ppp, h * ry / ppp))
    }
}

/// Coverage of pixel offset (dx, dy) from a marker of radius `r` pixels centred at the origin,
/// in 0..=1 (one pixel of anti-aliasing at the edge).
fn coverage(marker: MarkerShape, filled: bool, r: f32, dx: f32, dy: f32) -> f32 {
    let edge = |d: f32| (r + 0.5 - d).clamp(0.0, 1.0);
    let line = |d: f32| (0.5 + (r / 5.0).max(0.5) - d).clamp(0.0, 1.0);
    let (ax, ay) = (dx.abs(), dy.abs());
    match marker {
        MarkerShape::Circle if !filled => line(((dx * dx + dy * dy).sqrt() - r).abs()),
        MarkerShape::Circle => edge((dx * dx + dy * dy).sqrt()),
        MarkerShape::Square => edge(ax.max(ay) * std::f32::consts::SQRT_2),
        MarkerShape::Diamond => edge(ax + ay),
        MarkerShape::Up => edge((-dy).max(ax * 1.7 + dy * 0.5)),
        MarkerShape::Down => edge(dy.max(ax * 1.7 - dy * 0.5)),
        MarkerShape::Left => edge((-dx).max(ay * 1.7 + dx * 0.5)),
        MarkerShape::Right => edge(dx.max(ay * 1.7 - dx * 0.5)),
        MarkerShape::Plus => {
            let arm = |a: f32, b: f32| if a <= r + 0.5 { line(b) } else { 0.0 };
            arm(ax, ay).max(arm(ay, ax))
        }
        MarkerShape::Cross | MarkerShape::Asterisk => {
            let (u, v) = ((dx + dy).abs(), (dx - dy).abs());
            let d = std::f32::consts::FRAC_1_SQRT_2;
            let arm = |a: f32, b: f32| if a * d <= r { line(b * d) } else { 0.0 };
            let x = arm(u, v).max(arm(v, u));
            if marker == MarkerShape::Asterisk {
                x.max(if ay <= r { line(ax) } else { 0.0 })
            } else {
                x
            }
        }
    }
}

/// The group's points stamped into an image: of all of them (`whole`), in pixels from the
/// data origin, or of those in the plot's frame. Returns the image and its top-left corner in
/// pixels from the origin's pixel; `None` when no point is drawn.
fn stamp(
    points: &[PlotPoint],
    mark: Mark,
    transform: &PlotTransform,
    ppp: f32,
    whole: bool,
) -> Stamped {
    let r = (mark.radius * ppp).max(0.5);
    // How far the coverage reaches from a point (r + 0.5 for filled shapes; rings and the
    // line markers add their line's half width), and so the pixels a stamp spans from its
    // centre's pixel.
    let lines = !mark.filled
        || matches!(
            mark.marker,
            MarkerShape::Plus | MarkerShape::Cross | MarkerShape::Asterisk
        );
    let reach = if lines {
        r + 1.0 + (r / 5.0).max(0.5)
    } else {
        r + 0.5
    };
    let half = reach.ceil() as i64;
    let [sx, sy] = transform.dpos_dvalue();
    let (sx, sy) = (sx * f64::from(ppp), sy * f64::from(ppp));
    // The view in pixels from the origin, for an image of the view only.
    let o = transform.position_from_point(&PlotPoint::new(0.0, 0.0));
    let (ox, oy) = ((o.x * ppp).round(), (o.y * ppp).round());
    let f = transform.frame();
    let view = [
        f.min.x * ppp - ox - r,
        f.min.y * ppp - oy - r,
        f.max.x * ppp - ox + r,
        f.max.y * ppp - oy + r,
    ];
    let px: Vec<(f32, f32)> = points
        .iter()
        .map(|p| ((p.x * sx) as f32, (p.y * sy) as f32))
        .filter(|&(x, y)| {
            x.is_finite()
                && y.is_finite()
                && (whole || (x >= view[0] && y >= view[1] && x <= view[2] && y <= view[3]))
        })
        .collect();
    if px.is_empty() {
        return None;
    }
    let (mut x0, mut y0, mut x1, mut y1) = (i64::MAX, i64::MAX, i64::MIN, i64::MIN);
    for &(x, y) in &px {
        let (xi, yi) = (x.floor() as i64, y.floor() as i64);
        x0 = x0.min(xi - half);
        y0 = y0.min(yi - half);
        x1 = x1.max(xi + half + 1);
        y1 = y1.max(yi + half + 1);
    }
    let (w, h) = ((x1 - x0) as usize, (y1 - y0) as usize);
    let side = (2 * half + 1) as usize;
    let stamps = sub_pixel_stamps(mark, r, half);
    // Alpha coverage of the group, max over its points (points of one colour do not darken
    // where they overlap, as opaque shapes do not).
    let mut alpha = vec![0u8; w * h];
    for &(x, y) in &px {
        let (xi, yi) = (x.floor() as i64, y.floor() as i64);
        let sxi = (((x - xi as f32) * SUB as f32) as usize).min(SUB - 1);
        let syi = (((y - yi as f32) * SUB as f32) as usize).min(SUB - 1);
        let st = &stamps[syi * SUB + sxi];
        let (ox, oy) = ((xi - half - x0) as usize, (yi - half - y0) as usize);
        for row in 0..side {
            let dst = &mut alpha[(oy + row) * w + ox..(oy + row) * w + ox + side];
            for (d, &s) in dst.iter_mut().zip(&st[row * side..(row + 1) * side]) {
                *d = (*d).max(s);
            }
        }
    }
    let lut = coverage_colours(mark.color);
    let pixels = alpha.into_iter().map(|a| lut[usize::from(a)]).collect();
    Some((ColorImage::new([w, h], pixels), [x0, y0]))
}

/// The mark's coverage of the (2·half + 1)² pixels around a point, for each of SUB × SUB
/// sub-pixel offsets of the point within its pixel (radius `r` in pixels).
fn sub_pixel_stamps(mark: Mark, r: f32, half: i64) -> Vec<Vec<u8>> {
    let side = (2 * half + 1) as usize;
    (0..SUB * SUB)
        .map(|s| {
            let (fx, fy) = ((s % SUB) as f32 / SUB as f32, (s / SUB) as f32 / SUB as f32);
            (0..side * side)
                .map(|p| {
                    let (dx, dy) = (
                        (p % side) as f32 - half as f32,
                        (p / side) as f32 - half as f32,
                    );
                    // Pixel centres at +0.5; the point at (fx, fy) within its pixel.
                    let c = coverage(mark.marker, mark.filled, r, dx + 0.5 - fx, dy + 0.5 - fy);
                    (c * 255.0).round() as u8
                })
                .collect()
        })
        .collect()
}

/// `color` premultiplied at each coverage value 0–255, once per stamp.
fn coverage_colours(color: Color32) -> Vec<Color32> {
    let [cr, cg, cb, ca] = color.to_array();
    (0..=255u16)
        .map(|a| {
            let a = a * u16::from(ca) / 255;
            let scale = |c: u8| ((u16::from(c) * a + 127) / 255) as u8;
            Color32::from_rgba_premultiplied(scale(cr), scale(cg), scale(cb), a as u8)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_circle_covers_its_centre_and_nothing_beyond_its_edge() {
        assert_eq!(coverage(MarkerShape::Circle, true, 1.5, 0.0, 0.0), 1.0);
        assert_eq!(coverage(MarkerShape::Circle, true, 1.5, 2.5, 0.0), 0.0);
        let edge = coverage(MarkerShape::Circle, true, 1.5, 1.5, 0.0);
        assert!(edge > 0.0 && edge < 1.0, "{edge}");
        for m in [
            MarkerShape::Square,
            MarkerShape::Diamond,
            MarkerShape::Up,
            MarkerShape::Down,
            MarkerShape::Plus,
            MarkerShape::Cross,
            MarkerShape::Asterisk,
        ] {
            assert!(
                coverage(m, true, 3.0, 0.0, 0.0) > 0.5,
                "{m:?} covers its centre"
            );
            assert_eq!(
                coverage(m, true, 3.0, 6.0, 6.0),
                0.0,
                "{m:?} ends near its radius"
            );
        }
        // A ring: its edge drawn, its centre empty.
        assert_eq!(coverage(MarkerShape::Circle, false, 4.0, 0.0, 0.0), 0.0);
        assert!(coverage(MarkerShape::Circle, false, 4.0, 4.0, 0.0) > 0.9);
    }
}
