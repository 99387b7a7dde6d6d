//! NumPy `.npy` matrices: **rows are samples** (the NumPy/scikit-learn convention), so X is
//! the transpose. Float (f64, f32), integer and bool dtypes are read, little or big endian,
//! C or Fortran order.
//!
//! The data matrix is streamed: the header is parsed here ([`Header`]; ndarray-npy 0.9 keeps
//! its header parser private), then the values are read a few MiB at a time and written,
//! converted to f64, straight into their transposed place in the final m×n X. Reading the whole
//! file, parsing it into an array, converting and transposing that held three full-size copies
//! at once; streaming holds X and one chunk (docs/performance.md, "Streaming `.npy` loader and
//! row-wise passes (`data/npy.rs`, `data/preprocess.rs`, `data/mod.rs`)").
//!
//! Labels come from `opts.labels_file` (a text file with one label per line, or a `.npy`
//! vector) or, when that is not given, from a `labels.npy` (else a `y.npy`) beside the data
//! file.

use super::{DataError, Dataset, LoadOptions, Preprocess, check_array_value, value_ok};
use ndarray::{Array2, ArrayD, IxDyn, ShapeBuilder};
use std::fs::File;
use std::io::{BufReader, ErrorKind, Read};
use std::path::Path;

/// Values per streamed chunk: 2^19. The chunk as f64 plus its bytes (8 MiB for f64 data) are
/// small next to a large X (2.6 % of a 4096×10000 one), and large enough that the per-chunk
/// cost (one `read`, one pass) vanishes.
const CHUNK_VALUES: usize = 1 << 19;

/// Largest header accepted. numpy refuses headers over 10 kB by default; this is generous
/// while keeping a corrupt length field from allocating gigabytes.
const MAX_HEADER_BYTES: usize = 1 << 20;

/// Element types read (the ones the loader has always accepted; complex, string, object,
/// float16 and structured dtypes are refused).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    F64,
    F32,
    I64,
    I32,
    I16,
    I8,
    U64,
    U32,
    U16,
    U8,
    Bool,
}

/// A dtype: element type and byte order (one-byte types have none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Dtype {
    kind: Kind,
    big_endian: bool,
}

impl Dtype {
    /// The dtype of a `descr` string, or `None` when it is not one of the readable kinds.
    /// Accepts exactly the spellings ndarray-npy 0.9 accepted, so no file that loaded before
    /// is refused now.
    fn parse(descr: &str) -> Option<Self> {
        let one = |kind| {
            Some(Self {
                kind,
                big_endian: false,
            })
        };
        match descr {
            "|i1" | "i1" | "b" => return one(Kind::I8),
            "|u1" | "u1" | "B" => return one(Kind::U8),
            "|b1" => return one(Kind::Bool),
            _ => {}
        }
        let big_endian = match descr.as_bytes().first() {
            Some(b'<') => false,
            Some(b'>') => true,
            _ => return None,
        };
        let kind = match &descr[1..] {
            "f8" => Kind::F64,
            "f4" => Kind::F32,
            "i8" => Kind::I64,
            "i4" => Kind::I32,
            "i2" => Kind::I16,
            "u8" => Kind::U64,
            "u4" => Kind::U32,
            "u2" => Kind::U16,
            _ => return None,
        };
        Some(Self { kind, big_endian })
    }

    /// Bytes per element.
    fn size(self) -> usize {
        match self.kind {
            Kind::F64 | Kind::I64 | Kind::U64 => 8,
            Kind::F32 | Kind::I32 | Kind::U32 => 4,
            Kind::I16 | Kind::U16 => 2,
            Kind::I8 | Kind::U8 | Kind::Bool => 1,
        }
    }
}

/// Decode `out.len()` elements of `dtype` from `bytes` (exactly `out.len() * size` long) into
/// f64, with the same conversions as before (`as f64` for 64-bit integers, exact otherwise).
/// Fails with the first byte that is not a valid bool (0 or 1).
fn decode(dtype: Dtype, bytes: &[u8], out: &mut [f64]) -> Result<(), u8> {
    macro_rules! words {
        ($t:ty, $n:literal, $to:expr) => {{
            let (words, _) = bytes.as_chunks::<$n>();
            if dtype.big_endian {
                for (o, w) in out.iter_mut().zip(words) {
                    *o = $to(<$t>::from_be_bytes(*w));
                }
            } else {
                for (o, w) in out.iter_mut().zip(words) {
                    *o = $to(<$t>::from_le_bytes(*w));
                }
            }
        }};
    }
    match dtype.kind {
        Kind::F64 => words!(f64, 8, |v| v),
        Kind::F32 => words!(f32, 4, f64::from),
        Kind::I64 => words!(i64, 8, |v| v as f64),
        Kind::I32 => words!(i32, 4, f64::from),
        Kind::I16 => words!(i16, 2, f64::from),
        Kind::U64 => words!(u64, 8, |v| v as f64),
        Kind::U32 => words!(u32, 4, f64::from),
        Kind::U16 => words!(u16, 2, f64::from),
        Kind::I8 => words!(i8, 1, f64::from),
        Kind::U8 => words!(u8, 1, f64::from),
        Kind::Bool => {
            for (o, &b) in out.iter_mut().zip(bytes) {
                *o = match b {
                    0 => 0.0,
                    1 => 1.0,
                    _ => return Err(b),
                };
            }
        }
    }
    Ok(())
}

/// A Python literal, as far as `.npy` headers use them.
#[derive(Clone, Debug, PartialEq)]
enum Py {
    Str(String),
    Bool(bool),
    Int(u64),
    None,
    /// A tuple or a list.
    Seq(Vec<Py>),
    Dict(Vec<(Py, Py)>),
}

/// Recursive-descent parser of the header's dict literal (`{'descr': '<f8', 'fortran_order':
/// False, 'shape': (3, 4), }`), with a depth limit so a hostile header cannot overflow the
/// stack.
struct Lit<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Lit<'_> {
    fn ws(&mut self) {
        while self.s.get(self.pos).is_some_and(u8::is_ascii_whitespace) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        self.ws();
        let hit = self.s.get(self.pos) == Some(&b);
        if hit {
            self.pos += 1;
        }
        hit
    }

    /// Comma-separated items up to `close` (a trailing comma allowed), each read by `item`.
    fn items<T>(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Result<T, String>,
    ) -> Result<Vec<T>, String> {
        let mut out = Vec::new();
        loop {
            if self.eat(close) {
                return Ok(out);
            }
            out.push(item(self)?);
            if !self.eat(b',') {
                return if self.eat(close) {
                    Ok(out)
                } else {
                    Err(format!("expected ',' or '{}' in the header", close as char))
                };
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Py, String> {
        if depth > 16 {
            return Err("the header is nested too deeply".into());
        }
        self.ws();
        let Some(&c) = self.s.get(self.pos) else {
            return Err("the header ends early".into());
        };
        match c {
            b'\'' | b'"' => {
                self.pos += 1;
                let start = self.pos;
                while let Some(&b) = self.s.get(self.pos) {
                    if b == c {
                        let text = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
                        self.pos += 1;
                        return Ok(Py::Str(text));
                    }
                    self.pos += if b == b'\\' { 2 } else { 1 };
                }
                Err("unterminated string in the header".into())
            }
            b'(' | b'[' => {
                self.pos += 1;
                let close = if c == b'(' { b')' } else { b']' };
                Ok(Py::Seq(self.items(close, |l| l.value(depth + 1))?))
            }
            b'{' => {
                self.pos += 1;
                let pairs = self.items(b'}', |l| {
                    let k = l.value(depth + 1)?;
                    if !l.eat(b':') {
                        return Err("expected ':' in the header".into());
                    }
                    Ok((k, l.value(depth + 1)?))
                })?;
                Ok(Py::Dict(pairs))
            }
            _ => {
                let start = self.pos;
                while self
                    .s
                    .get(self.pos)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
                {
                    self.pos += 1;
                }
                let word = String::from_utf8_lossy(&self.s[start..self.pos]);
                match &*word {
                    "True" => Ok(Py::Bool(true)),
                    "False" => Ok(Py::Bool(false)),
                    "None" => Ok(Py::None),
                    w => w
                        // Python 2 wrote long integers with an `L` suffix.
                        .strip_suffix('L')
                        .unwrap_or(w)
                        .parse()
                        .map(Py::Int)
                        .map_err(|_| format!("unexpected {w:?} in the header")),
                }
            }
        }
    }
}

/// The parsed `.npy` header.
#[derive(Clone, Debug, PartialEq)]
struct Header {
    /// The `descr` string as written (for messages).
    descr: String,
    dtype: Dtype,
    fortran_order: bool,
    shape: Vec<usize>,
}

impl Header {
    /// Number of elements (the product of the shape; 1 for a 0-d array), if it fits.
    fn len(&self) -> Option<usize> {
        self.shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
    }

    /// The shape as `10000×4096` (or `()` for a 0-d array).
    fn shape_text(&self) -> String {
        if self.shape.is_empty() {
            return "()".into();
        }
        let dims: Vec<String> = self.shape.iter().map(usize::to_string).collect();
        dims.join("×")
    }
}

/// The header's dict before its dtype is looked at.
struct RawHeader {
    descr: Py,
    fortran_order: bool,
    shape: Vec<usize>,
}

/// Read the header and return it with the offset of the first data byte; the error says why
/// the file is not a readable `.npy` file (magic string, version, header syntax).
fn read_header(r: &mut impl Read) -> Result<(RawHeader, usize), String> {
    let io = |e: std::io::Error| match e.kind() {
        ErrorKind::UnexpectedEof => "the file ends inside the header".to_string(),
        _ => e.to_string(),
    };
    let mut pre = [0u8; 8];
    r.read_exact(&mut pre).map_err(io)?;
    if &pre[..6] != b"\x93NUMPY" {
        return Err("it does not start with the .npy magic string \\x93NUMPY".into());
    }
    let (major, minor) = (pre[6], pre[7]);
    let header_len = match major {
        1 => {
            let mut b = [0u8; 2];
            r.read_exact(&mut b).map_err(io)?;
            usize::from(u16::from_le_bytes(b))
        }
        2 | 3 => {
            let mut b = [0u8; 4];
            r.read_exact(&mut b).map_err(io)?;
            usize::try_from(u32::from_le_bytes(b)).unwrap_or(usize::MAX)
        }
        _ => return Err(format!("unknown .npy format version {major}.{minor}")),
    };
    if header_len > MAX_HEADER_BYTES {
        return Err(format!(
            "the header claims {header_len} bytes (at most {MAX_HEADER_BYTES} are read)"
        ));
    }
    let mut text = vec![0u8; header_len];
    r.read_exact(&mut text).map_err(io)?;
    if major < 3 && !text.is_ascii() {
        return Err("the header is not ASCII".into());
    }
    let offset = 6 + 2 + if major == 1 { 2 } else { 4 } + header_len;

    let mut lit = Lit { s: &text, pos: 0 };
    let Py::Dict(pairs) = lit.value(0)? else {
        return Err("the header is not a dict".into());
    };
    lit.ws();
    if lit.pos != text.len() {
        return Err("unexpected text after the header dict".into());
    }
    let (mut descr, mut fortran_order, mut shape) = (None, None, None);
    for (k, v) in pairs {
        match (k, v) {
            (Py::Str(k), v) if k == "descr" => descr = Some(v),
            (Py::Str(k), Py::Bool(b)) if k == "fortran_order" => fortran_order = Some(b),
            (Py::Str(k), Py::Seq(dims)) if k == "shape" => {
                let dims: Option<Vec<usize>> = dims
                    .iter()
                    .map(|d| match d {
                        Py::Int(d) => usize::try_from(*d).ok(),
                        _ => None,
                    })
                    .collect();
                shape = Some(dims.ok_or("the header's shape is not a tuple of sizes")?);
            }
            (k, v) => return Err(format!("unexpected header entry {k:?}: {v:?}")),
        }
    }
    let (Some(descr), Some(fortran_order), Some(shape)) = (descr, fortran_order, shape) else {
        return Err("the header lacks 'descr', 'fortran_order' or 'shape'".into());
    };
    Ok((
        RawHeader {
            descr,
            fortran_order,
            shape,
        },
        offset,
    ))
}

/// An open `.npy` file whose reader stands at the first data byte, its header, and the path
/// for messages.
struct Npy<'p> {
    path: &'p Path,
    reader: BufReader<File>,
    header: Header,
    /// Reused byte buffer of one chunk.
    bytes: Vec<u8>,
}

impl<'p> Npy<'p> {
    /// Open `path`, parse the header and check that the file holds exactly the data the header
    /// describes (so a truncated file is reported before anything is allocated for it).
    fn open(path: &'p Path) -> Result<Self, DataError> {
        let file = File::open(path).map_err(|e| DataError::io(path, e))?;
        let file_len = file.metadata().map_err(|e| DataError::io(path, e))?.len();
        let mut reader = BufReader::with_capacity(1 << 16, file);
        let bad = |why: String| DataError::BadArray {
            path: path.to_path_buf(),
            why,
        };
        let (raw, offset) =
            read_header(&mut reader).map_err(|e| bad(format!("not a readable .npy file: {e}")))?;
        // Structured dtypes have a list as `descr`: refused like every other unreadable dtype.
        let dtype = match &raw.descr {
            Py::Str(d) => Dtype::parse(d),
            _ => None,
        };
        let (Some(dtype), Py::Str(descr)) = (dtype, raw.descr) else {
            return Err(bad(
                "unsupported .npy dtype (expected a float, integer or bool array; \
                 complex, string and object arrays are not read)"
                    .into(),
            ));
        };
        let header = Header {
            descr,
            dtype,
            fortran_order: raw.fortran_order,
            shape: raw.shape,
        };
        let data_bytes = header
            .len()
            .and_then(|n| n.checked_mul(header.dtype.size()))
            .ok_or_else(|| {
                bad(format!(
                    "not a readable .npy file: the shape {} is too large",
                    header.shape_text()
                ))
            })?;
        let have = file_len.saturating_sub(offset as u64);
        if have != data_bytes as u64 {
            let what = if have < data_bytes as u64 {
                "truncated .npy file"
            } else {
                "not a readable .npy file"
            };
            return Err(bad(format!(
                "{what}: the header describes a {} array of {} ({data_bytes} bytes of data) \
                 but {have} bytes follow the header",
                header.shape_text(),
                header.descr,
            )));
        }
        let values = header.len().unwrap_or(usize::MAX) as u128;
        crate::engine::machine::limits::check_alloc(
            &format!("the {} array as f64", header.shape_text()),
            values,
            8,
        )
        .map_err(|t| bad(format!("{t}; use fewer samples or features")))?;
        Ok(Self {
            path,
            reader,
            header,
            bytes: Vec::new(),
        })
    }

    /// Read the next `out.len()` elements, converted to f64.
    fn read_into(&mut self, out: &mut [f64]) -> Result<(), DataError> {
        let n = out.len() * self.header.dtype.size();
        if self.bytes.len() < n {
            self.bytes.resize(n, 0);
        }
        let bytes = &mut self.bytes[..n];
        self.reader.read_exact(bytes).map_err(|e| {
            if e.kind() == ErrorKind::UnexpectedEof {
                DataError::BadArray {
                    path: self.path.to_path_buf(),
                    why: format!(
                        "truncated .npy file: the data ends before the {} values the header \
                         describes",
                        self.header.len().unwrap_or(0)
                    ),
                }
            } else {
                DataError::io(self.path, e)
            }
        })?;
        decode(self.header.dtype, bytes, out).map_err(|b| DataError::BadArray {
            path: self.path.to_path_buf(),
            why: format!("not a readable .npy file: byte {b:#04x} is not a bool (0 or 1)"),
        })
    }

    /// All elements in file order, as an array of the header's shape and order.
    fn read_all(mut self, chunk: usize) -> Result<ArrayD<f64>, DataError> {
        let len = self.header.len().unwrap_or(0);
        let mut v = vec![0.0; len];
        for part in v.chunks_mut(chunk.max(1)) {
            self.read_into(part)?;
        }
        let shape = IxDyn(&self.header.shape).set_f(self.header.fortran_order);
        ArrayD::from_shape_vec(shape, v).map_err(|e| DataError::BadArray {
            path: self.path.to_path_buf(),
            why: format!("not a readable .npy file: {e}"),
        })
    }

    /// The n×m array (rows = samples) as X = its transpose, m×n in standard layout, read in
    /// chunks straight into place; every value is checked (finite; nonnegative unless
    /// `preprocess` shifts), and the error names the first bad value in row-major order of the
    /// file's array, whatever order the file is stored in. `chunk` is the number of values read
    /// at a time ([`CHUNK_VALUES`]; tests pass small ones to cross every boundary).
    fn read_transposed(
        mut self,
        preprocess: Preprocess,
        chunk: usize,
    ) -> Result<Array2<f64>, DataError> {
        let chunk = chunk.max(1);
        let (n, m) = (self.header.shape[0], self.header.shape[1]);
        // Zeroed allocation: fresh pages from the OS, resident only once written; 2 MiB pages
        // when X is large (`sys::huge_page_buffer`: the NMF products walk it in column blocks).
        let mut x = crate::engine::machine::sys::huge_page_buffer(m * n);
        // (row, column, value) of the first bad value in row-major order.
        let mut first_bad: Option<(usize, usize, f64)> = None;
        if self.header.fortran_order {
            // Column-major n×m is row-major m×n: the file order is X's memory order.
            let mut start = 0;
            for part in x.chunks_mut(chunk) {
                self.read_into(part)?;
                if !part.iter().all(|&v| value_ok(v, preprocess)) {
                    for (t, &v) in part.iter().enumerate() {
                        let (j, i) = ((start + t) / n, (start + t) % n);
                        if !value_ok(v, preprocess) && first_bad.is_none_or(|b| (i, j) < (b.0, b.1))
                        {
                            first_bad = Some((i, j, v));
                        }
                    }
                }
                start += part.len();
            }
        } else {
            // Row-major: samples arrive one after another. Read blocks of whole rows (or, for
            // very long rows, pieces of one row), then write each feature's values of the
            // block as a contiguous run of X's row: reads stride within the block, which is
            // small enough to stay in cache.
            let rows_per = (chunk / m).max(1);
            let cols_per = m.min(chunk);
            let mut block = vec![0.0; rows_per.min(n) * cols_per];
            for i0 in (0..n).step_by(rows_per) {
                let rows = rows_per.min(n - i0);
                for j0 in (0..m).step_by(cols_per) {
                    let cols = cols_per.min(m - j0);
                    let blk = &mut block[..rows * cols];
                    self.read_into(blk)?;
                    if let Some(t) = blk.iter().position(|&v| !value_ok(v, preprocess)) {
                        first_bad = Some((i0 + t / cols, j0 + t % cols, blk[t]));
                        break;
                    }
                    for j in 0..cols {
                        let dst = &mut x[(j0 + j) * n + i0..][..rows];
                        for (d, &v) in dst.iter_mut().zip(blk[j..].iter().step_by(cols)) {
                            *d = v;
                        }
                    }
                }
                if first_bad.is_some() {
                    break;
                }
            }
        }
        if let Some((i, j, v)) = first_bad {
            check_array_value(v, self.path, preprocess, i, j)?;
        }
        Array2::from_shape_vec((m, n), x).map_err(|e| DataError::BadArray {
            path: self.path.to_path_buf(),
            why: format!("not a readable .npy file: {e}"),
        })
    }
}

/// Read an `.npy` file of any numeric dtype into an f64 array of any dimension (labels; small).
fn read_any(path: &Path) -> Result<ArrayD<f64>, DataError> {
    Npy::open(path)?.read_all(CHUNK_VALUES)
}

/// Load a `.npy` data matrix (rows = samples) and its labels, if any. A 3-D array
/// (n, height, width) is n grayscale images: each becomes a sample of height·width pixels in
/// row-major order (as `X.reshape(n, -1)` in NumPy), with its thumbnail, so the app shows the
/// samples and the basis as pictures.
pub fn load_npy(path: &Path, opts: &LoadOptions) -> Result<Dataset, DataError> {
    let mut npy = Npy::open(path)?;
    let (n, image) = match npy.header.shape.as_slice() {
        &[n, _] => (n, None),
        &[n, h, w] => (n, Some((w, h))),
        shape => {
            return Err(DataError::BadArray {
                path: path.to_path_buf(),
                why: format!(
                    "expected a 2-D array (rows = samples, columns = features) or a 3-D \
                     stack of images (n, height, width), found {}-D",
                    shape.len()
                ),
            });
        }
    };
    let m = npy.header.shape[1..]
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| DataError::BadArray {
            path: path.to_path_buf(),
            why: format!("the shape {} is too large", shape_text(&npy.header.shape)),
        })?;
    if n == 0 || m == 0 {
        return Err(DataError::Empty {
            path: path.to_path_buf(),
            why: format!("the array is {}: no data", shape_text(&npy.header.shape)),
        });
    }
    // (n, h, w) in C order is (n, h·w) with row-major pixels; in Fortran order it is (n, h·w)
    // in Fortran order with column-major pixels, put back in row-major order below.
    npy.header.shape = vec![n, m];
    let fortran = npy.header.fortran_order;
    let mut x = npy.read_transposed(opts.preprocess, CHUNK_VALUES)?;
    if let (Some((w, h)), true) = (image, fortran) {
        x = Array2::from_shape_fn((m, n), |(p, i)| x[[(p % w) * h + p / w, i]]);
    }
    let mut ds = Dataset::raw(x, path.display().to_string());
    ds.sample_names = (1..=n).map(|i| format!("row {i}")).collect();
    if let Some((w, h)) = image {
        super::attach_images(&mut ds, w, h, true);
    }
    Ok(ds)
}

fn shape_text(shape: &[usize]) -> String {
    shape
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join("×")
}

/// Read a 2-D `.npy` matrix of any numeric dtype as stored (rows × columns, no
/// preprocessing): factors for a warm start. Every entry must be finite; the error names the
/// file and the entry (1-based row, column).
pub fn read_matrix(path: &Path) -> Result<Array2<f64>, DataError> {
    let a = read_any(path)?;
    let a = a
        .into_dimensionality::<ndarray::Ix2>()
        .map_err(|e| DataError::BadArray {
            path: path.to_path_buf(),
            why: format!("expected a 2-D matrix: {e}"),
        })?;
    if let Some(((r, c), v)) = a.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(DataError::BadArray {
            path: path.to_path_buf(),
            why: format!(
                "row {}, column {}: found {v}; factors must be finite",
                r + 1,
                c + 1
            ),
        });
    }
    Ok(a)
}

/// Read labels: a `.npy` vector (any integer/float dtype; n or n×1) or a text file with one
/// label per line (blank lines at the end are ignored).
pub fn read_labels(path: &Path) -> Result<Vec<String>, DataError> {
    let is_npy = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    if is_npy {
        let a = read_any(path)?;
        let shape = a.shape().to_vec();
        let ok = shape.len() == 1 || (shape.len() == 2 && (shape[1] == 1 || shape[0] == 1));
        if !ok {
            return Err(DataError::BadArray {
                path: path.to_path_buf(),
                why: format!("expected a label vector, found an array of shape {shape:?}"),
            });
        }
        return a
            .iter()
            .enumerate()
            .map(|(i, &l)| {
                if l.is_finite() && l.fract() == 0.0 {
                    Ok(format!("{l}"))
                } else {
                    Err(DataError::BadArray {
                        path: path.to_path_buf(),
                        why: format!("element {}: label {l} is not an integer", i + 1),
                    })
                }
            })
            .collect();
    }
    let text = std::fs::read_to_string(path).map_err(|e| DataError::io(path, e))?;
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    lines[..end]
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if l.is_empty() {
                Err(DataError::EmptyLabel {
                    path: path.to_path_buf(),
                    at: format!("line {}", i + 1),
                })
            } else {
                Ok((*l).to_string())
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array, ShapeBuilder, array};
    use ndarray_npy::{ReadNpyExt, ReadableElement, WritableElement, write_npy};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::path::PathBuf;
    use tempfile::TempDir;

    /// Chunk sizes that put boundaries inside rows, at row ends and past the whole array.
    const CHUNKS: [usize; 6] = [1, 5, 23, 24, 100, CHUNK_VALUES];

    /// A version-1.0 `.npy` file made by hand: any descr, order and shape, raw data bytes.
    fn npy_file(dir: &TempDir, name: &str, header: &str, data: &[u8]) -> PathBuf {
        let mut h = header.as_bytes().to_vec();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(b' ');
        }
        h.push(b'\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&u16::try_from(h.len()).expect("short header").to_le_bytes());
        bytes.extend_from_slice(&h);
        bytes.extend_from_slice(data);
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).expect("write");
        p
    }

    fn header(descr: &str, fortran: bool, shape: &str) -> String {
        let f = if fortran { "True" } else { "False" };
        format!("{{'descr': '{descr}', 'fortran_order': {f}, 'shape': {shape}, }}")
    }

    fn transposed(p: &Path, pre: Preprocess, chunk: usize) -> Result<Array2<f64>, DataError> {
        Npy::open(p)?.read_transposed(pre, chunk)
    }

    /// The loader before streaming: ndarray-npy reads the whole array, then it is converted
    /// and transposed into standard layout.
    fn old_path<T: ReadableElement + Copy>(p: &Path, conv: fn(T) -> f64) -> Array2<f64> {
        let bytes = std::fs::read(p).expect("read");
        let a = ArrayD::<T>::read_npy(&bytes[..]).expect("old reader");
        let a = a
            .mapv(conv)
            .into_dimensionality::<ndarray::Ix2>()
            .expect("2-D");
        a.t().as_standard_layout().into_owned()
    }

    /// `a` written in C order and in Fortran order; both must load bit for bit as the old
    /// reader loads them, at every chunk size (`Shift` so that negative integers pass).
    fn check_both_orders<T>(dir: &TempDir, tag: &str, a: &Array2<T>, conv: fn(T) -> f64)
    where
        T: ReadableElement + WritableElement + Copy,
    {
        let mut f = Array::from_elem(a.dim().f(), a[[0, 0]]);
        f.assign(a);
        for (order, arr) in [("c", a.clone()), ("f", f)] {
            let p = dir.path().join(format!("{tag}_{order}.npy"));
            write_npy(&p, &arr).expect("write");
            let want = old_path::<T>(&p, conv);
            for chunk in CHUNKS {
                let got = transposed(&p, Preprocess::Shift, chunk).expect("load");
                assert!(got.is_standard_layout());
                let same = got
                    .iter()
                    .zip(want.iter())
                    .all(|(g, w)| g.to_bits() == w.to_bits());
                assert!(
                    same && got.dim() == want.dim(),
                    "{tag} {order} chunk {chunk}"
                );
            }
        }
    }

    #[test]
    fn a_stack_of_images_is_samples_of_row_major_pixels_in_either_order() {
        let dir = TempDir::new().expect("tempdir");
        // 4 images of 2 rows × 3 columns; pixel (r, c) of image i is 100i + 10r + c.
        let images = Array::from_shape_fn((4, 2, 3), |(i, r, c)| (100 * i + 10 * r + c) as f64);
        let mut fortran = Array::zeros((4, 2, 3).f());
        fortran.assign(&images);
        let want = Array2::from_shape_fn((6, 4), |(p, i)| (100 * i + 10 * (p / 3) + p % 3) as f64);
        for (order, arr) in [("c", images), ("f", fortran)] {
            let p = dir.path().join(format!("stack_{order}.npy"));
            write_npy(&p, &arr).expect("write");
            let ds = load_npy(&p, &LoadOptions::default()).expect(order);
            assert_eq!(ds.x, want, "{order}");
            assert_eq!(ds.image_shape, Some((3, 2)), "(width, height)");
            assert_eq!(ds.thumbnails.len(), 4);
        }
        let p = dir.path().join("four.npy");
        write_npy(&p, &Array::<f64, _>::zeros((2, 2, 2, 2))).expect("write");
        let err = load_npy(&p, &LoadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("four.npy") && err.contains("found 4-D"),
            "{err}"
        );
    }

    #[test]
    fn streaming_matches_the_old_reader_bit_for_bit() {
        let dir = TempDir::new().expect("tempdir");
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let (n, m) = (37, 23);
        let f64s = Array2::from_shape_fn((n, m), |_| rng.r#gen::<f64>() * 1e3);
        check_both_orders(&dir, "f64", &f64s, |v| v);
        let f32s = Array2::from_shape_fn((n, m), |_| rng.r#gen::<f32>());
        check_both_orders(&dir, "f32", &f32s, f64::from);
        let i64s = Array2::from_shape_fn((n, m), |_| rng.r#gen::<i64>() >> 2);
        check_both_orders(&dir, "i64", &i64s, |v| v as f64);
        let u16s = Array2::from_shape_fn((n, m), |_| rng.r#gen::<u16>());
        check_both_orders(&dir, "u16", &u16s, f64::from);
        let u8s = Array2::from_shape_fn((n, m), |_| rng.r#gen::<u8>());
        check_both_orders(&dir, "u8", &u8s, f64::from);
        let bools = Array2::from_shape_fn((n, m), |_| rng.r#gen::<bool>());
        check_both_orders(&dir, "bool", &bools, |v| if v { 1.0 } else { 0.0 });
        // One sample with more features than a chunk holds: pieces of a single row.
        let wide = Array2::from_shape_fn((2, 50), |(i, j)| (i * 100 + j) as f64);
        check_both_orders(&dir, "wide", &wide, |v| v);
    }

    #[test]
    fn big_endian_and_one_byte_dtypes() {
        let dir = TempDir::new().expect("tempdir");
        // 2 samples × 2 features, rows = samples.
        let vals = [1.5f32, 2.25, 3.0, 4.0];
        let be: Vec<u8> = vals.iter().flat_map(|v| v.to_be_bytes()).collect();
        let p = npy_file(&dir, "be.npy", &header(">f4", false, "(2, 2)"), &be);
        let want = array![[1.5, 3.0], [2.25, 4.0]];
        assert_eq!(transposed(&p, Preprocess::None, 3).expect("load"), want);
        let be: Vec<u8> = [7i16, -1, 300, 2]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        let p = npy_file(&dir, "i2.npy", &header(">i2", true, "(2, 2)"), &be);
        // Fortran order: a = [[7, 300], [-1, 2]], X = aᵀ.
        let got = transposed(&p, Preprocess::Shift, CHUNK_VALUES).expect("load");
        assert_eq!(got, array![[7.0, -1.0], [300.0, 2.0]]);
        let p = npy_file(
            &dir,
            "i1.npy",
            &header("|i1", false, "(1, 3)"),
            &[1, 0xff, 3],
        );
        assert_eq!(
            transposed(&p, Preprocess::Shift, 2).expect("load"),
            array![[1.0], [-1.0], [3.0]]
        );
    }

    #[test]
    fn first_bad_value_is_reported_in_row_major_order_whatever_the_storage() {
        let dir = TempDir::new().expect("tempdir");
        // a = [[1, -2], [3, 4], [-5, NaN]]: row-major, the first bad value is row 1, column 2;
        // in Fortran storage -5 (row 3, column 1) comes first in the file.
        let a = [[1.0f64, -2.0], [3.0, 4.0], [-5.0, f64::NAN]];
        let c: Vec<u8> = a.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
        let f: Vec<u8> = (0..2)
            .flat_map(|j| (0..3).map(move |i| a[i][j]))
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let pc = npy_file(&dir, "c.npy", &header("<f8", false, "(3, 2)"), &c);
        let pf = npy_file(&dir, "f.npy", &header("<f8", true, "(3, 2)"), &f);
        for p in [&pc, &pf] {
            for chunk in CHUNKS {
                let e = transposed(p, Preprocess::None, chunk).expect_err("negative");
                let msg = e.to_string();
                assert!(
                    msg.contains("row 1, column 2") && msg.contains("-2"),
                    "{msg}"
                );
                // Shift accepts negatives; the NaN is still refused, at its place.
                let msg = transposed(p, Preprocess::Shift, chunk)
                    .expect_err("NaN")
                    .to_string();
                assert!(
                    msg.contains("row 3, column 2") && msg.contains("NaN"),
                    "{msg}"
                );
            }
        }
    }

    #[test]
    fn truncated_extra_and_corrupt_data_are_named() {
        let dir = TempDir::new().expect("tempdir");
        let p = npy_file(
            &dir,
            "short.npy",
            &header("<f8", false, "(3, 2)"),
            &[0u8; 40],
        );
        let msg = Npy::open(&p).err().expect("truncated").to_string();
        assert!(
            msg.contains("short.npy") && msg.contains("truncated"),
            "{msg}"
        );
        assert!(msg.contains("3×2") && msg.contains("48 bytes") && msg.contains("40"));
        let p = npy_file(&dir, "long.npy", &header("<f8", false, "(1, 1)"), &[0u8; 9]);
        let msg = Npy::open(&p).err().expect("extra").to_string();
        assert!(
            msg.contains("not a readable .npy") && msg.contains("9 bytes"),
            "{msg}"
        );
        let p = npy_file(&dir, "b.npy", &header("|b1", false, "(1, 2)"), &[1, 2]);
        let msg = transposed(&p, Preprocess::None, 8)
            .expect_err("bad bool")
            .to_string();
        assert!(msg.contains("0x02") && msg.contains("b.npy"), "{msg}");
        let p = dir.path().join("hdr.npy");
        std::fs::write(&p, b"\x93NUMPY\x01\x00\x40\x00{'descr'").expect("write");
        let msg = Npy::open(&p).err().expect("short header").to_string();
        assert!(msg.contains("not a readable .npy file"), "{msg}");
    }

    #[test]
    fn header_spellings() {
        let dir = TempDir::new().expect("tempdir");
        let data: Vec<u8> = [1.0f64, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        // Key order, double quotes, Python 2 longs, no trailing comma.
        let h = "{\"shape\": (1L, 2L), \"fortran_order\": False, \"descr\": \"<f8\"}";
        let p = npy_file(&dir, "spell.npy", h, &data);
        assert_eq!(
            transposed(&p, Preprocess::None, 1).expect("load"),
            array![[1.0], [2.0]]
        );
        // Version 2.0 (4-byte header length).
        let mut text = header("<f8", false, "(2,)").into_bytes();
        while !(12 + text.len() + 1).is_multiple_of(64) {
            text.push(b' ');
        }
        text.push(b'\n');
        let mut bytes = b"\x93NUMPY\x02\x00".to_vec();
        bytes.extend_from_slice(&u32::try_from(text.len()).expect("len").to_le_bytes());
        bytes.extend_from_slice(&text);
        bytes.extend_from_slice(&data);
        let p = dir.path().join("v2.npy");
        std::fs::write(&p, bytes).expect("write");
        let a = read_any(&p).expect("v2");
        assert_eq!(a.shape(), [2]);
        assert_eq!(a.iter().copied().collect::<Vec<_>>(), [1.0, 2.0]);
        // 0-d and 3-d arrays read; Fortran 3-d keeps its logical order.
        let p = npy_file(&dir, "s.npy", &header("<f8", false, "()"), &data[..8]);
        assert_eq!(read_any(&p).expect("0-d").shape(), [0usize; 0]);
        let cube: Vec<u8> = (0..8u8).collect();
        let p = npy_file(&dir, "cube.npy", &header("|u1", true, "(2, 2, 2)"), &cube);
        let a = read_any(&p).expect("3-d");
        assert_eq!(a[[1, 0, 0]], 1.0);
        assert_eq!(a[[0, 1, 0]], 2.0);
        assert_eq!(a[[0, 0, 1]], 4.0);
        // Unsupported: complex, float16, structured.
        for (name, descr) in [
            ("c.npy", "'<c16'"),
            ("h.npy", "'<f2'"),
            ("s2.npy", "[('a', '<f8')]"),
        ] {
            let h = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': (1,), }}");
            let p = npy_file(
                &dir,
                name,
                &h,
                &[0u8; 16][..if name == "h.npy" { 2 } else { 16 }],
            );
            let msg = Npy::open(&p).err().expect("unsupported").to_string();
            assert!(msg.contains("unsupported .npy dtype"), "{name}: {msg}");
        }
    }
}
