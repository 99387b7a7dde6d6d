//! The lasso's selection: which drawn samples lie inside the polygon the user dragged.
//!
//! The plain even-odd test (`inside`, kept for the tests) walks every edge for every point. A lasso keeps a
//! vertex every 2 px, so a long drag has hundreds of edges, and at 200,000 points the frame
//! that closed it spent about 40 ms of the UI thread's CPU. [`LassoTest`] sorts the edges into
//! bands of the polygon's height once; a point is tested against the edges of its band only,
//! which are the only ones that can cross the horizontal ray through it. The same crossings
//! are counted with the same arithmetic, so the answer is the plain test's.

use egui_plot::PlotPoint;

/// Bands of the polygon's height. With a few hundred edges most bands hold a handful.
const BANDS: usize = 256;

/// Point-in-polygon (even-odd rule): the reference [`LassoTest`] is checked against.
#[cfg(test)]
fn inside(poly: &[PlotPoint], p: PlotPoint) -> bool {
    let n = poly.len();
    (0..n).fold(false, |c, a| c ^ crosses(poly[a], poly[(a + n - 1) % n], p))
}

/// Whether edge (pa, pb) crosses the horizontal ray from `p` to +x.
fn crosses(pa: PlotPoint, pb: PlotPoint, p: PlotPoint) -> bool {
    (pa.y > p.y) != (pb.y > p.y) && p.x < (pb.x - pa.x) * (p.y - pa.y) / (pb.y - pa.y) + pa.x
}

/// A lasso polygon prepared for many point tests.
pub struct LassoTest {
    poly: Vec<PlotPoint>,
    lo: [f64; 2],
    hi: [f64; 2],
    /// Per band, the edges (by their first vertex) whose y-range meets the band.
    bands: Vec<Vec<u32>>,
}

impl LassoTest {
    /// `None` for fewer than three vertices (no area to select).
    pub fn new(poly: Vec<PlotPoint>) -> Option<Self> {
        if poly.len() < 3 {
            return None;
        }
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for p in &poly {
            (lo[0], lo[1]) = (lo[0].min(p.x), lo[1].min(p.y));
            (hi[0], hi[1]) = (hi[0].max(p.x), hi[1].max(p.y));
        }
        let mut test = Self {
            lo,
            hi,
            bands: vec![Vec::new(); BANDS],
            poly: Vec::new(),
        };
        let n = poly.len();
        for a in 0..n {
            let (ya, yb) = (poly[a].y, poly[(a + n - 1) % n].y);
            for band in test.band(ya.min(yb))..=test.band(ya.max(yb)) {
                test.bands[band].push(a as u32);
            }
        }
        test.poly = poly;
        Some(test)
    }

    /// The band of height `y` (clamped to the polygon's range; monotone in `y`).
    fn band(&self, y: f64) -> usize {
        let t = (y - self.lo[1]) / (self.hi[1] - self.lo[1]);
        if t.is_finite() {
            ((t * BANDS as f64) as usize).min(BANDS - 1)
        } else {
            0
        }
    }

    /// Whether `p` is inside the polygon (even-odd rule).
    pub fn contains(&self, p: PlotPoint) -> bool {
        if !((self.lo[0]..=self.hi[0]).contains(&p.x) && (self.lo[1]..=self.hi[1]).contains(&p.y)) {
            return false;
        }
        let n = self.poly.len();
        self.bands[self.band(p.y)].iter().fold(false, |c, &a| {
            let a = a as usize;
            c ^ crosses(self.poly[a], self.poly[(a + n - 1) % n], p)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Star-shaped lassos of 3–600 vertices (a hand's drag, with spikes and concave parts),
    /// and points around them: the banded test gives the plain test's answer for every point,
    /// and a good share of them are inside.
    #[test]
    fn the_banded_test_is_the_plain_test() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut inside_count = 0;
        for &vertices in &[3usize, 4, 17, 250, 600] {
            let poly: Vec<PlotPoint> = (0..vertices)
                .map(|i| {
                    let angle = i as f64 / vertices as f64 * std::f64::consts::TAU;
                    let r = rng.gen_range(0.2..1.0);
                    PlotPoint::new(r * angle.cos(), r * angle.sin())
                })
                .collect();
            let test = LassoTest::new(poly.clone()).unwrap();
            for _ in 0..20_000 {
                let p = PlotPoint::new(rng.gen_range(-1.1..1.1), rng.gen_range(-1.1..1.1));
                let plain = inside(&poly, p);
                assert_eq!(test.contains(p), plain, "{vertices} vertices, {p:?}");
                inside_count += usize::from(plain);
            }
            // A vertex itself and the polygon's extremes go through the same arithmetic.
            for &v in &poly {
                assert_eq!(test.contains(v), inside(&poly, v));
            }
        }
        assert!(inside_count > 10_000, "{inside_count} of 100,000 inside");
        assert!(LassoTest::new(vec![PlotPoint::new(0.0, 0.0); 2]).is_none());
        // A flat lasso (all on one height) selects nothing and does not divide by zero.
        let flat = LassoTest::new((0..5).map(|i| PlotPoint::new(i as f64, 1.0)).collect()).unwrap();
        assert!(!flat.contains(PlotPoint::new(2.0, 1.0)));
    }

    /// The closing frame's selection at 200,000 points: `cargo test --release --lib
    /// gui::scatter::lasso -- --ignored --nocapture` prints the plain and the banded test's
    /// time for a 600-vertex lasso around a quarter of the points (docs/performance.md).
    #[test]
    #[ignore = "a timing, not a check"]
    fn time_at_200000_points() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let points: Vec<PlotPoint> = (0..200_000)
            .map(|_| PlotPoint::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)))
            .collect();
        let poly: Vec<PlotPoint> = (0..600)
            .map(|i| {
                let angle = i as f64 / 600.0 * std::f64::consts::TAU;
                let r = 0.55 + 0.05 * (7.0 * angle).sin();
                PlotPoint::new(r * angle.cos(), r * angle.sin())
            })
            .collect();
        let start = std::time::Instant::now();
        let plain = points.iter().filter(|&&p| inside(&poly, p)).count();
        let plain_ms = start.elapsed().as_secs_f64() * 1e3;
        let start = std::time::Instant::now();
        let test = LassoTest::new(poly).unwrap();
        let banded = points.iter().filter(|&&p| test.contains(p)).count();
        let banded_ms = start.elapsed().as_secs_f64() * 1e3;
        assert_eq!(plain, banded);
        println!("{banded} of 200000 inside: plain {plain_ms:.1} ms, banded {banded_ms:.2} ms");
    }
}
