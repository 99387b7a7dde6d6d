//! Integration tests of the data layer: every loader's success path on real data (skipped
//! when `../shared/data` is absent) and every error path on small bad files made here, each
//! asserting that the message names the file and the place.

use nmf_playground::engine::data::samples::{self, Sample};
use nmf_playground::engine::data::{
    DataError, Dataset, LabelColumn, LoadOptions, Preprocess, load,
};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// `unwrap` without the `unwrap_used` lint (which this crate denies, and which a project
/// `clippy.toml` may or may not relax for tests): a test fails loudly with the error.
trait Must<T> {
    fn must(self) -> T;
}

impl<T, E: std::fmt::Debug> Must<T> for Result<T, E> {
    #[track_caller]
    fn must(self) -> T {
        match self {
            Ok(v) => v,
            Err(e) => panic!("unexpected error: {e:?}"),
        }
    }
}

impl<T> Must<T> for Option<T> {
    #[track_caller]
    fn must(self) -> T {
        match self {
            Some(v) => v,
            None => panic!("unexpected None"),
        }
    }
}

trait MustErr<E> {
    fn must_err(self) -> E;
}

impl<T, E> MustErr<E> for Result<T, E> {
    #[track_caller]
    fn must_err(self) -> E {
        match self {
            Ok(_) => panic!("expected an error, got Ok"),
            Err(e) => e,
        }
    }
}

fn shared(rel: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(rel);
    if p.exists() {
        Some(p)
    } else {
        eprintln!(
            "SKIP: {} not found (the shared data sets are not on this machine)",
            p.display()
        );
        None
    }
}

fn raw() -> LoadOptions {
    LoadOptions {
        preprocess: Preprocess::None,
        ..LoadOptions::default()
    }
}

fn write(dir: &TempDir, name: &str, text: &str) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, text).must();
    p
}

/// Load expecting an error; return its message after checking it names the file.
fn err_msg(path: &Path, opts: &LoadOptions) -> String {
    let e = load(path, opts)
        .err()
        .unwrap_or_else(|| panic!("{} loaded but should have failed", path.display()));
    let msg = e.to_string();
    eprintln!("message: {msg}");
    let fname = path.file_name().must().to_string_lossy().to_string();
    assert!(
        msg.contains(&fname),
        "message does not name the file {fname}: {msg}"
    );
    msg
}

fn assert_has(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "message lacks {p:?}: {msg}");
    }
}

// ---------------------------------------------------------------- CSV: success paths

#[test]
fn iris_loads_150_by_4_with_3_classes() {
    let Some(p) = shared("iris/iris.csv") else {
        return;
    };
    let d = load(&p, &raw()).must();
    assert_eq!((d.m(), d.n(), d.n_classes()), (4, 150, 3));
    assert_eq!(d.class_names, ["0", "1", "2"]);
    let labels = d.labels.as_ref().must();
    assert_eq!(labels.iter().filter(|&&l| l == 2).count(), 50);
    // First data line is line 2 of the file: 5.1,3.5,1.4,0.2,0
    assert_eq!(d.sample_names[0], "row 2");
    assert_eq!(d.x.column(0).to_vec(), [5.1, 3.5, 1.4, 0.2]);
    assert_eq!(d.source, p.display().to_string());
    assert_eq!(d.preprocess, Preprocess::None);
    // L2 by default; fingerprint is of the raw data, so it does not change.
    let l2 = load(&p, &LoadOptions::default()).must();
    assert_eq!(l2.fingerprint, d.fingerprint);
    assert!((l2.x.column(7).dot(&l2.x.column(7)) - 1.0).abs() < 1e-12);
}

#[test]
fn dermatology_with_nan_names_row_and_column() {
    let Some(p) = shared("dermatology/dermatology_366_with_nan.csv") else {
        return;
    };
    let msg = err_msg(&p, &raw());
    assert_has(&msg, &["line 35", "column 34 (\"age\")", "NaN"]);
    let Some(ok) = shared("dermatology/dermatology.csv") else {
        return;
    };
    let d = load(&ok, &raw()).must();
    assert_eq!((d.m(), d.n(), d.n_classes()), (34, 358, 6));
}

#[test]
fn csv_string_labels_natural_order_and_delimiters() {
    let dir = TempDir::new().must();
    // Semicolons, decimal commas, string labels, label column in the middle, no label/class name.
    let p = write(
        &dir,
        "s.csv",
        "a;kind;b\n1,5;s10;2\n3;s2;4\n5;s1;6\n7;s2;8\n",
    );
    let opts = LoadOptions {
        label_column: LabelColumn::Name("kind".into()),
        ..raw()
    };
    let d = load(&p, &opts).must();
    assert_eq!(d.class_names, ["s1", "s2", "s10"]);
    assert_eq!(d.labels.must(), [2, 1, 0, 1]);
    assert_eq!(d.x.row(0).to_vec(), [1.5, 3.0, 5.0, 7.0]);
    assert_eq!(d.sample_names, ["row 2", "row 3", "row 4", "row 5"]);

    // Tabs, no header, label by index, integers sorted numerically.
    let p = write(&dir, "t.tsv", "1\t10\n2\t9\n3\t10\n4\t2\n");
    let opts = LoadOptions {
        label_column: LabelColumn::Index(1),
        ..raw()
    };
    let d = load(&p, &opts).must();
    assert_eq!(d.class_names, ["2", "9", "10"]);
    assert_eq!(d.labels.must(), [2, 1, 2, 0]);
    assert_eq!(d.sample_names[0], "row 1");

    // Auto picks `Class` case-insensitively; LabelColumn::None keeps it as a feature? No:
    // a non-numeric label column with None is a NotANumber error, numeric is a feature.
    let p = write(&dir, "c.csv", "x,y,Class\n1,2,0\n3,4,1\n");
    let d = load(&p, &raw()).must();
    assert_eq!((d.m(), d.n(), d.n_classes()), (2, 2, 2));
    let opts = LoadOptions {
        label_column: LabelColumn::None,
        ..raw()
    };
    let d = load(&p, &opts).must();
    assert_eq!((d.m(), d.n(), d.n_classes()), (3, 2, 0));
}

#[test]
fn csv_shift_allows_negatives() {
    let dir = TempDir::new().must();
    let p = write(&dir, "neg.csv", "a,b\n-1,2\n3,4\n");
    let d = load(
        &p,
        &LoadOptions {
            preprocess: Preprocess::Shift,
            ..raw()
        },
    )
    .must();
    assert_eq!(d.x, ndarray::array![[0.0, 4.0], [2.0, 4.0]]);
    assert!(d.warnings.iter().any(|w| w.contains("shift")));
    // and the fingerprint is still of the raw data
    assert_eq!(
        d.fingerprint,
        nmf_playground::engine::data::fingerprint_of(&ndarray::array![[-1.0, 3.0], [2.0, 4.0]])
    );
}

// ---------------------------------------------------------------- CSV: error paths

#[test]
fn csv_non_numeric_cell() {
    let dir = TempDir::new().must();
    let p = write(&dir, "bad.csv", "a,b,label\n1,2,x\n3,oops,y\n");
    let msg = err_msg(&p, &raw());
    assert_has(&msg, &["line 3", "column 2 (\"b\")", "\"oops\""]);
    // Without a header the column has no name.
    let p = write(&dir, "bad2.csv", "1,2\n3,4x\n");
    let msg = err_msg(
        &p,
        &LoadOptions {
            label_column: LabelColumn::Index(0),
            ..raw()
        },
    );
    assert_has(&msg, &["line 2", "column 2", "\"4x\""]);
}

#[test]
fn csv_ragged_row() {
    let dir = TempDir::new().must();
    let p = write(&dir, "ragged.csv", "a,b,c\n1,2,3\n4,5\n");
    let msg = err_msg(&p, &raw());
    assert_has(&msg, &["line 3", "expected 3 fields", "found 2"]);
}

#[test]
fn csv_empty_and_header_only() {
    let dir = TempDir::new().must();
    let p = write(&dir, "empty.csv", "");
    assert_has(&err_msg(&p, &raw()), &["empty"]);
    let p = write(&dir, "blank.csv", "\n  \n");
    assert_has(&err_msg(&p, &raw()), &["empty"]);
    let p = write(&dir, "header.csv", "a,b,label\n");
    assert_has(&err_msg(&p, &raw()), &["line 1", "no data rows"]);
}

#[test]
fn csv_nan_and_inf() {
    let dir = TempDir::new().must();
    let p = write(&dir, "nan.csv", "a,b\n1,2\n3,NaN\n");
    assert_has(&err_msg(&p, &raw()), &["line 3", "column 2 (\"b\")", "NaN"]);
    let p = write(&dir, "inf.csv", "a,b\n1,inf\n");
    assert_has(&err_msg(&p, &raw()), &["line 2", "column 2 (\"b\")", "inf"]);
    // NaN is refused even with Shift.
    let shift = LoadOptions {
        preprocess: Preprocess::Shift,
        ..raw()
    };
    assert_has(&err_msg(&p, &shift), &["line 2"]);
}

#[test]
fn csv_negative_value_suggests_shift() {
    let dir = TempDir::new().must();
    let p = write(&dir, "neg.csv", "a,b,label\n1,2,0\n3,-0.5,1\n");
    let msg = err_msg(&p, &raw());
    assert_has(
        &msg,
        &[
            "line 3",
            "column 2 (\"b\")",
            "-0.5",
            "nonnegative",
            "--preprocess shift",
        ],
    );
}

#[test]
fn csv_unknown_label_column() {
    let dir = TempDir::new().must();
    let p = write(&dir, "lab.csv", "a,b,label\n1,2,0\n");
    let opts = LoadOptions {
        label_column: LabelColumn::Name("species".into()),
        ..raw()
    };
    assert_has(&err_msg(&p, &opts), &["line 1", "\"species\"", "\"label\""]);
    let opts = LoadOptions {
        label_column: LabelColumn::Index(7),
        ..raw()
    };
    assert_has(
        &err_msg(&p, &opts),
        &["line 1", "label column 8", "3 columns"],
    );
}

#[test]
fn csv_empty_label_and_label_only() {
    let dir = TempDir::new().must();
    let p = write(&dir, "el.csv", "a,label\n1,x\n2,\n");
    assert_has(
        &err_msg(&p, &raw()),
        &["line 3", "column 2 (\"label\")", "empty label"],
    );
    let p = write(&dir, "only.csv", "label\nx\n");
    assert_has(
        &err_msg(&p, &raw()),
        &["no feature columns", "column 1 (\"label\")"],
    );
}

// ---------------------------------------------------------------- dispatch errors

#[test]
fn missing_path_and_unknown_kind() {
    let dir = TempDir::new().must();
    let p = dir.path().join("nope.csv");
    assert_has(&err_msg(&p, &raw()), &["no such file"]);
    let p = write(&dir, "data.xlsx", "x");
    assert_has(&err_msg(&p, &raw()), &["unknown data file kind", ".xlsx"]);
}

// ---------------------------------------------------------------- image folders

fn save_gray(path: &Path, w: u32, h: u32, f: impl Fn(u32, u32) -> u8) {
    std::fs::create_dir_all(path.parent().must()).must();
    let img = image::GrayImage::from_fn(w, h, |x, y| image::Luma([f(x, y)]));
    if path.extension().is_some_and(|e| e == "gif") {
        // The GIF encoder takes colour images only.
        image::DynamicImage::ImageLuma8(img)
            .to_rgba8()
            .save(path)
            .must();
    } else {
        img.save(path).must();
    }
}

#[test]
fn orl_faces_folder_400_by_10304_natural_order() {
    let Some(p) = shared("orl_faces") else { return };
    let t = std::time::Instant::now();
    let d = load(&p, &raw()).must();
    eprintln!(
        "TIMING: orl_faces (400 PGM 92×112) loaded in {:.3} s",
        t.elapsed().as_secs_f64()
    );
    assert_eq!((d.m(), d.n(), d.n_classes()), (10304, 400, 40));
    assert_eq!(d.image_shape, Some((92, 112)));
    assert_eq!(&d.class_names[..3], ["s1", "s2", "s3"]);
    assert_eq!(d.class_names[9], "s10");
    assert_eq!(&d.sample_names[..3], ["s1/1.pgm", "s1/2.pgm", "s1/3.pgm"]);
    assert_eq!(d.sample_names[9], "s1/10.pgm");
    assert_eq!(d.sample_names[10], "s2/1.pgm");
    let labels = d.labels.as_ref().must();
    assert!(labels.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(d.thumbnails.len(), 400);
    assert_eq!((d.thumbnails[0].width, d.thumbnails[0].height), (53, 64));
    assert!(d.x.iter().all(|&v| (0.0..=1.0).contains(&v)));
    // Row-major pixel order: pixel (row 1, col 0) is j = 92.
    let img = image::open(p.join("s1/1.pgm")).must().to_luma8();
    assert_eq!(d.x[[92, 0]], f64::from(img.get_pixel(0, 1)[0]) / 255.0);
}

#[test]
fn orl_32x32_folder() {
    let Some(p) = shared("orl_32x32") else { return };
    let d = load(&p, &raw()).must();
    assert_eq!((d.m(), d.n(), d.n_classes()), (1024, 400, 40));
    assert_eq!(d.image_shape, Some((32, 32)));
    assert_eq!(d.sample_names[0], "s1/s1_001.png");
}

/// Same partition of samples into classes (class names may differ).
fn same_partition(a: &[usize], b: &[usize]) -> bool {
    let mut map = std::collections::HashMap::new();
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| *map.entry(*x).or_insert(*y) == *y)
        && {
            let mut vals: Vec<_> = map.values().collect();
            vals.sort();
            vals.dedup();
            vals.len() == map.len()
        }
}

#[test]
fn mat_equals_folder() {
    let (Some(folder), Some(mat)) = (shared("orl_32x32"), shared("mat/ORL_32x32.mat")) else {
        return;
    };
    let f = load(&folder, &raw()).must();
    let m = load(&mat, &raw()).must();
    assert_eq!((m.m(), m.n(), m.n_classes()), (1024, 400, 40));
    assert_eq!(m.image_shape, Some((32, 32)));
    assert_eq!(&m.class_names[..3], ["1", "2", "3"]);
    assert!(same_partition(
        f.labels.as_ref().must(),
        m.labels.as_ref().must()
    ));
    let maxdiff = (&f.x - &m.x).iter().fold(0.0f64, |a, v| a.max(v.abs()));
    eprintln!("mat vs folder: max |Δx| = {maxdiff:e}");
    assert!(maxdiff < 1e-12, "max difference {maxdiff}");
    assert_eq!(f.fingerprint, m.fingerprint);
    // Thumbnails are upright: identical to the folder's.
    assert_eq!(f.thumbnails, m.thumbnails);
}

#[test]
fn flat_folder_is_unlabelled_and_skips_non_images() {
    let dir = TempDir::new().must();
    for k in [10, 2, 1] {
        save_gray(&dir.path().join(format!("img{k}.png")), 3, 2, |x, y| {
            (k * 10 + x + 3 * y) as u8
        });
    }
    write(&dir, "notes.txt", "hello");
    write(&dir, "README", "hello");
    let d = load(dir.path(), &raw()).must();
    assert_eq!(d.n(), 3);
    assert_eq!(d.m(), 6);
    assert!(d.labels.is_none());
    assert_eq!(d.n_classes(), 0);
    assert_eq!(d.sample_names, ["img1.png", "img2.png", "img10.png"]);
    assert_eq!(d.image_shape, Some((3, 2)));
    // row-major: j = row*width + col; pixel (x=1, y=1) = 10+1+3 = 14 → j = 4
    assert_eq!(d.x[[4, 0]], 14.0 / 255.0);
    assert!(
        d.warnings.iter().any(|w| w.contains("skipped 2 file(s)")),
        "{:?}",
        d.warnings
    );
}

#[test]
fn class_folders_natural_order_and_formats() {
    let dir = TempDir::new().must();
    let ext = ["png", "pgm", "bmp", "gif", "jpg"];
    for (ci, class) in ["s10", "s2", "s1"].iter().enumerate() {
        for (k, e) in ext.iter().enumerate() {
            let p = dir.path().join(class).join(format!("{}.{e}", k + 1));
            save_gray(&p, 4, 4, |_, _| (40 * ci + 10 * k) as u8);
        }
    }
    let d = load(dir.path(), &raw()).must();
    assert_eq!(d.class_names, ["s1", "s2", "s10"]);
    assert_eq!(d.n(), 15);
    assert_eq!(d.sample_names[0], "s1/1.png");
    assert_eq!(d.sample_names[5], "s2/1.png");
    assert_eq!(
        &d.labels.as_ref().must()[..],
        &[0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2]
    );
    // Lossless formats are exact; s1 is class index 2 in creation order → 80 + 10k.
    assert_eq!(d.x[[0, 1]], 90.0 / 255.0); // s1/2.pgm
    assert_eq!(d.x[[0, 2]], 100.0 / 255.0); // s1/3.bmp
}

#[test]
fn image_size_mismatch_names_both_files() {
    let dir = TempDir::new().must();
    save_gray(&dir.path().join("a.png"), 4, 4, |_, _| 1);
    save_gray(&dir.path().join("b.png"), 5, 3, |_, _| 1);
    let msg = err_msg(dir.path(), &raw());
    assert_has(&msg, &["a.png", "4×4", "b.png", "5×3", "--resize WxH"]);
}

#[test]
fn resize_makes_sizes_agree() {
    let dir = TempDir::new().must();
    save_gray(&dir.path().join("a.png"), 8, 8, |x, _| (x * 30) as u8);
    save_gray(&dir.path().join("b.png"), 16, 12, |_, _| 200);
    let opts = LoadOptions {
        resize: Some((4, 6)),
        ..raw()
    };
    let d = load(dir.path(), &opts).must();
    assert_eq!((d.m(), d.n()), (24, 2));
    assert_eq!(d.image_shape, Some((4, 6)));
    assert_eq!((d.thumbnails[1].width, d.thumbnails[1].height), (4, 6));
    // A constant image stays constant under resampling.
    assert!(
        d.x.column(1)
            .iter()
            .all(|&v| (v - 200.0 / 255.0).abs() < 1e-12)
    );
    // Horizontal gradient survives: left < right.
    assert!(d.x[[0, 0]] < d.x[[3, 0]]);
}

#[test]
fn too_much_data_is_refused_before_decoding() {
    let dir = TempDir::new().unwrap();
    for k in 0..17 {
        save_gray(&dir.path().join(format!("{k}.png")), 2, 2, |_, _| 1);
    }
    let opts = LoadOptions {
        resize: Some((4096, 4096)),
        ..raw()
    };
    let msg = load(dir.path(), &opts).must_err().to_string();
    eprintln!("message: {msg}");
    assert_has(&msg, &["17 images of 4096×4096", "GiB", "--resize"]);
    let opts = LoadOptions {
        resize: Some((0, 5)),
        ..raw()
    };
    assert_has(&load(dir.path(), &opts).must_err().to_string(), &["0×5"]);
}

#[test]
fn corrupt_image_names_the_file() {
    let dir = TempDir::new().must();
    save_gray(&dir.path().join("good.png"), 4, 4, |_, _| 1);
    let mut bytes = std::fs::read(dir.path().join("good.png")).must();
    bytes.truncate(bytes.len() / 2);
    std::fs::write(dir.path().join("z_broken.png"), &bytes).must();
    let e = load(dir.path(), &raw()).must_err();
    let msg = e.to_string();
    eprintln!("message: {msg}");
    assert!(matches!(e, DataError::BadImage { .. }), "{e:?}");
    assert_has(&msg, &["z_broken.png", "cannot decode"]);
    // Garbage with an image extension.
    let dir2 = TempDir::new().must();
    write(&dir2, "x.jpg", "this is not a jpeg");
    let msg = load(dir2.path(), &raw()).must_err().to_string();
    eprintln!("message: {msg}");
    assert_has(&msg, &["x.jpg"]);
}

#[test]
fn huge_image_refused_before_decoding() {
    let dir = TempDir::new().must();
    // A PGM header claiming 5000×5000 and no pixel data: only the header is read.
    std::fs::write(dir.path().join("bomb.pgm"), b"P5\n5000 5000\n255\n").must();
    let e = load(dir.path(), &raw()).must_err();
    let msg = e.to_string();
    eprintln!("message: {msg}");
    assert_has(&msg, &["bomb.pgm", "5000×5000", "4096"]);
}

#[test]
fn empty_folder_is_an_error() {
    let dir = TempDir::new().must();
    let msg = load(dir.path(), &raw()).must_err().to_string();
    eprintln!("message: {msg}");
    assert_has(&msg, &[&dir.path().display().to_string(), "no image files"]);
    write(&dir, "a.txt", "x");
    let msg = load(dir.path(), &raw()).must_err().to_string();
    assert_has(&msg, &["1 other file(s) skipped"]);
}

// ---------------------------------------------------------------- .npy

#[test]
fn npy_round_trip_with_labels() {
    use ndarray_npy::write_npy;
    let dir = TempDir::new().must();
    // rows = samples: 3 samples × 2 features
    let a = ndarray::array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]];
    let p = dir.path().join("x.npy");
    write_npy(&p, &a).must();
    write_npy(dir.path().join("labels.npy"), &ndarray::array![7i64, 3, 7]).must();
    let d = load(&p, &raw()).must();
    assert_eq!(d.x, ndarray::array![[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]);
    assert_eq!(d.class_names, ["3", "7"]);
    assert_eq!(d.labels.must(), [1, 0, 1]);

    // Integer data, text labels file given explicitly.
    let b = ndarray::array![[1u8, 2], [3, 4]];
    let p2 = dir.path().join("y.npy");
    write_npy(&p2, &b).must();
    let lp = write(&dir, "y_labels.txt", "cat\ndog\n\n");
    let opts = LoadOptions {
        labels_file: Some(lp),
        ..raw()
    };
    let d = load(&p2, &opts).must();
    assert_eq!(d.x, ndarray::array![[1.0, 3.0], [2.0, 4.0]]);
    assert_eq!(d.class_names, ["cat", "dog"]);
}

#[test]
fn npy_label_count_mismatch_names_both_files() {
    use ndarray_npy::write_npy;
    let dir = TempDir::new().must();
    let p = dir.path().join("x.npy");
    write_npy(&p, &ndarray::array![[1.0, 2.0], [3.0, 4.0]]).must();
    let lp = write(&dir, "lab.txt", "a\nb\nc\n");
    let opts = LoadOptions {
        labels_file: Some(lp),
        ..raw()
    };
    let msg = err_msg(&p, &opts);
    assert_has(&msg, &["lab.txt", "x.npy", "3 labels", "2 samples"]);
}

#[test]
fn npy_bad_values_and_shapes() {
    use ndarray_npy::write_npy;
    let dir = TempDir::new().must();
    let p = dir.path().join("neg.npy");
    write_npy(&p, &ndarray::array![[1.0, 2.0], [3.0, -4.0]]).must();
    assert_has(
        &err_msg(&p, &raw()),
        &["row 2", "column 2", "-4", "--preprocess shift"],
    );
    let p = dir.path().join("nan.npy");
    write_npy(&p, &ndarray::array![[f64::NAN, 2.0]]).must();
    assert_has(&err_msg(&p, &raw()), &["row 1", "column 1", "NaN"]);
    let p = dir.path().join("v.npy");
    write_npy(&p, &ndarray::array![1.0, 2.0]).must();
    assert_has(&err_msg(&p, &raw()), &["2-D", "1-D"]);
    let p = write(&dir, "junk.npy", "not numpy");
    assert_has(&err_msg(&p, &raw()), &["not a readable .npy"]);
}

/// A version-1.0 `.npy` file made byte by byte (big-endian data, truncated files: what
/// ndarray-npy does not write).
fn npy_by_hand(
    dir: &TempDir,
    name: &str,
    descr: &str,
    fortran: bool,
    shape: &str,
    data: &[u8],
) -> PathBuf {
    let f = if fortran { "True" } else { "False" };
    let mut h =
        format!("{{'descr': '{descr}', 'fortran_order': {f}, 'shape': {shape}, }}").into_bytes();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(b' ');
    }
    h.push(b'\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&u16::try_from(h.len()).must().to_le_bytes());
    bytes.extend_from_slice(&h);
    bytes.extend_from_slice(data);
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).must();
    p
}

#[test]
fn npy_fortran_order_f32_and_big_endian() {
    use ndarray_npy::write_npy;
    let dir = TempDir::new().must();
    use ndarray::ShapeBuilder;
    // 3 samples × 2 features in Fortran layout: the file stores 1, 3, 5, 2, 4, 6.
    let mut a = ndarray::Array2::<f32>::zeros((3, 2).f());
    a.assign(&ndarray::array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]]);
    let p = dir.path().join("f.npy");
    write_npy(&p, &a).must();
    let want = ndarray::array![[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]];
    let d = load(&p, &raw()).must();
    assert_eq!(d.x, want);
    assert!(d.x.is_standard_layout());
    assert_eq!(d.sample_names, ["row 1", "row 2", "row 3"]);
    // The same matrix as big-endian f64, C order, and as big-endian f32, Fortran order.
    let c: Vec<u8> = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let p = npy_by_hand(&dir, "be8.npy", ">f8", false, "(3, 2)", &c);
    assert_eq!(load(&p, &raw()).must().x, want);
    let f: Vec<u8> = [1.0f32, 3.0, 5.0, 2.0, 4.0, 6.0]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let p = npy_by_hand(&dir, "be4.npy", ">f4", true, "(3, 2)", &f);
    assert_eq!(load(&p, &raw()).must().x, want);
}

#[test]
fn npy_truncated_file_is_named() {
    let dir = TempDir::new().must();
    let p = npy_by_hand(&dir, "cut.npy", "<f8", false, "(10, 4)", &[0u8; 100]);
    assert_has(
        &err_msg(&p, &raw()),
        &["truncated .npy file", "10×4", "320 bytes", "100 bytes"],
    );
    let p = npy_by_hand(&dir, "head.npy", "<f8", false, "(10, 4)", &[]);
    let bytes = std::fs::read(&p).must();
    std::fs::write(&p, &bytes[..30]).must();
    assert_has(&err_msg(&p, &raw()), &["not a readable .npy", "header"]);
}

#[test]
fn npy_streaming_equals_the_whole_file_reader() {
    use ndarray_npy::{ReadNpyExt, write_npy};
    use rand::{Rng, SeedableRng};
    let dir = TempDir::new().must();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let a = ndarray::Array2::from_shape_fn((41, 17), |_| rng.r#gen::<f64>());
    for (name, arr) in [
        ("c.npy", a.clone()),
        ("f.npy", a.t().to_owned().reversed_axes()),
    ] {
        let p = dir.path().join(name);
        write_npy(&p, &arr).must();
        // The loader before streaming: the whole file parsed, then transposed.
        let old = ndarray::Array2::<f64>::read_npy(std::fs::File::open(&p).must()).must();
        let want = old.t().as_standard_layout().into_owned();
        for pre in [Preprocess::None, Preprocess::L2] {
            let opts = LoadOptions {
                preprocess: pre,
                ..raw()
            };
            let got = load(&p, &opts).must();
            let mut want = want.clone();
            nmf_playground::engine::data::preprocess::apply(&mut want, pre);
            assert!(
                got.x
                    .iter()
                    .zip(want.iter())
                    .all(|(g, w)| g.to_bits() == w.to_bits()),
                "{name} {pre:?}"
            );
            assert_eq!(
                got.fingerprint,
                nmf_playground::engine::data::fingerprint_of(&old.t().to_owned())
            );
        }
    }
}

// ---------------------------------------------------------------- .mat errors

#[test]
fn mat_bad_files() {
    let dir = TempDir::new().must();
    let p = write(&dir, "junk.mat", "hello");
    assert_has(&err_msg(&p, &raw()), &["not a MATLAB v5"]);
    let mut h =
        b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: x HDF5 schema 1.00 .".to_vec();
    h.resize(600, b' ');
    std::fs::write(dir.path().join("v73.mat"), &h).must();
    assert_has(
        &err_msg(&dir.path().join("v73.mat"), &raw()),
        &["v7.3", "HDF5", "-v7"],
    );
}

/// A minimal uncompressed MATLAB v5 file: each variable is (name, class, rows, cols,
/// column-major values); class 6 = double (stored as miDOUBLE), 9 = uint8 (miUINT8),
/// 12 = int32 (miINT32).
fn mat_v5(vars: &[(&str, u8, usize, usize, Vec<f64>)]) -> Vec<u8> {
    fn pad8(v: &mut Vec<u8>) {
        while !v.len().is_multiple_of(8) {
            v.push(0);
        }
    }
    fn element(ty: u32, data: &[u8]) -> Vec<u8> {
        let mut e = Vec::new();
        e.extend(ty.to_le_bytes());
        e.extend((data.len() as u32).to_le_bytes());
        e.extend(data);
        pad8(&mut e);
        e
    }
    let mut out = b"MATLAB 5.0 MAT-file, written by the nmf-playground tests".to_vec();
    out.resize(116, b' ');
    out.extend([0u8; 8]);
    out.extend(0x0100u16.to_le_bytes());
    out.extend(b"IM");
    for (name, class, r, c, vals) in vars {
        let mut body = Vec::new();
        body.extend(element(
            6,
            &[&u32::from(*class).to_le_bytes()[..], &[0u8; 4]].concat(),
        ));
        body.extend(element(
            5,
            &[(*r as i32).to_le_bytes(), (*c as i32).to_le_bytes()].concat(),
        ));
        body.extend(element(1, name.as_bytes()));
        let (ty, data): (u32, Vec<u8>) = match class {
            9 => (2, vals.iter().map(|&v| v as u8).collect()),
            12 => (
                5,
                vals.iter()
                    .flat_map(|&v| (v as i32).to_le_bytes())
                    .collect(),
            ),
            _ => (9, vals.iter().flat_map(|v| v.to_le_bytes()).collect()),
        };
        body.extend(element(ty, &data));
        out.extend(element(14, &body));
    }
    out
}

#[test]
fn mat_small_files_layout_and_scaling() {
    let dir = TempDir::new().unwrap();
    // 2 samples of 8×8 images; fea(i, p) with p = col*8 + row (MATLAB column-major images).
    let (n, s) = (2usize, 8usize);
    let pix = |i: usize, row: usize, col: usize| (i * 100 + row * 10 + col) as f64;
    let mut fea = vec![0.0; n * s * s];
    for i in 0..n {
        for row in 0..s {
            for col in 0..s {
                let p = col * s + row;
                fea[i + p * n] = pix(i, row, col);
            }
        }
    }
    for class in [6u8, 9] {
        let p = dir.path().join(format!("img{class}.mat"));
        std::fs::write(
            &p,
            mat_v5(&[
                ("fea", class, n, s * s, fea.clone()),
                ("gnd", 6, n, 1, vec![2.0, 1.0]),
            ]),
        )
        .unwrap();
        let d = load(&p, &raw()).unwrap();
        assert_eq!(d.image_shape, Some((8, 8)));
        assert_eq!(d.class_names, ["1", "2"]);
        assert_eq!(d.labels.as_deref().unwrap(), [1, 0]);
        for i in 0..n {
            for row in 0..s {
                for col in 0..s {
                    assert_eq!(d.x[[row * s + col, i]], pix(i, row, col) / 255.0);
                }
            }
        }
        assert_eq!(d.thumbnails.len(), 2);
        assert_eq!(d.thumbnails[1].pixels[s + 2], pix(1, 1, 2) as u8);
    }
    // Not image-shaped: values kept as they are; fea is 3×2, column-major.
    let p = dir.path().join("table.mat");
    std::fs::write(
        &p,
        mat_v5(&[("fea", 6, 3, 2, vec![0.5, 1.5, 2.5, 10.0, 20.0, 30.0])]),
    )
    .unwrap();
    let d = load(&p, &raw()).unwrap();
    assert_eq!(d.x, ndarray::array![[0.5, 1.5, 2.5], [10.0, 20.0, 30.0]]);
    assert!(d.labels.is_none() && d.image_shape.is_none());
    assert!(
        d.warnings.iter().any(|w| w.contains("no `gnd`")),
        "{:?}",
        d.warnings
    );

    // Errors: negative value (row/column of fea), label count, missing fea.
    let p = dir.path().join("neg.mat");
    std::fs::write(&p, mat_v5(&[("fea", 6, 2, 2, vec![1.0, 2.0, 3.0, -4.0])])).unwrap();
    assert_has(
        &err_msg(&p, &raw()),
        &["`fea` row 2, column 2", "-4", "--preprocess shift"],
    );
    let p = dir.path().join("count.mat");
    std::fs::write(
        &p,
        mat_v5(&[
            ("fea", 6, 2, 3, vec![1.0; 6]),
            ("gnd", 6, 5, 1, vec![1.0; 5]),
        ]),
    )
    .unwrap();
    assert_has(
        &err_msg(&p, &raw()),
        &["`gnd` has 5 labels", "`fea` is 2×3"],
    );
    // int32 class: matfile 0.5 maps the int32 class to the uint32 data type, so it refuses
    // int32 arrays; we pass its refusal on as an error naming the file.
    let p = dir.path().join("int32.mat");
    std::fs::write(&p, mat_v5(&[("fea", 12, 1, 2, vec![1.0, 2.0])])).unwrap();
    match load(&p, &raw()) {
        Ok(d) => assert_eq!(d.x, ndarray::array![[1.0], [2.0]]),
        Err(e) => {
            eprintln!("int32 .mat: {e}");
            assert_has(&e.to_string(), &["int32.mat"]);
        }
    }
    // Crafted dimensions whose product overflows i32: an error, not a crash.
    let mut bomb = mat_v5(&[("fea", 6, 1, 1, vec![1.0])]);
    let dims_at = 128 + 8 + 16 + 8; // header, matrix tag, flags element, dims tag
    bomb[dims_at..dims_at + 4].copy_from_slice(&70000i32.to_le_bytes());
    bomb[dims_at + 4..dims_at + 8].copy_from_slice(&70000i32.to_le_bytes());
    let p = dir.path().join("bomb.mat");
    std::fs::write(&p, &bomb).unwrap();
    assert_has(&err_msg(&p, &raw()), &["bomb.mat"]);
    let p = dir.path().join("nofea.mat");
    std::fs::write(&p, mat_v5(&[("X", 6, 1, 1, vec![1.0])])).unwrap();
    assert_has(&err_msg(&p, &raw()), &["no numeric variable `fea`", "X"]);
}

// ---------------------------------------------------------------- preprocessing via load

#[test]
fn preprocessing_on_hand_computed_example() {
    let dir = TempDir::new().must();
    // Samples (columns of X): (3,4), (0,0), (1,2): rows of the file.
    let p = write(&dir, "pp.csv", "a,b\n3,4\n0,0\n1,2\n");
    let d = load(
        &p,
        &LoadOptions {
            preprocess: Preprocess::L2,
            ..raw()
        },
    )
    .must();
    let s5 = 5f64.sqrt();
    let want = ndarray::array![[0.6, 0.0, 1.0 / s5], [0.8, 0.0, 2.0 / s5]];
    assert!((&d.x - &want).iter().all(|v| v.abs() < 1e-15), "{}", d.x);
    assert!(
        d.warnings
            .iter()
            .any(|w| w.contains("all zero") && w.contains("row 3"))
    );
    assert!(d.warnings.iter().any(|w| w.contains("L2")));
    let d = load(
        &p,
        &LoadOptions {
            preprocess: Preprocess::Max,
            ..raw()
        },
    )
    .must();
    assert_eq!(d.x, ndarray::array![[0.75, 0.0, 0.25], [1.0, 0.0, 0.5]]);
}

// ---------------------------------------------------------------- bundled samples

fn assets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets")
}

fn same_data(a: &Dataset, b: &Dataset) {
    assert_eq!(a.x, b.x);
    assert_eq!(a.labels, b.labels);
    assert_eq!(a.class_names, b.class_names);
    assert_eq!(a.sample_names, b.sample_names);
    assert_eq!(a.image_shape, b.image_shape);
    assert_eq!(a.thumbnails, b.thumbnails);
    assert_eq!(a.fingerprint, b.fingerprint);
}

/// Regenerate `assets/` from the generators: `REGENERATE_ASSETS=1 cargo test --test
/// data_loaders regenerate_assets`.
#[test]
fn regenerate_assets() {
    if std::env::var_os("REGENERATE_ASSETS").is_none() {
        eprintln!("SKIP: set REGENERATE_ASSETS=1 to rewrite assets/ from the generators");
        return;
    }
    let dir = assets();
    let _ = std::fs::remove_dir_all(dir.join("glyphs"));
    for &s in Sample::ALL {
        samples::write_files(s, &dir).must();
    }
}

#[test]
fn asset_files_equal_generators() {
    let dir = assets();
    for (s, path) in [
        (Sample::Glyphs, dir.join("glyphs")),
        (Sample::Blobs, dir.join("blobs.csv")),
    ] {
        let from_file = load(&path, &raw()).must();
        let generated = samples::load_sample(s, &raw()).must();
        same_data(&from_file, &generated);
        assert!(from_file.warnings.is_empty(), "{:?}", from_file.warnings);
    }
}

#[test]
fn written_sample_files_round_trip() {
    // Independent of the checked-in assets: write to a temp dir and load back.
    let dir = TempDir::new().must();
    for &s in Sample::ALL {
        let p = samples::write_files(s, dir.path()).must();
        let a = load(&p, &LoadOptions::default()).must();
        let b = samples::load_sample(s, &LoadOptions::default()).must();
        same_data(&a, &b);
    }
}
