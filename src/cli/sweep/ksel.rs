//! Choosing the rank k with a sweep (`--grid k=2,3,...`; docs/models.md §8.6): each run's
//! labelling and reconstruction error go to `OUT/clusterings.csv` (so `--resume` and `sweep
//! merge` keep them), and per cell the mean reconstruction error, the clustering scores and
//! the cophenetic correlation of the consensus matrix over the repeats go to
//! `OUT/k_selection.csv` and the summary.

use super::{CellSummary, CliError, GridAxis, Row, bad, failed};
use crate::engine::eval::{MeanStd, rank_stability};
use crate::engine::machine::fsutil::csv_field;
use anyhow::{Context, anyhow};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Columns of `clusterings.csv`, in order; `labels` is the space-separated cluster of each
/// sample (the model's assignments, else the argmax of each column of H).
pub const CLUSTERING_COLUMNS: &[&str] = &[
    "model",
    "params",
    "repeat",
    "seed",
    "k",
    "recon_error",
    "labels",
];

/// The run key (model, params, repeat) → its clusterings.csv row.
pub(super) type Clusterings = BTreeMap<(String, String, String), Row>;

/// The rank axis of the grid, if any, and the other axes. `k=` needs explicit values.
pub(super) fn split_k_axis(
    grid: &[GridAxis],
) -> Result<(Option<Vec<usize>>, Vec<GridAxis>), CliError> {
    let mut ks = None;
    let mut rest = Vec::new();
    for (name, values) in grid {
        if name != "k" {
            rest.push((name.clone(), values.clone()));
            continue;
        }
        let Some(values) = values else {
            return Err(bad(anyhow!(
                "--grid k needs its values, e.g. --grid k=2,3,4,5"
            )));
        };
        let mut parsed = Vec::new();
        for v in values {
            let k: usize = v
                .parse()
                .ok()
                .filter(|&k| k >= 1)
                .ok_or_else(|| bad(anyhow!("--grid k: `{v}` is not a rank ≥ 1")))?;
            parsed.push(k);
        }
        ks = Some(parsed);
    }
    Ok((ks, rest))
}

/// `params` with its `k=` entry removed (the other grid values of a k-selection row).
pub(super) fn params_without_k(params: &str) -> String {
    params
        .split(';')
        .filter(|p| !p.is_empty() && !p.starts_with("k="))
        .collect::<Vec<_>>()
        .join(";")
}

/// `params` (`a=1;b=2`, name-ordered) with `k=K` inserted in name order.
pub(super) fn params_with_k(params: &str, k: usize) -> String {
    let mut parts: Vec<String> = params
        .split(';')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    parts.push(format!("k={k}"));
    parts.sort_by(|a, b| {
        let name = |s: &str| s.split('=').next().unwrap_or("").to_owned();
        name(a).cmp(&name(b))
    });
    parts.join(";")
}

/// One line of clusterings.csv for a finished run's row (with its `labels` and
/// `recon_error` entries); `None` for a failed run.
pub(super) fn clustering_line(row: &Row) -> Option<String> {
    row.get("labels")?;
    let mut line = CLUSTERING_COLUMNS
        .iter()
        .map(|c| csv_field(row.get(*c).map(String::as_str).unwrap_or("")))
        .collect::<Vec<_>>()
        .join(",");
    line.push('\n');
    Some(line)
}

/// Read clusterings.csv (absent: none); a later row of a run replaces an earlier one, and a
/// last line cut short by an interruption is ignored.
pub(super) fn read_clusterings(path: &Path) -> Result<Clusterings, CliError> {
    let mut out = Clusterings::new();
    if !path.exists() {
        return Ok(out);
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {}", path.display()))
        .map_err(bad)?;
    let complete = text.rfind('\n').map_or(0, |i| i + 1);
    let header = CLUSTERING_COLUMNS.join(",");
    if !text.starts_with(&format!("{header}\n")) {
        return Err(bad(anyhow!(
            "{}: not a clusterings.csv of this version (the first line must be `{header}`)",
            path.display()
        )));
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(&text.as_bytes()[..complete]);
    for (i, rec) in reader.records().enumerate() {
        let rec = rec.map_err(|e| bad(anyhow!("{}: line {}: {e}", path.display(), i + 2)))?;
        if rec.len() != CLUSTERING_COLUMNS.len() {
            return Err(bad(anyhow!(
                "{}: line {}: {} fields, expected {}",
                path.display(),
                i + 2,
                rec.len(),
                CLUSTERING_COLUMNS.len()
            )));
        }
        let row: Row = CLUSTERING_COLUMNS
            .iter()
            .zip(rec.iter())
            .map(|(c, v)| ((*c).to_owned(), v.to_owned()))
            .collect();
        out.insert(super::row_key(&row), row);
    }
    Ok(out)
}

/// Write clusterings.csv (atomically), rows in key order.
pub(super) fn write_clusterings(path: &Path, rows: &Clusterings) -> Result<(), CliError> {
    let mut text = format!("{}\n", CLUSTERING_COLUMNS.join(","));
    for row in rows.values() {
        if let Some(line) = clustering_line(row) {
            text.push_str(&line);
        }
    }
    super::write_atomic(path, text.as_bytes()).map_err(failed)
}

/// One row of the k selection: a model with one rank (and the other grid values).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KSelection {
    pub model: String,
    /// The cell's other grid values (without `k=`).
    pub params: String,
    pub k: usize,
    /// Successful runs with a labelling.
    pub runs: usize,
    /// ‖X − WH‖_F / ‖X‖_F, mean ± std over the repeats (models with a W).
    pub recon_error: Option<MeanStd>,
    /// The model's final objective, mean ± std.
    pub objective: Option<MeanStd>,
    pub acc: Option<MeanStd>,
    pub nmi_max: Option<MeanStd>,
    /// Cophenetic correlation of the consensus matrix over the repeats (≥ 2 runs).
    pub cophenetic: Option<f64>,
}

/// The k-selection rows, one per cell whose runs record a rank, in cell order.
pub(super) fn k_selection(
    cells: &[CellSummary],
    rows: &[Row],
    clusterings: &Clusterings,
    repeats: u64,
) -> Result<Vec<KSelection>, CliError> {
    let mut out = Vec::new();
    for cell in cells {
        let mine: Vec<&Row> = rows
            .iter()
            .filter(|r| {
                r.get("model") == Some(&cell.model)
                    && r.get("params") == Some(&cell.params)
                    && r.get("error").is_none_or(|e| e.is_empty())
                    && r.get("repeat")
                        .and_then(|v| v.parse::<u64>().ok())
                        .is_some_and(|r| r < repeats)
            })
            .collect();
        let Some(k) = mine
            .first()
            .and_then(|r| r.get("k"))
            .and_then(|k| k.parse::<usize>().ok())
        else {
            continue;
        };
        let mut by_repeat: Vec<(u64, &Row)> = mine
            .iter()
            .filter_map(|r| {
                let c = clusterings.get(&super::row_key(r))?;
                Some((c.get("repeat")?.parse().ok()?, c))
            })
            .collect();
        by_repeat.sort_by_key(|(r, _)| *r);
        let mut labelings = Vec::new();
        let mut recon = Vec::new();
        for (_, c) in &by_repeat {
            let labels: Result<Vec<usize>, _> = c
                .get("labels")
                .map(String::as_str)
                .unwrap_or("")
                .split_whitespace()
                .map(str::parse)
                .collect();
            let labels = labels.map_err(|e| {
                bad(anyhow!(
                    "clusterings.csv: run {} {} repeat {}: bad label ({e})",
                    cell.model,
                    cell.params,
                    c.get("repeat").map(String::as_str).unwrap_or("?")
                ))
            })?;
            labelings.push(labels);
            if let Some(v) = c.get("recon_error").and_then(|v| v.parse::<f64>().ok()) {
                recon.push(v);
            }
        }
        let stability = rank_stability(&labelings, &recon).map_err(|e| {
            bad(anyhow!(
                "{} {}: consensus of the repeats' labellings: {e}",
                cell.model,
                cell.params
            ))
        })?;
        out.push(KSelection {
            model: cell.model.clone(),
            params: params_without_k(&cell.params),
            k,
            runs: stability.runs,
            recon_error: stability.recon_error,
            objective: cell.metrics.get("objective").copied(),
            acc: cell.metrics.get("acc").copied(),
            nmi_max: cell.metrics.get("nmi_max").copied(),
            cophenetic: stability.cophenetic,
        });
    }
    Ok(out)
}

/// k_selection.csv: one line per row, means and stds in separate columns.
pub(super) fn k_selection_csv(rows: &[KSelection]) -> String {
    let mut s = String::from(
        "model,params,k,runs,recon_error,recon_error_std,objective,objective_std,acc,acc_std,\
         nmi_max,nmi_max_std,cophenetic\n",
    );
    let ms = |v: &Option<MeanStd>| match v {
        Some(m) => format!("{:?},{:?}", m.mean, m.std),
        None => ",".to_owned(),
    };
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{}\n",
            csv_field(&r.model),
            csv_field(&r.params),
            r.k,
            r.runs,
            ms(&r.recon_error),
            ms(&r.objective),
            ms(&r.acc),
            ms(&r.nmi_max),
            r.cophenetic.map_or_else(String::new, |c| format!("{c:?}"))
        ));
    }
    s
}

/// The k-selection table appended to summary.md.
pub(super) fn k_selection_markdown(rows: &[KSelection]) -> String {
    let mut s = String::from(
        "\nChoosing k: per rank, ‖X − WH‖/‖X‖, ACC and NMI (max) as mean ± std over the \
         repeats, and the cophenetic correlation of the consensus matrix of the repeats' \
         labellings (1 = every seed gives the same clusters).\n\n\
         | model | params | k | runs | rel. error | ACC % | NMI max % | cophenetic |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    let pct = |v: &Option<MeanStd>| {
        v.map_or("—".to_owned(), |m| {
            format!("{:.2} ± {:.2}", 100.0 * m.mean, 100.0 * m.std)
        })
    };
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.model,
            if r.params.is_empty() {
                "—".to_owned()
            } else {
                r.params.replace(';', ", ")
            },
            r.k,
            r.runs,
            r.recon_error.map_or("—".to_owned(), |m| format!(
                "{:.4} ± {:.4}",
                m.mean, m.std
            )),
            pct(&r.acc),
            pct(&r.nmi_max),
            r.cophenetic.map_or("—".to_owned(), |c| format!("{c:.4}")),
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_axis_is_split_off_and_checked() {
        let grid = vec![
            ("alpha".to_owned(), Some(vec!["0.1".to_owned()])),
            ("k".to_owned(), Some(vec!["2".to_owned(), "3".to_owned()])),
        ];
        let (ks, rest) = split_k_axis(&grid).unwrap();
        assert_eq!(ks, Some(vec![2, 3]));
        assert_eq!(rest, vec![grid[0].clone()]);
        assert!(split_k_axis(&[("k".to_owned(), None)]).is_err());
        assert!(split_k_axis(&[("k".to_owned(), Some(vec!["0".to_owned()]))]).is_err());
        assert!(split_k_axis(&[("k".to_owned(), Some(vec!["x".to_owned()]))]).is_err());
    }

    #[test]
    fn k_goes_in_name_order_and_comes_back_out() {
        assert_eq!(params_with_k("", 3), "k=3");
        assert_eq!(params_with_k("alpha=0.1;mu=2", 4), "alpha=0.1;k=4;mu=2");
        assert_eq!(params_without_k("alpha=0.1;k=4;mu=2"), "alpha=0.1;mu=2");
        assert_eq!(params_without_k("k=4"), "");
    }
}
