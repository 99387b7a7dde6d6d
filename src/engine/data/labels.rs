//! Natural ordering of names and turning raw label strings into class indices.
//!
//! Users name classes and files `s1, s2, …, s10` or `1.png … 10.png`; a plain string sort
//! would put `s10` before `s2` and scramble the class order the user expects (and the order
//! in which samples appear), so every list of names in the data layer is sorted naturally.

use std::cmp::Ordering;

/// Replace `ds`'s labels by those of `labels` (a `.npy` vector or a text file with one label
/// per line), checked as the CLI's `--labels` checks them: one label per sample of the data
/// file `data`, every label present; the error names both files.
pub fn attach_labels_file(
    ds: &mut super::Dataset,
    data: &std::path::Path,
    labels: &std::path::Path,
) -> Result<(), super::DataError> {
    let raw = super::npy::read_labels(labels)?;
    let n = ds.n();
    if raw.len() != n {
        return Err(super::DataError::LabelCountMismatch {
            data: data.to_path_buf(),
            n,
            labels: labels.to_path_buf(),
            count: raw.len(),
        });
    }
    let (indices, class_names) = index_labels(&raw);
    ds.labels = Some(indices);
    ds.class_names = class_names;
    Ok(())
}

/// The label file beside a `.npy` data file that is read when none is given: `labels.npy`,
/// else `y.npy` (the scikit-learn habit of saving X and y side by side).
pub fn sibling_labels(data: &std::path::Path) -> Option<std::path::PathBuf> {
    ["labels.npy", "y.npy"].into_iter().find_map(|name| {
        let sib = data.with_file_name(name);
        let is_self = data.file_name().is_some_and(|f| f == name);
        (sib.is_file() && !is_self).then_some(sib)
    })
}

/// Natural order: runs of ASCII digits compare by numeric value, other runs compare
/// case-insensitively (then case-sensitively, then by leading zeros, so the order is total).
/// `s2 < s10`, `img9.png < img10.png`, `a < B < c`.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a, b);
    loop {
        match (x.is_empty(), y.is_empty()) {
            (true, true) => break,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        let (cx, rx) = split_chunk(x);
        let (cy, ry) = split_chunk(y);
        let dx = cx.starts_with(|c: char| c.is_ascii_digit());
        let dy = cy.starts_with(|c: char| c.is_ascii_digit());
        let ord = match (dx, dy) {
            (true, true) => {
                let tx = cx.trim_start_matches('0');
                let ty = cy.trim_start_matches('0');
                tx.len().cmp(&ty.len()).then_with(|| tx.cmp(ty))
            }
            // Digits sort before letters, as in file managers.
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => cx
                .chars()
                .flat_map(char::to_lowercase)
                .cmp(cy.chars().flat_map(char::to_lowercase)),
        };
        if ord != Ordering::Equal {
            return ord;
        }
        x = rx;
        y = ry;
    }
    // Equal up to case and leading zeros: fall back to a byte order so that the sort is total.
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// The first run of digits or of non-digits, and the rest.
fn split_chunk(s: &str) -> (&str, &str) {
    let digit = s.starts_with(|c: char| c.is_ascii_digit());
    let end = s
        .char_indices()
        .find(|&(_, c)| c.is_ascii_digit() != digit)
        .map_or(s.len(), |(i, _)| i);
    s.split_at(end)
}

/// Order class names: numerically when every name is a number (`-1 < 2 < 10 < 10.5`),
/// naturally otherwise.
pub fn class_order(a: &str, b: &str, all_numeric: bool) -> Ordering {
    if all_numeric && let (Ok(x), Ok(y)) = (a.parse::<f64>(), b.parse::<f64>()) {
        return x.total_cmp(&y).then_with(|| natural_cmp(a, b));
    }
    natural_cmp(a, b)
}

/// Turn one raw label per sample into (class index per sample, sorted class names).
///
/// Class names are sorted numerically when all labels are numbers and naturally otherwise,
/// so class `k` means the same thing whichever loader read the data.
pub fn index_labels<S: AsRef<str>>(raw: &[S]) -> (Vec<usize>, Vec<String>) {
    let mut names: Vec<String> = raw.iter().map(|s| s.as_ref().to_string()).collect();
    let all_numeric = names.iter().all(|s| s.parse::<f64>().is_ok());
    names.sort_by(|a, b| class_order(a, b, all_numeric));
    names.dedup();
    let lookup: std::collections::HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_str(), i))
        .collect();
    let labels = raw
        .iter()
        .map(|s| lookup.get(s.as_ref()).copied().unwrap_or(0))
        .collect();
    (labels, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_of_class_and_file_names() {
        let mut v = vec![
            "s10", "s2", "s1", "s20", "s3", "S4", "a", "10.pgm", "9.pgm", "s02",
        ];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            [
                "9.pgm", "10.pgm", "a", "s1", "s2", "s02", "s3", "S4", "s10", "s20"
            ]
        );
    }

    #[test]
    fn natural_order_is_total_and_consistent() {
        assert_eq!(natural_cmp("x", "x"), Ordering::Equal);
        assert_eq!(natural_cmp("s01", "s1"), Ordering::Greater);
        assert_eq!(natural_cmp("", "a"), Ordering::Less);
        assert_eq!(natural_cmp("img", "img1"), Ordering::Less);
        // Very long digit runs do not overflow.
        assert_eq!(
            natural_cmp("a99999999999999999999999", "a100000000000000000000000"),
            Ordering::Less
        );
    }

    #[test]
    fn labels_numeric_and_string() {
        let (l, n) = index_labels(&["10", "2", "2", "-1"]);
        assert_eq!(n, ["-1", "2", "10"]);
        assert_eq!(l, [2, 1, 1, 0]);
        let (l, n) = index_labels(&["s10", "s2", "setosa"]);
        assert_eq!(n, ["s2", "s10", "setosa"]);
        assert_eq!(l, [1, 0, 2]);
    }
}
