//! Datasets: one [`Dataset`] type (X is m×n, columns are samples) and its loaders.
//!
//! [`load`] dispatches on the path: CSV/TSV/TXT tables ([`csv`]), image folders
//! ([`image_folder`]), `.npy` ([`npy`]) and MATLAB v5 `.mat` with `fea`/`gnd` ([`mat`]); then
//! it fingerprints the raw matrix, adds data-quality warnings and applies [`Preprocess`]
//! ([`preprocess`]). Bundled, generated samples are in [`samples`]; natural ordering of class
//! and file names in [`labels`]. Every error names the file and the place (line/row and
//! column, or file name) and what was found ([`DataError`]); nothing here panics on user input.

pub mod csv;
mod error;
pub mod image_folder;
pub mod labels;
pub mod mat;
mod mat_walk;
pub mod npy;
pub mod preprocess;
pub mod samples;

pub use error::{Column, DataError, JsonAt, Place, excerpt};
pub use labels::natural_cmp;

use ndarray::{Array2, ArrayView2};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Identity of a dataset's raw content: constraint files carry it and refuse to load onto
/// a dataset with another fingerprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Fingerprint {
    /// Number of samples (columns of X).
    pub n: usize,
    /// Number of features (rows of X).
    pub m: usize,
    /// FNV-1a 64 of the raw (pre-preprocessing) values' bit patterns, column by column.
    pub hash: u64,
}

/// Preprocessing applied after loading (columns = samples).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Preprocess {
    /// Chosen from the data when it is loaded ([`preprocess::resolve_auto`]): `L2` for images
    /// and for tables whose features share one range, `MinMaxL2` for tables whose features'
    /// ranges differ or that hold negative values. A loaded [`Dataset`] records the resolved
    /// choice, never `Auto`.
    #[default]
    Auto,
    /// Use X as loaded.
    None,
    /// Scale every sample (column) to unit L2 norm: the papers' default (docs/models.md §8).
    L2,
    /// Divide by the global maximum.
    Max,
    /// Shift every feature (row) by its minimum so that it is nonnegative.
    Shift,
    /// Scale every feature (row) to [0, 1]: `(v − min) / (max − min)`; a constant feature
    /// becomes 0. Puts features measured on different scales on one (docs/models.md §10.2).
    MinMax,
    /// Every feature (row) to z-scores, `(v − mean) / std` (population std; a constant
    /// feature becomes 0). X becomes negative: only for models that work on similarities
    /// (2-STGINMF, docs/models.md §7.5b); the NMF-type models refuse it.
    Standardize,
    /// `MinMax`, then `L2`: features on one scale, then unit samples (`--preprocess
    /// minmax,l2`; the PSMF paper's Dermatology setting, docs/models.md §6).
    MinMaxL2,
}

impl Preprocess {
    /// The steps in the order they are applied (a single step for all but the chains).
    pub fn steps(self) -> &'static [Preprocess] {
        match self {
            // Resolved before it is applied ([`preprocess::apply`] resolves it from X alone).
            Preprocess::Auto | Preprocess::None => &[],
            Preprocess::L2 => &[Preprocess::L2],
            Preprocess::Max => &[Preprocess::Max],
            Preprocess::Shift => &[Preprocess::Shift],
            Preprocess::MinMax => &[Preprocess::MinMax],
            Preprocess::Standardize => &[Preprocess::Standardize],
            Preprocess::MinMaxL2 => &[Preprocess::MinMax, Preprocess::L2],
        }
    }

    /// The command-line spelling (`auto`, `none`, `l2`, `max`, `shift`, `minmax`, `minmax,l2`,
    /// `standardize`).
    pub fn name(self) -> &'static str {
        match self {
            Preprocess::Auto => "auto",
            Preprocess::None => "none",
            Preprocess::L2 => "l2",
            Preprocess::Max => "max",
            Preprocess::Shift => "shift",
            Preprocess::MinMax => "minmax",
            Preprocess::Standardize => "standardize",
            Preprocess::MinMaxL2 => "minmax,l2",
        }
    }

    /// Every preprocessing, in the order the app lists them.
    pub const ALL: [Preprocess; 8] = [
        Preprocess::Auto,
        Preprocess::None,
        Preprocess::L2,
        Preprocess::Max,
        Preprocess::Shift,
        Preprocess::MinMax,
        Preprocess::MinMaxL2,
        Preprocess::Standardize,
    ];

    /// Parse a command-line spelling: one step, or steps joined by `,` (`minmax,l2`). Only the
    /// combinations that are variants are accepted; the error lists them.
    pub fn parse(s: &str) -> Result<Self, String> {
        let want: String = s
            .split(',')
            .map(|p| p.trim().to_ascii_lowercase())
            .collect::<Vec<_>>()
            .join(",");
        Self::ALL
            .into_iter()
            .find(|p| p.name() == want)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|p| p.name()).collect();
                format!("unknown preprocessing `{s}` (one of: {})", names.join(", "))
            })
    }

    /// Whether negative values are allowed in the raw data (a step shifts them away; `Auto`
    /// resolves to `minmax,l2` when it finds one).
    pub fn accepts_negatives(self) -> bool {
        self == Preprocess::Auto
            || matches!(
                self.steps().first(),
                Some(Preprocess::Shift | Preprocess::MinMax | Preprocess::Standardize)
            )
    }
}

/// Grayscale thumbnail of an image sample, row-major, `width × height` bytes, upright.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thumbnail {
    pub width: usize,
    pub height: usize,
    pub pixels: Vec<u8>,
}

/// A loaded dataset. X is m×n: **columns are samples** (docs/models.md §1).
#[derive(Clone, Debug)]
pub struct Dataset {
    /// Data matrix, m features × n samples, nonnegative and finite after loading.
    pub x: Array2<f64>,
    /// Class index per sample in `0..class_names.len()`, when the source has labels.
    pub labels: Option<Vec<usize>>,
    /// Class names, in the order of the indices in `labels` (natural sort).
    pub class_names: Vec<String>,
    /// One name per sample (file name for images, `row N` for tables).
    pub sample_names: Vec<String>,
    /// One name per feature when the source names them (a table's header, without its label
    /// column); empty otherwise. [`Dataset::feature_name`] gives a name for every feature.
    pub feature_names: Vec<String>,
    /// `(width, height)` when the samples are images; pixel j of sample i is `x[[j, i]]`,
    /// row-major (`j = row * width + col`).
    pub image_shape: Option<(usize, usize)>,
    /// Upright grayscale thumbnails for the GUI (image data only), one per sample.
    pub thumbnails: Vec<Thumbnail>,
    /// Where it was loaded from (file or folder), or `sample:NAME` for bundled samples.
    pub source: String,
    /// Identity of the raw content, computed before preprocessing.
    pub fingerprint: Fingerprint,
    /// Preprocessing that was applied: the resolved choice, never [`Preprocess::Auto`].
    pub preprocess: Preprocess,
    /// Why `auto` chose [`Self::preprocess`], in one line for the Data panel and the CLI
    /// (`None` when the preprocessing was given explicitly).
    pub preprocess_reason: Option<String>,
    /// What `auto` resolves to for each kind of model, when the preprocessing was `auto`
    /// (`None` when it was given explicitly): [`Self::preprocess`] is one of them. The app
    /// loads again from the source when the model it runs needs the other
    /// ([`Dataset::auto_choice_for`]).
    pub preprocess_auto: Option<preprocess::AutoChoices>,
    /// [`Self::preprocess`]'s steps as fitted on these samples (features' ranges, spreads…),
    /// to preprocess new samples the same way (the Python estimators' `transform`).
    pub preprocess_steps: Vec<preprocess::FittedStep>,
    /// Non-fatal notes from loading (skipped files, dropped zero columns, ...).
    pub warnings: Vec<String>,
}

/// How to pick the label column of a CSV file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LabelColumn {
    /// A column named `label` or `class` (case-insensitive), else none.
    Auto,
    /// The column with this header name.
    Name(String),
    /// The column at this 0-based index.
    Index(usize),
    /// No label column.
    None,
}

/// Options for [`load`].
#[derive(Clone, Debug)]
pub struct LoadOptions {
    pub preprocess: Preprocess,
    pub label_column: LabelColumn,
    /// Labels file (one label per line, or a `.npy` vector): for `.npy` data, else replacing
    /// the file's own labels.
    pub labels_file: Option<PathBuf>,
    /// Resize every image to `(width, height)`; needed when images differ in size.
    pub resize: Option<(u32, u32)>,
    /// The kind of model `auto` chooses for ([`preprocess::resolve_auto_for`]).
    pub auto_for: AutoFor,
}

/// The kind of model `--preprocess auto` resolves for: it differs on one kind of table only,
/// a compositional one (docs/models.md §1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AutoFor {
    /// A factorisation of X itself (and the app, which loads before a model is chosen).
    #[default]
    Factorisation,
    /// A model that builds a graph or similarities between samples from X.
    SampleGraph,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            preprocess: Preprocess::Auto,
            label_column: LabelColumn::Auto,
            labels_file: None,
            resize: None,
            auto_for: AutoFor::Factorisation,
        }
    }
}

impl Dataset {
    /// A dataset from a raw matrix (m×n, columns = samples) and optional labels, with sample
    /// names `#0, #1, ...`, no images, fingerprint of `x`, and no preprocessing applied.
    pub fn from_parts(
        x: Array2<f64>,
        labels: Option<Vec<usize>>,
        class_names: Vec<String>,
        source: impl Into<String>,
    ) -> Self {
        let n = x.ncols();
        let fingerprint = fingerprint_of(&x);
        Self {
            x,
            labels,
            class_names,
            sample_names: (0..n).map(|i| format!("#{i}")).collect(),
            feature_names: Vec::new(),
            image_shape: None,
            thumbnails: Vec::new(),
            source: source.into(),
            fingerprint,
            preprocess: Preprocess::None,
            preprocess_reason: None,
            preprocess_auto: None,
            preprocess_steps: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// A dataset from an array already in memory (the Python package's `X`), checked and
    /// preprocessed exactly as a `.npy` file of the same values is by [`load`]: `samples` is
    /// n×m (a row per sample, as the file stores it; any memory order), without labels
    /// (they are for scoring, and the caller keeps them); `source` names the array in
    /// messages (`X`), and a bad value is reported by its 1-based row and column; `auto_for`
    /// is the model kind `auto` resolves for, as `run --model` resolves it. Its
    /// fingerprint holds n and m but no hash (0): the hash identifies a file for session and
    /// constraint files, which an array in memory is not, and costs a pass over every value
    /// (0.4 s for 10,000 × 4,096).
    pub fn from_samples(
        samples: ArrayView2<'_, f64>,
        source: &str,
        (preprocess, auto_for): (Preprocess, AutoFor),
    ) -> Result<Dataset, DataError> {
        let path = Path::new(source);
        check_samples(samples, path, preprocess)?;
        let raw = Dataset::raw(features_by_samples(samples, path)?, source);
        refuse_unusable(&raw, path)?;
        let opts = LoadOptions {
            preprocess,
            auto_for,
            ..LoadOptions::default()
        };
        Ok(finish_with(raw, &opts, false))
    }

    /// New samples (n′×m, a row per sample, any memory order) as X′ (m×n′), preprocessed as
    /// the samples a model was fitted on were: `preprocess` is their resolved preprocessing and
    /// `steps` its steps as fitted on them ([`Self::preprocess_steps`]), so a feature is scaled
    /// by the fitted samples' range, not the new ones'. Values are checked as
    /// [`Self::from_samples`] checks them. With `nonnegative` (a model with a nonnegative
    /// basis), an entry that comes out negative (below the fitted minimum, under `minmax`) is
    /// set to 0; their number is returned beside X′.
    pub fn preprocess_new_samples(
        samples: ArrayView2<'_, f64>,
        (preprocess, steps): (Preprocess, &[preprocess::FittedStep]),
        nonnegative: bool,
        source: &str,
    ) -> Result<(Array2<f64>, usize), DataError> {
        let path = Path::new(source);
        check_samples(samples, path, preprocess)?;
        let m = samples.ncols();
        if let Some(fitted) = steps.iter().find_map(|s| s.features()).filter(|&f| f != m) {
            return Err(DataError::BadArray {
                path: path.to_path_buf(),
                why: format!("{m} features per sample, but the model was fitted on {fitted}"),
            });
        }
        let mut x = features_by_samples(samples, path)?;
        for step in steps {
            step.apply(&mut x);
        }
        let mut clipped = 0;
        x.mapv_inplace(|v| {
            if nonnegative && v < 0.0 {
                clipped += 1;
                0.0
            } else {
                v
            }
        });
        Ok((x, clipped))
    }

    /// A raw dataset from a loader: no labels, `#i` names, no images, fingerprint not yet
    /// computed ([`finish`] computes it).
    pub(crate) fn raw(x: Array2<f64>, source: impl Into<String>) -> Self {
        let (m, n) = x.dim();
        Self {
            x,
            labels: None,
            class_names: Vec::new(),
            sample_names: (0..n).map(|i| format!("#{i}")).collect(),
            feature_names: Vec::new(),
            image_shape: None,
            thumbnails: Vec::new(),
            source: source.into(),
            fingerprint: Fingerprint { n, m, hash: 0 },
            preprocess: Preprocess::None,
            preprocess_reason: None,
            preprocess_auto: None,
            preprocess_steps: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Number of samples.
    pub fn n(&self) -> usize {
        self.x.ncols()
    }

    /// Number of features.
    pub fn m(&self) -> usize {
        self.x.nrows()
    }

    /// The name of feature `j` (0-based): the source's own name when it has one, else
    /// `feature j+1`.
    pub fn feature_name(&self, j: usize) -> String {
        match self.feature_names.get(j) {
            Some(name) if !name.trim().is_empty() => name.clone(),
            _ => format!("feature {}", j + 1),
        }
    }

    /// What `auto` resolves to for `kind` when it differs from the preprocessing X has, so
    /// that X must be prepared again from the raw data for such a model; `None` when X fits
    /// `kind` or the preprocessing was explicit.
    pub fn auto_choice_for(&self, kind: AutoFor) -> Option<&preprocess::AutoChoice> {
        self.preprocess_auto
            .as_ref()
            .map(|a| a.get(kind))
            .filter(|a| a.choice != self.preprocess)
    }

    /// Number of classes (0 when unlabelled).
    pub fn n_classes(&self) -> usize {
        if self.labels.is_some() {
            self.class_names.len()
        } else {
            0
        }
    }
}

/// Load a dataset from a path: a `.csv`/`.tsv`/`.txt` table, a folder of images, a `.npy`
/// matrix or a MATLAB v5 `.mat` file; then apply `opts.preprocess`.
///
/// The fingerprint is taken from the raw matrix, before preprocessing, so that constraint
/// files stay valid when the user only changes the preprocessing. `source` is `path` as given.
pub fn load(path: &Path, opts: &LoadOptions) -> Result<Dataset, DataError> {
    let meta = std::fs::metadata(path).map_err(|e| DataError::io(path, e))?;
    let raw = if meta.is_dir() {
        image_folder::load_folder(path, opts)?
    } else {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        match ext.as_str() {
            "csv" | "tsv" | "txt" | "tab" => csv::load_table(path, opts)?,
            "npy" => npy::load_npy(path, opts)?,
            "mat" => mat::load_mat(path, opts)?,
            "" => {
                return Err(DataError::Unsupported {
                    path: path.to_path_buf(),
                    why: "file has no extension; expected .csv, .tsv, .txt, .npy, .mat or a \
                          folder of images"
                        .into(),
                });
            }
            other => {
                return Err(DataError::Unsupported {
                    path: path.to_path_buf(),
                    why: format!(
                        "unknown data file kind \".{other}\"; expected .csv, .tsv, .txt, .npy, \
                         .mat or a folder of images"
                    ),
                });
            }
        }
    };
    refuse_unusable(&raw, path)?;
    let mut raw = raw;
    // A labels file replaces the file's own labels (a `.npy` has none; a `.mat` without `gnd`,
    // a CSV without a label column, images); without one, a `.npy` takes a sibling
    // `labels.npy` or `y.npy`, and says so.
    let sibling = || {
        (meta.is_file() && is_npy(path))
            .then(|| labels::sibling_labels(path))
            .flatten()
    };
    match &opts.labels_file {
        Some(labels) => labels::attach_labels_file(&mut raw, path, labels)?,
        None => {
            if let Some(lp) = sibling() {
                labels::attach_labels_file(&mut raw, path, &lp)?;
                raw.warnings
                    .push(format!("labels read from {}", lp.display()));
            }
        }
    }
    Ok(finish(raw, opts))
}

fn is_npy(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// Refuse an X with no values or with every value zero: nothing to factorize, and the models'
/// own refusal would not name the file.
fn refuse_unusable(ds: &Dataset, path: &Path) -> Result<(), DataError> {
    let (m, n) = ds.x.dim();
    if m == 0 || n == 0 {
        return Err(DataError::Empty {
            path: path.to_path_buf(),
            why: format!("the data are {m} features × {n} samples: nothing to factorize"),
        });
    }
    if ds.x.iter().all(|&v| v == 0.0) {
        return Err(DataError::Empty {
            path: path.to_path_buf(),
            why: format!(
                "every value of the {m} features × {n} samples is zero (all zeros): nothing \
                 to factorize"
            ),
        });
    }
    Ok(())
}

/// `samples` (n×m, any layout) as the m×n standard-layout X, in a buffer that asks for 2 MiB
/// pages when large (`sys::huge_page_buffer`, as the `.npy` loader's X: the NMF products walk
/// X in column blocks). A feature-major input is one contiguous copy; a row-major one (NumPy's
/// default) is transposed in 32 × 32 tiles on plain slices, so that reads and
/// writes both stay within cache lines (a plain strided transpose misses on every write, and
/// ndarray's generic strided assignment ran at a third of this speed); any other strides are
/// copied by ndarray.
fn features_by_samples(
    samples: ArrayView2<'_, f64>,
    path: &Path,
) -> Result<Array2<f64>, DataError> {
    const TILE: usize = 32;
    let (n, m) = samples.dim();
    let mut x = crate::engine::machine::sys::huge_page_buffer(m * n);
    // Rows that are each contiguous: a C-ordered array, or a column slice of one (`X[:, :-1]`).
    let rows =
        || -> Option<Vec<&[f64]>> { samples.rows().into_iter().map(|r| r.to_slice()).collect() };
    let mut strided = false;
    if let Some(src) = samples.t().as_slice() {
        x.copy_from_slice(src);
    } else if let Some(rows) = rows() {
        for (i0, tile) in rows.chunks(TILE).enumerate().map(|(t, r)| (t * TILE, r)) {
            for j0 in (0..m).step_by(TILE) {
                for j in j0..(j0 + TILE).min(m) {
                    for (d, row) in x[j * n + i0..][..tile.len()].iter_mut().zip(tile) {
                        *d = row[j];
                    }
                }
            }
        }
    } else {
        strided = true;
    }
    let mut out = Array2::from_shape_vec((m, n), x).map_err(|e| DataError::BadArray {
        path: path.to_path_buf(),
        why: format!("not a usable array: {e}"),
    })?;
    if strided {
        out.assign(&samples.t());
    }
    Ok(out)
}

/// Mark `ds`'s samples as `width`×`height` images (row-major pixels) and make their
/// thumbnails. Thumbnails want [0, 1]: with `stretch` (values that are not known to be pixels
/// in [0, 1]) they are scaled by the data's maximum, for display only; X is left as it is.
pub(crate) fn attach_images(ds: &mut Dataset, width: usize, height: usize, stretch: bool) {
    ds.image_shape = Some((width, height));
    let max = ds.x.iter().copied().fold(0.0, f64::max);
    let k = if !stretch || max <= 0.0 {
        1.0
    } else {
        1.0 / max
    };
    ds.thumbnails =
        ds.x.columns()
            .into_iter()
            .map(|c| image_folder::thumbnail_from_column(c.mapv(|v| v * k).view(), width, height))
            .collect();
}

/// Every value of an array in memory (n×m, a row per sample) checked as a `.npy` file's are;
/// the error names the first bad one's 1-based row and column.
fn check_samples(
    samples: ArrayView2<'_, f64>,
    path: &Path,
    preprocess: Preprocess,
) -> Result<(), DataError> {
    // Each row is scanned without an early exit (a fold the compiler vectorises); only a row
    // with a bad value is walked again to name it.
    let bad = |v: f64| !value_ok(v, preprocess);
    for (i, row) in samples.rows().into_iter().enumerate() {
        let any_bad = match row.to_slice() {
            Some(values) => values.iter().fold(false, |b, &v| b | bad(v)),
            None => row.iter().any(|&v| bad(v)),
        };
        if any_bad && let Some((j, &v)) = row.iter().enumerate().find(|(_, v)| bad(**v)) {
            return check_array_value(v, path, preprocess, i, j);
        }
    }
    Ok(())
}

/// Common tail of every loader: fingerprint of the raw matrix, data-quality warnings
/// (docs/models.md §10.2), then preprocessing.
pub(crate) fn finish(ds: Dataset, opts: &LoadOptions) -> Dataset {
    finish_with(ds, opts, true)
}

/// [`finish`], with the fingerprint's hash computed only when `hash` (an array in memory has
/// no file to identify).
fn finish_with(mut ds: Dataset, opts: &LoadOptions, hash: bool) -> Dataset {
    if hash {
        ds.fingerprint = fingerprint_of(&ds.x);
    }
    let quality = preprocess::quality_warnings(&ds.x, &ds.sample_names);
    ds.warnings.extend(quality);
    let (chosen, reason, auto) = match opts.preprocess {
        Preprocess::Auto => {
            let both = preprocess::AutoChoices::of(&ds.x, ds.image_shape.is_some());
            let auto = both.get(opts.auto_for).clone();
            (auto.choice, Some(auto.reason), Some(both))
        }
        p => (p, None, None),
    };
    let (steps, notes) = preprocess::apply_fitted(&mut ds.x, chosen);
    ds.warnings.extend(notes);
    ds.preprocess_steps = steps;
    ds.preprocess = chosen;
    ds.preprocess_reason = reason;
    ds.preprocess_auto = auto;
    ds
}

/// Reject NaN/Inf always, and negative values unless the preprocessing shifts them away.
/// `text` and `place` are only evaluated on failure.
pub(crate) fn check_value(
    v: f64,
    path: &Path,
    preprocess: Preprocess,
    text: impl FnOnce() -> String,
    place: impl FnOnce() -> Place,
) -> Result<(), DataError> {
    if value_ok(v, preprocess) {
        return Ok(());
    }
    if !v.is_finite() {
        return Err(DataError::NotFinite {
            path: path.to_path_buf(),
            at: place(),
            value: text(),
        });
    }
    Err(DataError::Negative {
        path: path.to_path_buf(),
        at: place(),
        value: v,
    })
}

/// [`check_value`] for the entry at 0-based row `i` (a sample) and column `j` of an array
/// (`.npy`, an array in memory): the place is named "row i+1, column j+1".
pub(crate) fn check_array_value(
    v: f64,
    path: &Path,
    preprocess: Preprocess,
    i: usize,
    j: usize,
) -> Result<(), DataError> {
    check_value(
        v,
        path,
        preprocess,
        || v.to_string(),
        || Place {
            unit: "row",
            number: i + 1,
            column: Column {
                index: j + 1,
                name: None,
            },
        },
    )
}

/// The test behind [`check_value`] without building an error: finite, and nonnegative unless
/// the preprocessing shifts negatives away. Streaming loaders scan with it and build the error
/// (which clones the path) only for the value they report.
#[inline]
pub(crate) fn value_ok(v: f64, preprocess: Preprocess) -> bool {
    v.is_finite() && (v >= 0.0 || preprocess.accepts_negatives())
}

/// FNV-1a 64 over the bit patterns of `x`, column by column (sample by sample), with the
/// shape: stable across platforms and Rust versions (unlike `DefaultHasher`).
///
/// A row-major X is read in blocks of [`FINGERPRINT_BLOCK`] columns, each copied row by row
/// into a sample-major buffer and hashed from there: the same bytes in the same order as
/// walking each column down, but the rows are read as 512-byte runs instead of one value per
/// row.
pub fn fingerprint_of(x: &Array2<f64>) -> Fingerprint {
    let (m, n) = x.dim();
    let mut h = Fnv::new();
    h.eat(m as u64);
    h.eat(n as u64);
    match x.as_slice() {
        Some(xs) if m > 1 && n > 1 => {
            let mut buf = vec![0.0; m * FINGERPRINT_BLOCK.min(n)];
            let mut j0 = 0;
            while j0 < n {
                let b = FINGERPRINT_BLOCK.min(n - j0);
                for (i, row) in xs.chunks_exact(n).enumerate() {
                    for (t, &v) in row[j0..j0 + b].iter().enumerate() {
                        buf[t * m + i] = v;
                    }
                }
                for &v in &buf[..b * m] {
                    h.eat(v.to_bits());
                }
                j0 += b;
            }
        }
        _ => {
            for col in x.columns() {
                for v in col {
                    h.eat(v.to_bits());
                }
            }
        }
    }
    Fingerprint { n, m, hash: h.0 }
}

/// Columns per block of [`fingerprint_of`] on a row-major X (64 columns: 512 bytes of each row).
const FINGERPRINT_BLOCK: usize = 64;

/// FNV-1a 64, eight little-endian bytes at a time.
struct Fnv(u64);

impl Fnv {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn new() -> Self {
        Self(Self::OFFSET)
    }

    #[inline(always)]
    fn eat(&mut self, v: u64) {
        for b in v.to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::ShapeBuilder;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The definition: every column walked top to bottom, one chain of FNV-1a over the bytes.
    fn column_walk(x: &Array2<f64>) -> u64 {
        let mut h = Fnv::new();
        h.eat(x.nrows() as u64);
        h.eat(x.ncols() as u64);
        for j in 0..x.ncols() {
            for i in 0..x.nrows() {
                h.eat(x[[i, j]].to_bits());
            }
        }
        h.0
    }

    #[test]
    fn fingerprint_blocked_is_the_column_walk() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // Below, at and above one block of columns, with a partial last block; one row; one
        // column; empty; and a column-major array (walked directly).
        for &(m, n) in &[
            (3, 5),
            (7, 64),
            (5, 130),
            (1, 9),
            (9, 1),
            (0, 4),
            (4, 0),
            (33, 200),
        ] {
            let x = Array2::from_shape_simple_fn((m, n), || rng.r#gen::<f64>());
            let f = fingerprint_of(&x);
            assert_eq!((f.m, f.n), (m, n));
            assert_eq!(f.hash, column_walk(&x), "{m}×{n}");
            let fortran =
                Array2::from_shape_vec((m, n).f(), x.t().iter().copied().collect()).expect("m·n");
            assert_eq!(fortran, x);
            assert!(fortran.as_slice().is_none() || m <= 1 || n <= 1);
            assert_eq!(fingerprint_of(&fortran).hash, f.hash, "{m}×{n} F-order");
        }
        // A value computed outside Rust (FNV-1a 64 of the little-endian bytes of 2, 2, 1.0,
        // 3.0, 2.0, 4.0): constraint files saved before carry hashes of this form.
        let x = ndarray::array![[1.0, 2.0], [3.0, 4.0]];
        assert_eq!(fingerprint_of(&x).hash, 0xda86_a285_51f0_7e20);
    }

    #[test]
    fn an_array_in_any_memory_order_becomes_the_same_features_by_samples_x() {
        // 70 × 45 crosses the 32-wide tiles with partial ones on both axes.
        let (n, m) = (70, 45);
        let samples = Array2::from_shape_fn((n, m), |(i, j)| (i * m + j) as f64 + 0.5);
        let want = samples.t().to_owned();
        let f_order = Array2::from_shape_fn((n, m).f(), |(i, j)| samples[[i, j]]);
        let wide = Array2::from_shape_fn((n, 2 * m), |(i, j)| samples[[i, j / 2]]);
        let strided = wide.slice(ndarray::s![.., ..;2]);
        for (what, view) in [
            ("row-major", samples.view()),
            ("column-major", f_order.view()),
            ("strided", strided),
        ] {
            let data = Dataset::from_samples(view, "X", (Preprocess::None, AutoFor::Factorisation))
                .unwrap();
            assert!(data.x.is_standard_layout(), "{what}");
            assert_eq!(data.x, want, "{what}");
        }
        let bad = Dataset::from_samples(
            ndarray::array![[1.0, 2.0], [3.0, f64::NAN], [0.0, 1.0]].view(),
            "X",
            (Preprocess::None, AutoFor::Factorisation),
        )
        .unwrap_err()
        .to_string();
        assert!(bad.contains("row 2") && bad.contains("column 2"), "{bad}");
    }

    #[test]
    fn new_samples_are_preprocessed_by_the_fitted_samples_statistics() {
        // Two features on different scales, one constant: minmax,l2 and standardize learn
        // per-feature statistics; the fitted samples pushed through them again come out as the
        // dataset's X bit for bit.
        let samples = ndarray::array![[1.0, 200.0, 5.0], [2.0, 100.0, 5.0], [4.0, 400.0, 5.0]];
        for p in [
            Preprocess::MinMaxL2,
            Preprocess::Standardize,
            Preprocess::Max,
            Preprocess::L2,
        ] {
            let data =
                Dataset::from_samples(samples.view(), "X", (p, AutoFor::Factorisation)).unwrap();
            let fitted = (p, &data.preprocess_steps[..]);
            let (again, clipped) =
                Dataset::preprocess_new_samples(samples.view(), fitted, false, "X").unwrap();
            let same = again
                .iter()
                .zip(&data.x)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same && clipped == 0, "{p:?}: {again} vs {}", data.x);
            let (_, clipped) =
                Dataset::preprocess_new_samples(samples.view(), fitted, true, "X").unwrap();
            let negative = if p == Preprocess::Standardize { 4 } else { 0 };
            assert_eq!(clipped, negative, "{p:?}");
        }
        // A new sample below the fitted minimum of feature 1 is clipped at 0 there, and the
        // constant feature stays 0 whatever its new value.
        let data = Dataset::from_samples(
            samples.view(),
            "X",
            (Preprocess::MinMax, AutoFor::Factorisation),
        )
        .unwrap();
        let new = ndarray::array![[0.0, 250.0, 9.0]];
        let fitted = (Preprocess::MinMax, &data.preprocess_steps[..]);
        let (x, clipped) = Dataset::preprocess_new_samples(new.view(), fitted, true, "X").unwrap();
        assert_eq!(x, ndarray::array![[0.0], [0.5], [0.0]]);
        assert_eq!(clipped, 1);
        let wrong = ndarray::array![[1.0, 2.0]];
        let err = Dataset::preprocess_new_samples(wrong.view(), fitted, true, "X")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("2 features per sample, but the model was fitted on 3"),
            "{err}"
        );
    }
}
