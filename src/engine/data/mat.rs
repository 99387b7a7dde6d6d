//! MATLAB v5 `.mat` files in D. Cai's layout: `fea` (n×m, one sample per row, any numeric
//! class) and `gnd` (n×1 labels), read with the `matfile` crate.
//!
//! When m is a perfect square s² (s ≥ 8), each row of `fea` is an s×s image stored
//! **column-major** (MATLAB's `reshape(fea(i,:), s, s)`); it is transposed to our row-major
//! pixel order so that thumbnails are upright and X equals what the image-folder loader
//! gives for the same pictures. 8-bit pixel data (class `uint8`, or integral values in
//! 0..=255 in an image-shaped double array) are scaled to [0, 1] like image files.
//!
//! Not supported by `matfile` 0.5 (and so refused with a message): v7.3 files (HDF5), v4
//! files, sparse, cell, struct, char and logical variables (they are skipped while parsing, so
//! a sparse `fea` reads as "no numeric variable `fea`"), and complex data.

use super::labels::index_labels;
use super::{Column, DataError, Dataset, LoadOptions, Place, Preprocess, check_value};
use matfile::{MatFile, NumericData};
use ndarray::Array2;
use std::path::Path;

/// Smallest side for which a square feature count is taken to be an image.
const MIN_IMAGE_SIDE: usize = 8;

/// Real part as f64, whether the class is 8-bit unsigned, and refusal of complex data.
fn to_f64(data: &NumericData) -> Result<(Vec<f64>, bool), &'static str> {
    macro_rules! conv {
        ($real:expr, $imag:expr, $u8:expr) => {{
            if $imag.is_some() {
                return Err("complex data are not supported");
            }
            Ok(($real.iter().map(|&v| v as f64).collect(), $u8))
        }};
    }
    match data {
        NumericData::Int8 { real, imag } => conv!(real, imag, false),
        NumericData::UInt8 { real, imag } => conv!(real, imag, true),
        NumericData::Int16 { real, imag } => conv!(real, imag, false),
        NumericData::UInt16 { real, imag } => conv!(real, imag, false),
        NumericData::Int32 { real, imag } => conv!(real, imag, false),
        NumericData::UInt32 { real, imag } => conv!(real, imag, false),
        NumericData::Int64 { real, imag } => conv!(real, imag, false),
        NumericData::UInt64 { real, imag } => conv!(real, imag, false),
        NumericData::Single { real, imag } => conv!(real, imag, false),
        NumericData::Double { real, imag } => conv!(real, imag, false),
    }
}

/// Integer square root when `m` is a perfect square.
fn square_side(m: usize) -> Option<usize> {
    let s = (m as f64).sqrt().round() as usize;
    (s * s == m).then_some(s)
}

/// Load a Cai-style `.mat` file.
pub fn load_mat(path: &Path, opts: &LoadOptions) -> Result<Dataset, DataError> {
    let bytes = std::fs::read(path).map_err(|e| DataError::io(path, e))?;
    check_version(path, &bytes)?;
    let bad = |why: String| DataError::BadArray {
        path: path.to_path_buf(),
        why,
    };
    // `matfile` can panic on crafted input (e.g. an i32 overflow in the product of the
    // dimensions); user files must give an error, never a crash.
    // The pre-walk refuses what would make `matfile` panic, print or over-allocate, and
    // inflates compressed elements with a bound.
    let bytes = super::mat_walk::prewalk(&bytes).map_err(&bad)?;
    let parsed = std::panic::catch_unwind(|| MatFile::parse(&bytes[..]))
        .map_err(|_| bad("malformed MATLAB v5 file (the .mat parser gave up)".into()))?;
    let mf = parsed.map_err(|e| bad(format!("cannot parse the MATLAB v5 file: {e}")))?;
    let names = || {
        let v: Vec<String> = mf.arrays().iter().map(|a| a.name().to_string()).collect();
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    let Some(fea) = mf.find_by_name("fea") else {
        return Err(bad(format!(
            "no numeric variable `fea` (numeric variables found: {}; sparse, cell and struct \
             variables are not supported)",
            names()
        )));
    };
    let mut warnings = Vec::new();
    let gnd = match mf.find_by_name("gnd") {
        Some(g) => {
            let (v, _) = to_f64(g.data()).map_err(|w| bad(format!("`gnd`: {w}")))?;
            Some(v)
        }
        None => {
            warnings.push(format!(
                "no `gnd` variable: the data are unlabelled (variables: {})",
                names()
            ));
            None
        }
    };
    let fea = Fea::read(path, fea, gnd.as_ref().map(Vec::len), &mut warnings)?;
    fea.check_values(path, opts.preprocess)?;

    let side = square_side(fea.m).filter(|&s| s >= MIN_IMAGE_SIDE);
    let pixel_like = fea.is_u8
        || (side.is_some()
            && fea
                .vals
                .iter()
                .all(|&v| (0.0..=255.0).contains(&v) && v.fract() == 0.0)
            && fea.vals.iter().any(|&v| v > 1.0));
    if pixel_like && !fea.is_u8 {
        warnings.push(
            "`fea` holds integers in 0..=255: read as 8-bit pixels and scaled to [0, 1]".into(),
        );
    }
    let x = fea.to_x(side, if pixel_like { 255.0 } else { 1.0 });

    let mut ds = Dataset::raw(x, path.display().to_string());
    ds.sample_names = (1..=fea.n).map(|i| format!("row {i}")).collect();
    if let Some(s) = side {
        super::attach_images(&mut ds, s, s, !pixel_like);
    }
    if let Some(g) = gnd {
        let raw: Vec<String> = g.iter().map(|v| format!("{v}")).collect();
        let (labels, class_names) = index_labels(&raw);
        ds.labels = Some(labels);
        ds.class_names = class_names;
    }
    ds.warnings = warnings;
    Ok(ds)
}

/// Refuse what is not a MATLAB v5/v7 file (v7.3 is HDF5; v4 has no text header).
fn check_version(path: &Path, bytes: &[u8]) -> Result<(), DataError> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(116)]);
    if head.starts_with("MATLAB 7.3") || bytes.get(512..516) == Some(b"\x89HDF") {
        return Err(DataError::Unsupported {
            path: path.to_path_buf(),
            why: "MATLAB v7.3 (HDF5) .mat files are not supported; re-save in MATLAB with \
                  `save(file, 'fea', 'gnd', '-v7')` or export to .npy/.csv"
                .into(),
        });
    }
    if !head.starts_with("MATLAB 5.0") {
        return Err(DataError::Unsupported {
            path: path.to_path_buf(),
            why: "not a MATLAB v5/v7 .mat file (its header does not start with \"MATLAB 5.0 \
                  MAT-file\"); v4 files are not supported"
                .into(),
        });
    }
    Ok(())
}

/// The `fea` variable: r×c values in MATLAB's column-major order, with the samples in its
/// rows (Cai's layout, n×m) or in its columns when only that matches the label count.
struct Fea {
    vals: Vec<f64>,
    is_u8: bool,
    r: usize,
    samples_in_rows: bool,
    n: usize,
    m: usize,
}

impl Fea {
    fn read(
        path: &Path,
        fea: &matfile::Array,
        labels: Option<usize>,
        warnings: &mut Vec<String>,
    ) -> Result<Self, DataError> {
        let bad = |why: String| DataError::BadArray {
            path: path.to_path_buf(),
            why,
        };
        let size = fea.size();
        if size.len() != 2 {
            return Err(bad(format!("`fea` must be 2-D, found size {size:?}")));
        }
        let (r, c) = (size[0], size[1]);
        let (vals, is_u8) = to_f64(fea.data()).map_err(|w| bad(format!("`fea`: {w}")))?;
        if r == 0 || c == 0 || vals.len() != r * c {
            return Err(DataError::Empty {
                path: path.to_path_buf(),
                why: format!("`fea` is {r}×{c}: no data"),
            });
        }
        let samples_in_rows = match labels {
            Some(g) if g == r => true,
            Some(g) if g == c => {
                warnings.push(format!(
                    "`fea` is {r}×{c} and `gnd` has {c} labels: reading the columns of `fea` as samples"
                ));
                false
            }
            Some(g) => {
                return Err(bad(format!(
                    "`gnd` has {g} labels but `fea` is {r}×{c}; expected one label per sample \
                     (row of `fea`)"
                )));
            }
            None => true,
        };
        let (n, m) = if samples_in_rows { (r, c) } else { (c, r) };
        Ok(Self {
            vals,
            is_u8,
            r,
            samples_in_rows,
            n,
            m,
        })
    }

    /// Value of sample i, feature p (p in `fea`'s own order).
    fn at(&self, i: usize, p: usize) -> f64 {
        if self.samples_in_rows {
            self.vals[i + p * self.r]
        } else {
            self.vals[p + i * self.r]
        }
    }

    /// Every value checked for the preprocessing, the place named as `fea`'s row and column.
    fn check_values(&self, path: &Path, preprocess: Preprocess) -> Result<(), DataError> {
        for i in 0..self.n {
            for p in 0..self.m {
                let v = self.at(i, p);
                check_value(
                    v,
                    path,
                    preprocess,
                    || v.to_string(),
                    || {
                        let (row, col) = if self.samples_in_rows { (i, p) } else { (p, i) };
                        Place {
                            unit: "`fea` row",
                            number: row + 1,
                            column: Column {
                                index: col + 1,
                                name: None,
                            },
                        }
                    },
                )?;
            }
        }
        Ok(())
    }

    /// X (m×n) divided by `divisor`; square images (`side`) go from MATLAB's column-major
    /// pixels to row-major. Divide (not multiply by 1/255) so values equal the image loader's
    /// `pixel / 255` bit for bit.
    fn to_x(&self, side: Option<usize>, divisor: f64) -> Array2<f64> {
        let mut x = Array2::<f64>::zeros((self.m, self.n));
        for i in 0..self.n {
            let mut col = x.column_mut(i);
            match side {
                Some(s) => {
                    // fea pixel p = c*s + r (column-major) → our j = r*s + c (row-major).
                    for rr in 0..s {
                        for cc in 0..s {
                            col[rr * s + cc] = self.at(i, cc * s + rr) / divisor;
                        }
                    }
                }
                None => {
                    for p in 0..self.m {
                        col[p] = self.at(i, p) / divisor;
                    }
                }
            }
        }
        x
    }
}
