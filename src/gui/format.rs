//! How numbers and counts are written in the panels and the status line.

/// A number with six significant-ish digits, in scientific notation only when very small or
/// very large.
pub fn format_value(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e5).contains(&a) {
        format!("{v:.4e}")
    } else {
        format!("{v:.6}")
    }
}

/// "1 triplet", "2 triplets": a count with its noun in the right number.
pub fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
