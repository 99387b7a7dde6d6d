//! A walk over the elements of a MATLAB v5 file before it is handed to `matfile`.
//!
//! `matfile` trusts the file: a tag claiming more bytes than follow, dimensions whose product
//! overflows, or a compressed element that inflates without bound make it panic, print or
//! allocate what the file asks for. This walk reads only tags and the small sub-elements
//! (flags, dimensions, name) and refuses, naming the variable where it can be read:
//!
//! * an element that runs past the end of the file (a truncated `gnd` must not load as "no
//!   labels");
//! * negative dimensions, or dimensions whose product does not match the data stored;
//! * a compressed element whose inner element is larger than memory allows
//!   ([`crate::engine::machine::limits`]) or that inflates past its declared size (a zlib bomb): inflate
//!   stops at the declared size plus one byte.
//!
//! It returns the file with every compressed element inflated (bounded), so that `matfile`
//! never inflates anything itself.

use crate::engine::machine::limits;
use std::io::Read;

/// miINT8 … miUTF32 sizes by MAT type code (0 = not a numeric type).
fn type_size(t: u32) -> usize {
    match t {
        1 | 2 | 16 => 1,  // miINT8, miUINT8, miUTF8
        3 | 4 | 17 => 2,  // miINT16, miUINT16, miUTF16
        5..=7 | 18 => 4,  // miINT32, miUINT32, miSINGLE, miUTF32
        9 | 12 | 13 => 8, // miDOUBLE, miINT64, miUINT64
        _ => 0,
    }
}

const MI_MATRIX: u32 = 14;
const MI_COMPRESSED: u32 = 15;
const MX_SPARSE: u32 = 5;

struct Endian(bool);

impl Endian {
    fn u32(&self, b: &[u8], at: usize) -> Option<u32> {
        let w: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
        Some(if self.0 {
            u32::from_be_bytes(w)
        } else {
            u32::from_le_bytes(w)
        })
    }
}

/// One sub-element: its type, its data and the offset of the next one.
fn sub_element<'a>(e: &Endian, b: &'a [u8], at: usize) -> Result<(u32, &'a [u8], usize), String> {
    let w0 = e.u32(b, at).ok_or("truncated sub-element tag")?;
    if w0 >> 16 != 0 {
        // Small data element: type and size in one word, up to 4 bytes of data.
        let (t, n) = (w0 & 0xffff, (w0 >> 16) as usize);
        let data = b
            .get(at + 4..at + 4 + n.min(4))
            .ok_or("truncated small element")?;
        return Ok((t, data, at + 8));
    }
    let n = e.u32(b, at + 4).ok_or("truncated sub-element tag")? as usize;
    let start = at + 8;
    let data = b.get(start..start.saturating_add(n)).ok_or_else(|| {
        format!(
            "a sub-element claims {n} bytes but {} remain",
            b.len().saturating_sub(start)
        )
    })?;
    Ok((w0, data, start + n.next_multiple_of(8)))
}

/// The name of a (possibly truncated) miMATRIX body, for messages.
fn matrix_name(e: &Endian, body: &[u8]) -> Option<String> {
    let (_, _, p) = sub_element(e, body, 0).ok()?;
    let (_, _, p) = sub_element(e, body, p).ok()?;
    let (_, name, _) = sub_element(e, body, p).ok()?;
    Some(String::from_utf8_lossy(name).chars().take(64).collect())
}

fn named(name: &Option<String>) -> String {
    match name {
        Some(n) if !n.is_empty() => format!("variable `{n}`"),
        _ => "a variable".to_string(),
    }
}

/// Check one miMATRIX body (flags, dimensions, name, real part).
fn check_matrix(e: &Endian, body: &[u8]) -> Result<(), String> {
    let name = matrix_name(e, body);
    let who = named(&name);
    let (_, flags, p) = sub_element(e, body, 0).map_err(|w| format!("{who}: {w}"))?;
    let class = e.u32(flags, 0).map_or(0, |f| f & 0xff);
    let (_, dims, p) = sub_element(e, body, p).map_err(|w| format!("{who}: {w}"))?;
    let mut count: u128 = 1;
    let mut shown = Vec::new();
    for c in dims.chunks_exact(4) {
        let d = e.u32(c, 0).unwrap_or(0) as i32;
        if d < 0 {
            return Err(format!("{who}: negative dimension {d}"));
        }
        shown.push(d.to_string());
        count = count.saturating_mul(d as u128);
    }
    let (_, _, p) = sub_element(e, body, p).map_err(|w| format!("{who}: {w}"))?;
    if class == MX_SPARSE || !(6..=15).contains(&class) {
        return Ok(()); // not numeric: matfile skips it; the loader names what is missing
    }
    let (t, real, _) = sub_element(e, body, p).map_err(|w| format!("{who}: {w}"))?;
    let size = type_size(t);
    if size == 0 || real.len() % size != 0 || (real.len() / size) as u128 != count {
        return Err(format!(
            "{who} is {} but holds {} bytes of data (the file is damaged)",
            shown.join("×"),
            real.len()
        ));
    }
    limits::check_alloc(
        &format!("{who} ({} values as f64)", shown.join("×")),
        count,
        8,
    )
    .map_err(|t| t.to_string())?;
    Ok(())
}

/// Walk the elements after the 128-byte header; return the file with compressed elements
/// inflated, or a message saying what is wrong and where.
pub(crate) fn prewalk(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let e = match bytes.get(126..128) {
        Some(b"IM") => Endian(false),
        Some(b"MI") => Endian(true),
        _ => return Err("bad endian indicator in the MAT-file header (expected IM or MI)".into()),
    };
    let mut out = bytes[..128].to_vec();
    let mut at = 128;
    while at < bytes.len() {
        let (Some(t), Some(n)) = (e.u32(bytes, at), e.u32(bytes, at + 4)) else {
            return Err(format!("truncated element tag at byte {at}"));
        };
        let n = n as usize;
        let body_at = at + 8;
        let left = bytes.len() - body_at.min(bytes.len());
        if n > left {
            let partial = bytes.get(body_at..).unwrap_or(&[]);
            let who = if t == MI_MATRIX {
                named(&matrix_name(&e, partial))
            } else if t == MI_COMPRESSED {
                named(&inflate_prefix(partial).and_then(|b| matrix_name(&e, b.get(8..)?)))
            } else {
                "an element".into()
            };
            return Err(format!(
                "{who} at byte {at} is truncated: it claims {n} bytes but {left} remain"
            ));
        }
        let body = &bytes[body_at..body_at + n];
        match t {
            MI_MATRIX => {
                check_matrix(&e, body)?;
                out.extend_from_slice(&bytes[at..body_at + n]);
            }
            MI_COMPRESSED => {
                let inner = inflate_element(&e, body, at)?;
                let it = e.u32(&inner, 0).unwrap_or(0);
                // Only matrices are handed on: `matfile` prints a line to stdout for any
                // other element type, which would corrupt `run --json` (found by fuzzing).
                if it == MI_MATRIX {
                    check_matrix(&e, &inner[8..])?;
                    out.extend_from_slice(&inner);
                    out.resize(out.len().next_multiple_of(8), 0);
                }
            }
            // Not a variable `matfile` reads (and it would print about it): skipped.
            _ => {}
        }
        // Top-level elements of v5 files are 8-byte aligned, compressed ones are not padded.
        at = body_at + n;
        if t != MI_COMPRESSED {
            at = at.next_multiple_of(8).min(bytes.len().max(at));
        }
    }
    Ok(out)
}

/// The first bytes of a compressed element, inflated (for a name in a message).
fn inflate_prefix(z: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let _ = flate2::read::ZlibDecoder::new(z)
        .take(256)
        .read_to_end(&mut out);
    (out.len() >= 8).then_some(out)
}

/// Inflate a compressed element, at most its declared size; the inner element must be whole.
fn inflate_element(e: &Endian, z: &[u8], at: usize) -> Result<Vec<u8>, String> {
    let mut dec = flate2::read::ZlibDecoder::new(z);
    let mut tag = [0u8; 8];
    dec.read_exact(&mut tag)
        .map_err(|err| format!("compressed element at byte {at}: cannot inflate: {err}"))?;
    let declared = e.u32(&tag, 4).unwrap_or(0) as usize;
    limits::check_alloc(
        &format!("the compressed element at byte {at}"),
        declared as u128 + 8,
        1,
    )
    .map_err(|t| t.to_string())?;
    let mut out = tag.to_vec();
    let got = dec
        .take(declared as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|err| format!("compressed element at byte {at}: cannot inflate: {err}"))?;
    let who = named(&matrix_name(e, &out[8..]));
    if got > declared {
        return Err(format!(
            "{who} (compressed, at byte {at}) inflates past its declared {declared} bytes \
             (a damaged file or a zlib bomb)"
        ));
    }
    if got < declared {
        return Err(format!(
            "{who} (compressed, at byte {at}) is truncated: it declares {declared} bytes but \
             inflates to {got}"
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Vec<u8> {
        let mut h = b"MATLAB 5.0 MAT-file".to_vec();
        h.resize(124, b' ');
        h.extend(0x0100u16.to_le_bytes());
        h.extend(b"IM");
        h
    }

    #[test]
    fn elements_that_are_not_matrices_are_skipped() {
        // A top-level miINT8 element (type 1) of 3 bytes, padded to 8; `matfile` would print
        // "Unsupported variable type" to stdout for it.
        let mut bytes = header();
        bytes.extend(1u32.to_le_bytes());
        bytes.extend(3u32.to_le_bytes());
        bytes.extend([7, 8, 9, 0, 0, 0, 0, 0]);
        assert_eq!(prewalk(&bytes).unwrap(), header());
    }
}
