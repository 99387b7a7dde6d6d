//! Folders of images: class subfolders (folder name = label) or a flat folder (unlabelled).
//!
//! Images are read as 8-bit grayscale and scaled to [0, 1] (`x = pixel / 255`); pixel `j` of a
//! sample is `row * width + col` (row-major, the same order the `.mat` loader produces, so
//! the two loaders of the same faces give the same X). Sizes are read from the file headers
//! first, so a size mismatch or an oversized image (decompression-bomb guard) is reported
//! before anything big is decoded.

use super::labels::{index_labels, natural_cmp};
use super::{DataError, Dataset, LoadOptions, Thumbnail};
use image::imageops::FilterType;
use image::{GrayImage, ImageReader, Limits};
use ndarray::{Array2, ArrayView1};
use std::path::{Path, PathBuf};

/// Largest accepted image side, in pixels (decompression-bomb guard).
pub const MAX_SIDE: u32 = 4096;
/// Largest accepted X (features × samples), 2 GiB of f64: a folder of many large images
/// gets an error suggesting `--resize` instead of exhausting memory.
pub const MAX_VALUES: usize = 1 << 28;
/// Thumbnails are downscaled so that their larger side is at most this many pixels.
pub const THUMB_MAX: usize = 64;
/// File extensions read as images (lower case).
pub const IMAGE_EXTENSIONS: &[&str] = &[
    "png", "pgm", "pnm", "ppm", "pbm", "jpg", "jpeg", "bmp", "gif",
];

/// Whether `path` has an image extension.
pub fn is_image_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// Directory entries (files, folders) sorted naturally by name.
fn list_sorted(dir: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), DataError> {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    let rd = std::fs::read_dir(dir).map_err(|e| DataError::io(dir, e))?;
    for entry in rd {
        let entry = entry.map_err(|e| DataError::io(dir, e))?;
        let p = entry.path();
        // `metadata` follows symlinks, so a linked class folder counts as a folder.
        let is_dir = std::fs::metadata(&p).map(|m| m.is_dir()).unwrap_or(false);
        if is_dir {
            dirs.push(p);
        } else {
            files.push(p);
        }
    }
    let key = |p: &PathBuf| p.file_name().map(|s| s.to_string_lossy().into_owned());
    files.sort_by(|a, b| natural_cmp(&key(a).unwrap_or_default(), &key(b).unwrap_or_default()));
    dirs.sort_by(|a, b| natural_cmp(&key(a).unwrap_or_default(), &key(b).unwrap_or_default()));
    Ok((files, dirs))
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Limits given to the decoders, in addition to the header check.
fn limits() -> Limits {
    let mut l = Limits::default();
    l.max_image_width = Some(MAX_SIDE);
    l.max_image_height = Some(MAX_SIDE);
    l
}

fn open_reader(path: &Path) -> Result<ImageReader<std::io::BufReader<std::fs::File>>, DataError> {
    let mut r = ImageReader::open(path)
        .map_err(|e| DataError::io(path, e))?
        .with_guessed_format()
        .map_err(|e| DataError::io(path, e))?;
    r.limits(limits());
    Ok(r)
}

/// Width and height from the image header, without decoding the pixels; refuses images
/// beyond [`MAX_SIDE`].
pub fn image_dimensions(path: &Path) -> Result<(u32, u32), DataError> {
    let mut r = ImageReader::open(path)
        .map_err(|e| DataError::io(path, e))?
        .with_guessed_format()
        .map_err(|e| DataError::io(path, e))?;
    r.no_limits(); // only the header is read; the check below gives the clearer message
    let (w, h) = r
        .into_dimensions()
        .map_err(|e| DataError::bad_image(path, &e))?;
    if w > MAX_SIDE || h > MAX_SIDE {
        return Err(DataError::ImageTooLarge {
            path: path.to_path_buf(),
            width: w,
            height: h,
            max: MAX_SIDE,
        });
    }
    Ok((w, h))
}

/// Decode an image as 8-bit grayscale.
pub fn read_gray(path: &Path) -> Result<GrayImage, DataError> {
    let img = open_reader(path)?
        .decode()
        .map_err(|e| DataError::bad_image(path, &e))?;
    Ok(img.to_luma8())
}

/// Upright thumbnail of a grayscale image, larger side at most [`THUMB_MAX`].
pub fn thumbnail(gray: &GrayImage) -> Thumbnail {
    let (w, h) = (gray.width() as usize, gray.height() as usize);
    let big = w.max(h);
    if big <= THUMB_MAX {
        return Thumbnail {
            width: w,
            height: h,
            pixels: gray.as_raw().clone(),
        };
    }
    let tw = ((w * THUMB_MAX + big / 2) / big).max(1);
    let th = ((h * THUMB_MAX + big / 2) / big).max(1);
    let small = image::imageops::resize(gray, tw as u32, th as u32, FilterType::Triangle);
    Thumbnail {
        width: tw,
        height: th,
        pixels: small.into_raw(),
    }
}

/// Thumbnail of a sample stored row-major in a column of X with values in [0, 1].
pub fn thumbnail_from_column(col: ArrayView1<f64>, width: usize, height: usize) -> Thumbnail {
    let pixels: Vec<u8> = col
        .iter()
        .map(|&v| (v.clamp(0.0, 1.0) * 255.0).round() as u8)
        .collect();
    match GrayImage::from_raw(width as u32, height as u32, pixels) {
        Some(img) => thumbnail(&img),
        None => Thumbnail {
            width: 0,
            height: 0,
            pixels: Vec::new(),
        },
    }
}

/// Load a folder of images. See the module docs.
pub fn load_folder(dir: &Path, opts: &LoadOptions) -> Result<Dataset, DataError> {
    if let Some((w, h)) = opts.resize
        && (w == 0 || h == 0 || w > MAX_SIDE || h > MAX_SIDE)
    {
        return Err(DataError::Unsupported {
            path: dir.to_path_buf(),
            why: format!("cannot resize images to {w}×{h}; both sides must be in 1..={MAX_SIDE}"),
        });
    }
    let listing = Listing::read(dir)?;
    let first = common_size(&listing.items, opts.resize.is_some())?;
    let (w, h) = opts.resize.unwrap_or((first.1, first.2));
    check_size(dir, listing.items.len(), w, h)?;
    let (x, thumbnails) = decode(&listing.items, (w, h), opts.resize.is_some(), &first)?;

    let mut ds = Dataset::raw(x, dir.display().to_string());
    ds.image_shape = Some((w as usize, h as usize));
    ds.thumbnails = thumbnails;
    ds.sample_names = listing.items.iter().map(|it| it.name.clone()).collect();
    if listing.labelled {
        let raw: Vec<&str> = listing
            .items
            .iter()
            .map(|it| it.class.as_deref().unwrap_or(""))
            .collect();
        let (labels, class_names) = index_labels(&raw);
        ds.labels = Some(labels);
        ds.class_names = class_names;
    }
    ds.warnings = listing.warnings;
    Ok(ds)
}

/// One image to read: its path, its sample name and its class (the subfolder), if any.
struct Item {
    path: PathBuf,
    name: String,
    class: Option<String>,
}

/// The images of a folder: those in class subfolders when there are any (labelled), else
/// those at the top; what was skipped is said in the warnings.
struct Listing {
    items: Vec<Item>,
    labelled: bool,
    warnings: Vec<String>,
}

impl Listing {
    fn read(dir: &Path) -> Result<Self, DataError> {
        let (top_files, subdirs) = list_sorted(dir)?;
        let mut skipped: Vec<String> = Vec::new();
        let mut warnings = Vec::new();
        let (mut items, empty_classes) = class_items(&subdirs, &mut skipped)?;
        let labelled = !items.is_empty();
        if labelled {
            let ignored = top_files.iter().filter(|f| is_image_file(f)).count();
            if ignored > 0 {
                warnings.push(format!(
                    "ignored {ignored} image file(s) at the top of the folder: with class \
                     subfolders, only images inside them are read"
                ));
            }
            for f in top_files.iter().filter(|f| !is_image_file(f)) {
                skipped.push(file_name(f));
            }
            if !empty_classes.is_empty() {
                warnings.push(format!(
                    "ignored {} subfolder(s) without images: {}",
                    empty_classes.len(),
                    empty_classes.join(", ")
                ));
            }
        } else {
            for f in &top_files {
                if is_image_file(f) {
                    items.push(Item {
                        path: f.clone(),
                        name: file_name(f),
                        class: None,
                    });
                } else {
                    skipped.push(file_name(f));
                }
            }
        }
        if items.is_empty() {
            return Err(DataError::Empty {
                path: dir.to_path_buf(),
                why: format!(
                    "no image files ({}) in the folder or in class subfolders{}",
                    IMAGE_EXTENSIONS.join(", "),
                    if skipped.is_empty() {
                        String::new()
                    } else {
                        format!("; {} other file(s) skipped", skipped.len())
                    }
                ),
            });
        }
        if !skipped.is_empty() {
            let mut shown: Vec<String> = skipped.iter().take(5).cloned().collect();
            if skipped.len() > 5 {
                shown.push("…".into());
            }
            warnings.push(format!(
                "skipped {} file(s) that are not images (by extension): {}",
                skipped.len(),
                shown.join(", ")
            ));
        }
        Ok(Self {
            items,
            labelled,
            warnings,
        })
    }
}

/// The images inside the class subfolders, and the subfolders that hold none; other files
/// and nested folders go to `skipped`.
fn class_items(
    subdirs: &[PathBuf],
    skipped: &mut Vec<String>,
) -> Result<(Vec<Item>, Vec<String>), DataError> {
    let mut items = Vec::new();
    let mut empty_classes = Vec::new();
    for sub in subdirs {
        let class = file_name(sub);
        let (files, nested) = list_sorted(sub)?;
        let before = items.len();
        for f in files {
            if is_image_file(&f) {
                let name = format!("{class}/{}", file_name(&f));
                items.push(Item {
                    path: f,
                    name,
                    class: Some(class.clone()),
                });
            } else {
                skipped.push(format!("{class}/{}", file_name(&f)));
            }
        }
        for d in nested {
            skipped.push(format!("{class}/{}/", file_name(&d)));
        }
        if items.len() == before {
            empty_classes.push(class);
        }
    }
    Ok((items, empty_classes))
}

/// The first image's path and size, read from the headers only; without resizing, every
/// other image must have the same size.
fn common_size(items: &[Item], resize: bool) -> Result<(PathBuf, u32, u32), DataError> {
    let mut first: Option<(PathBuf, u32, u32)> = None;
    for it in items {
        let (w, h) = image_dimensions(&it.path)?;
        match &first {
            None => first = Some((it.path.clone(), w, h)),
            Some((p1, w1, h1)) => {
                if !resize && (w, h) != (*w1, *h1) {
                    return Err(DataError::ImageSizeMismatch {
                        first: p1.clone(),
                        w1: *w1,
                        h1: *h1,
                        other: it.path.clone(),
                        w2: w,
                        h2: h,
                    });
                }
            }
        }
    }
    Ok(first.unwrap_or_default())
}

/// Refuse `n` images of `w`×`h` pixels beyond [`MAX_VALUES`] or the memory budget.
fn check_size(dir: &Path, n: usize, w: u32, h: u32) -> Result<(), DataError> {
    let m = w as usize * h as usize;
    if m.saturating_mul(n) > MAX_VALUES {
        return Err(DataError::Unsupported {
            path: dir.to_path_buf(),
            why: format!(
                "{n} images of {w}×{h} pixels would need {:.1} GiB as f64; use `--resize WxH` \
                 to make them smaller (at most {MAX_VALUES} values in all)",
                (m as f64) * (n as f64) * 8.0 / f64::from(1u32 << 30)
            ),
        });
    }
    crate::engine::machine::limits::check_alloc(
        &format!("{n} images of {w}×{h} pixels as f64"),
        (m * n) as u128,
        8,
    )
    .map_err(|t| DataError::Unsupported {
        path: dir.to_path_buf(),
        why: format!("{t}; use `--resize WxH` to make them smaller, or fewer images"),
    })
}

/// Decode every image to gray, resize it to `(w, h)` when asked, and write it as column i of
/// X (values in [0, 1]), with its thumbnail.
fn decode(
    items: &[Item],
    (w, h): (u32, u32),
    resize: bool,
    first: &(PathBuf, u32, u32),
) -> Result<(Array2<f64>, Vec<Thumbnail>), DataError> {
    let mut x = Array2::<f64>::zeros((w as usize * h as usize, items.len()));
    let mut thumbnails = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        let mut gray = read_gray(&it.path)?;
        if (gray.width(), gray.height()) != (w, h) {
            if resize {
                gray = image::imageops::resize(&gray, w, h, FilterType::Lanczos3);
            } else {
                return Err(DataError::ImageSizeMismatch {
                    first: first.0.clone(),
                    w1: first.1,
                    h1: first.2,
                    other: it.path.clone(),
                    w2: gray.width(),
                    h2: gray.height(),
                });
            }
        }
        for (dst, &v) in x.column_mut(i).iter_mut().zip(gray.as_raw()) {
            *dst = f64::from(v) / 255.0;
        }
        thumbnails.push(thumbnail(&gray));
    }
    Ok((x, thumbnails))
}
