//! The one error type of the data layer.
//!
//! Every message starts with the file (or folder) and then names the place: the 1-based line
//! and the column (1-based index and header name) for tables, the row and column for arrays,
//! the file for images. Users see these messages verbatim in the GUI status line and on the
//! CLI's stderr, so they also say what was found and, where there is one, what to do.

use std::fmt;
use std::path::PathBuf;

/// A column of a table or array: its 1-based index and, when the file has a header, its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// 1-based column index, as a spreadsheet user counts.
    pub index: usize,
    /// Header name, when the file has a header.
    pub name: Option<String>,
}

impl fmt::Display for Column {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, "column {} (\"{}\")", self.index, name),
            None => write!(f, "column {}", self.index),
        }
    }
}

/// Where a bad value sits: a 1-based file line (text tables) or a 1-based array row
/// (`.npy`/`.mat`, where rows are samples), plus the column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// `"line"` for text files, `"row"` for `.npy` arrays, ``"`fea` row"`` for `.mat`.
    pub unit: &'static str,
    /// 1-based line or row number.
    pub number: usize,
    pub column: Column,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}, {}", self.unit, self.number, self.column)
    }
}

/// Errors from loading or preprocessing data. Every variant names the file and the place.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// A kind of input this loader does not read (or a feature of it it does not support).
    #[error("{path}: {why}", path = .path.display())]
    Unsupported { path: PathBuf, why: String },

    /// The path does not exist.
    #[error("{path}: no such file or folder", path = .path.display())]
    NotFound { path: PathBuf },

    /// An I/O error while reading a file.
    #[error("{path}: cannot read: {source}", path = .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A file or folder with no data in it (empty file, header only, empty folder).
    #[error("{path}: {why}", path = .path.display())]
    Empty { path: PathBuf, why: String },

    /// A table cell that is not a number.
    #[error(
        "{path}: {at}: expected a number, found {cell:?}",
        path = .path.display()
    )]
    NotANumber {
        path: PathBuf,
        at: Place,
        cell: String,
    },

    /// A table row with another number of fields than the first row.
    #[error(
        "{path}: line {line}: expected {expected} fields (as in line {first_line}), found {found}",
        path = .path.display()
    )]
    Ragged {
        path: PathBuf,
        line: usize,
        first_line: usize,
        expected: usize,
        found: usize,
    },

    /// NaN or ±Inf in the data.
    #[error(
        "{path}: {at}: found {value}; NMF needs finite numbers (fill or drop missing values first)",
        path = .path.display()
    )]
    NotFinite {
        path: PathBuf,
        at: Place,
        value: String,
    },

    /// A negative value while the preprocessing does not shift the data.
    #[error(
        "{path}: {at}: found negative value {value}; NMF needs nonnegative input \
         (use `--preprocess shift` to shift each feature by its minimum, or fix the data)",
        path = .path.display()
    )]
    Negative {
        path: PathBuf,
        at: Place,
        value: f64,
    },

    /// The label column named by the user is not in the header.
    #[error(
        "{path}: line {line}: no label column named {wanted:?}; the header has {available}",
        path = .path.display()
    )]
    UnknownLabelColumn {
        path: PathBuf,
        line: usize,
        wanted: String,
        available: String,
    },

    /// The label column index is past the last column.
    #[error(
        "{path}: line {line}: label column {index} does not exist; the file has {columns} columns",
        path = .path.display()
    )]
    LabelColumnOutOfRange {
        path: PathBuf,
        line: usize,
        /// 1-based.
        index: usize,
        columns: usize,
    },

    /// An empty label cell or label line.
    #[error("{path}: {at}: empty label", path = .path.display())]
    EmptyLabel { path: PathBuf, at: String },

    /// A table with only a label column (no features).
    #[error(
        "{path}: no feature columns: the only column, {column}, is the label column",
        path = .path.display()
    )]
    NoFeatures { path: PathBuf, column: Column },

    /// Images of different sizes without `--resize`.
    #[error(
        "{first}: image is {w1}×{h1} but {other} is {w2}×{h2}; all images must have the same \
         size (use `--resize WxH` to resize them all)",
        first = .first.display(),
        other = .other.display()
    )]
    ImageSizeMismatch {
        first: PathBuf,
        w1: u32,
        h1: u32,
        other: PathBuf,
        w2: u32,
        h2: u32,
    },

    /// An image file that cannot be decoded.
    #[error("{path}: cannot decode image: {cause}", path = .path.display())]
    BadImage { path: PathBuf, cause: String },

    /// An image larger than the decompression-bomb guard allows.
    #[error(
        "{path}: image is {width}×{height}, larger than the {max}×{max} limit; downscale it first",
        path = .path.display()
    )]
    ImageTooLarge {
        path: PathBuf,
        width: u32,
        height: u32,
        max: u32,
    },

    /// A labels file with another number of labels than the data has samples.
    #[error(
        "{labels}: has {count} labels but {data} has {n} samples",
        labels = .labels.display(),
        data = .data.display()
    )]
    LabelCountMismatch {
        data: PathBuf,
        n: usize,
        labels: PathBuf,
        count: usize,
    },

    /// A malformed `.npy` or `.mat` file, or one with an unexpected shape or type.
    #[error("{path}: {why}", path = .path.display())]
    BadArray { path: PathBuf, why: String },

    /// Writing a file failed (sample export).
    #[error("{path}: cannot write: {why}", path = .path.display())]
    Write { path: PathBuf, why: String },
}

/// Longest piece of user input echoed in a message, in characters.
pub const EXCERPT_CHARS: usize = 60;

/// A JSON file (constraints, session) that does not parse: where, and serde's message cut to
/// an excerpt, since serde quotes the offending value whole (a fuzzed 63 kB string once became
/// the message).
#[derive(Debug, thiserror::Error)]
#[error("{path}, line {line}, column {column}: {msg}")]
pub struct JsonAt {
    pub path: std::path::PathBuf,
    pub line: usize,
    pub column: usize,
    pub msg: String,
}

impl JsonAt {
    pub fn new(path: &std::path::Path, e: &serde_json::Error) -> Self {
        Self {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            msg: excerpt(&e.to_string()),
        }
    }
}

/// `s` as echoed in a message: whole when short, else its first [`EXCERPT_CHARS`] characters
/// and how long it is (a 100 kB cell must not become a 100 kB message).
pub fn excerpt(s: &str) -> String {
    let len = s.chars().count();
    if len <= EXCERPT_CHARS {
        return s.to_string();
    }
    let head: String = s.chars().take(EXCERPT_CHARS).collect();
    format!("{head}… ({len} characters)")
}

impl DataError {
    /// An [`DataError::Io`] for `path`, or [`DataError::NotFound`] when the error says so.
    /// A decoding failure, described by the innermost cause: the `image` crate's Display repeats
    /// its nested causes ("Format error decoding Png: X.: Format error decoding Png: X.: X.").
    pub(crate) fn bad_image(path: &std::path::Path, e: &image::ImageError) -> Self {
        let mut inner: &dyn std::error::Error = e;
        while let Some(next) = inner.source() {
            inner = next;
        }
        let format = match e {
            image::ImageError::Decoding(d) => format!("{:?}", d.format_hint()),
            _ => String::new(),
        };
        let cause = inner.to_string();
        let cause = if format.is_empty() || format.contains("Unknown") {
            cause
        } else {
            format!(
                "{cause} ({})",
                format.replace("Exact(", "").replace(')', "")
            )
        };
        DataError::BadImage {
            path: path.to_path_buf(),
            cause,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        let path = path.into();
        if source.kind() == std::io::ErrorKind::NotFound {
            DataError::NotFound { path }
        } else {
            DataError::Io { path, source }
        }
    }
}
