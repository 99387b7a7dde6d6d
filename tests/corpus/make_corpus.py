#!/usr/bin/env python3
"""Write the bad-input corpus under tests/corpus/ (deterministic: the same bytes every run).

Every entry is one malformed input that each front end must refuse with exit code 2 and a
message naming the file (and the line/row/column or entry where there is one). `manifest.tsv`
is the table `tests/corpus.rs` runs: path, kind, expected message fragment.

kinds: data (a dataset path: file or folder), triplets (a constraints file, .json or .csv, for
base.csv), known (a known-labels file for base.csv).

Standard library only (no numpy/PIL). Run: python3 tests/corpus/make_corpus.py
"""
import os
import random
import shutil
import struct
import zlib

ROOT = os.path.dirname(os.path.abspath(__file__))
RNG = random.Random(20)
ROWS = []  # (path, kind, fragment)


def put(rel, data, kind="data", expect="", entry=None):
    p = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    if entry is not False:
        ROWS.append((entry or rel, kind, expect))


def garbage(n):
    return bytes(RNG.randrange(256) for _ in range(n))


# ---------------------------------------------------------------- base dataset (valid)
BASE = [[1, 2, 3], [2, 1, 0.5], [0.5, 3, 1], [4, 1, 2], [1, 1, 1], [2, 5, 1]]
BASE_LABELS = ["a", "a", "b", "b", "c", "c"]


def fnv_fingerprint(x_samples):
    """FNV-1a 64 of (m, n, then each sample's features as f64 bits), as engine::data does."""
    n, m = len(x_samples), len(x_samples[0])
    h = 0xCBF29CE484222325
    vals = [m, n]
    words = [struct.pack("<Q", v) for v in vals]
    words += [struct.pack("<d", float(v)) for s in x_samples for v in s]
    for w in words:
        for b in w:
            h ^= b
            h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return n, m, h


put(
    "base.csv",
    "f1,f2,f3,label\n" + "".join(
        ",".join(str(v) for v in r) + f",{l}\n" for r, l in zip(BASE, BASE_LABELS)
    ),
    entry=False,
)
N, M, HASH = fnv_fingerprint(BASE)

# ---------------------------------------------------------------- CSV
C = "csv/"
put(C + "empty.csv", b"", expect="empty")
put(C + "whitespace_only.csv", "  \n\t\n   \n", expect="empty")
put(C + "blank_lines.csv", "\n\n\n\n", expect="empty")
put(C + "header_only.csv", "a,b,c\n", expect="no data rows")
put(C + "header_only_label.csv", "a,b,label\n", expect="no data rows")
put(C + "ragged_short.csv", "1,2,3\n4,5,6\n7,8\n", expect="line 3: expected 3 fields")
put(C + "ragged_long.csv", "1,2,3\n4,5,6,7\n", expect="line 2: expected 3 fields")
put(C + "ragged_header.csv", "a,b,c\n1,2\n", expect="line 2")
put(C + "nan.csv", "a,b\n1,2\n3,NaN\n", expect="line 3, column 2")
put(C + "nan_lower.csv", "1,nan\n", expect="line 1, column 2")
put(C + "inf.csv", "1,2\ninf,3\n", expect="line 2, column 1")
put(C + "neg_inf.csv", "x,y\n1,-inf\n", expect="line 2, column 2 (\"y\")")
put(C + "overflow.csv", "1,1e999\n", expect="line 1, column 2")
put(C + "negative.csv", "a,b\n1,2\n3,-4\n", expect="line 3, column 2")
put(C + "negative_tiny.csv", "1,-1e-300\n", expect="negative")
put(C + "non_numeric.csv", "a,b\n1,2\n3,x\n", expect="line 3, column 2")
put(C + "non_numeric_first_row.csv", "1,2\n3,abc\n", expect="line 2")
put(C + "bom_non_numeric.csv", b"\xef\xbb\xbfa,b\n1,2\n3,?\n", expect="line 3, column 2")
put(C + "bom_only.csv", b"\xef\xbb\xbf", expect="empty")
put(C + "bom_header_only.csv", b"\xef\xbb\xbfa,b\n", expect="no data rows")
put(C + "quoted_newline.csv", 'a,b\n1,"2\n3"\n', expect="line 2, column 2")
put(C + "unterminated_quote.csv", 'a,b,c\n1,"2,3\n4,5,6\n', expect="line 2")
put(C + "huge_field.csv", "a,b\n1," + "7x" * 50000 + "\n", expect="line 2, column 2")
put(C + "huge_header_field.csv", "a," + "h" * 100000 + "\n1,z\n", expect="line 2, column 2")
put(C + "binary_garbage.csv", garbage(3000), expect="")
put(C + "nul_bytes.csv", b"1,2\n3,\x00\x00\n", expect="line 2, column 2")
put(C + "invalid_utf8.csv", b"a,b\n1,\xff\xfe\n", expect="line 2, column 2")
put(C + "only_label.csv", "label\na\nb\nc\n", expect="no feature columns")
put(C + "only_class.csv", "class\n1\n2\n", expect="no feature columns")
put(C + "empty_label.csv", "x,label\n1,a\n2,\n", expect="line 3, column 2")
put(C + "all_zero.csv", "a,b,c\n0,0,0\n0,0,0\n0,0,0\n", expect="all zero")
put(C + "all_zero_labelled.csv", "a,b,label\n0,0,x\n0,0,y\n", expect="all zero")
put(C + "all_zero_single.csv", "0\n", expect="all zero")
put(C + "semicolon_bad.csv", "a;b\n1,5;2\n3;x\n", expect="line 3, column 2")
put(C + "tab_ragged.tsv", "1\t2\n3\n", expect="line 2")
put(C + "mixed_delims.csv", "1,2,3\n4;5;6\n", expect="line 2")
put(C + "spaces_delim.csv", "1 2 3\n4 5 6\n", expect="line 2, column 1")
put(C + "hex_number.csv", "1,0x10\n", expect="line 1 is a header")
put(C + "many_errors.csv", "1,2\n" + "x,y\n" * 2000, expect="line 2, column 1")
put(C + "noext", "1,2\n", expect="no extension")
put(C + "data.xlsx", garbage(100), expect="unknown data file kind")
put(C + "label_col_only_numbers.txt", "label\n1\n2\n", expect="no feature columns")

# ---------------------------------------------------------------- images
def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(w, h, rows=None, bitdepth=8, color=0):
    raw = rows if rows is not None else b"".join(b"\x00" + bytes((x * 7 + y) % 256 for x in range(w)) for y in range(h))
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, bitdepth, color, 0, 0, 0))
        + png_chunk(b"IDAT", zlib.compress(raw))
        + png_chunk(b"IEND", b"")
    )


def pgm(w, h, maxval=255):
    return f"P5 {w} {h} {maxval}\n".encode() + bytes((i * 13) % 256 for i in range(w * h))


I = "img/"
good = pgm(4, 4)
put(I + "empty_folder/README.txt", "an image folder with no images\n", entry=False)
ROWS.append((I + "empty_folder", "data", "no image files"))
put(I + "zero_bytes/a.pgm", good, entry=False)
put(I + "zero_bytes/b.png", b"", entry=False)
ROWS.append((I + "zero_bytes", "data", "b.png"))
put(I + "truncated_png/a.png", png(8, 8)[:40], entry=False)
ROWS.append((I + "truncated_png", "data", "a.png"))
put(I + "truncated_idat/a.png", png(8, 8)[:-20], entry=False)
ROWS.append((I + "truncated_idat", "data", "a.png"))
put(I + "truncated_pgm/a.pgm", pgm(4, 4)[:15], entry=False)
ROWS.append((I + "truncated_pgm", "data", "a.pgm"))
put(I + "wrong_extension/a.png", "this is text, not a PNG\n", entry=False)
ROWS.append((I + "wrong_extension", "data", "a.png"))
put(I + "pgm_named_jpg/a.pgm", good, entry=False)
put(I + "pgm_named_jpg/b.jpg", b"\xff\xd8\xff", entry=False)
ROWS.append((I + "pgm_named_jpg", "data", "b.jpg"))
huge = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 100000, 100000, 8, 0, 0, 0, 0)) + png_chunk(b"IDAT", zlib.compress(b"\x00" * 1000)) + png_chunk(b"IEND", b"")
put(I + "huge_png/a.png", huge, entry=False)
ROWS.append((I + "huge_png", "data", "100000×100000"))
put(I + "huge_pgm/a.pgm", b"P5 100000 100000 255\n" + b"\x00" * 64, entry=False)
ROWS.append((I + "huge_pgm", "data", "100000×100000"))
put(I + "huge_bmp/a.bmp", b"BM" + struct.pack("<IHHI", 1000, 0, 0, 54) + struct.pack("<IiiHHIIiiII", 40, 100000, 100000, 1, 24, 0, 0, 0, 0, 0, 0) + b"\x00" * 16, entry=False)
ROWS.append((I + "huge_bmp", "data", "a.bmp"))
put(I + "many_pixels/a.png", png(4096, 4096, rows=b"")[:0] or (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 4096, 4096, 16, 6, 0, 0, 0)) + png_chunk(b"IDAT", zlib.compress(b"\x00" * 100)) + png_chunk(b"IEND", b"")), entry=False)
ROWS.append((I + "many_pixels", "data", "a.png"))
put(I + "mixed_sizes/a.pgm", pgm(4, 4), entry=False)
put(I + "mixed_sizes/b.pgm", pgm(5, 4), entry=False)
ROWS.append((I + "mixed_sizes", "data", "b.pgm is 5×4"))
put(I + "mixed_classes/c1/a.pgm", pgm(4, 4), entry=False)
put(I + "mixed_classes/c2/b.pgm", pgm(3, 3), entry=False)
ROWS.append((I + "mixed_classes", "data", "b.pgm is 3×3"))
put(I + "nested_only/c1/deeper/a.pgm", pgm(4, 4), entry=False)
ROWS.append((I + "nested_only", "data", "no image files"))
put(I + "nested_bad/c1/a.pgm", pgm(4, 4), entry=False)
put(I + "nested_bad/c2/b.pgm", b"P5 4 4 255\n\x01", entry=False)
ROWS.append((I + "nested_bad", "data", "b.pgm"))
put(I + "garbage_png/a.png", garbage(500), entry=False)
ROWS.append((I + "garbage_png", "data", "a.png"))
put(I + "bad_crc/a.png", png(4, 4)[:-5] + b"\x00\x00\x00\x00\x00", entry=False)
put(I + "bad_crc/b.png", png(4, 4)[:29] + b"\xde\xad" + png(4, 4)[31:], entry=False)
ROWS.append((I + "bad_crc", "data", ".png"))
put(I + "pgm_maxval_zero/a.pgm", b"P5 2 2 0\n\x00\x00\x00\x00", entry=False)
ROWS.append((I + "pgm_maxval_zero", "data", "a.pgm"))
put(I + "pgm_negative/a.pgm", b"P5 -2 2 255\n\x00\x00\x00\x00", entry=False)
ROWS.append((I + "pgm_negative", "data", "a.pgm"))
put(I + "pgm_zero_size/a.pgm", b"P5 0 0 255\n", entry=False)
ROWS.append((I + "pgm_zero_size", "data", "0 features"))
put(I + "gif_truncated/a.gif", b"GIF89a\x10\x00\x10\x00\x80\x00\x00", entry=False)
ROWS.append((I + "gif_truncated", "data", "a.gif"))
put(I + "jpeg_soi_only/a.jpg", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", entry=False)
ROWS.append((I + "jpeg_soi_only", "data", "a.jpg"))
put(I + "png_zero_width/a.png", png(0, 4, rows=b"\x00" * 4), entry=False)
ROWS.append((I + "png_zero_width", "data", "a.png"))
put(I + "text_files_only/notes.txt", "not an image\n", entry=False)
put(I + "text_files_only/data.csv", "1,2\n", entry=False)
ROWS.append((I + "text_files_only", "data", "no image files"))

# ---------------------------------------------------------------- .npy
def npy(header, data=b"", version=1):
    h = header.encode()
    if version == 1:
        pad = (64 - (10 + len(h) + 1) % 64) % 64
        h = h + b" " * pad + b"\n"
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data
    pad = (64 - (12 + len(h) + 1) % 64) % 64
    h = h + b" " * pad + b"\n"
    return b"\x93NUMPY\x02\x00" + struct.pack("<I", len(h)) + h + data


def f8(vals):
    return b"".join(struct.pack("<d", v) for v in vals)


P = "npy/"
hdr = lambda shape, descr="<f8", fo="False": "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fo, shape)
put(P + "empty.npy", b"", expect="")
put(P + "bad_magic.npy", b"\x93NUMPX\x01\x00" + garbage(100), expect="")
put(P + "text.npy", "1,2,3\n4,5,6\n", expect="")
put(P + "magic_only.npy", b"\x93NUMPY", expect="")
put(P + "truncated_header.npy", npy(hdr("(2, 2)"), f8([1, 2, 3, 4]))[:30], expect="")
put(P + "truncated_data.npy", npy(hdr("(10, 10)"), f8([1.0] * 5)), expect="")
put(P + "object_dtype.npy", npy(hdr("(2, 2)", "|O"), b"\x00" * 32), expect="")
put(P + "unicode_dtype.npy", npy(hdr("(2, 2)", "<U3"), b"\x00" * 48), expect="")
put(P + "complex_dtype.npy", npy(hdr("(2, 2)", "<c16"), b"\x00" * 64), expect="")
put(P + "struct_dtype.npy", npy("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2, 2), }", b"\x00" * 32), expect="")
# A 3-D array is a stack of images (n, height, width); four dimensions are refused.
put(P + "four_d.npy", npy(hdr("(2, 2, 2, 2)"), f8([1.0] * 16)), expect="")
put(P + "zero_d.npy", npy(hdr("()"), f8([1.0])), expect="")
put(P + "zero_rows.npy", npy(hdr("(0, 5)")), expect="")
put(P + "zero_cols.npy", npy(hdr("(5, 0)")), expect="")
put(P + "huge_shape.npy", npy(hdr("(1000000, 1000000)"), f8([1.0] * 4)), expect="")
put(P + "overflow_shape.npy", npy(hdr("(18446744073709551615, 18446744073709551615)"), f8([1.0])), expect="")
put(P + "negative_shape.npy", npy(hdr("(-1, 3)"), f8([1.0] * 3)), expect="")
put(P + "lying_header_len.npy", b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f8'", expect="")
put(P + "huge_header_len_v2.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\x7f{'descr'", expect="")
put(P + "version_9.npy", b"\x93NUMPY\x09\x00" + npy(hdr("(1, 1)"), f8([1.0]))[8:], expect="")
put(P + "header_not_dict.npy", npy("garbage garbage", f8([1.0])), expect="")
put(P + "header_no_shape.npy", npy("{'descr': '<f8', 'fortran_order': False, }", f8([1.0])), expect="")
put(P + "header_bad_descr.npy", npy(hdr("(1, 1)", "<q99"), f8([1.0])), expect="")
put(P + "nan.npy", npy(hdr("(2, 2)"), f8([1.0, 2.0, 3.0, float("nan")])), expect="row 2, column 2")
put(P + "negative.npy", npy(hdr("(2, 2)"), f8([1.0, -2.0, 3.0, 4.0])), expect="row 1, column 2")
put(P + "inf_f4.npy", npy(hdr("(1, 2)", "<f4"), struct.pack("<ff", 1.0, float("inf"))), expect="row 1, column 2")
put(P + "all_zero.npy", npy(hdr("(3, 2)"), f8([0.0] * 6)), expect="all zero")
put(P + "garbage_after_magic.npy", b"\x93NUMPY\x01\x00" + garbage(200), expect="")

# ---------------------------------------------------------------- .mat (MATLAB v5)
def mat_header(text=b"MATLAB 5.0 MAT-file, corpus", endian=b"IM"):
    return text.ljust(116, b" ") + b"\x00" * 8 + struct.pack("<H", 0x0100) + endian


def pad8(b):
    return b + b"\x00" * ((8 - len(b) % 8) % 8)


def sub(t, data):
    return struct.pack("<II", t, len(data)) + pad8(data)


def matrix(name, dims, data, cls=6, dtype=9, fmt="d"):
    body = sub(6, struct.pack("<II", cls, 0))
    body += sub(5, struct.pack("<" + "i" * len(dims), *dims))
    body += sub(1, name.encode())
    body += sub(dtype, struct.pack("<" + fmt * len(data), *data))
    return struct.pack("<II", 14, len(body)) + body


def compressed(elem):
    z = zlib.compress(elem)
    return struct.pack("<II", 15, len(z)) + z


FEA = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]  # 3×2, column-major
GND = [1.0, 2.0, 1.0]
good_mat = mat_header() + matrix("fea", [3, 2], FEA) + matrix("gnd", [3, 1], GND)
T = "mat/"
put(T + "empty.mat", b"", expect="")
put(T + "garbage.mat", garbage(600), expect="")
put(T + "text.mat", "fea = [1 2; 3 4]\n", expect="")
put(T + "header_only.mat", mat_header(), expect="`fea`")
put(T + "header_truncated.mat", mat_header()[:60], expect="")
put(T + "v73.mat", mat_header(b"MATLAB 7.3 MAT-file, Platform: GLNXA64, HDF5 schema 1.00") + b"\x00" * 384 + b"\x89HDF\r\n\x1a\n" + b"\x00" * 64, expect="7.3")
put(T + "bad_endian.mat", mat_header(endian=b"XX") + matrix("fea", [3, 2], FEA), expect="")
put(T + "no_fea.mat", mat_header() + matrix("X", [3, 2], FEA), expect="`fea`")
put(T + "truncated.mat", good_mat[:200], expect="")
put(T + "truncated_gnd.mat", good_mat[:-10], expect="`gnd`")
put(T + "truncated_gnd_compressed.mat", mat_header() + compressed(matrix("fea", [3, 2], FEA)) + compressed(matrix("gnd", [3, 1], GND))[:-6], expect="`gnd`")
put(T + "gnd_wrong_count.mat", mat_header() + matrix("fea", [3, 2], FEA) + matrix("gnd", [4, 1], GND + [2.0]), expect="`gnd` has 4 labels")
put(T + "fea_3d.mat", mat_header() + matrix("fea", [1, 3, 2], FEA), expect="2-D")
put(T + "fea_nan.mat", mat_header() + matrix("fea", [3, 2], [1.0, float("nan"), 3, 4, 5, 6]), expect="`fea` row 2, column 1")
put(T + "fea_negative.mat", mat_header() + matrix("fea", [3, 2], [1.0, 2, 3, 4, -5, 6]), expect="`fea` row 2, column 2")
put(T + "fea_all_zero.mat", mat_header() + matrix("fea", [3, 2], [0.0] * 6), expect="all zero")
put(T + "fea_lying_dims.mat", mat_header() + matrix("fea", [100000, 100000], FEA), expect="`fea`")
put(T + "fea_dims_overflow.mat", mat_header() + matrix("fea", [2147483647, 2147483647], FEA), expect="`fea`")
put(T + "fea_negative_dims.mat", mat_header() + matrix("fea", [-3, 2], FEA), expect="`fea`")
put(T + "fea_char.mat", mat_header() + matrix("fea", [1, 3], [102, 101, 97], cls=4, dtype=4, fmt="H"), expect="`fea`")
put(T + "tag_lies.mat", mat_header() + struct.pack("<II", 14, 0x7FFFFFF0) + matrix("fea", [3, 2], FEA)[8:], expect="")
put(T + "compressed_garbage.mat", mat_header() + struct.pack("<II", 15, 64) + garbage(64), expect="")
put(T + "compressed_lying_size.mat", mat_header() + struct.pack("<II", 15, 0x7FFFFFF0) + zlib.compress(matrix("fea", [3, 2], FEA)), expect="")
# A zlib bomb: a compressed element whose inner tag declares 16 bytes but inflates to 32 MiB.
bomb_inner = struct.pack("<II", 14, 16) + b"\x00" * (32 << 20)
put(T + "zlib_bomb.mat", mat_header() + compressed(bomb_inner), expect="")
# A compressed element declaring a 2 GiB matrix whose data are not there.
put(T + "zlib_declares_huge.mat", mat_header() + compressed(struct.pack("<II", 14, 0x7FFFFFF8) + matrix("fea", [3, 2], FEA)[8:]), expect="")

# ---------------------------------------------------------------- constraints JSON
J = "constraints/"
FP = '{"n": %d, "m": %d, "hash": %d}' % (N, M, HASH)
def cj(triplets="[]", labels=None, classes='[]', fp=FP, version=1):
    labels = labels if labels is not None else "[" + ",".join(["null"] * N) + "]"
    return '{"version": %d, "fingerprint": %s, "triplets": %s, "labels": %s, "class_names": %s}\n' % (version, fp, triplets, labels, classes)

put(J + "valid.json", cj("[[0, 1, 2]]"), entry=False)
put(J + "empty.json", b"", kind="triplets", expect="line 1")
put(J + "garbage.json", garbage(200), kind="triplets", expect="UTF-8")
put(J + "not_object.json", "[1, 2, 3]\n", kind="triplets", expect="line 1")
put(J + "truncated.json", cj("[[0, 1, 2]]")[:50], kind="triplets", expect="line 1")
put(J + "version_2.json", cj(version=2), kind="triplets", expect="format version 2")
put(J + "no_version.json", '{"triplets": []}\n', kind="triplets", expect="version")
put(J + "other_dataset.json", cj(fp='{"n": 150, "m": 4, "hash": 12345}'), kind="triplets", expect="another dataset")
put(J + "other_content.json", cj(fp='{"n": %d, "m": %d, "hash": %d}' % (N, M, HASH ^ 1)), kind="triplets", expect="content differs")
put(J + "out_of_range.json", cj("[[0, 1, 99]]"), kind="triplets", expect="triplets[0]")
put(J + "negative.json", cj("[[0, -1, 2]]"), kind="triplets", expect="line 1")
put(J + "i_eq_j.json", cj("[[0, 1, 2], [3, 3, 4]]"), kind="triplets", expect="triplets[1]")
put(J + "i_eq_q.json", cj("[[2, 1, 2]]"), kind="triplets", expect="triplets[0]")
put(J + "duplicate.json", cj("[[0, 1, 2], [4, 5, 3], [0, 1, 2]]"), kind="triplets", expect="triplets[2]")
put(J + "two_fields.json", cj("[[0, 1]]"), kind="triplets", expect="line 1")
put(J + "float_index.json", cj("[[0, 1.5, 2]]"), kind="triplets", expect="line 1")
put(J + "huge_index.json", cj("[[0, 1, 1e30]]"), kind="triplets", expect="line 1")
put(J + "labels_short.json", cj(labels="[null, 0]", classes='["a"]'), kind="triplets", expect="labels")
put(J + "labels_bad_class.json", cj(labels="[null, 5, null, null, null, null]", classes='["a"]'), kind="triplets", expect="labels")
put(J + "deep_nesting.json", "[" * 2000 + "]" * 2000, kind="triplets", expect="line 1")
put(J + "huge_string.json", '{"version": "' + "v" * 100000 + '"}', kind="triplets", expect="line 1")

# ---------------------------------------------------------------- constraints CSV
put(J + "garbage_triplets.csv", garbage(300), kind="triplets", expect="UTF-8")
put(J + "out_of_range.csv", "i,j,q\n0,1,2\n0,1,99\n", kind="triplets", expect="line 3")
put(J + "negative.csv", "0,-1,2\n", kind="triplets", expect="line 1")
put(J + "i_eq_j.csv", "0,1,2\n3,3,4\n", kind="triplets", expect="line 2")
put(J + "duplicate.csv", "0,1,2\n4,5,3\n0,1,2\n", kind="triplets", expect="line 3")
put(J + "two_fields.csv", "0,1\n", kind="triplets", expect="line 1")
put(J + "four_fields.csv", "0,1,2\n0,1,3,4\n", kind="triplets", expect="line 2")
put(J + "unknown_name.csv", "0,1,2\nrow 1,nobody,2\n", kind="triplets", expect="line 2")
put(J + "huge_field.csv", "0,1," + "9" * 100000 + "\n", kind="triplets", expect="line 1")
put(J + "huge_name.csv", "0,1,2\n0,1," + "n" * 100000 + "\n", kind="triplets", expect="line 2")
put(J + "unterminated_quote.csv", '0,1,2\n"0,1,2\n', kind="triplets", expect="line")

# ---------------------------------------------------------------- known labels (for base.csv)
K = "known/"
put(K + "too_few.txt", "a\nb\n", kind="known", expect="2 label lines for 6 samples")
put(K + "too_many.txt", "a\n" * 9, kind="known", expect="9 label lines for 6 samples")
put(K + "empty.txt", b"", kind="known", expect="0 label lines")
put(K + "unknown_class.txt", "a\n\nzebra\n\n\nc\n", kind="known", expect="line 3")
put(K + "garbage.txt", garbage(400), kind="known", expect="")
put(K + "huge_line.txt", "a\n" + "q" * 100000 + "\n\n\n\nb\n", kind="known", expect="line 2")
put(K + "class_index_out_of_range.txt", "0\n1\n2\n99\n\n\n", kind="known", expect="line 1")

# ---------------------------------------------------------------- session files (for base.csv)
S = "sessions/"
def sess(triplets="[]", fp=FP, version=1, k=2, model="nmf", labels="[]", classes="[]"):
    return ('{"version": %d, "dataset": {"path": "../base.csv", "preprocess": "L2", '
            '"fingerprint": %s}, "constraints": {"triplets": %s, "labels": %s, "class_names": %s}, '
            '"model": {"model": "%s", "k": %d, "seed": 0, "max_iter": 3, "tol": 0.0}, "runs": []}\n'
            % (version, fp, triplets, labels, classes, model, k))

put(S + "valid.json", sess("[[0, 1, 2]]"), entry=False)
put(S + "empty.json", b"", kind="session", expect="line 1")
put(S + "garbage.json", garbage(300), kind="session", expect="")
put(S + "not_object.json", "[1, 2, 3]\n", kind="session", expect="")
put(S + "truncated.json", sess("[[0, 1, 2]]")[:80], kind="session", expect="line 1")
put(S + "version_2.json", sess(version=2), kind="session", expect="version 2")
put(S + "no_version.json", '{"dataset": {}}\n', kind="session", expect="version")
put(S + "other_dataset.json", sess(fp='{"n": 150, "m": 4, "hash": 12345}'), kind="session", expect="")
put(S + "other_content.json", sess(fp='{"n": %d, "m": %d, "hash": %d}' % (N, M, HASH ^ 1)), kind="session", expect="changed")
put(S + "out_of_range.json", sess("[[0, 1, 99]]"), kind="session", expect="triplets[0]")
put(S + "negative.json", sess("[[0, -1, 2]]"), kind="session", expect="")
put(S + "i_eq_j.json", sess("[[0, 1, 2], [3, 3, 4]]"), kind="session", expect="triplets[1]")
put(S + "duplicate.json", sess("[[0, 1, 2], [4, 5, 3], [0, 1, 2]]"), kind="session", expect="triplets[2]")
put(S + "k_zero.json", sess(k=0), kind="session", expect="model.k")
put(S + "labels_bad_class.json", sess(labels="[null, 5, null, null, null, null]", classes='["a"]'), kind="session", expect="labels")
# Found by the long fuzz pass: a 63 kB string where a number belongs was echoed whole.
put(S + "long_string_value.json", sess().replace('"seed": 0', '"seed": "' + "v" * 63000 + '"'), kind="session", expect="characters")
put(S + "huge_string.json", '{"version": "' + "v" * 100000 + '"}', kind="session", expect="")

# ---------------------------------------------------------------- valid seeds for tests/fuzz.rs
V = "valid/"
put(V + "table.csv", "a,b,c,label\n1,2,3,x\n4,5.5,6,y\n0,1e-3,2,x\n", entry=False)
put(V + "semicolon.csv", "a;b\n1,5;2\n3;4\n", entry=False)
put(V + "gray.png", png(6, 5), entry=False)
put(V + "gray.pgm", pgm(6, 5), entry=False)
put(V + "matrix.npy", npy(hdr("(3, 2)"), f8([1, 2, 3, 4, 5, 6])), entry=False)
put(V + "matrix_v2_f4.npy", npy(hdr("(2, 2)", "<f4", "True"), struct.pack("<4f", 1, 2, 3, 4), version=2), entry=False)
put(V + "plain.mat", good_mat, entry=False)
put(V + "compressed.mat", mat_header() + compressed(matrix("fea", [3, 2], FEA)) + compressed(matrix("gnd", [3, 1], GND)), entry=False)
put(V + "constraints.json", cj("[[0, 1, 2], [3, 4, 5]]", labels="[0, null, 1, null, null, 2]", classes='["a", "b", "c"]'), entry=False)
put(V + "triplets.csv", "i,j,q\n0,1,2\n3,4,5\nrow 2,row 3,row 4\n", entry=False)
put(V + "known.txt", "a\n\nb\n# comment\n\nc\n\n", entry=False)

with open(os.path.join(ROOT, "manifest.tsv"), "w") as f:
    f.write("# path\tkind\texpected fragment (besides the file name); written by make_corpus.py\n")
    for p, k, e in ROWS:
        f.write(f"{p}\t{k}\t{e}\n")
print(f"{len(ROWS)} corpus entries")
