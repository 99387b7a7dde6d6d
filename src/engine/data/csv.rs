//! Delimited text tables (`.csv`, `.tsv`, `.txt`): one sample per line.
//!
//! The delimiter is sniffed among `,` `;` and tab; a header is detected when the first row
//! has a non-numeric cell outside the label column; the label column is chosen by
//! [`LabelColumn`]. Every error names the file, the 1-based line and the column (index and
//! header name), because that is what a user needs to open the file and fix it.

use super::labels::index_labels;
use super::{
    Column, DataError, Dataset, LabelColumn, LoadOptions, Place, Preprocess, check_value, excerpt,
};
use crate::engine::machine::limits;
use ndarray::Array2;
use std::path::Path;

/// Candidate delimiters, in order of preference on ties.
const DELIMITERS: [u8; 3] = [b',', b'\t', b';'];

/// Count `delim` outside double quotes in one line.
fn count_outside_quotes(line: &str, delim: u8) -> usize {
    let mut quoted = false;
    let mut n = 0;
    for b in line.bytes() {
        if b == b'"' {
            quoted = !quoted;
        } else if b == delim && !quoted {
            n += 1;
        }
    }
    n
}

/// Pick the delimiter that occurs (outside quotes) the same nonzero number of times on the
/// first few lines, preferring the one with more fields; `,` when nothing fits (one column).
pub fn sniff_delimiter(text: &str) -> u8 {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(10)
        .collect();
    let Some(first) = lines.first() else {
        return b',';
    };
    let mut best: Option<(bool, usize, u8)> = None;
    for d in DELIMITERS {
        let c0 = count_outside_quotes(first, d);
        if c0 == 0 {
            continue;
        }
        let consistent = lines.iter().all(|l| count_outside_quotes(l, d) == c0);
        let key = (consistent, c0, d);
        if best.is_none_or(|b| (key.0, key.1) > (b.0, b.1)) {
            best = Some(key);
        }
    }
    best.map_or(b',', |b| b.2)
}

/// Parse a cell as a number. With `;` as delimiter a decimal comma (`1,5`) is accepted too,
/// as spreadsheets in many locales write it.
fn parse_number(cell: &str, decimal_comma: bool) -> Option<f64> {
    match cell.parse::<f64>() {
        Ok(v) => Some(v),
        Err(_) if decimal_comma && cell.matches(',').count() == 1 && !cell.contains('.') => {
            cell.replace(',', ".").parse::<f64>().ok()
        }
        Err(_) => None,
    }
}

/// Bytes held per parsed cell while loading: the row-major values and, at the end, X
/// transposed beside them.
const BYTES_PER_CELL: u128 = 16;

/// Bytes at the start of the text whose line lengths estimate the number of rows.
const ESTIMATE_SAMPLE: usize = 64 << 10;

/// Load a delimited table. See the module docs for the rules.
pub fn load_table(path: &Path, opts: &LoadOptions) -> Result<Dataset, DataError> {
    load_table_within(path, opts, limits::available_bytes)
}

/// [`load_table`] with the memory budget from `memory` (bytes; asked before reading the
/// file and again once it is read). A file that would not fit is refused before the cells
/// are allocated: once from the row count the first [`ESTIMATE_SAMPLE`] bytes predict, and
/// again as rows accumulate (a cap on the parsed cells), so a file whose first rows mislead
/// the estimate is refused when the cap is reached, not after filling memory.
pub(crate) fn load_table_within(
    path: &Path,
    opts: &LoadOptions,
    memory: impl Fn() -> u64,
) -> Result<Dataset, DataError> {
    let bytes = read_within(path, &memory)?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() {
        return Err(DataError::Empty {
            path: path.to_path_buf(),
            why: "the file is empty".into(),
        });
    }
    let is_tsv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("tsv") || e.eq_ignore_ascii_case("tab"));
    let delimiter = if is_tsv { b'\t' } else { sniff_delimiter(text) };
    let decimal_comma = delimiter == b';';
    let mut records = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .trim(::csv::Trim::All)
        .from_reader(text.as_bytes())
        .into_records();

    let (first, first_line) = first_record(path, &mut records)?;
    let layout = Layout::read(path, &opts.label_column, &first, first_line, decimal_comma)?;
    let mut rows = Rows::new(path, &layout, text, memory(), opts, decimal_comma)?;
    if layout.header.is_none() {
        rows.push(&first, first_line)?;
    }
    for rec in records {
        let rec = rec.map_err(|e| parse_error(path, &e))?;
        let line = rec.position().map_or(0, |p| p.line() as usize);
        if rec.len() == 1 && rec.iter().all(str::is_empty) {
            continue; // a blank (whitespace-only) line
        }
        rows.push(&rec, line)?;
    }
    rows.into_dataset()
}

/// The refusal for a table that does not fit the memory budget.
fn too_large(path: &Path, t: limits::TooLarge) -> DataError {
    DataError::Unsupported {
        path: path.to_path_buf(),
        why: format!("{t}; use fewer samples or features (split the file, or drop columns)"),
    }
}

/// A record the csv reader cannot parse, named by its line.
fn parse_error(path: &Path, e: &::csv::Error) -> DataError {
    let line = e.position().map_or(0, |p| p.line() as usize);
    DataError::Unsupported {
        path: path.to_path_buf(),
        why: format!("line {line}: cannot parse as a table: {e}"),
    }
}

/// The file's bytes, after checking that the text itself fits the budget.
fn read_within(path: &Path, memory: &impl Fn() -> u64) -> Result<Vec<u8>, DataError> {
    if let Ok(meta) = std::fs::metadata(path) {
        limits::check_against(
            &format!("reading the file ({})", limits::human(meta.len())),
            u128::from(meta.len()),
            1,
            memory(),
        )
        .map_err(|t| too_large(path, t))?;
    }
    std::fs::read(path).map_err(|e| DataError::io(path, e))
}

/// The first non-blank record (a header or the first data row) and its line.
fn first_record(
    path: &Path,
    records: &mut impl Iterator<Item = Result<::csv::StringRecord, ::csv::Error>>,
) -> Result<(::csv::StringRecord, usize), DataError> {
    for rec in records {
        let r = rec.map_err(|e| parse_error(path, &e))?;
        let line = r.position().map_or(1, |p| p.line() as usize);
        if !r.iter().all(str::is_empty) {
            return Ok((r, line));
        }
    }
    Err(DataError::Empty {
        path: path.to_path_buf(),
        why: "the file has no rows".into(),
    })
}

/// What the first record tells about the table: its width, its header and its label column.
struct Layout<'a> {
    path: &'a Path,
    ncols: usize,
    first_line: usize,
    header: Option<Vec<String>>,
    label_col: Option<usize>,
    /// Features: the columns other than the label column.
    m: usize,
}

impl<'a> Layout<'a> {
    fn read(
        path: &'a Path,
        wanted: &LabelColumn,
        first: &::csv::StringRecord,
        first_line: usize,
        decimal_comma: bool,
    ) -> Result<Self, DataError> {
        let ncols = first.len();
        // A label column given by index is known before we know whether there is a header.
        let label_index = match wanted {
            LabelColumn::Index(i) if *i >= ncols => {
                return Err(DataError::LabelColumnOutOfRange {
                    path: path.to_path_buf(),
                    line: first_line,
                    index: i + 1,
                    columns: ncols,
                });
            }
            LabelColumn::Index(i) => Some(*i),
            _ => None,
        };
        let has_header = first
            .iter()
            .enumerate()
            .any(|(j, cell)| Some(j) != label_index && parse_number(cell, decimal_comma).is_none());
        let header: Option<Vec<String>> =
            has_header.then(|| first.iter().map(String::from).collect());
        let label_col = match wanted {
            LabelColumn::None => None,
            LabelColumn::Index(_) => label_index,
            LabelColumn::Auto => header.as_ref().and_then(|h| {
                h.iter()
                    .position(|s| s.eq_ignore_ascii_case("label"))
                    .or_else(|| h.iter().position(|s| s.eq_ignore_ascii_case("class")))
            }),
            LabelColumn::Name(name) => {
                Some(named_column(path, header.as_deref(), name, first_line)?)
            }
        };
        let layout = Self {
            path,
            ncols,
            first_line,
            m: ncols - usize::from(label_col.is_some()),
            header,
            label_col,
        };
        if layout.m == 0 {
            return Err(DataError::NoFeatures {
                path: path.to_path_buf(),
                column: layout.column(label_col.unwrap_or(0)),
            });
        }
        Ok(layout)
    }

    /// Column `j` (0-based) as errors name it: its 1-based index and header name.
    fn column(&self, j: usize) -> Column {
        Column {
            index: j + 1,
            name: self
                .header
                .as_ref()
                .and_then(|h| h.get(j).map(|s| excerpt(s))),
        }
    }
}

/// The header column named `name` (exactly, else ignoring case), or the error listing the
/// columns there are.
fn named_column(
    path: &Path,
    header: Option<&[String]>,
    name: &str,
    line: usize,
) -> Result<usize, DataError> {
    let found = header.and_then(|h| {
        h.iter()
            .position(|s| s == name)
            .or_else(|| h.iter().position(|s| s.eq_ignore_ascii_case(name)))
    });
    found.ok_or_else(|| DataError::UnknownLabelColumn {
        path: path.to_path_buf(),
        line,
        wanted: name.to_owned(),
        available: match header {
            Some(h) => format!(
                "columns {}",
                h.iter()
                    .map(|s| format!("{:?}", excerpt(s)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => "no header row (use a column index instead)".to_string(),
        },
    })
}

/// The data rows parsed so far, within a cap on the cells the memory budget allows.
struct Rows<'a> {
    layout: &'a Layout<'a>,
    preprocess: Preprocess,
    decimal_comma: bool,
    budget: u64,
    cap_cells: usize,
    /// n×m row-major (rows = samples).
    values: Vec<f64>,
    raw_labels: Vec<String>,
    names: Vec<String>,
}

impl<'a> Rows<'a> {
    /// Refuses up front when the rows the first bytes predict would not fit.
    fn new(
        path: &Path,
        layout: &'a Layout<'a>,
        text: &str,
        budget: u64,
        opts: &LoadOptions,
        decimal_comma: bool,
    ) -> Result<Self, DataError> {
        let cap_cells = usize::try_from(u128::from(budget) / BYTES_PER_CELL).unwrap_or(usize::MAX);
        let sample = &text.as_bytes()[..text.len().min(ESTIMATE_SAMPLE)];
        let sample_lines = sample.iter().filter(|&&b| b == b'\n').count().max(1);
        let est_rows = (text.len() as u128 * sample_lines as u128).div_ceil(sample.len() as u128);
        let rows = Self {
            layout,
            preprocess: opts.preprocess,
            decimal_comma,
            budget,
            cap_cells,
            values: Vec::new(),
            raw_labels: Vec::new(),
            names: Vec::new(),
        };
        let m = layout.m as u128;
        // Every cell takes at least two bytes of text ("1,"): no estimate goes beyond that.
        let est_cells = (est_rows * m).min(text.len() as u128 / 2 + m);
        if est_cells > cap_cells as u128 {
            return Err(rows.refuse(path, est_rows, "about", " (estimated from the file size)"));
        }
        Ok(Self {
            values: Vec::with_capacity(usize::try_from(est_cells).unwrap_or(0).min(cap_cells)),
            ..rows
        })
    }

    /// The refusal for `rows` samples; `how` is "about" (estimated) or "at least" (counted).
    fn refuse(&self, path: &Path, rows: u128, how: &str, at: &str) -> DataError {
        let m = self.layout.m;
        too_large(
            path,
            limits::TooLarge {
                what: format!(
                    "X of {how} {rows} samples{at} × {m} features (f64, held twice while loading)"
                ),
                bytes: u64::try_from(rows * m as u128 * BYTES_PER_CELL).unwrap_or(u64::MAX),
                available: self.budget,
            },
        )
    }

    /// Parse and check one data row at `line`.
    fn push(&mut self, rec: &::csv::StringRecord, line: usize) -> Result<(), DataError> {
        let layout = self.layout;
        let path = layout.path;
        if rec.len() != layout.ncols {
            return Err(DataError::Ragged {
                path: path.to_path_buf(),
                line,
                first_line: layout.first_line,
                expected: layout.ncols,
                found: rec.len(),
            });
        }
        let m = layout.m;
        if self.values.len() + m > self.cap_cells {
            let counted = self.names.len() as u128 + 1;
            return Err(self.refuse(path, counted, "at least", &format!(" (by line {line})")));
        }
        if self.values.len() + m > self.values.capacity() {
            // Grow by doubling, but never past the cap.
            let want = (2 * self.values.capacity())
                .max(self.values.len() + m)
                .min(self.cap_cells);
            self.values.reserve_exact(want - self.values.len());
        }
        for (j, cell) in rec.iter().enumerate() {
            let place = || Place {
                unit: "line",
                number: line,
                column: layout.column(j),
            };
            if Some(j) == layout.label_col {
                if cell.is_empty() {
                    return Err(DataError::EmptyLabel {
                        path: path.to_path_buf(),
                        at: place().to_string(),
                    });
                }
                self.raw_labels.push(cell.to_string());
                continue;
            }
            let Some(v) = parse_number(cell, self.decimal_comma) else {
                return Err(DataError::NotANumber {
                    path: path.to_path_buf(),
                    at: place(),
                    cell: excerpt(cell),
                });
            };
            check_value(v, path, self.preprocess, || excerpt(cell), place)?;
            self.values.push(v);
        }
        self.names.push(format!("row {line}"));
        Ok(())
    }

    /// The dataset: X (m×n) from the rows, sample and feature names, and the labels.
    fn into_dataset(self) -> Result<Dataset, DataError> {
        let layout = self.layout;
        let path = layout.path;
        let n = self.names.len();
        if n == 0 {
            return Err(DataError::Empty {
                path: path.to_path_buf(),
                why: format!(
                    "line {} is a header but there are no data rows",
                    layout.first_line
                ),
            });
        }
        let xt = Array2::from_shape_vec((n, layout.m), self.values).map_err(|e| {
            DataError::BadArray {
                path: path.to_path_buf(),
                why: format!("internal shape error: {e}"),
            }
        })?;
        let x = xt.t().as_standard_layout().into_owned();
        let mut ds = Dataset::raw(x, path.display().to_string());
        ds.sample_names = self.names;
        if let Some(h) = &layout.header {
            ds.feature_names = h
                .iter()
                .enumerate()
                .filter(|&(j, _)| Some(j) != layout.label_col)
                .map(|(_, name)| name.trim().to_owned())
                .collect();
        }
        if layout.label_col.is_some() {
            let (labels, class_names) = index_labels(&self.raw_labels);
            ds.labels = Some(labels);
            ds.class_names = class_names;
        }
        Ok(ds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_delimiters() {
        assert_eq!(sniff_delimiter("a,b,c\n1,2,3\n"), b',');
        assert_eq!(sniff_delimiter("a;b;c\n1,5;2,5;3\n"), b';');
        assert_eq!(sniff_delimiter("a\tb\n1\t2\n"), b'\t');
        assert_eq!(sniff_delimiter("\"x,y\";b\n1;2\n"), b';');
        assert_eq!(sniff_delimiter("single\n1\n"), b',');
    }

    fn table(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.csv");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    const ROW: &str = "1,2,3,4,5,6,7,8,9,10\n";

    #[test]
    fn a_table_over_the_budget_is_refused_from_its_estimated_size() {
        // 2000 rows × 10 cells, 16 bytes each while loading: 312.5 KiB.
        let (_dir, path) = table(&ROW.repeat(2000));
        let opts = LoadOptions::default();
        let e = load_table_within(&path, &opts, || 100_000)
            .unwrap_err()
            .to_string();
        assert!(e.contains("big.csv"), "{e}");
        assert!(
            e.contains(
                "X of about 2000 samples (estimated from the file size) × 10 features (f64, held \
                 twice while loading) would need 312.5 KiB but only 97.7 KiB of memory is \
                 available; use fewer samples or features"
            ),
            "{e}"
        );
        assert_eq!(
            load_table_within(&path, &opts, || 1 << 20).unwrap().n(),
            2000
        );
    }

    #[test]
    fn a_table_whose_first_rows_mislead_the_estimate_is_refused_at_the_cell_cap() {
        // 64 rows padded to 1 KiB (trimmed away) make the estimate ~1000 rows, within the
        // budget of 62,500 cells (1 MB); the 40,000 short rows after them reach the cap at
        // row 6251.
        let long = format!("{}{}\n", ROW.trim_end(), " ".repeat(1000));
        let text = long.repeat(64) + &ROW.repeat(40_000);
        let (_dir, path) = table(&text);
        let e = load_table_within(&path, &LoadOptions::default(), || 1_000_000)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("big.csv") && e.contains("X of at least 6251 samples (by line 6251) × 10"),
            "{e}"
        );
    }

    #[test]
    fn a_file_larger_than_the_budget_is_not_read() {
        let (_dir, path) = table(&ROW.repeat(100));
        let e = load_table_within(&path, &LoadOptions::default(), || 1000)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("big.csv") && e.contains("reading the file (2.1 KiB)"),
            "{e}"
        );
    }

    #[test]
    fn a_header_names_the_features_and_not_the_label_column() {
        let (_dir, path) = table("width, class ,height\n1,a,2\n3,b,4\n");
        let ds = load_table(&path, &LoadOptions::default()).unwrap();
        assert_eq!(ds.feature_names, ["width", "height"]);
        assert_eq!(ds.feature_name(1), "height");
        let (_dir, path) = table("1,2\n3,4\n");
        let ds = load_table(&path, &LoadOptions::default()).unwrap();
        assert!(ds.feature_names.is_empty());
        assert_eq!(ds.feature_name(1), "feature 2");
    }
}
