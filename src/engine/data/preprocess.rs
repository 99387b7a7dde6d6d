//! Preprocessing of X (m×n, columns = samples) and data-quality warnings.
//!
//! Nothing is dropped silently: all-zero samples and constant features are kept (dropping
//! would renumber samples and break constraint files) but reported, because they upset some
//! models (docs/models.md §10.2).

use super::{AutoFor, Preprocess};
use ndarray::Array2;

/// How many names to list in a warning before "…".
const LIST: usize = 5;

fn list_some(names: impl Iterator<Item = String>, total: usize) -> String {
    let mut s: Vec<String> = names.take(LIST).collect();
    if total > LIST {
        s.push("…".into());
    }
    s.join(", ")
}

/// Apply `p` to `x` in place; returns notes for [`super::Dataset::warnings`].
///
/// * `L2`: every column scaled to unit Euclidean norm; an all-zero column stays zero.
/// * `Max`: divided by the global maximum (nothing to do when it is 0).
/// * `Shift`: every row with a negative minimum has that minimum subtracted, so X ≥ 0.
/// * `MinMax`: every row scaled to [0, 1] by its minimum and range (a constant row becomes 0).
/// * `MinMaxL2`: `MinMax`, then `L2`.
/// * `Standardize`: every row to z-scores by its mean and population standard deviation (a
///   constant row becomes 0); the result is negative where a value is below its mean.
///
/// `Auto` is resolved from `x` alone (as a table: [`resolve_auto`] with `is_image` false);
/// the loaders resolve it themselves, knowing whether the samples are images.
pub fn apply(x: &mut Array2<f64>, p: Preprocess) -> Vec<String> {
    apply_fitted(x, p).1
}

/// [`apply`], also returning each step as fitted on `x`, so that new samples can be
/// preprocessed as the fitted ones were ([`FittedStep::apply`]).
pub fn apply_fitted(x: &mut Array2<f64>, p: Preprocess) -> (Vec<FittedStep>, Vec<String>) {
    let p = match p {
        Preprocess::Auto => resolve_auto(x, false).choice,
        p => p,
    };
    let (mut steps, mut notes) = (Vec::new(), Vec::new());
    for &step in p.steps() {
        let (fitted, note) = FittedStep::fit(x, step);
        let zero = fitted.apply(x);
        notes.extend(note);
        if zero > 0 {
            notes.push(format!(
                "L2 normalisation: {zero} all-zero sample(s) left at zero (they have no direction)"
            ));
        }
        steps.push(fitted);
    }
    (steps, notes)
}

/// What a step learns from one feature: its offset, and its scale (`None`: no range or spread).
type FeatureRule<'a> = dyn Fn(ndarray::ArrayView1<'_, f64>) -> (f64, Option<f64>) + 'a;

/// One preprocessing step with what it learned from the data it was fitted on: every step but
/// `L2` maps feature j by `v ↦ (v − offset[j]) / scale[j]` (`None`: the feature had no range or
/// spread and becomes 0), and `L2` scales each sample by its own norm.
#[derive(Clone, Debug, PartialEq)]
pub enum FittedStep {
    Features {
        offset: Vec<f64>,
        scale: Vec<Option<f64>>,
    },
    L2,
}

impl FittedStep {
    /// Learn `step` from `x` (its features' ranges, spreads, minima or maximum) without changing
    /// it; the note says what was left at 0 or unchanged.
    fn fit(x: &Array2<f64>, step: Preprocess) -> (FittedStep, Option<String>) {
        let m = x.nrows();
        let per_feature = |f: &FeatureRule<'_>| {
            let (offset, scale): (Vec<f64>, Vec<Option<f64>>) = x.rows().into_iter().map(f).unzip();
            let unusable = scale.iter().filter(|s| s.is_none()).count();
            (FittedStep::Features { offset, scale }, unusable)
        };
        match step {
            Preprocess::Auto | Preprocess::None | Preprocess::MinMaxL2 => (
                FittedStep::Features {
                    offset: vec![0.0; m],
                    scale: vec![Some(1.0); m],
                },
                None,
            ),
            Preprocess::MinMax => {
                let (fitted, constant) = per_feature(&|row| {
                    let (lo, hi) = row
                        .iter()
                        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                            (a.min(v), b.max(v))
                        });
                    let range = hi - lo;
                    (lo, (range > 0.0 && range.is_finite()).then_some(range))
                });
                let note = (constant > 0).then(|| {
                    format!(
                        "min-max scaling: {constant} constant feature(s) set to 0 (they have no range)"
                    )
                });
                (fitted, note)
            }
            Preprocess::Standardize => {
                let n = x.ncols() as f64;
                let (fitted, constant) = per_feature(&|row| {
                    let mean = row.sum() / n;
                    let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
                    let sd = var.sqrt();
                    (mean, (sd > 0.0 && sd.is_finite()).then_some(sd))
                });
                let note = (constant > 0).then(|| {
                    format!(
                        "standardisation: {constant} constant feature(s) set to 0 (they have no spread)"
                    )
                });
                (fitted, note)
            }
            // Nothing to learn; its note comes from applying it.
            Preprocess::L2 => (FittedStep::L2, None),
            Preprocess::Max => {
                let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let usable = max > 0.0 && max.is_finite();
                let note = (!usable && !x.is_empty())
                    .then(|| "max scaling: the data are all zero; left unchanged".to_owned());
                let scale = if usable { max } else { 1.0 };
                (
                    FittedStep::Features {
                        offset: vec![0.0; m],
                        scale: vec![Some(scale); m],
                    },
                    note,
                )
            }
            Preprocess::Shift => {
                let (fitted, _) = per_feature(&|row| {
                    let min = row.iter().copied().fold(f64::INFINITY, f64::min);
                    (min.min(0.0), Some(1.0))
                });
                let shifted = x
                    .rows()
                    .into_iter()
                    .filter(|r| r.iter().any(|&v| v < 0.0))
                    .count();
                let note = (shifted > 0).then(|| {
                    format!(
                        "shift: {shifted} feature(s) with negative values shifted by their minimum"
                    )
                });
                (fitted, note)
            }
        }
    }

    /// The number of features the step was fitted on (`None` for `L2`, which works on any).
    pub fn features(&self) -> Option<usize> {
        match self {
            FittedStep::Features { offset, .. } => Some(offset.len()),
            FittedStep::L2 => None,
        }
    }

    /// Apply the fitted step to `x` (m×n, the same features, any samples); returns the number
    /// of samples `L2` left at zero (0 for the other steps).
    pub fn apply(&self, x: &mut Array2<f64>) -> usize {
        match self {
            FittedStep::L2 => l2_normalize_columns(x),
            FittedStep::Features { offset, scale } => {
                for ((mut row, &a), &s) in x.rows_mut().into_iter().zip(offset).zip(scale) {
                    match s {
                        Some(s) if a == 0.0 && s == 1.0 => {}
                        Some(s) => row.mapv_inplace(|v| (v - a) / s),
                        None => row.fill(0.0),
                    }
                }
                0
            }
        }
    }
}

/// Ratio of feature ranges above which `auto` treats a table as mixed (features measured on
/// different scales) and scales each feature to [0, 1] before the samples to unit length.
///
/// Chosen from the public sets: the pixel tables have ratio ≤ 2.7 (digits and optdigits, whose
/// edge pixels have small ranges, 16 / 6), semeion 1, iris 2.5 (four lengths in cm); the tables
/// that `l2` ruins have dermatology 25 (33 clinical scores 0–3 and the age 0–75) and glass 472
/// (the refractive index varies by 0.023, the oxides by up to 10.8). 10 leaves a wide margin on
/// both sides.
pub const AUTO_RANGE_RATIO: f64 = 10.0;

/// Quantile of the nonzero feature ranges that `auto` compares the largest range with: the
/// 10th percentile, so that a few nearly blank features (an image's border pixels, 1 in 16
/// digits) do not make a pixel table look mixed; with fewer than ten features it is the
/// smallest range.
pub const AUTO_LOW_QUANTILE: f64 = 0.1;

/// What `auto` resolved to, and why (one line for the Data panel and `run`'s output).
#[derive(Clone, Debug, PartialEq)]
pub struct AutoChoice {
    pub choice: Preprocess,
    pub reason: String,
}

/// `auto`'s rule. Images → `l2`. A table with a negative value → `minmax,l2` (the NMF models
/// need X ≥ 0, and a shift alone would keep the features' scales). Otherwise the range
/// (max − min) of every nonconstant feature is taken; when the largest is more than
/// [`AUTO_RANGE_RATIO`] times the [`AUTO_LOW_QUANTILE`] of them, the features are on different
/// scales → `minmax,l2`; else they share one range (pixel-like) → `l2`. Constant features are
/// left out of the ratio (they carry nothing and are reported by [`quality_warnings`]); a table
/// with no nonconstant feature gets `l2`.
pub fn resolve_auto(x: &Array2<f64>, is_image: bool) -> AutoChoice {
    const UNIT: &str = "samples to unit length";
    if is_image {
        return AutoChoice {
            choice: Preprocess::L2,
            reason: format!("auto: images, {UNIT}"),
        };
    }
    let mut ranges = Vec::with_capacity(x.nrows());
    let mut negative = false;
    for row in x.rows() {
        let (lo, hi) = row
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        negative |= lo < 0.0;
        let r = hi - lo;
        if r > 0.0 && r.is_finite() {
            ranges.push(r);
        }
    }
    ranges.sort_by(f64::total_cmp);
    let scaled = |what: String| AutoChoice {
        choice: Preprocess::MinMaxL2,
        reason: format!("auto: {what}, each scaled to [0, 1], then {UNIT}"),
    };
    if negative {
        return scaled("negative values".into());
    }
    let (Some(&low), Some(&high)) = (
        ranges.get(((ranges.len() as f64) * AUTO_LOW_QUANTILE) as usize),
        ranges.last(),
    ) else {
        return AutoChoice {
            choice: Preprocess::L2,
            reason: format!("auto: no feature varies, {UNIT}"),
        };
    };
    if high > AUTO_RANGE_RATIO * low {
        scaled(format!(
            "features range from {} to {}",
            short(ranges[0]),
            short(high)
        ))
    } else {
        // The nearly blank features the percentile passed over are mentioned, not hidden.
        let few = if ranges[0] < low {
            "; a few smaller"
        } else {
            ""
        };
        AutoChoice {
            choice: Preprocess::L2,
            reason: format!(
                "auto: features range from {} to {} (one scale{few}), {UNIT}",
                short(low),
                short(high)
            ),
        }
    }
}

/// Largest spread of the sample sums, (max − min) / mean, at which a nonnegative table counts
/// as compositional: every sample is the shares of one whole (glass: oxides in weight %, sums
/// 100.5–101.6, spread 0.011; the other public tables 0.79–1.40).
pub const AUTO_COMPOSITIONAL_SPREAD: f64 = 0.05;

/// `auto`'s rule for a kind of model: [`resolve_auto`], except that for a model that compares
/// samples ([`AutoFor::SampleGraph`]) a compositional table that [`resolve_auto`] would scale
/// per feature keeps its features' scale (`l2`). Its features share one unit by construction,
/// so their ranges differ because the components differ in abundance, not in unit; scaling each
/// to [0, 1] makes a trace (glass's iron, range 0.5) count as much as a main component in every
/// distance. Measured on glass (docs/models.md §1): every sample-graph model does better with
/// `l2` (PSMF 52.6 against 40.1 % ACC, CAN 51.4 / 44.4, GNMF 47.9 / 43.7, 2-STGINMF 50.7 / 39.5 %
/// accuracy with 10 % of the labels), while NMF needs the scaling (42.9 against 28.5).
pub fn resolve_auto_for(x: &Array2<f64>, is_image: bool, for_model: AutoFor) -> AutoChoice {
    AutoChoices::of(x, is_image).get(for_model).clone()
}

/// What `auto` resolves to for each kind of model ([`resolve_auto_for`]), taken from the raw
/// data once. A loaded dataset keeps it so that the app, which loads before the model is run,
/// can tell whether another model needs X prepared otherwise without the raw values.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoChoices {
    /// For a factorisation of X ([`AutoFor::Factorisation`]).
    pub factorisation: AutoChoice,
    /// For a model that compares samples ([`AutoFor::SampleGraph`]); differs from
    /// [`Self::factorisation`] on a compositional table with mixed ranges only.
    pub sample_graph: AutoChoice,
}

impl AutoChoices {
    /// Both resolutions of `x` (raw, before preprocessing). The compositional test is a
    /// pass over X taken only for a table the data rule scales per feature.
    pub fn of(x: &Array2<f64>, is_image: bool) -> Self {
        let factorisation = resolve_auto(x, is_image);
        let sample_graph = match factorisation.choice {
            Preprocess::MinMaxL2 => compositional(x).map(|(lo, hi)| AutoChoice {
                choice: Preprocess::L2,
                reason: format!(
                    "auto: every sample sums to {}–{} (shares of one whole), kept on that \
                     scale for a model that compares samples, samples to unit length",
                    short(lo),
                    short(hi)
                ),
            }),
            _ => None,
        }
        .unwrap_or_else(|| factorisation.clone());
        Self {
            factorisation,
            sample_graph,
        }
    }

    /// The resolution for `kind`.
    pub fn get(&self, kind: AutoFor) -> &AutoChoice {
        match kind {
            AutoFor::Factorisation => &self.factorisation,
            AutoFor::SampleGraph => &self.sample_graph,
        }
    }
}

/// The smallest and largest sample sums (columns of X) when X ≥ 0 and they spread by at most
/// [`AUTO_COMPOSITIONAL_SPREAD`] of their mean; `None` otherwise.
fn compositional(x: &Array2<f64>) -> Option<(f64, f64)> {
    if x.ncols() < 2 || x.iter().any(|&v| v < 0.0) {
        return None;
    }
    let sums = x.sum_axis(ndarray::Axis(0));
    let (lo, hi) = sums
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let mean = sums.sum() / sums.len() as f64;
    (mean > 0.0 && hi - lo <= AUTO_COMPOSITIONAL_SPREAD * mean).then_some((lo, hi))
}

/// A range for a one-line message: three significant digits, no exponent in everyday sizes.
fn short(v: f64) -> String {
    if v != 0.0 && !(1e-3..1e6).contains(&v.abs()) {
        return format!("{v:.2e}");
    }
    let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// Scale every column of `x` to unit Euclidean norm (all-zero columns stay zero); returns how
/// many columns were all zero.
///
/// Each norm is the sum of the squares in row order, then its square root, and each entry is
/// divided by it: the same operations as walking each column, but a row-major X is read row by
/// row, contiguously (a column of a 4096×10000 X is 4096 values 80 KB apart).
fn l2_normalize_columns(x: &mut Array2<f64>) -> usize {
    let n = x.ncols();
    let mut norms = vec![0.0f64; n];
    for row in x.rows() {
        for (s, &v) in norms.iter_mut().zip(row) {
            *s += v * v;
        }
    }
    for s in &mut norms {
        *s = s.sqrt();
    }
    // A column whose squares overflow (entries of 1e200) would get an infinite norm and become
    // zeros: its norm is taken again as max|x| · ‖x / max|x|‖.
    for (j, s) in norms.iter_mut().enumerate() {
        if s.is_infinite() {
            let col = x.column(j);
            let c = col.iter().fold(0.0f64, |a, &v| a.max(v.abs()));
            *s = c * col.iter().map(|&v| (v / c) * (v / c)).sum::<f64>().sqrt();
        }
    }
    for mut row in x.rows_mut() {
        for (v, &norm) in row.iter_mut().zip(&norms) {
            if norm > 0.0 {
                *v /= norm;
            }
        }
    }
    // Norms are ≥ 0 or +∞ (X is finite): not positive means zero.
    norms.iter().filter(|&&s| s <= 0.0 || s.is_nan()).count()
}

/// Warnings about all-zero samples and constant features of the raw matrix.
pub fn quality_warnings(x: &Array2<f64>, sample_names: &[String]) -> Vec<String> {
    let mut notes = Vec::new();
    let zero: Vec<usize> = x
        .columns()
        .into_iter()
        .enumerate()
        .filter(|(_, c)| c.iter().all(|&v| v == 0.0))
        .map(|(i, _)| i)
        .collect();
    if !zero.is_empty() {
        let names = zero.iter().map(|&i| {
            sample_names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("#{i}"))
        });
        notes.push(format!(
            "{} sample(s) are all zero ({}); they carry no information and some models \
             (RNMF, graph models) treat them specially",
            zero.len(),
            list_some(names, zero.len())
        ));
    }
    if x.ncols() > 1 {
        let constant: Vec<usize> = x
            .rows()
            .into_iter()
            .enumerate()
            .filter(|(_, r)| {
                let first = r.first().copied().unwrap_or(0.0);
                r.iter().all(|&v| v == first)
            })
            .map(|(j, _)| j)
            .collect();
        if !constant.is_empty() {
            let names = constant.iter().map(|&j| format!("feature {}", j + 1));
            notes.push(format!(
                "{} feature(s) are constant over all samples ({}); they carry no information \
                 (FNMF and PSMF are sensitive to them)",
                constant.len(),
                list_some(names, constant.len())
            ));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// 2×3 example, columns are samples: (3,4), (0,0), (1,2).
    fn x() -> Array2<f64> {
        array![[3.0, 0.0, 1.0], [4.0, 0.0, 2.0]]
    }

    /// Rows (features) scaled to [0, 1] by hand; a constant row becomes 0 with a note; the
    /// chain minmax,l2 then makes each sample unit length; negatives are accepted by both.
    #[test]
    fn minmax_and_the_minmax_l2_chain_by_hand() {
        let raw = array![[-1.0, 1.0, 3.0], [5.0, 5.0, 5.0], [0.0, 10.0, 5.0]];
        let mut a = raw.clone();
        let notes = apply(&mut a, Preprocess::MinMax);
        assert_eq!(a, array![[0.0, 0.5, 1.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.5]]);
        assert!(
            notes.iter().any(|n| n.contains("1 constant feature")),
            "{notes:?}"
        );
        let mut b = raw;
        apply(&mut b, Preprocess::MinMaxL2);
        let want = array![
            [0.0, 0.5 / 0.5f64.hypot(1.0), 1.0 / 1.0f64.hypot(0.5)],
            [0.0, 0.0, 0.0],
            [0.0, 1.0 / 0.5f64.hypot(1.0), 0.5 / 1.0f64.hypot(0.5)]
        ];
        assert!((&b - &want).iter().all(|d| d.abs() < 1e-15), "{b}");
        assert!(Preprocess::MinMax.accepts_negatives() && Preprocess::MinMaxL2.accepts_negatives());
        assert!(!Preprocess::L2.accepts_negatives());
        assert!(Preprocess::Standardize.accepts_negatives());
        assert_eq!(
            Preprocess::parse("standardize"),
            Ok(Preprocess::Standardize)
        );
        // z-scores by hand: row [1, 2, 3] has mean 2 and population std √(2/3).
        let mut x = ndarray::array![[1.0, 2.0, 3.0], [5.0, 5.0, 5.0]];
        let notes = apply(&mut x, Preprocess::Standardize);
        let z = (1.5f64).sqrt();
        for (a, b) in x.row(0).iter().zip([-z, 0.0, z]) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
        assert_eq!(x.row(1).to_vec(), vec![0.0; 3]);
        assert!(
            notes.iter().any(|n| n.contains("1 constant feature")),
            "{notes:?}"
        );
    }

    /// `auto` on hand-made tables (rows = features): one range, mixed ranges, a constant
    /// feature, negative values, images, and nothing that varies.
    #[test]
    fn auto_rule_on_hand_made_tables() {
        // Three features on one range (0–8, 0–6, 0–5): l2.
        let one = array![[0.0, 8.0, 4.0], [6.0, 0.0, 3.0], [5.0, 1.0, 0.0]];
        let a = resolve_auto(&one, false);
        assert_eq!(a.choice, Preprocess::L2, "{a:?}");
        assert_eq!(
            a.reason,
            "auto: features range from 5 to 8 (one scale), samples to unit length"
        );
        // Ranges 0.13 and 1680: mixed, and the line the Data panel shows.
        let mixed = array![[0.1, 0.23, 0.2], [20.0, 1700.0, 900.0]];
        let a = resolve_auto(&mixed, false);
        assert_eq!(a.choice, Preprocess::MinMaxL2);
        assert_eq!(
            a.reason,
            "auto: features range from 0.13 to 1680, each scaled to [0, 1], then samples to \
             unit length"
        );
        // Just at the threshold (ratio 10) is still one scale; above it is mixed.
        let at = array![[0.0, 1.0], [0.0, 10.0]];
        assert_eq!(resolve_auto(&at, false).choice, Preprocess::L2);
        let above = array![[0.0, 1.0], [0.0, 10.5]];
        assert_eq!(resolve_auto(&above, false).choice, Preprocess::MinMaxL2);
        // A constant feature (range 0) is left out: the others share one range.
        let constant = array![[7.0, 7.0, 7.0], [0.0, 3.0, 1.0], [2.0, 0.0, 4.0]];
        assert_eq!(resolve_auto(&constant, false).choice, Preprocess::L2);
        // A constant feature far above the others does not make the table mixed either, and
        // a table where nothing varies gets l2.
        let flat = array![[500.0, 500.0], [1.0, 1.0]];
        let a = resolve_auto(&flat, false);
        assert_eq!(a.choice, Preprocess::L2);
        assert!(a.reason.contains("no feature varies"), "{a:?}");
        // Negative values: minmax,l2 whatever the ranges, and load accepts them.
        let neg = array![[-1.0, 1.0, 0.0], [0.0, 2.0, 1.0]];
        let a = resolve_auto(&neg, false);
        assert_eq!(a.choice, Preprocess::MinMaxL2);
        assert!(a.reason.contains("negative values"), "{a:?}");
        assert!(Preprocess::Auto.accepts_negatives());
        // Images: l2 even when the pixels' ranges differ.
        assert_eq!(resolve_auto(&mixed, true).choice, Preprocess::L2);
        // `apply` resolves auto as a table and applies the choice.
        let mut m = mixed.clone();
        apply(&mut m, Preprocess::Auto);
        let mut want = mixed;
        apply(&mut want, Preprocess::MinMaxL2);
        assert_eq!(m, want);
    }

    /// A compositional table (every sample sums to 100) with mixed ranges: scaled per feature
    /// for a factorisation, kept on its scale for a model that compares samples; a mixed table
    /// that is not compositional, or has a negative value, is scaled for both.
    #[test]
    fn auto_keeps_a_compositional_table_on_its_scale_for_a_sample_graph_model() {
        let shares = array![[0.50, 0.51, 0.52], [60.0, 55.0, 50.0], [39.5, 44.49, 49.48]];
        let a = resolve_auto_for(&shares, false, AutoFor::Factorisation);
        assert_eq!(a, resolve_auto(&shares, false));
        assert_eq!(a.choice, Preprocess::MinMaxL2);
        let a = resolve_auto_for(&shares, false, AutoFor::SampleGraph);
        assert_eq!(a.choice, Preprocess::L2, "{a:?}");
        assert_eq!(
            a.reason,
            "auto: every sample sums to 100–100 (shares of one whole), kept on that scale for \
             a model that compares samples, samples to unit length"
        );
        // Sums 100, 100 and 106 (spread 0.059 of the mean): not compositional.
        let mut off = shares.clone();
        off[[1, 2]] = 56.0;
        let a = resolve_auto_for(&off, false, AutoFor::SampleGraph);
        assert_eq!(a.choice, Preprocess::MinMaxL2, "{a:?}");
        let mixed = array![[0.1, 0.23, 0.2], [20.0, 1700.0, 900.0]];
        let a = resolve_auto_for(&mixed, false, AutoFor::SampleGraph);
        assert_eq!(a.choice, Preprocess::MinMaxL2);
        let mut neg = shares;
        neg[[0, 0]] = -0.5;
        neg[[2, 0]] = 40.5;
        assert_eq!(
            resolve_auto_for(&neg, false, AutoFor::SampleGraph).choice,
            Preprocess::MinMaxL2
        );
        // Through the loader: the option reaches the rule and the dataset records it.
        let path = std::env::temp_dir().join(format!("auto-shares-{}.csv", std::process::id()));
        std::fs::write(&path, "a,b,c\n0.50,60,39.5\n0.51,55,44.49\n0.52,50,49.48\n").unwrap();
        let load = |auto_for| {
            let opts = super::super::LoadOptions {
                auto_for,
                ..Default::default()
            };
            super::super::load(&path, &opts).unwrap().preprocess
        };
        assert_eq!(load(AutoFor::SampleGraph), Preprocess::L2);
        assert_eq!(load(AutoFor::Factorisation), Preprocess::MinMaxL2);
        // The dataset keeps both resolutions: it says what the other kind of model needs.
        let d = super::super::load(&path, &Default::default()).unwrap();
        assert_eq!(d.auto_choice_for(AutoFor::Factorisation), None);
        let other = d.auto_choice_for(AutoFor::SampleGraph).unwrap();
        assert_eq!(other.choice, Preprocess::L2);
        assert!(other.reason.contains("shares of one whole"), "{other:?}");
        let explicit = super::super::LoadOptions {
            preprocess: Preprocess::MinMaxL2,
            ..Default::default()
        };
        let d = super::super::load(&path, &explicit).unwrap();
        assert_eq!(d.auto_choice_for(AutoFor::SampleGraph), None);
        std::fs::remove_file(&path).unwrap();
    }

    /// Ten features, one of them nearly blank (range 1 against 16): the 10th percentile of
    /// the ranges is the next one (16), so the table stays one scale (like digits' border
    /// pixels); with two nearly blank features of ten, it is mixed.
    #[test]
    fn auto_ignores_a_few_nearly_blank_features() {
        let mut x = Array2::from_shape_fn((10, 4), |(i, j)| ((i + j) % 4) as f64 * 16.0 / 3.0);
        x.row_mut(0).assign(&ndarray::arr1(&[0.0, 1.0, 0.0, 0.0]));
        let a = resolve_auto(&x, false);
        assert_eq!(a.choice, Preprocess::L2);
        assert_eq!(
            a.reason,
            "auto: features range from 16 to 16 (one scale; a few smaller), samples to unit \
             length"
        );
        x.row_mut(1).assign(&ndarray::arr1(&[0.0, 0.0, 1.0, 0.0]));
        assert_eq!(resolve_auto(&x, false).choice, Preprocess::MinMaxL2);
    }

    #[test]
    fn parse_accepts_single_steps_and_the_chain() {
        assert_eq!(Preprocess::parse("minmax,l2"), Ok(Preprocess::MinMaxL2));
        assert_eq!(Preprocess::parse("MinMax, L2"), Ok(Preprocess::MinMaxL2));
        assert_eq!(Preprocess::parse("shift"), Ok(Preprocess::Shift));
        for p in Preprocess::ALL {
            assert_eq!(Preprocess::parse(p.name()), Ok(p));
        }
        let e = Preprocess::parse("l2,minmax").unwrap_err();
        assert!(e.contains("`l2,minmax`") && e.contains("minmax,l2"), "{e}");
    }

    #[test]
    fn l2_hand_computed() {
        let mut a = x();
        let notes = apply(&mut a, Preprocess::L2);
        let s5 = 5f64.sqrt();
        let want = array![[0.6, 0.0, 1.0 / s5], [0.8, 0.0, 2.0 / s5]];
        for (g, w) in a.iter().zip(want.iter()) {
            assert!((g - w).abs() < 1e-15, "{a}");
        }
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("1 all-zero sample"), "{notes:?}");
    }

    #[test]
    fn l2_of_entries_whose_squares_overflow_is_still_the_unit_vector() {
        let mut a = array![[3e200, 1.0], [4e200, 0.0]];
        assert!(apply(&mut a, Preprocess::L2).is_empty());
        let want = array![[0.6, 1.0], [0.8, 0.0]];
        assert!(
            a.iter().zip(&want).all(|(g, w)| (g - w).abs() < 1e-15),
            "{a}"
        );
    }

    /// The row-order pass gives the bits of the column walk it replaced.
    #[test]
    fn l2_rows_give_the_bits_of_the_column_walk() {
        let mut a = Array2::from_shape_fn((37, 70), |(i, j)| {
            if j % 9 == 4 {
                0.0
            } else {
                ((i * 31 + j * 17) % 97) as f64 / 7.0 + 1e-3
            }
        });
        let mut want = a.clone();
        for mut col in want.columns_mut() {
            let norm = col.iter().map(|v| v * v).sum::<f64>().sqrt();
            if norm > 0.0 {
                col.mapv_inplace(|v| v / norm);
            }
        }
        let zero = l2_normalize_columns(&mut a);
        assert_eq!(zero, 8);
        assert!(a.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits()));
    }

    #[test]
    fn max_hand_computed() {
        let mut a = x();
        assert!(apply(&mut a, Preprocess::Max).is_empty());
        assert_eq!(a, array![[0.75, 0.0, 0.25], [1.0, 0.0, 0.5]]);
    }

    #[test]
    fn shift_hand_computed() {
        let mut a = array![[-1.0, 2.0, 0.0], [1.0, 2.0, 3.0]];
        let notes = apply(&mut a, Preprocess::Shift);
        assert_eq!(a, array![[0.0, 3.0, 1.0], [1.0, 2.0, 3.0]]);
        assert_eq!(notes.len(), 1);
        let mut b = x();
        assert!(apply(&mut b, Preprocess::Shift).is_empty());
        assert_eq!(b, x());
    }

    #[test]
    fn none_is_identity() {
        let mut a = x();
        assert!(apply(&mut a, Preprocess::None).is_empty());
        assert_eq!(a, x());
    }

    #[test]
    fn quality_names_zero_samples_and_constant_features() {
        let a = array![[3.0, 0.0, 1.0], [2.0, 0.0, 2.0], [0.0, 0.0, 0.0]];
        let names: Vec<String> = ["row 2", "row 3", "row 4"].map(String::from).to_vec();
        let w = quality_warnings(&a, &names);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("1 sample(s) are all zero (row 3)"), "{w:?}");
        assert!(w[1].contains("1 feature(s) are constant"), "{w:?}");
        assert!(w[1].contains("feature 3"), "{w:?}");
        assert!(quality_warnings(&x(), &names)[0].contains("row 3"));
    }
}
