//! `sweep --keep-curves`: each run's objective per iteration, one line per run appended to
//! `OUT/curves.csv` as the run finishes (`model,params,repeat,objective` with the objective's
//! values space-separated), for `report`'s convergence overlay. A run's curve is a few
//! kilobytes at most (one number per iteration), so keeping every run's is cheap.

use super::{CliError, Row, failed};
use crate::engine::machine::fsutil::csv_field;
use anyhow::Context;
use std::path::Path;

/// The file in the sweep folder.
pub const FILE: &str = "curves.csv";
/// Its first line.
const HEADER: &str = "model,params,repeat,objective";
/// The entry of a run's row that carries its curve (not a runs.csv column).
pub(super) const KEY: &str = "curve";

/// The objective's values as one field.
pub(super) fn field(objective: &[f64]) -> String {
    objective
        .iter()
        .map(|v| format!("{v:?}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The line of a run's curve (None when the run kept none: it failed before its fit ended).
pub(super) fn line(row: &Row) -> Option<String> {
    let curve = row.get(KEY)?;
    let g = |c: &str| csv_field(row.get(c).map(String::as_str).unwrap_or(""));
    Some(format!(
        "{},{},{},{}\n",
        g("model"),
        g("params"),
        g("repeat"),
        csv_field(curve)
    ))
}

/// Open `path` for appending, writing the header first when it is new (a resumed sweep adds
/// to the curves it has).
pub(super) fn open(path: &Path) -> Result<std::fs::File, CliError> {
    use std::io::Write;
    let fresh = !path.exists();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {} for appending", path.display()))
        .map_err(failed)?;
    if fresh {
        f.write_all(format!("{HEADER}\n").as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))
            .map_err(failed)?;
    }
    Ok(f)
}

/// `sweep merge`: the shards' curves in one file (when any shard kept curves).
pub(super) fn merge(dirs: &[std::path::PathBuf], out: &Path) -> Result<(), CliError> {
    let mut text = String::new();
    for dir in dirs {
        let path = dir.join(FILE);
        if !path.is_file() {
            continue;
        }
        let t = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))
            .map_err(super::bad)?;
        // Whole lines only: a last line cut short by an interruption is left out.
        let complete = t.rfind('\n').map_or(0, |i| i + 1);
        text.push_str(
            t[..complete]
                .lines()
                .skip(1)
                .map(|l| format!("{l}\n"))
                .collect::<String>()
                .as_str(),
        );
    }
    if text.is_empty() {
        return Ok(());
    }
    super::write_atomic(out, format!("{HEADER}\n{text}").as_bytes()).map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_with_a_curve_is_one_line_of_four_fields() {
        let mut row = Row::new();
        row.insert("model".into(), "nmf".into());
        row.insert("params".into(), "alpha=0.1;k=3".into());
        row.insert("repeat".into(), "2".into());
        assert_eq!(line(&row), None);
        row.insert(KEY.into(), field(&[3.0, 1.5, 0.25]));
        assert_eq!(
            line(&row).as_deref(),
            Some("nmf,alpha=0.1;k=3,2,3.0 1.5 0.25\n")
        );
    }
}
