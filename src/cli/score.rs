//! `nmf-playground score --truth FILE --pred FILE [--json] [--column NAME]` (DESIGN.md §6):
//! clustering ACC, NMI (max, sqrt, arith) and macro-F1 of a predicted labeling against the
//! truth (docs/models.md §8.1, §8.5).
//!
//! Input files hold either one label per line (strings or integers; blank lines ignored) or a
//! CSV table with a header row, from which one column is read: `--column NAME` if given, else
//! the first column named `label`, `cluster` or `pred` (case-insensitive), else the last one.
//! A one-column file whose first line is such a name (or the `--column` name) treats it as a
//! header. Labels are compared as trimmed strings: the same string in both files is the same
//! label.

use crate::engine::eval::{EvalError, clustering_scores, macro_f1};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `score`.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct ScoreArgs {
    /// Ground-truth labels: one per line, or a CSV with a header.
    #[arg(long)]
    pub truth: PathBuf,
    /// Predicted labels or cluster ids: one per line, or a CSV with a header.
    #[arg(long)]
    pub pred: PathBuf,
    /// Print one JSON object `{n, acc, nmi_max, nmi_sqrt, nmi_arith, macro_f1}`.
    #[arg(long)]
    pub json: bool,
    /// CSV column holding the labels (default: `label`, `cluster` or `pred`, else the last).
    #[arg(long)]
    pub column: Option<String>,
}

/// Errors of `score`.
#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}, line {line}: {message}")]
    Parse {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("{path}: no labels found")]
    Empty { path: PathBuf },
    #[error("{path}: no column named `{column}` (columns: {available})")]
    ColumnNotFound {
        path: PathBuf,
        column: String,
        available: String,
    },
    #[error(
        "{truth} has {truth_count} labels but {pred} has {pred_count}: the files must list the same samples in the same order"
    )]
    LengthMismatch {
        truth: PathBuf,
        truth_count: usize,
        pred: PathBuf,
        pred_count: usize,
    },
    #[error("evaluation failed: {0}")]
    Eval(#[from] EvalError),
    #[error("cannot write the result: {0}")]
    Write(#[from] std::io::Error),
    #[error("cannot encode the result as JSON: {0}")]
    Json(#[from] serde_json::Error),
}

impl ScoreError {
    /// Whether the error is caused by the input files or arguments (exit code 2) rather than
    /// by anything else (exit code 1), per DESIGN.md §6.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Self::Read { .. }
                | Self::Parse { .. }
                | Self::Empty { .. }
                | Self::ColumnNotFound { .. }
                | Self::LengthMismatch { .. }
        )
    }
}

/// Scores printed by `score`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Scores {
    pub n: usize,
    pub acc: f64,
    pub nmi_max: f64,
    pub nmi_sqrt: f64,
    pub nmi_arith: f64,
    /// Macro-F1 comparing the label strings literally (meaningful for classifier output; for
    /// cluster ids the matching of ids is arbitrary and ACC is the number to read).
    pub macro_f1: f64,
}

const DEFAULT_COLUMNS: [&str; 3] = ["label", "cluster", "pred"];

/// Read the labels of one file (see the module documentation for the formats).
pub fn read_labels(path: &Path, column: Option<&str>) -> Result<Vec<String>, ScoreError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScoreError::Read {
        path: path.to_owned(),
        source,
    })?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rows: Vec<(u64, csv::StringRecord)> = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| ScoreError::Parse {
            path: path.to_owned(),
            line: e.position().map_or(0, |p| p.line()),
            message: e.to_string(),
        })?;
        // Blank lines are skipped by the csv reader; also skip lines of empty fields.
        if record.iter().all(str::is_empty) {
            continue;
        }
        let line = record.position().map_or(0, |p| p.line());
        rows.push((line, record));
    }
    let Some((_, first)) = rows.first() else {
        return Err(ScoreError::Empty {
            path: path.to_owned(),
        });
    };
    let is_name = |field: &str, name: &str| field.eq_ignore_ascii_case(name);
    let (col, skip_header) = if first.len() > 1 {
        let header: Vec<&str> = first.iter().collect();
        let col = match column {
            Some(name) => header
                .iter()
                .position(|h| is_name(h, name))
                .ok_or_else(|| ScoreError::ColumnNotFound {
                    path: path.to_owned(),
                    column: name.to_owned(),
                    available: header.join(", "),
                })?,
            None => DEFAULT_COLUMNS
                .iter()
                .find_map(|d| header.iter().position(|h| is_name(h, d)))
                .unwrap_or(header.len() - 1),
        };
        (col, true)
    } else {
        let head = first.get(0).unwrap_or("");
        let header = column.is_some_and(|c| is_name(head, c))
            || DEFAULT_COLUMNS.iter().any(|d| is_name(head, d));
        (0, header)
    };
    let mut labels = Vec::with_capacity(rows.len());
    for (line, record) in rows.iter().skip(usize::from(skip_header)) {
        let field = record.get(col).ok_or_else(|| ScoreError::Parse {
            path: path.to_owned(),
            line: *line,
            message: format!(
                "expected at least {} fields, found {}",
                col + 1,
                record.len()
            ),
        })?;
        if field.is_empty() {
            return Err(ScoreError::Parse {
                path: path.to_owned(),
                line: *line,
                message: "empty label".into(),
            });
        }
        labels.push(field.to_owned());
    }
    if labels.is_empty() {
        return Err(ScoreError::Empty {
            path: path.to_owned(),
        });
    }
    Ok(labels)
}

/// Read both files and compute the scores.
pub fn compute(args: &ScoreArgs) -> Result<Scores, ScoreError> {
    let column = args.column.as_deref();
    let truth = read_labels(&args.truth, column)?;
    let pred = read_labels(&args.pred, column)?;
    if truth.len() != pred.len() {
        return Err(ScoreError::LengthMismatch {
            truth: args.truth.clone(),
            truth_count: truth.len(),
            pred: args.pred.clone(),
            pred_count: pred.len(),
        });
    }
    // One id per distinct string across both files.
    let mut ids: BTreeMap<&str, usize> = BTreeMap::new();
    for s in truth.iter().chain(&pred) {
        let next = ids.len();
        ids.entry(s.as_str()).or_insert(next);
    }
    let t: Vec<usize> = truth.iter().map(|s| ids[s.as_str()]).collect();
    let p: Vec<usize> = pred.iter().map(|s| ids[s.as_str()]).collect();
    let c = clustering_scores(&t, &p)?;
    Ok(Scores {
        n: t.len(),
        acc: c.acc,
        nmi_max: c.nmi_max,
        nmi_sqrt: c.nmi_sqrt,
        nmi_arith: c.nmi_arith,
        macro_f1: macro_f1(&t, &p)?,
    })
}

/// Run `score`: print the scores to `out` as JSON (`--json`) or as an aligned table.
pub fn run(args: &ScoreArgs, out: &mut dyn Write) -> Result<(), ScoreError> {
    let s = compute(args)?;
    if args.json {
        serde_json::to_writer(&mut *out, &s)?;
        writeln!(out)?;
    } else {
        let rows = [
            ("ACC (best map)", s.acc),
            ("NMI (max)", s.nmi_max),
            ("NMI (sqrt)", s.nmi_sqrt),
            ("NMI (arith)", s.nmi_arith),
            ("macro-F1", s.macro_f1),
        ];
        writeln!(out, "{:<16}{:>10}", "n", s.n)?;
        for (name, v) in rows {
            writeln!(out, "{name:<16}{v:>10.6}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
        let p = dir.path().join(name);
        let mut f = std::fs::File::create(&p).unwrap();
        f.write_all(text.as_bytes()).unwrap();
        p
    }

    fn args(truth: PathBuf, pred: PathBuf, json: bool) -> ScoreArgs {
        ScoreArgs {
            truth,
            pred,
            json,
            column: None,
        }
    }

    #[test]
    fn perfect_match_with_strings_and_csv() {
        let dir = tempfile::tempdir().unwrap();
        let t = file(&dir, "t.txt", "cat\ndog\n\ncat\nbird\n");
        let p = file(
            &dir,
            "p.csv",
            "id,cluster,score\n0,2,0.1\n1,0,0.3\n2,2,0.5\n3,1,0.2\n",
        );
        let mut out = Vec::new();
        run(&args(t, p, true), &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["n"], 4);
        for key in ["acc", "nmi_max", "nmi_sqrt", "nmi_arith"] {
            assert!((v[key].as_f64().unwrap() - 1.0).abs() < 1e-12, "{key}");
        }
        // Strings never equal the cluster ids, so the literal macro-F1 is 0.
        assert_eq!(v["macro_f1"], 0.0);
        let obj = v.as_object().unwrap();
        assert_eq!(obj.len(), 6);
    }

    #[test]
    fn six_sample_values_and_text_table() {
        let dir = tempfile::tempdir().unwrap();
        let t = file(&dir, "t.txt", "label\n0\n0\n0\n1\n1\n1\n");
        let p = file(&dir, "p.txt", "0\n0\n1\n1\n2\n2\n");
        let s = compute(&args(t.clone(), p.clone(), false)).unwrap();
        assert_eq!(s.n, 6);
        assert!((s.acc - 2.0 / 3.0).abs() < 1e-12);
        assert!((s.nmi_max - 2.0 / 3.0 * 2f64.ln() / 3f64.ln()).abs() < 1e-12);
        let mut out = Vec::new();
        run(&args(t, p, false), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("ACC (best map)    0.666667"), "{text}");
        assert_eq!(text.lines().count(), 6);
    }

    #[test]
    fn length_mismatch_names_both_files() {
        let dir = tempfile::tempdir().unwrap();
        let t = file(&dir, "truth.txt", "1\n2\n3\n");
        let p = file(&dir, "pred.txt", "1\n2\n");
        let err = run(&args(t, p, false), &mut Vec::new()).unwrap_err();
        assert!(err.is_bad_input());
        let msg = err.to_string();
        assert!(
            msg.contains("truth.txt") && msg.contains("pred.txt"),
            "{msg}"
        );
        assert!(msg.contains('3') && msg.contains('2'), "{msg}");
    }

    #[test]
    fn bad_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let t = file(&dir, "t.csv", "a,b\n1,2\n");
        let p = file(&dir, "p.txt", "1\n");
        let mut a = args(t, p.clone(), false);
        a.column = Some("nope".into());
        let err = compute(&a).unwrap_err();
        assert!(err.is_bad_input());
        assert!(err.to_string().contains("a, b"), "{err}");
        let missing = args(dir.path().join("missing.txt"), p.clone(), false);
        assert!(compute(&missing).unwrap_err().is_bad_input());
        let empty = file(&dir, "e.txt", "\n\n");
        assert!(matches!(
            compute(&args(empty, p, false)),
            Err(ScoreError::Empty { .. })
        ));
        let ragged = file(&dir, "r.csv", "a,label\n1,2\n3\n");
        let err = read_labels(&ragged, None).unwrap_err();
        assert!(err.is_bad_input());
        assert!(err.to_string().contains("r.csv"), "{err}");
    }
}
