//! A fingerprint of an array's values, for the transductive estimators' question "is this the
//! X the model was fitted on?".
//!
//! Each entry's bits (xor a constant) are multiplied by a key of its position (row-major
//! index) into a 128-bit product, whose two halves are xor-folded into one word; the words
//! are added with wrapping arithmetic. The sum does not depend on the order the entries are
//! visited in, so a C- and an F-ordered copy of the same values give the same fingerprint,
//! and the pass reads memory in whatever order the array has.
//!
//! One widening multiply per entry: the pass runs at about the speed of reading X, where the
//! two splitmix64 lanes it replaced (six multiplies an entry) were a fifth of the fixed cost
//! of a fit on the 1,797 × 64 digits. The fold makes a word a nonlinear function of the
//! position and value, so no pattern of changes cancels for a structural reason (a sum of
//! plain products value × key would miss changes whose weighted sums vanish, such as
//! +1, −2, +1 on three neighbours); two arrays of the same shape collide with probability
//! about 2⁻⁶⁴. This is not a defence against a crafted collision (nobody gains from one here).

use numpy::PyReadonlyArray2;
use pyo3::prelude::*;

/// Xored into every value's bits: a NaN's bit pattern, so no value X may hold (the engine
/// refuses NaN) becomes the zero factor that would make its word ignore its position.
const VALUE_KEY: u64 = 0x7FF8_5A5A_C3C3_0F0F;
/// Position key of entry t: `t·STEP + START` (STEP odd, so the keys of distinct positions
/// differ; START puts the one zero key beyond any array, see the tests).
const STEP: u64 = 0x9E37_79B9_7F4A_7C15;
const START: u64 = 0xD6E8_FEB8_6659_FD93;

fn word(value: f64, key: u64) -> u64 {
    let p = u128::from(value.to_bits() ^ VALUE_KEY) * u128::from(key);
    (p as u64) ^ ((p >> 64) as u64)
}

fn key(index: u64) -> u64 {
    index.wrapping_mul(STEP).wrapping_add(START)
}

/// Adds to `sum` the words of `values`, whose t-th entry has row-major index `start + t·step`.
/// Pairs of entries go down two chains (keys k and k + dk, both stepping by 2·dk), so the
/// multiplies of neighbours overlap.
fn add_words(sum: &mut u64, values: &[f64], start: u64, step: u64) {
    let dk = step.wrapping_mul(STEP);
    let (mut k0, mut k1, dk2) = (key(start), key(start).wrapping_add(dk), dk.wrapping_mul(2));
    let (mut s0, mut s1) = (0u64, 0u64);
    let mut pairs = values.chunks_exact(2);
    for pair in &mut pairs {
        s0 = s0.wrapping_add(word(pair[0], k0));
        s1 = s1.wrapping_add(word(pair[1], k1));
        k0 = k0.wrapping_add(dk2);
        k1 = k1.wrapping_add(dk2);
    }
    if let [v] = pairs.remainder() {
        s0 = s0.wrapping_add(word(*v, k0));
    }
    *sum = sum.wrapping_add(s0).wrapping_add(s1);
}

/// `(n, m, hash)` of a float64 array, the same for any memory order of the same values. Runs
/// without the GIL.
#[pyfunction]
pub fn fingerprint(py: Python<'_>, x: PyReadonlyArray2<'_, f64>) -> (usize, usize, u64) {
    let view = x.as_array();
    let (n, m) = view.dim();
    let hash = py.detach(|| {
        let mut sum = 0u64;
        if let Some(values) = view.as_slice() {
            add_words(&mut sum, values, 0, 1);
        } else if view.t().as_slice().is_some() {
            // F order: column j is contiguous, its entry i has row-major index i·m + j.
            for (j, column) in view.columns().into_iter().enumerate() {
                if let Some(values) = column.as_slice() {
                    add_words(&mut sum, values, j as u64, m as u64);
                }
            }
        } else {
            // Rows of a column slice (`X[:, :-1]`) are contiguous apart; others go entry by
            // entry.
            for (i, row) in view.rows().into_iter().enumerate() {
                match row.as_slice() {
                    Some(values) => add_words(&mut sum, values, (i * m) as u64, 1),
                    None => {
                        for (j, &v) in row.iter().enumerate() {
                            add_words(&mut sum, &[v], (i * m + j) as u64, 1);
                        }
                    }
                }
            }
        }
        sum
    });
    (n, m, hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(values: &[f64]) -> u64 {
        let mut sum = 0;
        add_words(&mut sum, values, 0, 1);
        sum
    }

    #[test]
    fn the_order_of_the_visit_does_not_matter_and_one_changed_entry_does() {
        let values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2×3, row-major
        let c = of(&values);
        let mut f = 0; // the same matrix visited column by column
        add_words(&mut f, &[1.0, 4.0], 0, 3);
        add_words(&mut f, &[2.0, 5.0], 1, 3);
        add_words(&mut f, &[3.0, 6.0], 2, 3);
        assert_eq!(f, c);
        let mut changed = values;
        changed[4] = 5.000000000000001;
        assert_ne!(of(&changed), c);
        let mut swapped = values;
        swapped.swap(0, 1);
        assert_ne!(of(&swapped), c, "a moved value is a different array");
        // A change whose position-weighted sums vanish (+1, −2, +1 on three neighbours'
        // bits) is seen: the fold is not linear in the position key.
        let bumped: Vec<f64> = [(0, 1i64), (1, -2), (2, 1)]
            .iter()
            .map(|&(i, d)| f64::from_bits((values[i].to_bits() as i64 + d) as u64))
            .chain(values[3..].iter().copied())
            .collect();
        assert_ne!(of(&bumped), c);
    }

    #[test]
    fn no_position_of_a_possible_array_has_the_zero_key() {
        // The index t with t·STEP + START = 0 (mod 2⁶⁴) is −START·STEP⁻¹; STEP⁻¹ by Newton's
        // iteration (each step doubles the correct low bits).
        let mut inv = STEP;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(STEP.wrapping_mul(inv)));
        }
        assert_eq!(STEP.wrapping_mul(inv), 1);
        let zero_at = START.wrapping_neg().wrapping_mul(inv);
        assert_eq!(key(zero_at), 0);
        assert!(
            zero_at >= 1 << 48,
            "an array of {zero_at} entries could hold it"
        );
    }
}
