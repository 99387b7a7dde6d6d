//! Sweeps across machines: `sweep --shard i/N` runs the i-th of N disjoint shares of the
//! grid × repeats, and `sweep merge DIR... --out DIR` combines the shard folders into the
//! outputs the unsharded sweep writes.
//!
//! The runs of the plan (cells in order, repeats 0..R within each cell) are numbered t = 0,
//! 1, ...; shard i of N takes the runs with t mod N = i − 1. The plan depends only on the
//! arguments, and each run only on its cell and seed, so the shards never overlap, together
//! cover the plan, and any shard can be rerun (or resumed) on any machine.
//!
//! The merged `summary.json` equals the unsharded sweep's except for wall-clock values: the
//! `seconds` metric of each cell and the `seconds` column of the markdown table.

use super::ksel::{Clusterings, read_clusterings, write_clusterings};
use super::{CliError, Manifest, Row, SweepArgs, bad, failed, read_rows, row_key, row_line};
use crate::cli::{Cli, Command};
use anyhow::{Context, anyhow};
use clap::Parser;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `i/N`: the i-th (1-based) of N shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Whether run number `t` of the plan belongs to this shard.
    pub fn owns(&self, t: usize) -> bool {
        t % self.count == self.index - 1
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Parse `i/N` with 1 ≤ i ≤ N.
pub fn parse_shard(s: &str) -> Result<Shard, String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("`{s}`: expected i/N, e.g. 2/8"))?;
    let index: usize = i
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: `{i}` is not a shard number"))?;
    let count: usize = n
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: `{n}` is not a shard count"))?;
    if count == 0 || index == 0 || index > count {
        return Err(format!("`{s}`: need 1 ≤ i ≤ N"));
    }
    Ok(Shard { index, count })
}

/// Arguments of `sweep merge` (the subcommand `sweep-merge`; see [`crate::cli::normalize_args`]).
#[derive(Debug, Clone, clap::Args)]
pub struct MergeArgs {
    /// The shard folders (each a `sweep --shard i/N --out DIR`).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Output folder of the merged sweep.
    #[arg(long)]
    pub out: PathBuf,
}

fn read_json(path: &Path) -> Result<serde_json::Value, CliError> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {}", path.display()))
        .map_err(bad)?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: not valid JSON", path.display()))
        .map_err(bad)
}

/// The shard folders read: the first one's manifest and summary, the shard count, and every
/// row and labelling, keyed by (model, params, repeat).
struct Shards {
    manifest: Manifest,
    summary: serde_json::Value,
    rows: BTreeMap<(String, String, String), Row>,
    clusterings: Clusterings,
}

/// Read the folders, checking that they are the N shards of one sweep, each once.
fn read_shards(m: &MergeArgs) -> Result<Shards, CliError> {
    let mut base: Option<(Manifest, serde_json::Value)> = None;
    let mut seen: BTreeMap<usize, PathBuf> = BTreeMap::new();
    let mut count = None;
    let mut rows: BTreeMap<(String, String, String), Row> = BTreeMap::new();
    let mut clusterings = Clusterings::new();
    for dir in &m.dirs {
        let mpath = dir.join("sweep.json");
        let manifest: Manifest = serde_json::from_value(read_json(&mpath)?)
            .with_context(|| format!("{}: not a sweep manifest", mpath.display()))
            .map_err(bad)?;
        let summary = read_json(&dir.join("summary.json"))?;
        let shard = manifest
            .shard
            .as_deref()
            .ok_or_else(|| bad(anyhow!("{}: not a shard (no --shard)", dir.display())))
            .and_then(|s| parse_shard(s).map_err(|e| bad(anyhow!("{}: {e}", mpath.display()))))?;
        if *count.get_or_insert(shard.count) != shard.count {
            return Err(bad(anyhow!(
                "{}: shard {shard}, but another folder is a share of {} shards",
                dir.display(),
                count.unwrap_or(0)
            )));
        }
        if let Some(other) = seen.insert(shard.index, dir.clone()) {
            return Err(bad(anyhow!(
                "{} and {} are both shard {shard}",
                other.display(),
                dir.display()
            )));
        }
        match &base {
            None => base = Some((manifest, summary)),
            Some((m0, s0)) => same_sweep(dir, &m.dirs[0], (&manifest, &summary), (m0, s0))?,
        }
        for r in read_rows(&dir.join("runs.csv"))? {
            rows.insert(row_key(&r), r);
        }
        clusterings.extend(read_clusterings(&dir.join("clusterings.csv"))?);
    }
    let (Some((manifest, summary)), Some(count)) = (base, count) else {
        return Err(bad(anyhow!("sweep merge: no folders given")));
    };
    let missing: Vec<String> = (1..=count)
        .filter(|i| !seen.contains_key(i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(bad(anyhow!(
            "sweep merge: shard(s) {} missing",
            missing.join(", ")
        )));
    }
    Ok(Shards {
        manifest,
        summary,
        rows,
        clusterings,
    })
}

/// Refuse a shard folder `dir` whose manifest or plan differs from the first one's (`first`).
fn same_sweep(
    dir: &Path,
    first: &Path,
    (manifest, summary): (&Manifest, &serde_json::Value),
    (m0, s0): (&Manifest, &serde_json::Value),
) -> Result<(), CliError> {
    let diffs: Vec<String> = manifest
        .differences(m0)
        .into_iter()
        .filter(|d| !d.starts_with("shard:"))
        .collect();
    if !diffs.is_empty() {
        return Err(bad(anyhow!(
            "{}: a different sweep from {} ({})",
            dir.display(),
            first.display(),
            diffs.join("; ")
        )));
    }
    for key in ["models", "grid", "repeats"] {
        if summary.get(key) != s0.get(key) {
            return Err(bad(anyhow!(
                "{}: `{key}` differs from {} ({} vs {})",
                dir.display(),
                first.display(),
                summary.get(key).cloned().unwrap_or_default(),
                s0.get(key).cloned().unwrap_or_default()
            )));
        }
    }
    Ok(())
}

/// The sweep's arguments as far as the summary needs them, and its model names.
fn merged_args(
    m: &MergeArgs,
    manifest: &Manifest,
    summary: &serde_json::Value,
) -> Result<(SweepArgs, Vec<String>), CliError> {
    let models: Vec<String> = summary
        .get("models")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .ok_or_else(|| bad(anyhow!("{}: no `models` list", m.dirs[0].display())))?;
    let repeats = summary
        .get("repeats")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| bad(anyhow!("{}: no `repeats`", m.dirs[0].display())))?;
    let out = m
        .out
        .to_str()
        .ok_or_else(|| bad(anyhow!("--out {}: not UTF-8", m.out.display())))?;
    let protocol = serde_json::to_value(manifest.protocol)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let argv = [
        "nmf-playground".to_owned(),
        "sweep".to_owned(),
        "--data".to_owned(),
        manifest.data.clone(),
        "--models".to_owned(),
        models.join(","),
        "--repeats".to_owned(),
        repeats.to_string(),
        "--kmeans-repeats".to_owned(),
        manifest.kmeans_repeats.to_string(),
        "--protocol".to_owned(),
        protocol,
        "--out".to_owned(),
        out.to_owned(),
    ];
    match Cli::try_parse_from(argv).map(|c| c.command) {
        Ok(Some(Command::Sweep(a))) => Ok((a, models)),
        Ok(_) => Err(failed(anyhow!("sweep merge: internal argument error"))),
        Err(e) => Err(bad(anyhow!("sweep merge: the shards' arguments: {e}"))),
    }
}

/// The sweep's cells in plan order, from a shard's summary.
fn merged_cells(summary: &serde_json::Value, dir: &Path) -> Result<Vec<super::Cell>, CliError> {
    summary
        .pointer("/summary/cells")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| bad(anyhow!("{}: summary.json has no cells", dir.display())))?
        .iter()
        .map(|c| {
            let model = c.get("model").and_then(|v| v.as_str()).unwrap_or("");
            let params = c.get("params").and_then(|v| v.as_str()).unwrap_or("");
            let kind = crate::cli::run::parse_model(model).map_err(|e| bad(anyhow!(e)))?;
            Ok(super::Cell {
                kind,
                params: BTreeMap::new(),
                params_str: params.to_owned(),
                k: 0,
                reveal: None,
            })
        })
        .collect()
}

/// `sweep merge`: check that the folders are the N shards of one sweep, combine their rows
/// and write the merged sweep; returns its summary.
pub fn merge(m: &MergeArgs) -> Result<super::SweepSummary, CliError> {
    let Shards {
        mut manifest,
        summary,
        rows,
        clusterings,
    } = read_shards(m)?;
    manifest.shard = None;
    let (args, models) = merged_args(m, &manifest, &summary)?;
    let grid = summary.get("grid").cloned().unwrap_or_default();
    let cells = merged_cells(&summary, &m.dirs[0])?;

    std::fs::create_dir_all(&m.out)
        .with_context(|| format!("cannot create {}", m.out.display()))
        .map_err(failed)?;
    let csv_path = m.out.join("runs.csv");
    let mut text = format!("{}\n", super::COLUMNS.join(","));
    for r in rows.values() {
        text.push_str(&row_line(r));
    }
    super::write_atomic(&csv_path, text.as_bytes()).map_err(failed)?;
    write_clusterings(&m.out.join("clusterings.csv"), &clusterings)?;
    super::curves::merge(&m.dirs, &m.out.join(super::curves::FILE))?;
    let mtext = serde_json::to_string_pretty(&manifest).map_err(failed)?;
    super::write_atomic(&m.out.join("sweep.json"), mtext.as_bytes()).map_err(failed)?;
    let rows: Vec<Row> = rows.into_values().collect();
    let executed = rows.len();
    super::write_outputs(
        &super::Outputs {
            manifest: &manifest,
            models: serde_json::json!(models),
            grid,
            args: &args,
            cells: &cells,
            rows: &rows,
            clusterings: &clusterings,
        },
        executed,
        0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_partition_the_plan() {
        assert_eq!(parse_shard("2/3"), Ok(Shard { index: 2, count: 3 }));
        assert!(parse_shard("0/3").is_err());
        assert!(parse_shard("4/3").is_err());
        assert!(parse_shard("1/0").is_err());
        assert!(parse_shard("3").is_err());
        let shards: Vec<Shard> = (1..=3).map(|i| Shard { index: i, count: 3 }).collect();
        for t in 0..20 {
            assert_eq!(shards.iter().filter(|s| s.owns(t)).count(), 1, "run {t}");
        }
        assert_eq!(Shard { index: 2, count: 3 }.to_string(), "2/3");
    }
}
