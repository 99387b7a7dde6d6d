//! Session files (DESIGN.md §2 `session.rs`): a whole working session in one versioned JSON
//! file, written atomically: the dataset reference (path, loader options, preprocessing,
//! fingerprint), the constraints (triplets, partial labels and class names), the model
//! settings and the run history (each run's model, parameters, seed, scores and, optionally,
//! its H and W as `.npy` in a folder next to the session file).
//!
//! JSON, version 1:
//! `{"version":1, "dataset":{"path":..,"preprocess":..,"label_column":..,"labels_file":..,
//!   "resize":[w,h]|null,"fingerprint":{"n":..,"m":..,"hash":..}},
//!   "constraints":{"triplets":[[i,j,q],...],"labels":[null,0,...],"class_names":[...]},
//!   "model":{"model":"nmf","k":3,"seed":0,"max_iter":500,"tol":1e-5,"params":{..}},
//!   "runs":[{"id":1,"model":"nmf","k":3,"seed":0,"params":"k=3 ...","iterations":..,
//!            "seconds":..,"stop":"converged","scores":{"acc":..},"factors":"x.factors/run-1"}]}`
//!
//! Opening a session on data whose fingerprint differs from the one recorded is not an error
//! by itself: [`SessionFile::constraints_for`] returns [`DataCheck::Changed`] with the reason,
//! and the front end decides (the app asks "open the constraints anyway / stop"; the CLI
//! refuses unless `--allow-changed-data`). A different number of samples is an error: the
//! constraints' indices would not mean anything.

use crate::engine::constraints::io::fingerprint_mismatch;
use crate::engine::constraints::{Labels, Store, Triplet};
use crate::engine::data::{Fingerprint, JsonAt, LabelColumn, LoadOptions, Preprocess};
use crate::engine::machine::fsutil::write_atomic;
use crate::engine::models::{ParamValue, WarmStart};
use ndarray::Array2;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The session format version this build writes and reads.
pub const VERSION: u32 = 1;

/// Errors reading or writing a session; each names the file and, where there is one, the
/// entry.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Json(JsonAt),
    #[error(
        "{path}: session format version {found} is not supported (this build reads version {VERSION})"
    )]
    Version { path: PathBuf, found: u64 },
    #[error("{path}: {entry}: {why}")]
    Invalid {
        path: PathBuf,
        entry: String,
        why: String,
    },
    #[error("{path}: the session is for another dataset: {why}")]
    WrongDataset { path: PathBuf, why: String },
}

/// Where the session's data comes from and how it was read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatasetRef {
    /// A file or folder (relative paths are relative to the session file's folder), or
    /// `sample:NAME` for a bundled sample.
    pub path: String,
    pub preprocess: Preprocess,
    /// The CSV label column: `null` (auto), `"none"`, a name, or a 0-based index as text.
    #[serde(default)]
    pub label_column: Option<String>,
    #[serde(default)]
    pub labels_file: Option<PathBuf>,
    #[serde(default)]
    pub resize: Option<(u32, u32)>,
    /// The raw content's identity when the session was saved.
    pub fingerprint: Fingerprint,
}

impl DatasetRef {
    /// The loader options recorded in the session.
    pub fn load_options(&self) -> LoadOptions {
        let label_column = match self.label_column.as_deref() {
            None => LabelColumn::Auto,
            Some(s) if s.eq_ignore_ascii_case("none") => LabelColumn::None,
            Some(s) => match s.parse::<usize>() {
                Ok(i) => LabelColumn::Index(i),
                Err(_) => LabelColumn::Name(s.to_owned()),
            },
        };
        LoadOptions {
            preprocess: self.preprocess,
            label_column,
            labels_file: self.labels_file.clone(),
            resize: self.resize,
            ..LoadOptions::default()
        }
    }

    /// The recorded label column as the session writes it.
    pub fn label_column_text(c: &LabelColumn) -> Option<String> {
        match c {
            LabelColumn::Auto => None,
            LabelColumn::None => Some("none".into()),
            LabelColumn::Name(s) => Some(s.clone()),
            LabelColumn::Index(i) => Some(i.to_string()),
        }
    }

    /// The data path to load, resolved against the session file's folder when relative;
    /// `None` for a bundled sample (its name is in [`Self::sample_name`]).
    pub fn resolved_path(&self, session: &Path) -> Option<PathBuf> {
        if self.sample_name().is_some() {
            return None;
        }
        let p = PathBuf::from(&self.path);
        Some(if p.is_absolute() {
            p
        } else {
            session
                .parent()
                .map_or_else(|| p.clone(), |dir| dir.join(&p))
        })
    }

    /// The bundled sample's name when the data is one.
    pub fn sample_name(&self) -> Option<&str> {
        self.path.strip_prefix("sample:")
    }
}

/// Triplets and partial labels, as in the constraint files.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Constraints {
    pub triplets: Vec<[usize; 3]>,
    /// One entry per sample (empty: nothing labelled).
    #[serde(default)]
    pub labels: Vec<Option<usize>>,
    #[serde(default)]
    pub class_names: Vec<String>,
}

impl Constraints {
    /// The content of a store.
    pub fn of(store: &Store) -> Self {
        Self {
            triplets: store.triplets().iter().map(|t| [t.i, t.j, t.q]).collect(),
            labels: store.labels().as_slice().to_vec(),
            class_names: store.labels().class_names().to_vec(),
        }
    }
}

/// The model settings of the session (what the next Run uses).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelSettings {
    /// Model by command-line name.
    pub model: String,
    pub k: usize,
    pub seed: u64,
    pub max_iter: usize,
    pub tol: f64,
    /// Edited hyperparameters of the model (the others take its defaults).
    #[serde(default)]
    pub params: BTreeMap<String, ParamValue>,
}

/// One finished run of the session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub id: u64,
    pub model: String,
    pub k: usize,
    pub seed: u64,
    /// Hyperparameters as `name=value` separated by spaces (as the history table shows them).
    pub params: String,
    pub iterations: usize,
    pub seconds: f64,
    /// How the fit ended ("converged", "iteration cap", "stopped at iteration t").
    pub stop: String,
    /// The preprocessing X had for this run, resolved: `auto` depends on the model, so runs
    /// of one session may differ from each other and from [`DatasetRef::preprocess`]
    /// (docs/models.md §1). Absent in sessions saved before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preprocess: Option<Preprocess>,
    /// Scores by name (acc, nmi, kept, ...); only those computed.
    #[serde(default)]
    pub scores: BTreeMap<String, f64>,
    /// The folder holding this run's `H.npy` (and `W.npy`), relative to the session file's
    /// folder; `None` when the factors were not saved.
    #[serde(default)]
    pub factors: Option<String>,
}

/// A whole session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionFile {
    pub version: u32,
    pub dataset: DatasetRef,
    pub constraints: Constraints,
    pub model: ModelSettings,
    #[serde(default)]
    pub runs: Vec<RunRecord>,
}

/// Whether the data loaded for a session is the data it was saved with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataCheck {
    /// Same fingerprint.
    Same,
    /// Same number of samples but other content (or feature count): the constraints can be
    /// opened anyway if the user agrees; the reason says what differs.
    Changed(String),
}

/// The factors of one run to write next to the session: the run's id, W (if the model has
/// one) and H.
pub struct RunFactors<'a> {
    pub id: u64,
    pub w: Option<&'a Array2<f64>>,
    pub h: &'a Array2<f64>,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> SessionError + '_ {
    move |source| SessionError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn json_err(path: &Path, e: &serde_json::Error) -> SessionError {
    SessionError::Json(JsonAt::new(path, e))
}

/// The folder of a session's factors: `<session file name>.factors` beside it.
pub fn factors_dir_name(session: &Path) -> String {
    let name = session
        .file_name()
        .map_or_else(|| "session".into(), |s| s.to_string_lossy().into_owned());
    format!("{name}.factors")
}

fn npy_bytes(a: &Array2<f64>, path: &Path) -> Result<Vec<u8>, SessionError> {
    use ndarray_npy::WriteNpyExt;
    let mut buf = Vec::new();
    a.as_standard_layout()
        .write_npy(&mut buf)
        .map_err(|e| SessionError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        })?;
    Ok(buf)
}

impl SessionFile {
    /// Write the session to `path` atomically. With `factors`, each run's `H.npy` (and
    /// `W.npy`) goes to `<file>.factors/run-<id>/` first (each atomically) and the run's
    /// record points there; the JSON is written last, so a crash never leaves a session
    /// naming factors that are not on disk.
    pub fn save(&mut self, path: &Path, factors: &[RunFactors<'_>]) -> Result<(), SessionError> {
        self.version = VERSION;
        let base = path.parent().unwrap_or_else(|| Path::new(""));
        let dir_name = factors_dir_name(path);
        for f in factors {
            let rel = format!("{dir_name}/run-{}", f.id);
            let dir = base.join(&rel);
            std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
            let h = dir.join("H.npy");
            write_atomic(&h, &npy_bytes(f.h, &h)?).map_err(io_err(&h))?;
            let w_path = dir.join("W.npy");
            match f.w {
                Some(w) => {
                    write_atomic(&w_path, &npy_bytes(w, &w_path)?).map_err(io_err(&w_path))?
                }
                None => {
                    let _ = std::fs::remove_file(&w_path);
                }
            }
            if let Some(run) = self.runs.iter_mut().find(|r| r.id == f.id) {
                run.factors = Some(rel);
            }
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| json_err(path, &e))?;
        write_atomic(path, text.as_bytes()).map_err(io_err(path))
    }

    /// Read and check a session file: its version first, then its structure and every
    /// constraint against the recorded number of samples (errors name the entry).
    pub fn read(path: &Path) -> Result<Self, SessionError> {
        let text = std::fs::read_to_string(path).map_err(io_err(path))?;
        Self::parse(&text, path)
    }

    /// [`Self::read`] on text already read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Self, SessionError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| json_err(path, &e))?;
        let invalid = |entry: &str, why: String| SessionError::Invalid {
            path: path.to_path_buf(),
            entry: entry.to_owned(),
            why,
        };
        match value.get("version").map(serde_json::Value::as_u64) {
            Some(Some(v)) if v == u64::from(VERSION) => {}
            Some(Some(v)) => {
                return Err(SessionError::Version {
                    path: path.to_path_buf(),
                    found: v,
                });
            }
            Some(None) => return Err(invalid("version", "is not a whole number".into())),
            None => {
                return Err(invalid(
                    "version",
                    "missing (is this a session file?)".into(),
                ));
            }
        }
        let file: SessionFile = serde_json::from_str(text).map_err(|e| json_err(path, &e))?;
        file.check(path)?;
        Ok(file)
    }

    fn check(&self, path: &Path) -> Result<(), SessionError> {
        let invalid = |entry: String, why: String| SessionError::Invalid {
            path: path.to_path_buf(),
            entry,
            why,
        };
        let n = self.dataset.fingerprint.n;
        let c = &self.constraints;
        for (k, &[i, j, q]) in c.triplets.iter().enumerate() {
            Triplet::new(i, j, q)
                .validate(n)
                .map_err(|e| invalid(format!("constraints.triplets[{k}]"), e.to_string()))?;
        }
        if !c.labels.is_empty() {
            Labels::from_parts(n, c.labels.clone(), c.class_names.clone())
                .map_err(|e| invalid("constraints.labels".into(), e.to_string()))?;
        }
        if self.model.k == 0 {
            return Err(invalid("model.k".into(), "must be at least 1".into()));
        }
        if !self.model.tol.is_finite() || self.model.tol < 0.0 {
            return Err(invalid(
                "model.tol".into(),
                format!("must be ≥ 0, got {}", self.model.tol),
            ));
        }
        for (k, r) in self.runs.iter().enumerate() {
            if let Some(f) = &r.factors
                && (Path::new(f).is_absolute() || f.split(['/', '\\']).any(|p| p == ".."))
            {
                return Err(invalid(
                    format!("runs[{k}].factors"),
                    format!("`{f}` must be a folder inside the session's folder"),
                ));
            }
        }
        Ok(())
    }

    /// Compare the recorded fingerprint with the loaded data's.
    pub fn check_data(&self, data: &Fingerprint) -> DataCheck {
        match fingerprint_mismatch(&self.dataset.fingerprint, data) {
            None => DataCheck::Same,
            Some(why) => DataCheck::Changed(why),
        }
    }

    /// The session's constraints as a clean store for the loaded data `data`, with whether
    /// the data changed since the session was saved. Another number of samples is an error.
    pub fn constraints_for(
        &self,
        path: &Path,
        data: &Fingerprint,
    ) -> Result<(Store, DataCheck), SessionError> {
        let check = self.check_data(data);
        if data.n != self.dataset.fingerprint.n {
            let why = match &check {
                DataCheck::Changed(why) => why.clone(),
                DataCheck::Same => String::new(),
            };
            return Err(SessionError::WrongDataset {
                path: path.to_path_buf(),
                why,
            });
        }
        let invalid = |entry: String, why: String| SessionError::Invalid {
            path: path.to_path_buf(),
            entry,
            why,
        };
        let c = &self.constraints;
        let labels = if c.labels.is_empty() {
            let mut l = Labels::new(data.n);
            for (k, name) in c.class_names.iter().enumerate() {
                l.add_class(name)
                    .map_err(|e| invalid(format!("constraints.class_names[{k}]"), e.to_string()))?;
            }
            l
        } else {
            Labels::from_parts(data.n, c.labels.clone(), c.class_names.clone())
                .map_err(|e| invalid("constraints.labels".into(), e.to_string()))?
        };
        let mut store = Store::new(*data);
        for (k, &[i, j, q]) in c.triplets.iter().enumerate() {
            store
                .add_triplet(Triplet::new(i, j, q))
                .map_err(|e| invalid(format!("constraints.triplets[{k}]"), e.to_string()))?;
        }
        let store = Store::from_parts(*data, store.triplets(), labels)
            .map_err(|e| invalid("constraints".into(), e.to_string()))?;
        Ok((store, check))
    }

    /// The saved factors of run `id`, if the session has them (read from the folder its
    /// record names, relative to `path`'s folder).
    pub fn load_factors(&self, path: &Path, id: u64) -> Result<Option<WarmStart>, SessionError> {
        let Some((k, run)) = self.runs.iter().enumerate().find(|(_, r)| r.id == id) else {
            return Ok(None);
        };
        let Some(rel) = &run.factors else {
            return Ok(None);
        };
        let dir = path.parent().unwrap_or_else(|| Path::new("")).join(rel);
        WarmStart::load(&dir)
            .map(Some)
            .map_err(|e| SessionError::Invalid {
                path: path.to_path_buf(),
                entry: format!("runs[{k}].factors"),
                why: e.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::ParamValue;

    fn fp(n: usize, hash: u64) -> Fingerprint {
        Fingerprint { n, m: 4, hash }
    }

    fn session(n: usize) -> SessionFile {
        let mut params = BTreeMap::new();
        params.insert("lambda".to_owned(), ParamValue::Number(0.5));
        let mut scores = BTreeMap::new();
        scores.insert("acc".to_owned(), 0.75);
        SessionFile {
            version: VERSION,
            dataset: DatasetRef {
                path: "data.csv".into(),
                preprocess: Preprocess::L2,
                label_column: Some("class".into()),
                labels_file: None,
                resize: Some((8, 8)),
                fingerprint: fp(n, 42),
            },
            constraints: Constraints {
                triplets: vec![[0, 1, 2], [3, 2, 1]],
                labels: vec![Some(0), None, Some(1), None, None],
                class_names: vec!["a".into(), "b".into()],
            },
            model: ModelSettings {
                model: "gnmf".into(),
                k: 2,
                seed: 7,
                max_iter: 100,
                tol: 1e-5,
                params,
            },
            runs: vec![RunRecord {
                id: 1,
                model: "gnmf".into(),
                k: 2,
                seed: 7,
                params: "k=2 lambda=0.5".into(),
                iterations: 33,
                seconds: 0.25,
                stop: "converged".into(),
                preprocess: Some(Preprocess::L2),
                scores,
                factors: None,
            }],
        }
    }

    #[test]
    fn round_trip_with_factors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.json");
        let mut s = session(5);
        let h = Array2::from_shape_fn((2, 5), |(a, b)| (a * 5 + b) as f64 + 0.5);
        let w = Array2::from_shape_fn((4, 2), |(a, b)| (a + b) as f64 * 0.25);
        s.save(
            &path,
            &[RunFactors {
                id: 1,
                w: Some(&w),
                h: &h,
            }],
        )
        .expect("save");
        assert_eq!(s.runs[0].factors.as_deref(), Some("s.json.factors/run-1"));
        let back = SessionFile::read(&path).expect("read");
        assert_eq!(back, s);
        let f = back.load_factors(&path, 1).expect("factors").expect("some");
        assert_eq!(f.h, h);
        assert_eq!(f.w, Some(w));
        let (store, check) = back.constraints_for(&path, &fp(5, 42)).expect("store");
        assert_eq!(check, DataCheck::Same);
        assert!(!store.is_dirty());
        assert_eq!(
            store.triplets(),
            &[Triplet::new(0, 1, 2), Triplet::new(3, 2, 1)]
        );
        assert_eq!(store.labels().get(2), Some(1));
        assert_eq!(
            store.labels().class_names(),
            &["a".to_owned(), "b".to_owned()]
        );
        let opts = back.dataset.load_options();
        assert_eq!(opts.label_column, LabelColumn::Name("class".into()));
        assert_eq!(opts.resize, Some((8, 8)));
        assert_eq!(
            back.dataset.resolved_path(&path),
            Some(dir.path().join("data.csv"))
        );
    }

    #[test]
    fn another_version_is_refused_by_number() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.json");
        let mut v = serde_json::to_value(session(5)).expect("value");
        v["version"] = serde_json::json!(2);
        std::fs::write(&path, v.to_string()).expect("write");
        let e = SessionFile::read(&path).expect_err("refused");
        let msg = e.to_string();
        assert!(matches!(e, SessionError::Version { found: 2, .. }), "{msg}");
        assert!(msg.contains("s.json") && msg.contains("version 2"), "{msg}");
    }

    #[test]
    fn changed_data_is_a_typed_outcome_and_another_n_an_error() {
        let path = Path::new("x/s.json");
        let s = session(5);
        let (store, check) = s.constraints_for(path, &fp(5, 43)).expect("opens anyway");
        let DataCheck::Changed(why) = check else {
            panic!("expected Changed, got {check:?}");
        };
        assert!(why.contains("content differs"), "{why}");
        assert_eq!(
            store.fingerprint(),
            fp(5, 43),
            "the store is for the loaded data"
        );
        assert_eq!(store.triplets().len(), 2);
        let e = s.constraints_for(path, &fp(6, 42)).expect_err("other n");
        let msg = e.to_string();
        assert!(msg.contains("s.json") && msg.contains("6 samples"), "{msg}");
    }

    #[test]
    fn garbage_and_bad_entries_name_the_file_and_entry() {
        let path = Path::new("bad.json");
        let e = SessionFile::parse("{not json", path).expect_err("garbage");
        assert!(e.to_string().starts_with("bad.json, line 1"), "{e}");
        let e = SessionFile::parse("[1,2,3]", path).expect_err("no version");
        assert!(e.to_string().contains("version: missing"), "{e}");
        let e = SessionFile::parse("{\"version\":1}", path).expect_err("missing fields");
        assert!(e.to_string().contains("missing field"), "{e}");

        let mut s = session(5);
        s.constraints.triplets.push([0, 0, 1]);
        let text = serde_json::to_string(&s).expect("json");
        let e = SessionFile::parse(&text, path).expect_err("i = j");
        assert!(e.to_string().contains("constraints.triplets[2]"), "{e}");

        let mut s = session(5);
        s.constraints.triplets.push([0, 1, 9]);
        let text = serde_json::to_string(&s).expect("json");
        let e = SessionFile::parse(&text, path).expect_err("out of range");
        assert!(e.to_string().contains("constraints.triplets[2]"), "{e}");

        let mut s = session(5);
        s.constraints.labels = vec![Some(5), None, None, None, None];
        let text = serde_json::to_string(&s).expect("json");
        let e = SessionFile::parse(&text, path).expect_err("bad class");
        assert!(e.to_string().contains("constraints.labels"), "{e}");

        let mut s = session(5);
        s.runs[0].factors = Some("../../etc".into());
        let text = serde_json::to_string(&s).expect("json");
        let e = SessionFile::parse(&text, path).expect_err("escape");
        assert!(e.to_string().contains("runs[0].factors"), "{e}");

        let mut s = session(5);
        s.constraints.triplets.push([0, 1, 2]);
        let text = serde_json::to_string(&s).expect("json");
        let parsed = SessionFile::parse(&text, path).expect("a duplicate parses");
        let e = parsed
            .constraints_for(path, &fp(5, 42))
            .expect_err("duplicate refused on open");
        assert!(e.to_string().contains("constraints.triplets[2]"), "{e}");
    }
}
