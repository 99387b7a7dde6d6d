//! Warm starts: the factors a run starts from instead of the seeded draw — `W.npy` (m×k) and
//! `H.npy` (k×n) from a folder (`run --init DIR`; a previous `run --out` folder works as it
//! is), or a finished run's factors (the app's "Continue from this run"). They are used
//! exactly as given: no rescaling, no normalisation, no flooring (docs/models.md §10.6).

use super::ModelError;
use crate::engine::data::DataError;
use crate::engine::data::npy::read_matrix;
use ndarray::Array2;
use std::path::Path;

/// Factors to start a run from.
#[derive(Clone, Debug, PartialEq)]
pub struct WarmStart {
    /// The basis W (m×k); `None` when only H was given (models without W need no more).
    pub w: Option<Array2<f64>>,
    /// The representation H (k×n).
    pub h: Array2<f64>,
    /// Where the factors come from, for messages ("results/orl/W.npy", "run 3").
    pub source: String,
}

impl WarmStart {
    /// Factors held in memory (a finished run's), named `source` in messages.
    pub fn new(w: Option<Array2<f64>>, h: Array2<f64>, source: impl Into<String>) -> Self {
        Self {
            w,
            h,
            source: source.into(),
        }
    }

    /// Read `H.npy` and, when present, `W.npy` from `dir`. Both must be finite 2-D matrices;
    /// the shapes are checked against the data and the rank by [`WarmStart::check`].
    pub fn load(dir: &Path) -> Result<Self, DataError> {
        if !dir.is_dir() {
            return Err(DataError::NotFound {
                path: dir.to_path_buf(),
            });
        }
        let h_path = dir.join("H.npy");
        if !h_path.is_file() {
            return Err(DataError::NotFound { path: h_path });
        }
        let h = read_matrix(&h_path)?;
        let w_path = dir.join("W.npy");
        let w = if w_path.is_file() {
            Some(read_matrix(&w_path)?)
        } else {
            None
        };
        Ok(Self {
            w,
            h,
            source: dir.display().to_string(),
        })
    }

    /// Check the shapes against m features, n samples and rank k. A model with a basis
    /// (`has_w`) needs W too, and nonnegative factors (its updates are multiplicative);
    /// a W given to a model without one is ignored.
    pub fn check(&self, m: usize, n: usize, k: usize, has_w: bool) -> Result<(), ModelError> {
        let shape = |a: &Array2<f64>| format!("{}×{}", a.nrows(), a.ncols());
        if self.h.dim() != (k, n) {
            return Err(ModelError::InitShape {
                file: self.file("H.npy"),
                what: "H",
                found: shape(&self.h),
                expected: format!("{k}×{n}"),
                why: format!("k = {k} rows by the data's {n} samples"),
            });
        }
        if !has_w {
            return Ok(());
        }
        let Some(w) = &self.w else {
            return Err(ModelError::InitShape {
                file: self.file("W.npy"),
                what: "W",
                found: "missing".into(),
                expected: format!("{m}×{k}"),
                why: "this model has a basis W; give W.npy next to H.npy".into(),
            });
        };
        if w.dim() != (m, k) {
            return Err(ModelError::InitShape {
                file: self.file("W.npy"),
                what: "W",
                found: shape(w),
                expected: format!("{m}×{k}"),
                why: format!("the data's {m} features by k = {k} columns"),
            });
        }
        for (name, a) in [("W.npy", w), ("H.npy", &self.h)] {
            if let Some(((r, c), v)) = a.indexed_iter().find(|(_, v)| **v < 0.0) {
                return Err(ModelError::InitShape {
                    file: self.file(name),
                    what: if name == "W.npy" { "W" } else { "H" },
                    found: format!("entry ({}, {}) = {v}", r + 1, c + 1),
                    expected: "nonnegative entries".into(),
                    why: "multiplicative updates keep the sign of their start".into(),
                });
            }
        }
        Ok(())
    }

    /// `source/name` when the factors came from a folder, else the source itself.
    fn file(&self, name: &str) -> String {
        let dir = Path::new(&self.source);
        if dir.is_dir() {
            dir.join(name).display().to_string()
        } else {
            format!("{} ({name})", self.source)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    #[test]
    fn shapes_are_checked_with_the_expected_and_found_shape() {
        let ws = WarmStart::new(Some(Array2::ones((4, 2))), Array2::ones((2, 5)), "run 1");
        assert!(ws.check(4, 5, 2, true).is_ok());
        let e = ws.check(4, 6, 2, true).unwrap_err().to_string();
        assert!(
            e.contains("run 1 (H.npy)") && e.contains("2×5") && e.contains("2×6"),
            "{e}"
        );
        let e = ws.check(3, 5, 2, true).unwrap_err().to_string();
        assert!(
            e.contains("W.npy") && e.contains("4×2") && e.contains("3×2"),
            "{e}"
        );
        let h_only = WarmStart::new(None, Array2::ones((2, 5)), "dir");
        assert!(h_only.check(4, 5, 2, false).is_ok());
        let e = h_only.check(4, 5, 2, true).unwrap_err().to_string();
        assert!(e.contains("missing"), "{e}");
        let mut neg = ws.clone();
        neg.h[[1, 3]] = -1.0;
        let e = neg.check(4, 5, 2, true).unwrap_err().to_string();
        assert!(e.contains("(2, 4) = -1"), "{e}");
        assert!(
            neg.check(4, 5, 2, false).is_ok(),
            "embeddings may be negative"
        );
    }

    #[test]
    fn a_warm_start_is_used_exactly_as_given_and_its_shape_is_checked_at_build() {
        use crate::engine::constraints::SideInfo;
        use crate::engine::data::Dataset;
        use crate::engine::models::{ModelSpec, build, nmf, rpnmf};
        use std::sync::Arc;
        let x = Array2::from_shape_fn((6, 8), |(i, j)| 1.0 + ((i * 8 + j) % 5) as f64);
        let data = Arc::new(Dataset::from_parts(x, None, vec![], "test"));
        let mut w = Array2::from_shape_fn((6, 2), |(i, a)| 0.5 + (i + a) as f64 * 0.1);
        w[[3, 1]] = 0.0; // a zero entry is kept, not floored
        let h = Array2::from_shape_fn((2, 8), |(a, j)| 0.25 + (a * 8 + j) as f64 * 0.01);
        let start = Arc::new(WarmStart::new(Some(w.clone()), h.clone(), "test start"));
        let side = SideInfo::default();
        for seed in [0, 7] {
            let spec = ModelSpec::new(nmf::KIND, 2, seed).with_init(Arc::clone(&start));
            let model = build(&spec, Arc::clone(&data), &side).unwrap();
            assert_eq!(model.w().unwrap(), w.view());
            assert_eq!(model.h(), h.view());
        }
        let spec = ModelSpec::new(nmf::KIND, 3, 0).with_init(Arc::clone(&start));
        let e = build(&spec, Arc::clone(&data), &side)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("test start (H.npy): H is 2×8, expected 3×8"),
            "{e}"
        );
        let side = SideInfo::with_triplets(vec![crate::engine::constraints::Triplet::new(0, 1, 2)]);
        let spec = ModelSpec::new(rpnmf::KIND, 2, 0).with_init(start);
        let model = build(&spec, data, &side).unwrap();
        assert_eq!(model.w().unwrap(), w.view());
        assert_eq!(model.h(), h.view());
    }
}
