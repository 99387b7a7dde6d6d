//! A fingerprint of an array's values, for the transductive estimators' question "is this the
//! X the model was fitted on?".
//!
//! Each entry's bits are mixed with its position (row-major index) by the splitmix64
//! finalizer, and the mixed words are added with wrapping arithmetic. The sum does not depend
//! on the order the entries are visited in, so a C- and an F-ordered copy of the same values
//! give the same fingerprint, and the pass reads memory in whatever order the array has.
//! Two arrays of the same shape that differ in any entry differ in one mixed word, so they
//! collide with probability about 2⁻⁶⁴ per lane; two lanes with different position keys
//! make it 2⁻¹²⁸. This is not a defence against a crafted collision (nobody gains from one
//! here), and it is about 8× cheaper than hashing a contiguous copy with BLAKE2, which made
//! a third of the fixed cost of a fit on a 10,000 × 4,096 X.

use numpy::PyReadonlyArray2;
use pyo3::prelude::*;

/// Position keys of the two lanes (odd constants: the golden ratio's and another of
/// splitmix64's multipliers).
const KEYS: [u64; 2] = [0x9E37_79B9_7F4A_7C15, 0xD6E8_FEB8_6659_FD93];

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn word(value: f64, index: u64, key: u64) -> u64 {
    mix(value.to_bits() ^ index.wrapping_mul(key))
}

/// Adds to `sum` the lanes of `values`, whose t-th entry has row-major index
/// `start + t·step`.
fn add_lanes(sum: &mut [u64; 2], values: &[f64], start: u64, step: u64) {
    let mut index = start;
    for &v in values {
        sum[0] = sum[0].wrapping_add(word(v, index, KEYS[0]));
        sum[1] = sum[1].wrapping_add(word(v, index, KEYS[1]));
        index = index.wrapping_add(step);
    }
}

/// `(n, m, lane0, lane1)` of a float64 array, the same for any memory order of the same
/// values. Runs without the GIL.
#[pyfunction]
pub fn fingerprint(py: Python<'_>, x: PyReadonlyArray2<'_, f64>) -> (usize, usize, u64, u64) {
    let view = x.as_array();
    let (n, m) = view.dim();
    let [a, b] = py.detach(|| {
        let mut sum = [0u64; 2];
        if let Some(values) = view.as_slice() {
            add_lanes(&mut sum, values, 0, 1);
        } else if view.t().as_slice().is_some() {
            // F order: column j is contiguous, its entry i has row-major index i·m + j.
            for (j, column) in view.columns().into_iter().enumerate() {
                if let Some(values) = column.as_slice() {
                    add_lanes(&mut sum, values, j as u64, m as u64);
                }
            }
        } else {
            for (i, row) in view.rows().into_iter().enumerate() {
                for (j, &v) in row.iter().enumerate() {
                    add_lanes(&mut sum, &[v], (i * m + j) as u64, 1);
                }
            }
        }
        sum
    });
    (n, m, a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_of_the_visit_does_not_matter_and_one_changed_entry_does() {
        let values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2×3, row-major
        let of = |values: &[f64]| {
            let mut sum = [0; 2];
            add_lanes(&mut sum, values, 0, 1);
            sum
        };
        let c = of(&values);
        let mut f = [0; 2]; // the same matrix visited column by column
        add_lanes(&mut f, &[1.0, 4.0], 0, 3);
        add_lanes(&mut f, &[2.0, 5.0], 1, 3);
        add_lanes(&mut f, &[3.0, 6.0], 2, 3);
        assert_eq!(f, c);
        let mut changed = values;
        changed[4] = 5.000000000000001;
        assert_ne!(of(&changed), c);
        let mut swapped = values;
        swapped.swap(0, 1);
        assert_ne!(of(&swapped), c, "a moved value is a different array");
    }
}
