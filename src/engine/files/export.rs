//! The files of a finished run, written the same way by `run --out` and by the app's
//! "Export run…" (issue 20): matrices as CSV (one row per line, full precision: `{:?}`
//! round-trips f64) and as `.npy` (f64, C order); the clusters, the labels and a classifier's
//! predictions per sample as CSV, with `.npy` twins of the labels and predictions. Every file
//! is written atomically (temp file + rename, [`crate::engine::machine::fsutil::write_atomic`]), so a
//! kill leaves each file either whole or absent.

use crate::engine::data::Dataset;
use crate::engine::machine::fsutil::{csv_field, write_atomic};
use crate::engine::models::{Export, LabelOrigin, Predictions};
use ndarray::Array2;
use std::path::{Path, PathBuf};

/// A file of a run that could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot write {path}: {source}", path = .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot encode {what} as .npy: {why}")]
    Npy { what: String, why: String },
}

/// A matrix as CSV text, one row per line, full precision.
pub fn matrix_csv(a: &Array2<f64>) -> String {
    let mut s = String::with_capacity(a.len() * 20);
    for row in a.rows() {
        let line: Vec<String> = row.iter().map(|v| format!("{v:?}")).collect();
        s.push_str(&line.join(","));
        s.push('\n');
    }
    s
}

/// A matrix as `.npy` bytes (f64, C order); `what` names it in the error.
pub fn matrix_npy(a: &Array2<f64>, what: &str) -> Result<Vec<u8>, ExportError> {
    use ndarray_npy::WriteNpyExt;
    let mut buf = Vec::new();
    a.as_standard_layout()
        .write_npy(&mut buf)
        .map_err(|e| ExportError::Npy {
            what: what.to_owned(),
            why: e.to_string(),
        })?;
    Ok(buf)
}

/// `clusters.csv`: a `cluster` header, then one cluster id per sample.
pub fn clusters_csv(clusters: &[usize]) -> String {
    let mut s = String::from("cluster\n");
    for c in clusters {
        s.push_str(&format!("{c}\n"));
    }
    s
}

/// A class by its name when the dataset names it, else its index.
fn class_name(data: &Dataset, c: usize) -> String {
    data.class_names
        .get(c)
        .map_or_else(|| c.to_string(), |s| csv_field(s))
}

/// `predictions.csv`: one row per sample, `index,truth,known,predicted,confidence` (0-based
/// index; classes by name when the dataset names them; `known` 1 for a given label, 0
/// otherwise; truth empty for unlabelled data).
pub fn predictions_csv(data: &Dataset, known: &[Option<usize>], p: &Predictions) -> String {
    let mut out = String::from("index,truth,known,predicted,confidence\n");
    for (i, (&label, &conf)) in p.labels.iter().zip(&p.confidence).enumerate() {
        let truth = data
            .labels
            .as_ref()
            .and_then(|t| t.get(i))
            .map_or_else(String::new, |&c| class_name(data, c));
        let given = u8::from(known.get(i).is_some_and(Option::is_some));
        out.push_str(&format!(
            "{i},{truth},{given},{},{conf:?}\n",
            class_name(data, label)
        ));
    }
    out
}

/// `predictions.npy`: n×3, per sample the predicted class index, its confidence and 1 where
/// the label was given (0 otherwise).
pub fn predictions_matrix(p: &Predictions) -> Array2<f64> {
    Array2::from_shape_fn((p.labels.len(), 3), |(i, c)| match c {
        0 => p.labels[i] as f64,
        1 => p.confidence.get(i).copied().unwrap_or(f64::NAN),
        _ => f64::from(u8::from(matches!(
            p.origin.get(i),
            Some(LabelOrigin::Given)
        ))),
    })
}

/// The labels of every sample a run can be read against: the ground truth (where the
/// dataset has it), the labels the user painted, and the run's clusters.
#[derive(Clone, Copy, Debug)]
pub struct SampleLabels<'a> {
    pub data: &'a Dataset,
    /// Painted (or revealed, or read) labels per sample; empty when there are none.
    pub painted: &'a [Option<usize>],
    /// The run's cluster per sample (k-means on H, or the model's own).
    pub clusters: Option<&'a [usize]>,
}

impl SampleLabels<'_> {
    /// `labels.csv`: `index,truth,painted,cluster`, one row per sample (0-based index, classes
    /// by name; a missing value is an empty field).
    pub fn csv(&self) -> String {
        let n = self.data.n();
        let mut out = String::from("index,truth,painted,cluster\n");
        for i in 0..n {
            let truth = self
                .data
                .labels
                .as_ref()
                .and_then(|t| t.get(i))
                .map_or_else(String::new, |&c| class_name(self.data, c));
            let painted = self
                .painted
                .get(i)
                .copied()
                .flatten()
                .map_or_else(String::new, |c| class_name(self.data, c));
            let cluster = self
                .clusters
                .and_then(|c| c.get(i))
                .map_or_else(String::new, usize::to_string);
            out.push_str(&format!("{i},{truth},{painted},{cluster}\n"));
        }
        out
    }

    /// `labels.npy`: n×3 class indices (truth, painted, cluster), NaN where there is none.
    pub fn matrix(&self) -> Array2<f64> {
        let n = self.data.n();
        let or_nan = |v: Option<usize>| v.map_or(f64::NAN, |c| c as f64);
        Array2::from_shape_fn((n, 3), |(i, c)| match c {
            0 => or_nan(self.data.labels.as_ref().and_then(|t| t.get(i).copied())),
            1 => or_nan(self.painted.get(i).copied().flatten()),
            _ => or_nan(self.clusters.and_then(|cl| cl.get(i).copied())),
        })
    }
}

/// The factors of a run and what it exports beyond them.
#[derive(Clone, Copy, Debug)]
pub struct Factors<'a> {
    pub h: &'a Array2<f64>,
    pub w: Option<&'a Array2<f64>>,
    /// Arrays beyond W and H (`<name>.npy`).
    pub exports: &'a [Export],
}

/// Writes the files of one run into a folder (created when missing), each atomically, and
/// remembers their names.
pub struct RunWriter {
    dir: PathBuf,
    written: Vec<String>,
}

impl RunWriter {
    /// A writer into `dir`, created with its parents.
    pub fn new(dir: &Path) -> Result<Self, ExportError> {
        std::fs::create_dir_all(dir).map_err(|source| ExportError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        Ok(Self {
            dir: dir.to_path_buf(),
            written: Vec::new(),
        })
    }

    /// Write `bytes` as `name` in the folder.
    pub fn file(&mut self, name: &str, bytes: &[u8]) -> Result<(), ExportError> {
        let path = self.dir.join(name);
        write_atomic(&path, bytes).map_err(|source| ExportError::Io { path, source })?;
        self.written.push(name.to_owned());
        Ok(())
    }

    /// `stem.csv` and `stem.npy` of a matrix.
    pub fn matrix(&mut self, stem: &str, a: &Array2<f64>) -> Result<(), ExportError> {
        self.file(&format!("{stem}.csv"), matrix_csv(a).as_bytes())?;
        self.npy(stem, a)
    }

    /// `stem.npy` of a matrix.
    pub fn npy(&mut self, stem: &str, a: &Array2<f64>) -> Result<(), ExportError> {
        let name = format!("{stem}.npy");
        let bytes = matrix_npy(a, &name)?;
        self.file(&name, &bytes)
    }

    /// `H.csv`/`H.npy`, `W.csv`/`W.npy` when the model has W, and each export's `.npy`.
    pub fn factors(&mut self, f: &Factors<'_>) -> Result<(), ExportError> {
        self.matrix("H", f.h)?;
        if let Some(w) = f.w {
            self.matrix("W", w)?;
        }
        for e in f.exports {
            self.npy(e.name, &e.array)?;
        }
        Ok(())
    }

    /// The names written so far, in order.
    pub fn written(&self) -> &[String] {
        &self.written
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn labels_and_predictions_have_one_row_per_sample_with_gaps_empty() {
        let data = Dataset::from_parts(
            array![[1.0, 2.0, 3.0]],
            Some(vec![0, 1, 1]),
            vec!["a".into(), "b,c".into()],
            "test",
        );
        let labels = SampleLabels {
            data: &data,
            painted: &[None, Some(0)],
            clusters: Some(&[2, 0, 1]),
        };
        assert_eq!(
            labels.csv(),
            "index,truth,painted,cluster\n0,a,,2\n1,\"b,c\",a,0\n2,\"b,c\",,1\n"
        );
        let m = labels.matrix();
        assert_eq!(m.dim(), (3, 3));
        assert_eq!(m[[1, 1]], 0.0);
        assert!(m[[0, 1]].is_nan() && m[[2, 1]].is_nan());
        let p = Predictions {
            labels: vec![0, 1, 0],
            confidence: vec![1.0, 0.75, 0.5],
            origin: vec![
                LabelOrigin::Given,
                LabelOrigin::Predicted,
                LabelOrigin::SelfTrained { round: 1 },
            ],
        };
        assert_eq!(
            predictions_csv(&data, &[Some(0), None, None], &p),
            "index,truth,known,predicted,confidence\n0,a,1,a,1.0\n1,\"b,c\",0,\"b,c\",0.75\n\
             2,\"b,c\",0,a,0.5\n"
        );
        assert_eq!(
            predictions_matrix(&p),
            array![[0.0, 1.0, 1.0], [1.0, 0.75, 0.0], [0.0, 0.5, 0.0]]
        );
    }
}
