//! `report DIR`: one self-contained HTML page (PNG figures as base64 data URIs, no external
//! files or scripts) from a `run --out` or a `sweep --out` folder, with the plots that apply and
//! a table of the key numbers. `--figures DIR` also writes each figure as PNG and SVG.

use super::CliError;
use super::output::write_atomic;
use crate::engine::linalg::projection::Projector;
use crate::figures::{self, Figure, Format};
use anyhow::{Context, anyhow};
use base64::Engine as _;
use ndarray::Array2;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// A `run --out` folder (run.json, H.csv, ...) or a `sweep --out` folder (summary.json, ...).
    pub dir: PathBuf,
    /// The HTML page to write; default DIR/report.html.
    #[arg(long, value_name = "FILE.html")]
    pub out: Option<PathBuf>,
    /// Also write each figure as its own PNG and SVG file (NAME.png, NAME.svg) into this folder.
    #[arg(long, value_name = "DIR")]
    pub figures: Option<PathBuf>,
}

fn bad(e: anyhow::Error) -> CliError {
    CliError::BadInput(e)
}

/// One rendered figure of the page.
struct Rendered {
    /// File stem for `--figures` (`scatter`, `label_budget`, ...).
    slug: String,
    caption: String,
    png: Vec<u8>,
    /// Only when `--figures` asks for files.
    svg: Option<String>,
}

/// The page being assembled.
struct Page {
    title: String,
    /// Key numbers: header and rows.
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    figures: Vec<Rendered>,
    svg: bool,
}

impl Page {
    fn add(&mut self, slug: &str, caption: &str, fig: &impl Figure) -> Result<(), CliError> {
        let png = figures::to_png(fig).map_err(|e| CliError::Failed(e.into()))?;
        let svg = if self.svg {
            Some(figures::to_svg(fig).map_err(|e| CliError::Failed(e.into()))?)
        } else {
            None
        };
        self.figures.push(Rendered {
            slug: slug.to_owned(),
            caption: caption.to_owned(),
            png,
            svg,
        });
        Ok(())
    }

    fn html(&self) -> String {
        let mut h =
            String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
        h.push_str(&format!("<title>{}</title>\n", esc(&self.title)));
        h.push_str(
            "<style>body{font-family:sans-serif;margin:2em;max-width:1300px}\
             table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:3px 8px;\
             text-align:left}figure{margin:1.5em 0}img{max-width:100%}</style>\n</head><body>\n",
        );
        h.push_str(&format!("<h1>{}</h1>\n<table>\n<tr>", esc(&self.title)));
        for c in &self.header {
            h.push_str(&format!("<th>{}</th>", esc(c)));
        }
        h.push_str("</tr>\n");
        for r in &self.rows {
            h.push_str("<tr>");
            for c in r {
                h.push_str(&format!("<td>{}</td>", esc(c)));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table>\n");
        let b64 = base64::engine::general_purpose::STANDARD;
        for f in &self.figures {
            h.push_str(&format!(
                "<figure id=\"{}\"><img alt=\"{}\" src=\"data:image/png;base64,{}\">\
                 <figcaption>{}</figcaption></figure>\n",
                esc(&f.slug),
                esc(&f.caption),
                b64.encode(&f.png),
                esc(&f.caption)
            ));
        }
        h.push_str("</body></html>\n");
        h
    }
}

/// HTML-escape text.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `report DIR [--out FILE.html] [--figures DIR]`.
pub fn run(args: &ReportArgs) -> Result<(), CliError> {
    let dir = &args.dir;
    if !dir.is_dir() {
        return Err(bad(anyhow!(
            "{}: not a folder (give a `run --out` or `sweep --out` folder)",
            dir.display()
        )));
    }
    let mut page = Page {
        title: String::new(),
        header: vec![],
        rows: vec![],
        figures: vec![],
        svg: args.figures.is_some(),
    };
    if dir.join("run.json").is_file() {
        run_page(dir, &mut page)?;
    } else if dir.join("summary.json").is_file() {
        sweep_page(dir, &mut page)?;
    } else {
        return Err(bad(anyhow!(
            "{}: neither {} (a `run --out` folder) nor {} (a `sweep --out` folder) is there",
            dir.display(),
            dir.join("run.json").display(),
            dir.join("summary.json").display()
        )));
    }
    let out = args.out.clone().unwrap_or_else(|| dir.join("report.html"));
    write_atomic(&out, page.html().as_bytes()).map_err(CliError::Failed)?;
    if let Some(fdir) = &args.figures {
        std::fs::create_dir_all(fdir)
            .with_context(|| format!("cannot create {}", fdir.display()))
            .map_err(CliError::Failed)?;
        for f in &page.figures {
            let p = fdir.join(format!("{}.{}", f.slug, Format::Png.extension()));
            write_atomic(&p, &f.png).map_err(CliError::Failed)?;
            if let Some(svg) = &f.svg {
                let p = fdir.join(format!("{}.{}", f.slug, Format::Svg.extension()));
                write_atomic(&p, svg.as_bytes()).map_err(CliError::Failed)?;
            }
        }
    }
    crate::say!(
        "wrote {} ({} figure{})",
        out.display(),
        page.figures.len(),
        if page.figures.len() == 1 { "" } else { "s" }
    );
    Ok(())
}

fn read_text(path: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {}", path.display()))
        .map_err(bad)
}

fn read_json(path: &Path) -> Result<Value, CliError> {
    let text = read_text(path)?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: not valid JSON", path.display()))
        .map_err(bad)
}

/// A headerless CSV of numbers (H.csv, W.csv) as a matrix.
fn read_matrix(path: &Path) -> Result<Array2<f64>, CliError> {
    let text = read_text(path)?;
    let mut rows: Vec<Vec<f64>> = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let row = line
            .split(',')
            .map(|v| v.trim().parse::<f64>())
            .collect::<Result<Vec<f64>, _>>()
            .map_err(|e| bad(anyhow!("{}: line {}: {e}", path.display(), i + 1)))?;
        if rows.first().is_some_and(|r| r.len() != row.len()) {
            return Err(bad(anyhow!(
                "{}: line {}: {} values, the first line has {}",
                path.display(),
                i + 1,
                row.len(),
                rows[0].len()
            )));
        }
        rows.push(row);
    }
    let cols = rows.first().map_or(0, Vec::len);
    let flat: Vec<f64> = rows.iter().flatten().copied().collect();
    Array2::from_shape_vec((rows.len(), cols), flat)
        .map_err(|e| bad(anyhow!("{}: {e}", path.display())))
}

/// A CSV with a header line: the header and the records as strings.
fn read_table(path: &Path) -> Result<(Vec<String>, Vec<Vec<String>>), CliError> {
    let text = read_text(path)?;
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> = rd
        .headers()
        .map_err(|e| bad(anyhow!("{}: {e}", path.display())))?
        .iter()
        .map(str::to_owned)
        .collect();
    let mut rows = Vec::new();
    for (i, r) in rd.records().enumerate() {
        let r = r.map_err(|e| bad(anyhow!("{}: record {}: {e}", path.display(), i + 1)))?;
        rows.push(r.iter().map(str::to_owned).collect());
    }
    Ok((header, rows))
}

fn column(header: &[String], name: &str) -> Option<usize> {
    header.iter().position(|h| h == name)
}

fn num(v: &str) -> Option<f64> {
    v.trim().parse::<f64>().ok().filter(|x| x.is_finite())
}

/// A JSON value as table text.
fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n
            .as_f64()
            .filter(|_| !n.is_i64() && !n.is_u64())
            .map_or_else(|| n.to_string(), |f| format!("{f:.4}")),
        Value::Null => "–".into(),
        other => other.to_string(),
    }
}

/// Side length when `m` features look like a square image (at least 8×8).
fn square_image(m: usize) -> Option<(usize, usize)> {
    let s = (m as f64).sqrt().round() as usize;
    (s >= 8 && s * s == m).then_some((s, s))
}

fn run_page(dir: &Path, page: &mut Page) -> Result<(), CliError> {
    let run = read_json(&dir.join("run.json"))?;
    let model = run.get("model").map(show).unwrap_or_default();
    page.title = format!(
        "Run: {model} on {}",
        run.pointer("/dataset/path").map(show).unwrap_or_default()
    );
    page.header = vec!["quantity".into(), "value".into()];
    page.rows = run_rows(&run);

    // Classes for colour and the confusion matrix: predictions.csv when there, else clusters.
    let pred_path = dir.join("predictions.csv");
    let predictions = if pred_path.is_file() {
        Some(read_table(&pred_path)?)
    } else {
        None
    };
    let h_path = dir.join("H.csv");
    let h = read_matrix(&h_path)?;
    let (class, class_names) = match &predictions {
        Some((header, rows)) => predicted_classes(&pred_path, header, rows)?,
        None => cluster_classes(&dir.join("clusters.csv"))?,
    };
    if class.len() != h.ncols() {
        return Err(bad(anyhow!(
            "{}: {} samples (columns), but {} rows of classes",
            h_path.display(),
            h.ncols(),
            class.len()
        )));
    }
    let xy = Projector::new()
        .project(h.view())
        .map_err(|e| bad(anyhow!("{}: {e}", h_path.display())))?;
    let scatter = figures::Scatter {
        title: format!("{model}: H projected to 2-D (PCA)"),
        points: xy.rows().into_iter().map(|r| [r[0], r[1]]).collect(),
        class,
        class_names,
        class_colours: vec![],
        triplets: vec![],
    };
    page.add(
        "scatter",
        "The columns of H, PCA-2D, coloured by predicted class or cluster.",
        &scatter,
    )?;

    let conv_path = dir.join("convergence.csv");
    if conv_path.is_file() {
        page.add(
            "convergence",
            "Objective and its terms per iteration (log scale); dashed lines mark new stages or rounds.",
            &convergence_figure(&conv_path, &model)?,
        )?;
    }
    let labels_path = dir.join("labels.csv");
    if let Some((header, rows)) = &predictions
        && let Some(conf) = prediction_confusion(header, rows, &model)
    {
        page.add(
            "confusion",
            "Confusion matrix on the samples whose labels were not given.",
            &conf,
        )?;
    } else if labels_path.is_file()
        && let Some(conf) = cluster_confusion(&labels_path, &model)?
    {
        page.add(
            "confusion",
            "Confusion matrix of the true classes against the run's clusters, each cluster in \
             the column of the class the Hungarian best map matched it to (so ACC is the \
             diagonal's share).",
            &conf,
        )?;
    }

    let w_path = dir.join("W.csv");
    if w_path.is_file() {
        let w = read_matrix(&w_path)?;
        let m = w.nrows();
        page.add(
            "basis",
            "The columns of W: images when the features form a square image, else a heat map.",
            &figures::Gallery {
                title: format!("{model}: basis W"),
                image: square_image(m),
                feature_names: (1..=m).map(|i| format!("feature {i}")).collect(),
                column_names: vec![],
                w,
            },
        )?;
    }
    Ok(())
}

/// The run's summary table: what was run, how it stopped and its scalar metrics.
fn run_rows(run: &Value) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for (label, ptr) in [
        ("model", "/model"),
        ("dataset", "/dataset/path"),
        ("samples (n)", "/dataset/n"),
        ("features (m)", "/dataset/m"),
        ("preprocess", "/dataset/preprocess"),
        ("k", "/k"),
        ("seed", "/seed"),
        ("iterations", "/iterations"),
        ("stop", "/stop"),
        ("seconds", "/seconds"),
        ("triplets", "/triplets/count"),
        ("known labels", "/known_labels"),
    ] {
        if let Some(v) = run.pointer(ptr) {
            rows.push(vec![label.into(), show(v)]);
        }
    }
    if let Some(last) = run
        .get("objective")
        .and_then(Value::as_array)
        .and_then(|a| a.last())
    {
        rows.push(vec!["final objective".into(), show(last)]);
    }
    if let Some(m) = run.get("metrics").and_then(Value::as_object) {
        for (k, v) in m {
            if !v.is_object() && !v.is_array() {
                rows.push(vec![k.clone(), show(v)]);
            }
        }
    }
    rows
}

/// Each sample's class index and the class names, from predictions.csv's `predicted` column.
fn predicted_classes(
    path: &Path,
    header: &[String],
    rows: &[Vec<String>],
) -> Result<(Vec<Option<usize>>, Vec<String>), CliError> {
    let col = column(header, "predicted")
        .ok_or_else(|| bad(anyhow!("{}: no `predicted` column", path.display())))?;
    let names: Vec<String> = rows
        .iter()
        .map(|r| r.get(col).cloned().unwrap_or_default())
        .collect();
    let uniq = sorted_names(names.iter().map(String::as_str));
    let idx = names
        .iter()
        .map(|s| uniq.iter().position(|u| u == s))
        .collect();
    Ok((idx, uniq))
}

/// Each sample's cluster and the names "cluster 1".."cluster k", from clusters.csv.
fn cluster_classes(path: &Path) -> Result<(Vec<Option<usize>>, Vec<String>), CliError> {
    let (_, rows) = read_table(path)?;
    let idx: Vec<Option<usize>> = rows
        .iter()
        .map(|r| r.first().and_then(|v| v.trim().parse().ok()))
        .collect();
    let k = idx.iter().flatten().max().map_or(0, |m| m + 1);
    Ok((idx, (0..k).map(|c| format!("cluster {}", c + 1)).collect()))
}

/// The convergence figure from convergence.csv: the objective, every term column, and a
/// boundary wherever the round or stage changes.
fn convergence_figure(path: &Path, model: &str) -> Result<figures::Convergence, CliError> {
    let (header, rows) = read_table(path)?;
    let obj = column(&header, "objective");
    let (round, stage) = (column(&header, "round"), column(&header, "stage"));
    let get = |r: &Vec<String>, c: Option<usize>| c.and_then(|c| r.get(c)).and_then(|v| num(v));
    let objective: Vec<f64> = rows
        .iter()
        .map(|r| get(r, obj).unwrap_or(f64::NAN))
        .collect();
    let skip = ["iteration", "objective", "round", "stage"];
    let terms = header
        .iter()
        .enumerate()
        .filter(|(_, h)| !skip.contains(&h.as_str()))
        .map(|(c, name)| {
            (
                name.clone(),
                rows.iter()
                    .map(|r| get(r, Some(c)).unwrap_or(f64::NAN))
                    .collect(),
            )
        })
        .collect();
    let phase = |r: &Vec<String>| (get(r, round), get(r, stage));
    let boundaries = rows
        .windows(2)
        .enumerate()
        .filter(|(_, w)| round.is_some() && phase(&w[0]) != phase(&w[1]))
        .map(|(i, _)| i + 1)
        .collect();
    Ok(figures::Convergence {
        title: format!("{model}: convergence"),
        objective,
        terms,
        boundaries,
    })
}

/// Truth against prediction on the samples whose labels were not given (predictions.csv's
/// `truth`, `known` and `predicted` columns); none when nothing is scored.
fn prediction_confusion(
    header: &[String],
    rows: &[Vec<String>],
    model: &str,
) -> Option<figures::Confusion> {
    let (t, k, p) = (
        column(header, "truth")?,
        column(header, "known")?,
        column(header, "predicted")?,
    );
    let scored: Vec<(&str, &str)> = rows
        .iter()
        .filter(|r| r.get(k).map(String::as_str) == Some("0"))
        .filter_map(|r| Some((r.get(t)?.as_str(), r.get(p)?.as_str())))
        .filter(|(t, _)| !t.is_empty())
        .collect();
    if scored.is_empty() {
        return None;
    }
    let names = sorted_names(scored.iter().flat_map(|(a, b)| [*a, *b]));
    let at = |s: &str| names.iter().position(|n| n == s).unwrap_or(0);
    let mut counts = vec![vec![0usize; names.len()]; names.len()];
    for (a, b) in &scored {
        counts[at(a)][at(b)] += 1;
    }
    Some(figures::Confusion {
        title: format!("{model}: confusion matrix (not given)"),
        counts,
        row_names: names.clone(),
        col_names: names,
    })
}

/// Sort key that puts "s2" before "s10" (a trailing number compared as a number).
fn natural_key(s: &str) -> (String, u64, String) {
    let digits = s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (head, tail) = s.split_at(s.len() - digits);
    (head.to_owned(), tail.parse().unwrap_or(0), s.to_owned())
}

/// Class names in natural order.
fn sorted_names<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut v: Vec<String> = names.map(str::to_owned).collect();
    v.sort_by_key(|n| natural_key(n));
    v.dedup();
    v
}

/// True class × cluster counts from labels.csv (`index,truth,painted,cluster`), the clusters
/// ordered by the class they are matched to; None without truth or clusters.
fn cluster_confusion(path: &Path, model: &str) -> Result<Option<figures::Confusion>, CliError> {
    let (header, rows) = read_table(path)?;
    let (Some(t), Some(c)) = (column(&header, "truth"), column(&header, "cluster")) else {
        return Ok(None);
    };
    let mut pairs: Vec<(&str, usize)> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let (Some(truth), Some(cluster)) = (r.get(t), r.get(c)) else {
            continue;
        };
        if truth.is_empty() || cluster.is_empty() {
            continue;
        }
        let cluster = cluster.trim().parse::<usize>().map_err(|e| {
            bad(anyhow!(
                "{}: record {}: cluster `{cluster}`: {e}",
                path.display(),
                i + 1
            ))
        })?;
        pairs.push((truth.as_str(), cluster));
    }
    if pairs.is_empty() {
        return Ok(None);
    }
    let classes = sorted_names(pairs.iter().map(|p| p.0));
    let class_of = |s: &str| classes.iter().position(|n| n == s).unwrap_or(0);
    let truth: Vec<usize> = pairs.iter().map(|p| class_of(p.0)).collect();
    let clusters: Vec<usize> = pairs.iter().map(|p| p.1).collect();
    let map = crate::engine::eval::metrics::best_map(&truth, &clusters)
        .map_err(|e| bad(anyhow!("{}: {e}", path.display())))?;
    // Columns: the cluster matched to each class in class order, then the unmatched ones.
    let mut order: Vec<usize> = (0..classes.len())
        .filter_map(|k| map.pairs.iter().find(|p| p.1 == k).map(|p| p.0))
        .collect();
    let mut rest: Vec<usize> = clusters
        .iter()
        .copied()
        .filter(|c| !order.contains(c))
        .collect();
    rest.sort_unstable();
    rest.dedup();
    order.extend(rest);
    let mut counts = vec![vec![0usize; order.len()]; classes.len()];
    for (&k, c) in truth.iter().zip(&clusters) {
        if let Some(j) = order.iter().position(|o| o == c) {
            counts[k][j] += 1;
        }
    }
    Ok(Some(figures::Confusion {
        title: format!("{model}: true class × cluster (columns: clusters by best map)"),
        counts,
        row_names: classes,
        col_names: order.iter().map(|c| (c + 1).to_string()).collect(),
    }))
}

/// A metric's "mean ± std" text from a summary cell.
fn mean_std(metrics: &Value, name: &str) -> Option<(f64, f64)> {
    let m = metrics.get(name)?;
    let mean = m.get("mean")?.as_f64()?;
    let std = m.get("std").and_then(Value::as_f64).unwrap_or(0.0);
    mean.is_finite()
        .then_some((mean, if std.is_finite() { std } else { 0.0 }))
}

/// `params` without the entry named `key` (`a=1;reveal=0.1` → `a=1`), and that entry's value.
fn split_param(params: &str, key: &str) -> (String, Option<String>) {
    let mut rest = Vec::new();
    let mut value = None;
    for p in params.split(';').filter(|p| !p.is_empty()) {
        match p.split_once('=') {
            Some((k, v)) if k == key => value = Some(v.to_owned()),
            _ => rest.push(p),
        }
    }
    (rest.join(";"), value)
}

fn sweep_page(dir: &Path, page: &mut Page) -> Result<(), CliError> {
    let sum_path = dir.join("summary.json");
    let summary = read_json(&sum_path)?;
    let cells = summary
        .pointer("/summary/cells")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(anyhow!("{}: no summary.cells", sum_path.display())))?;
    let protocol = summary
        .pointer("/summary/protocol")
        .map(show)
        .unwrap_or_default();
    page.title = format!("Sweep ({protocol}): {}", dir.display());
    sweep_table(cells, page);
    cell_figures(dir, cells, page)?;
    if let Some(budget) = label_budget(&summary, cells) {
        page.add(
            "label_budget",
            "Accuracy on the samples not given against the share of labels given (mean ± std over the repeats' seeded splits).",
            &budget,
        )?;
    }
    let ks_path = dir.join("k_selection.csv");
    if ks_path.is_file() {
        for (i, plot) in k_selection_plots(&ks_path)?.iter().enumerate() {
            page.add(
                &format!("k_selection_{}", i + 1),
                "Choosing k: reconstruction error, clustering scores and cophenetic correlation per k.",
                plot,
            )?;
        }
    }
    Ok(())
}

/// One row per cell: its model, parameters, runs and failures, then the mean ± std of every
/// metric some cell has.
fn sweep_table(cells: &[Value], page: &mut Page) {
    let shown: Vec<&str> = [
        "acc",
        "nmi_max",
        "accuracy",
        "class_acc",
        "class_macro_f1",
        "svm_x_acc",
        "svm_nmf_h_acc",
        "seconds",
    ]
    .into_iter()
    .filter(|m| {
        cells
            .iter()
            .any(|c| c.pointer(&format!("/metrics/{m}")).is_some())
    })
    .collect();
    page.header = ["model", "params", "runs", "failed"]
        .iter()
        .map(|s| s.to_string())
        .chain(shown.iter().map(|m| format!("{m} (mean ± std)")))
        .collect();
    for c in cells {
        let metrics = c.get("metrics").cloned().unwrap_or(Value::Null);
        let mut row: Vec<String> = ["model", "params", "runs", "failed"]
            .iter()
            .map(|k| c.get(*k).map(show).unwrap_or_default())
            .collect();
        for m in &shown {
            row.push(
                mean_std(&metrics, m).map_or_else(String::new, |(a, s)| format!("{a:.4} ± {s:.4}")),
            );
        }
        page.rows.push(row);
    }
}

/// Accuracy against the share of labels given, for the cells whose params carry `reveal=P`,
/// grouped by model and their other params; none when no cell has a share.
fn label_budget(summary: &Value, cells: &[Value]) -> Option<figures::LabelBudget> {
    let mut groups: BTreeMap<String, Vec<(f64, Value)>> = BTreeMap::new();
    for c in cells {
        let params = c.get("params").and_then(Value::as_str).unwrap_or("");
        let (rest, reveal) = split_param(params, "reveal");
        if let Some(share) = reveal.as_deref().and_then(num) {
            let model = c.get("model").and_then(Value::as_str).unwrap_or("");
            // The model as the app names it ("2-STGINMF"), not its command-line name.
            let shown = crate::engine::models::ModelKind::from_name(model)
                .map_or_else(|| model.to_owned(), |k| k.label().to_owned());
            let key = if rest.is_empty() {
                shown
            } else {
                format!("{shown} ({rest})")
            };
            groups
                .entry(key)
                .or_default()
                .push((share, c.get("metrics").cloned().unwrap_or(Value::Null)));
        }
    }
    if groups.is_empty() {
        return None;
    }
    let several = groups.len() > 1;
    let mut series = Vec::new();
    for (metric, label) in [
        ("class_acc", ""),
        ("svm_x_acc", "linear SVM on X"),
        ("svm_nmf_h_acc", "linear SVM on NMF's H"),
    ] {
        for (key, cells) in &groups {
            let points: Vec<figures::BudgetPoint> = cells
                .iter()
                .filter_map(|(share, m)| {
                    mean_std(m, metric).map(|(mean, std)| figures::BudgetPoint {
                        share: *share,
                        mean,
                        std,
                    })
                })
                .collect();
            if points.is_empty() {
                continue;
            }
            let name = match (label, several) {
                ("", _) => key.clone(),
                (l, true) => format!("{l} [{key}]"),
                (l, false) => l.to_owned(),
            };
            series.push(figures::BudgetSeries { name, points });
        }
    }
    let data = summary
        .pointer("/manifest/data")
        .or_else(|| summary.pointer("/manifest/dataset"))
        .map(show)
        .and_then(|d| {
            Path::new(&d)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    let repeats = summary.get("repeats").map(show).unwrap_or_default();
    Some(figures::LabelBudget {
        title: format!("Label budget: {data} ({repeats} seeded splits per share)"),
        series,
    })
}

/// One "choosing k" plot per model and its other params, from k_selection.csv.
fn k_selection_plots(path: &Path) -> Result<Vec<figures::KSelectionPlot>, CliError> {
    let (header, rows) = read_table(path)?;
    let col = |n: &str| column(&header, n);
    let (cm, cp, ck) = (col("model"), col("params"), col("k"));
    let get = |r: &Vec<String>, c: Option<usize>| c.and_then(|c| r.get(c)).and_then(|v| num(v));
    let mut by: BTreeMap<String, Vec<figures::KSelectionRow>> = BTreeMap::new();
    for r in &rows {
        let model = cm.and_then(|c| r.get(c)).cloned().unwrap_or_default();
        let params = cp.and_then(|c| r.get(c)).map(String::as_str).unwrap_or("");
        let (rest, _) = split_param(params, "k");
        let Some(k) = get(r, ck) else {
            return Err(bad(anyhow!("{}: a row without k", path.display())));
        };
        let key = if rest.is_empty() {
            model
        } else {
            format!("{model} ({rest})")
        };
        by.entry(key).or_default().push(figures::KSelectionRow {
            k: k as usize,
            recon_error: get(r, col("recon_error")),
            acc: get(r, col("acc")),
            nmi: get(r, col("nmi_max")),
            cophenetic: get(r, col("cophenetic")),
        });
    }
    Ok(by
        .into_iter()
        .map(|(key, mut rows)| {
            rows.sort_by_key(|r| r.k);
            figures::KSelectionPlot {
                title: format!("Choosing k: {key}"),
                rows,
            }
        })
        .collect())
}

/// A cell's name as a reader sees it: the model as the app names it, then its grid values.
fn cell_name(model: &str, params: &str) -> String {
    let shown = crate::engine::models::ModelKind::from_name(model)
        .map_or_else(|| model.to_owned(), |k| k.label().to_owned());
    if params.is_empty() {
        shown
    } else {
        format!("{shown} ({})", params.replace(';', ", "))
    }
}

/// Each successful run's values from runs.csv, by (model, params) and then column; empty when
/// the file is absent.
type RunValues = BTreeMap<(String, String), BTreeMap<String, Vec<f64>>>;

fn run_values(path: &Path, columns: &[&str]) -> Result<RunValues, CliError> {
    let mut out = RunValues::new();
    if !path.is_file() {
        return Ok(out);
    }
    let (header, rows) = read_table(path)?;
    let (cm, cp, ce) = (
        column(&header, "model"),
        column(&header, "params"),
        column(&header, "error"),
    );
    let field = |r: &Vec<String>, c: Option<usize>| c.and_then(|c| r.get(c)).cloned();
    for r in &rows {
        if field(r, ce).is_some_and(|e| !e.is_empty()) {
            continue;
        }
        let key = (
            field(r, cm).unwrap_or_default(),
            field(r, cp).unwrap_or_default(),
        );
        let entry = out.entry(key).or_default();
        for name in columns {
            if let Some(v) = field(r, column(&header, name)).as_deref().and_then(num) {
                entry.entry((*name).to_owned()).or_default().push(v);
            }
        }
    }
    Ok(out)
}

/// The curves of `sweep --keep-curves` (curves.csv: model, params, repeat, objective as
/// space-separated values), by cell in the order of `keys`; a later row of a run replaces an
/// earlier one. None when the file is absent.
fn read_curves(
    path: &Path,
    keys: &[(String, String)],
) -> Result<Option<Vec<Vec<Vec<f64>>>>, CliError> {
    if !path.is_file() {
        return Ok(None);
    }
    let (header, rows) = read_table(path)?;
    let col = |n: &str| {
        column(&header, n).ok_or_else(|| bad(anyhow!("{}: no `{n}` column", path.display())))
    };
    let (cm, cp, cr, co) = (
        col("model")?,
        col("params")?,
        col("repeat")?,
        col("objective")?,
    );
    let mut runs: BTreeMap<(String, String, String), Vec<f64>> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        let get = |c: usize| r.get(c).cloned().unwrap_or_default();
        let values = get(co)
            .split_whitespace()
            .map(|v| v.parse::<f64>())
            .collect::<Result<Vec<f64>, _>>()
            .map_err(|e| {
                bad(anyhow!(
                    "{}: record {}: objective: {e}",
                    path.display(),
                    i + 1
                ))
            })?;
        runs.insert((get(cm), get(cp), get(cr)), values);
    }
    Ok(Some(
        keys.iter()
            .map(|(m, p)| {
                runs.iter()
                    .filter(|((rm, rp, _), _)| rm == m && rp == p)
                    .map(|(_, v)| v.clone())
                    .collect()
            })
            .collect(),
    ))
}

/// The sweep's figures per cell: scores (ACC, NMI, ...) and time per run as dots with error
/// bars over the repeats, and the kept runs' convergence when the sweep kept it.
fn cell_figures(dir: &Path, cells: &[Value], page: &mut Page) -> Result<(), CliError> {
    let str_of = |c: &Value, k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let keys: Vec<(String, String)> = cells
        .iter()
        .map(|c| (str_of(c, "model"), str_of(c, "params")))
        .collect();
    let names: Vec<String> = keys.iter().map(|(m, p)| cell_name(m, p)).collect();
    let scores = [
        ("acc", "ACC"),
        ("nmi_max", "NMI (max)"),
        ("accuracy", "accuracy (SVM on H)"),
        ("class_acc", "accuracy (samples not given)"),
    ];
    let mut columns: Vec<&str> = scores.iter().map(|(m, _)| *m).collect();
    columns.push("seconds");
    let runs = run_values(&dir.join("runs.csv"), &columns)?;
    let series_of = |metric: &str, name: &str| -> Option<figures::ScoreSeries> {
        let stats: Vec<Option<(f64, f64)>> = cells
            .iter()
            .map(|c| mean_std(c.get("metrics").unwrap_or(&Value::Null), metric))
            .collect();
        stats
            .iter()
            .any(Option::is_some)
            .then(|| figures::ScoreSeries {
                name: name.to_owned(),
                runs: keys
                    .iter()
                    .map(|k| {
                        runs.get(k)
                            .and_then(|m| m.get(metric))
                            .cloned()
                            .unwrap_or_default()
                    })
                    .collect(),
                stats,
            })
    };
    let series: Vec<figures::ScoreSeries> = scores
        .iter()
        .filter_map(|(m, name)| series_of(m, name))
        .collect();
    if !series.is_empty() {
        page.add(
            "scores",
            "Scores per cell: the dot is the mean over the repeats, the bar ± one standard \
             deviation, the rings the single runs (ACC and NMI of a run are themselves means \
             over its k-means restarts).",
            &figures::CellScores {
                title: "Scores per cell (mean ± std over the repeats)".into(),
                x_desc: "score".into(),
                cells: names.clone(),
                series,
                log_x: false,
            },
        )?;
    }
    if let Some(time) = series_of("seconds", "seconds per run") {
        let (lo, hi) = time
            .stats
            .iter()
            .flatten()
            .map(|s| s.0)
            .chain(time.runs.iter().flatten().copied())
            .filter(|v| *v > 0.0)
            .fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
        page.add(
            "seconds",
            "Wall-clock time per run (fit and evaluation, one thread per run): mean ± std and \
             the single runs.",
            &figures::CellScores {
                title: "Time per run".into(),
                x_desc: "seconds per run".into(),
                cells: names.clone(),
                series: vec![time],
                log_x: hi > 20.0 * lo,
            },
        )?;
    }
    if let Some(curves) = read_curves(&dir.join("curves.csv"), &keys)? {
        page.add(
            "curves",
            "Convergence of every run kept by `sweep --keep-curves`: the objective divided by \
             its value after the first iteration, one colour per cell.",
            &figures::RunCurves {
                title: "Convergence of the runs".into(),
                groups: names.into_iter().zip(curves).collect(),
            },
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_param_takes_out_one_entry() {
        assert_eq!(
            split_param("a=1;reveal=0.1;b=2", "reveal"),
            ("a=1;b=2".to_owned(), Some("0.1".to_owned()))
        );
        assert_eq!(split_param("k=3", "reveal"), ("k=3".to_owned(), None));
    }

    #[test]
    fn html_is_escaped() {
        assert_eq!(esc("<a href=\"x\">&"), "&lt;a href=&quot;x&quot;&gt;&amp;");
    }

    #[test]
    fn square_images_need_eight_pixels_a_side() {
        assert_eq!(square_image(4), None);
        assert_eq!(square_image(64), Some((8, 8)));
        assert_eq!(square_image(1024), Some((32, 32)));
        assert_eq!(square_image(1000), None);
    }
}
