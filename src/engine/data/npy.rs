//! NumPy `.npy` matrices: **rows are samples** (the NumPy/scikit-learn convention), so X is
//! the transpose. Float (f64, f32), integer and bool dtypes are read, C or Fortran order.
//!
//! Labels come from `opts.labels_file` (a text file with one label per line, or a `.npy`
//! vector) or, when that is not given, from a `labels.npy` beside the data file.

use super::labels::index_labels;
use super::{Column, DataError, Dataset, LoadOptions, Place, check_value};
use ndarray::{Array1, Array2, ArrayD, Ix2};
use ndarray_npy::{ReadNpyError, ReadNpyExt};
use std::path::{Path, PathBuf};

/// Read an `.npy` file of any numeric dtype into an f64 array of any dimension.
fn read_any(path: &Path) -> Result<ArrayD<f64>, DataError> {
    let bytes = std::fs::read(path).map_err(|e| DataError::io(path, e))?;
    let bad = |why: String| DataError::BadArray {
        path: path.to_path_buf(),
        why,
    };
    macro_rules! try_type {
        ($t:ty, $conv:expr) => {
            match ArrayD::<$t>::read_npy(&bytes[..]) {
                Ok(a) => return Ok(a.mapv($conv)),
                Err(ReadNpyError::WrongDescriptor(_)) => {}
                Err(e) => return Err(bad(format!("not a readable .npy file: {e}"))),
            }
        };
    }
    try_type!(f64, |v| v);
    try_type!(f32, f64::from);
    try_type!(i64, |v| v as f64);
    try_type!(i32, f64::from);
    try_type!(i16, f64::from);
    try_type!(i8, f64::from);
    try_type!(u64, |v| v as f64);
    try_type!(u32, f64::from);
    try_type!(u16, f64::from);
    try_type!(u8, f64::from);
    try_type!(bool, |v| if v { 1.0 } else { 0.0 });
    Err(bad(
        "unsupported .npy dtype (expected a float, integer or bool array; complex, string and \
         object arrays are not read)"
            .into(),
    ))
}

/// Load a `.npy` data matrix (rows = samples) and its labels, if any.
pub fn load_npy(path: &Path, opts: &LoadOptions) -> Result<Dataset, DataError> {
    let any = read_any(path)?;
    let ndim = any.ndim();
    let a: Array2<f64> = any
        .into_dimensionality::<Ix2>()
        .map_err(|_| DataError::BadArray {
            path: path.to_path_buf(),
            why: format!(
                "expected a 2-D array (rows = samples, columns = features), found {ndim}-D"
            ),
        })?;
    let (n, m) = a.dim();
    if n == 0 || m == 0 {
        return Err(DataError::Empty {
            path: path.to_path_buf(),
            why: format!("the array is {n}×{m}: no data"),
        });
    }
    for ((i, j), &v) in a.indexed_iter() {
        check_value(
            v,
            path,
            opts.preprocess,
            || v.to_string(),
            || Place {
                unit: "row",
                number: i + 1,
                column: Column {
                    index: j + 1,
                    name: None,
                },
            },
        )?;
    }
    let x = a.t().as_standard_layout().into_owned();
    let mut ds = Dataset::raw(x, path.display().to_string());
    ds.sample_names = (1..=n).map(|i| format!("row {i}")).collect();

    let labels_path: Option<PathBuf> = match &opts.labels_file {
        Some(p) => Some(p.clone()),
        None => {
            let sib = path.with_file_name("labels.npy");
            let is_self = path.file_name().is_some_and(|f| f == "labels.npy");
            (sib.is_file() && !is_self).then_some(sib)
        }
    };
    if let Some(lp) = labels_path {
        let raw = read_labels(&lp)?;
        if raw.len() != n {
            return Err(DataError::LabelCountMismatch {
                data: path.to_path_buf(),
                n,
                labels: lp,
                count: raw.len(),
            });
        }
        let (labels, class_names) = index_labels(&raw);
        ds.labels = Some(labels);
        ds.class_names = class_names;
        if opts.labels_file.is_none() {
            ds.warnings.push(format!(
                "labels read from {}",
                path.with_file_name("labels.npy").display()
            ));
        }
    }
    Ok(ds)
}

/// Read labels: a `.npy` vector (any integer/float dtype; n or n×1) or a text file with one
/// label per line (blank lines at the end are ignored).
pub fn read_labels(path: &Path) -> Result<Vec<String>, DataError> {
    let is_npy = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    if is_npy {
        let a = read_any(path)?;
        let shape = a.shape().to_vec();
        let ok = shape.len() == 1 || (shape.len() == 2 && (shape[1] == 1 || shape[0] == 1));
        if !ok {
            return Err(DataError::BadArray {
                path: path.to_path_buf(),
                why: format!("expected a label vector, found an array of shape {shape:?}"),
            });
        }
        let v: Array1<f64> = a.iter().copied().collect();
        return v
            .iter()
            .enumerate()
            .map(|(i, &l)| {
                if l.is_finite() && l.fract() == 0.0 {
                    Ok(format!("{l}"))
                } else {
                    Err(DataError::BadArray {
                        path: path.to_path_buf(),
                        why: format!("element {}: label {l} is not an integer", i + 1),
                    })
                }
            })
            .collect();
    }
    let text = std::fs::read_to_string(path).map_err(|e| DataError::io(path, e))?;
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    lines[..end]
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if l.is_empty() {
                Err(DataError::EmptyLabel {
                    path: path.to_path_buf(),
                    at: format!("line {}", i + 1),
                })
            } else {
                Ok((*l).to_string())
            }
        })
        .collect()
}
