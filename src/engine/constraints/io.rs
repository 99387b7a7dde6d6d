//! Constraint files (DESIGN.md §3): versioned JSON carrying the dataset fingerprint, and CSV
//! of triplets. Every write is atomic (temporary file in the same directory, fsync, rename);
//! every error names the file and the place (line, or entry).
//!
//! JSON, version 1:
//! `{"version":1, "fingerprint":{"n":..,"m":..,"hash":..}, "triplets":[[i,j,q],...],
//!   "labels":[null, 0, ...] (one per sample), "class_names":[...]}`.
//!
//! CSV: one triplet `i,j,q` per line, 0-based indices or sample names, optional header; blank
//! lines are skipped (no comment lines: sample names may start with `#`).

use super::{ConstraintError, Labels, Store, Triplet};
use crate::engine::data::{Dataset, Fingerprint, JsonAt, excerpt};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The JSON format version this build writes and reads.
pub const VERSION: u32 = 1;

/// Errors reading or writing constraint files; each names the file and the place.
#[derive(Debug, thiserror::Error)]
pub enum ConstraintIoError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Json(JsonAt),
    #[error("{path}: format version {found} is not supported (this build reads version {VERSION})")]
    Version { path: PathBuf, found: u32 },
    #[error("{path}: made for another dataset: {why}")]
    WrongDataset { path: PathBuf, why: String },
    #[error("{path}: {place}: {source}")]
    Invalid {
        path: PathBuf,
        place: String,
        source: ConstraintError,
    },
    #[error("{path}, line {line}: {why}")]
    Csv {
        path: PathBuf,
        line: u64,
        why: String,
    },
}

/// A constraint file's content (version 1), as written.
#[derive(Serialize, Deserialize)]
pub(crate) struct FileV1 {
    version: u32,
    fingerprint: Fingerprint,
    triplets: Vec<[usize; 3]>,
    labels: Vec<Option<usize>>,
    class_names: Vec<String>,
}

#[derive(Deserialize)]
struct VersionOnly {
    version: u32,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ConstraintIoError + '_ {
    move |source| ConstraintIoError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn json_err(path: &Path, e: &serde_json::Error) -> ConstraintIoError {
    ConstraintIoError::Json(JsonAt::new(path, e))
}

/// Write `bytes` to `path` atomically (see [`crate::engine::machine::fsutil::write_atomic`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ConstraintIoError> {
    crate::engine::machine::fsutil::write_atomic(path, bytes).map_err(io_err(path))
}

/// The content of a store as a constraint file (version 1), ready to serialize.
pub(crate) fn file_of(store: &Store) -> FileV1 {
    let labels = store.labels();
    FileV1 {
        version: VERSION,
        fingerprint: store.fingerprint(),
        triplets: store.triplets().iter().map(|t| [t.i, t.j, t.q]).collect(),
        labels: labels.as_slice().to_vec(),
        class_names: labels.class_names().to_vec(),
    }
}

/// The JSON text of a store (version 1).
pub fn to_json(store: &Store) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(&file_of(store))
}

/// Save the store as JSON (atomically) and mark it saved.
pub fn save_json(store: &mut Store, path: &Path) -> Result<(), ConstraintIoError> {
    let text = to_json(store).map_err(|e| json_err(path, &e))?;
    write_atomic(path, text.as_bytes())?;
    store.mark_saved();
    Ok(())
}

/// Why a file made for `file` does not fit the dataset `data`, if it does not.
pub fn fingerprint_mismatch(file: &Fingerprint, data: &Fingerprint) -> Option<String> {
    if file.n != data.n || file.m != data.m {
        Some(format!(
            "the file is for {} samples × {} features, the open dataset has {} samples × {} features",
            file.n, file.m, data.n, data.m
        ))
    } else if file.hash != data.hash {
        Some(format!(
            "same shape ({} samples × {} features) but the content differs (hash {:016x} in the \
             file, {:016x} for the open dataset)",
            data.n, data.m, file.hash, data.hash
        ))
    } else {
        None
    }
}

/// Parse JSON text read from `path` into a clean store for the dataset with fingerprint
/// `data`; refuses another dataset's file.
pub fn from_json(text: &str, path: &Path, data: &Fingerprint) -> Result<Store, ConstraintIoError> {
    let v: VersionOnly = serde_json::from_str(text).map_err(|e| json_err(path, &e))?;
    if v.version != VERSION {
        return Err(ConstraintIoError::Version {
            path: path.to_path_buf(),
            found: v.version,
        });
    }
    let file: FileV1 = serde_json::from_str(text).map_err(|e| json_err(path, &e))?;
    if let Some(why) = fingerprint_mismatch(&file.fingerprint, data) {
        return Err(ConstraintIoError::WrongDataset {
            path: path.to_path_buf(),
            why,
        });
    }
    let invalid = |place: String| {
        move |source| ConstraintIoError::Invalid {
            path: path.to_path_buf(),
            place,
            source,
        }
    };
    let labels = Labels::from_parts(data.n, file.labels, file.class_names)
        .map_err(invalid("labels".into()))?;
    let mut store = Store::new(*data);
    let triplets: Vec<Triplet> = file
        .triplets
        .iter()
        .map(|&[i, j, q]| Triplet::new(i, j, q))
        .collect();
    for (k, &t) in triplets.iter().enumerate() {
        store
            .add_triplet(t)
            .map_err(invalid(format!("triplets[{k}]")))?;
    }
    store =
        Store::from_parts(*data, store.triplets(), labels).map_err(invalid("triplets".into()))?;
    Ok(store)
}

/// Load a JSON constraint file for `data` into a clean (not dirty) store.
pub fn load_json(path: &Path, data: &Fingerprint) -> Result<Store, ConstraintIoError> {
    let text = std::fs::read_to_string(path).map_err(io_err(path))?;
    from_json(&text, path, data)
}

/// Triplets as CSV: header `i,j,q`, then one 0-based triplet per line.
pub fn triplets_to_csv(triplets: &[Triplet]) -> String {
    let mut s = String::from("i,j,q\n");
    for t in triplets {
        s.push_str(&format!("{},{},{}\n", t.i, t.j, t.q));
    }
    s
}

/// Export triplets as CSV (atomically).
pub fn export_triplets_csv(triplets: &[Triplet], path: &Path) -> Result<(), ConstraintIoError> {
    write_atomic(path, triplets_to_csv(triplets).as_bytes())
}

/// Parse CSV triplets read from `path`. A field is a 0-based index or, where the dataset has
/// them, a sample name. The first line is a header when none of its fields is a sample.
/// Each triplet is validated against `data.n()` and duplicates within the file are refused,
/// naming the line.
pub fn triplets_from_csv(
    text: &str,
    path: &Path,
    data: &Dataset,
) -> Result<Vec<Triplet>, ConstraintIoError> {
    let n = data.n();
    let mut by_name: HashMap<&str, Option<usize>> = HashMap::new();
    for (i, name) in data.sample_names.iter().enumerate() {
        by_name
            .entry(name.as_str())
            .and_modify(|v| *v = None)
            .or_insert(Some(i));
    }
    let resolve = |field: &str| -> Result<usize, String> {
        let f = field.trim();
        if let Ok(i) = f.parse::<usize>() {
            return Ok(i);
        }
        match by_name.get(f) {
            Some(Some(i)) => Ok(*i),
            Some(None) => Err(format!(
                "sample name `{f}` is ambiguous (several samples have it)"
            )),
            None => Err(format!(
                "`{}` is neither a sample index nor a sample name",
                excerpt(f)
            )),
        }
    };
    let csv_err = |line: u64, why: String| ConstraintIoError::Csv {
        path: path.to_path_buf(),
        line,
        why,
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut out = Vec::new();
    let mut seen: HashMap<Triplet, u64> = HashMap::new();
    let mut first = true;
    for rec in reader.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            csv_err(line, e.to_string())
        })?;
        let line = rec.position().map_or(0, |p| p.line());
        if rec.iter().all(|f| f.is_empty()) {
            continue;
        }
        if first {
            first = false;
            if rec.iter().all(|f| resolve(f).is_err()) {
                continue; // header
            }
        }
        if rec.len() != 3 {
            return Err(csv_err(
                line,
                format!("expected 3 fields i,j,q, found {}", rec.len()),
            ));
        }
        let mut ijq = [0usize; 3];
        for (slot, (field, role)) in ijq.iter_mut().zip(rec.iter().zip(["i", "j", "q"])) {
            *slot = resolve(field).map_err(|why| csv_err(line, format!("{role}: {why}")))?;
        }
        let t = Triplet::new(ijq[0], ijq[1], ijq[2]);
        t.validate(n).map_err(|e| csv_err(line, e.to_string()))?;
        if let Some(prev) = seen.insert(t, line) {
            return Err(csv_err(line, format!("triplet {t} repeats line {prev}")));
        }
        out.push(t);
    }
    Ok(out)
}

/// Read CSV triplets from a file (see [`triplets_from_csv`]).
pub fn import_triplets_csv(path: &Path, data: &Dataset) -> Result<Vec<Triplet>, ConstraintIoError> {
    let text = std::fs::read_to_string(path).map_err(io_err(path))?;
    triplets_from_csv(&text, path, data)
}

/// Read partial labels for `data` from a text file: one line per sample, in sample order; a
/// line holds the sample's class name (or number) or is empty (label unknown). Names are
/// matched to the dataset's classes when it has them; otherwise the names seen become the
/// classes, in natural order. Lines starting with `#` are comments.
pub fn read_known_labels(
    path: &Path,
    data: &Dataset,
) -> Result<Vec<Option<usize>>, ConstraintIoError> {
    let text = std::fs::read_to_string(path).map_err(io_err(path))?;
    let csv_err = |line: usize, why: String| ConstraintIoError::Csv {
        path: path.to_path_buf(),
        line: line as u64,
        why,
    };
    let rows: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.starts_with('#'))
        .collect();
    if rows.len() != data.n() {
        return Err(csv_err(
            rows.len(),
            format!(
                "{} label lines for {} samples (one line per sample, empty when unknown)",
                rows.len(),
                data.n()
            ),
        ));
    }
    let names: Vec<String> = if data.class_names.is_empty() {
        let seen: Vec<&str> = rows
            .iter()
            .map(|(_, l)| *l)
            .filter(|l| !l.is_empty())
            .collect();
        crate::engine::data::labels::index_labels(&seen).1
    } else {
        data.class_names.clone()
    };
    rows.iter()
        .map(|&(line, l)| {
            if l.is_empty() {
                return Ok(None);
            }
            names.iter().position(|c| c == l).map(Some).ok_or_else(|| {
                csv_err(
                    line,
                    format!(
                        "`{}` is not a class of the data (classes: {})",
                        excerpt(l),
                        excerpt(&names.join(", "))
                    ),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    fn dataset(n: usize, seed: f64) -> Dataset {
        let x = Array2::from_shape_fn((3, n), |(r, c)| seed + (r * n + c) as f64);
        Dataset::from_parts(x, None, vec![], "test")
    }

    #[test]
    fn json_round_trip_and_refusal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let data = dataset(6, 0.0);
        let mut s = Store::new(data.fingerprint);
        s.add_triplets("g", [Triplet::new(0, 1, 2), Triplet::new(5, 4, 3)])
            .unwrap();
        s.label_as(&[1, 3], "left").unwrap();
        s.label_as(&[4], "right").unwrap();
        assert!(s.is_dirty());
        save_json(&mut s, &path).unwrap();
        assert!(!s.is_dirty());
        let back = load_json(&path, &data.fingerprint).unwrap();
        assert_eq!(back.triplets(), s.triplets());
        assert_eq!(back.labels(), s.labels());
        assert!(!back.is_dirty());
        assert!(!back.can_undo());
        // No temporary files left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

        let other = dataset(6, 1.0);
        let e = load_json(&path, &other.fingerprint)
            .unwrap_err()
            .to_string();
        assert!(e.contains("c.json: made for another dataset"), "{e}");
        assert!(e.contains("content differs"), "{e}");
        let bigger = dataset(7, 0.0);
        let e = load_json(&path, &bigger.fingerprint)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("6 samples × 3 features, the open dataset has 7 samples"),
            "{e}"
        );
    }

    #[test]
    fn malformed_json_names_file_and_line() {
        let fp = dataset(4, 0.0).fingerprint;
        let p = Path::new("bad.json");
        let text = "{\n \"version\": 1,\n \"fingerprint\": oops\n}";
        let e = from_json(text, p, &fp).unwrap_err();
        assert!(
            matches!(e, ConstraintIoError::Json(JsonAt { line: 3, .. })),
            "{e}"
        );
        assert!(e.to_string().starts_with("bad.json, line 3"));
        let e = from_json("{\"version\": 2}", p, &fp).unwrap_err();
        assert!(matches!(e, ConstraintIoError::Version { found: 2, .. }));
        let text = format!(
            "{{\"version\":1,\"fingerprint\":{{\"n\":4,\"m\":3,\"hash\":{}}},\"triplets\":[[0,1,2],[0,1,1]],\"labels\":[null,null,null,null],\"class_names\":[]}}",
            fp.hash
        );
        let e = from_json(&text, p, &fp).unwrap_err().to_string();
        assert!(
            e.contains("triplets[1]") && e.contains("three different samples"),
            "{e}"
        );
    }

    #[test]
    fn csv_round_trip_names_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let data = dataset(5, 0.0);
        let ts = vec![Triplet::new(0, 1, 2), Triplet::new(4, 3, 2)];
        export_triplets_csv(&ts, &path).unwrap();
        assert_eq!(import_triplets_csv(&path, &data).unwrap(), ts);
        // No header, sample names and blank lines.
        let got = triplets_from_csv("#0,#1,#2\n\n4, 3, 2\n", &path, &data).unwrap();
        assert_eq!(got, ts);
        let e = triplets_from_csv("i,j,q\n0,1,2\n0,1,7\n", &path, &data).unwrap_err();
        assert!(matches!(e, ConstraintIoError::Csv { line: 3, .. }), "{e}");
        assert!(
            e.to_string()
                .contains("t.csv, line 3: triplet (0, 1, 7): q = 7 is out of range"),
            "{e}"
        );
        let e = triplets_from_csv("0,1,2\n1,2\n", &path, &data)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2: expected 3 fields"), "{e}");
        let e = triplets_from_csv("0,1,2\n0,1,2\n", &path, &data)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 2: triplet (0, 1, 2) repeats line 1"),
            "{e}"
        );
        let e = triplets_from_csv("0,1,2\n0,x,2\n", &path, &data)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2: j: `x` is neither"), "{e}");
    }

    #[test]
    fn known_labels_are_matched_to_the_classes_and_bad_lines_named() {
        let dir = tempfile::tempdir().unwrap();
        let x = ndarray::Array2::from_elem((2, 4), 1.0);
        let data = Dataset::from_parts(
            x.clone(),
            Some(vec![0, 1, 0, 1]),
            vec!["a".into(), "b".into()],
            "t",
        );
        let p = dir.path().join("known.txt");
        std::fs::write(&p, "b\n\n# a comment\na\n \n").unwrap();
        assert_eq!(
            read_known_labels(&p, &data).unwrap(),
            vec![Some(1), None, Some(0), None]
        );
        std::fs::write(&p, "b\nc\n\n\n").unwrap();
        let e = read_known_labels(&p, &data).unwrap_err().to_string();
        assert!(
            e.contains("line 2") && e.contains("`c` is not a class"),
            "{e}"
        );
        std::fs::write(&p, "b\n").unwrap();
        let e = read_known_labels(&p, &data).unwrap_err().to_string();
        assert!(e.contains("1 label lines for 4 samples"), "{e}");
        // Unlabelled data: the names seen become the classes, in natural order.
        let plain = Dataset::from_parts(x, None, vec![], "t");
        std::fs::write(&p, "s10\ns2\n\ns2\n").unwrap();
        assert_eq!(
            read_known_labels(&p, &plain).unwrap(),
            vec![Some(1), Some(0), None, Some(0)]
        );
    }
}
