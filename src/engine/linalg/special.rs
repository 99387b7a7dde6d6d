//! Numerically stable logistic sigmoid and softplus (docs/models.md §2.5), on our own `e^x` (x ≤ 0)
//! and `ln(1 + e)` (0 ≤ e ≤ 1).
//!
//! Why not the platform's `exp` and `ln_1p`: RPNMF evaluates σ and softplus for every triplet
//! at every candidate of its safeguard, and the libm calls were a large share of such a run
//! (docs/performance.md, "RPNMF's triplet kernels (`models/rpnmf/triplets.rs`,
//! `models/rpnmf/algorithm.rs`)"). The two functions here are straight-line code (selects, no
//! branches, no calls), so a loop over margins vectorizes when it runs in pulp's context, and
//! they give the same bits on every platform and instruction set (each step is an IEEE
//! operation or a fused multiply-add, which is exactly rounded everywhere), where libm differs
//! between systems. Accuracy against glibc's libm, on 300,000 points each (tests below, which
//! allow 2 ulp): worst seen 1 ulp for `e^x`, 2 for `ln(1 + e)`.

/// `log2(e)`.
const LOG2E: f64 = std::f64::consts::LOG2_E;
/// ln 2 split in two: `LN2_HI` has 32 significant bits, so `n·LN2_HI` is exact for |n| < 2²¹.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
/// `ln 2 − LN2_HI` (ln 2 = 0.693147180559945309417232121458…, LN2_HI =
/// 0.69314718036912381649017333984375 exactly).
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
/// 1.5·2⁵²: adding it rounds to an integer (ties to even) and leaves that integer in the low
/// bits of the result.
const ROUNDER: f64 = 6_755_399_441_055_744.0;

/// `1/j!` for j = 13 down to 0: the Taylor series of `e^r`, highest degree first.
const EXP_TAYLOR: [f64; 14] = [
    1.0 / 6_227_020_800.0,
    1.0 / 479_001_600.0,
    1.0 / 39_916_800.0,
    1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    1.0 / 40_320.0,
    1.0 / 5_040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    0.5,
    1.0,
    1.0,
];

/// `1/(2j + 1)` for j = 11 down to 1: the series of `atanh(s)/s − 1` in `z = s²`, over z.
const ATANH_SERIES: [f64; 11] = [
    1.0 / 23.0,
    1.0 / 21.0,
    1.0 / 19.0,
    1.0 / 17.0,
    1.0 / 15.0,
    1.0 / 13.0,
    1.0 / 11.0,
    1.0 / 9.0,
    1.0 / 7.0,
    1.0 / 5.0,
    1.0 / 3.0,
];

/// `Σ c_i x^(len−1−i)` by Horner's rule with fused multiply-adds (coefficients highest first).
#[inline(always)]
fn horner<const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    c[1..].iter().fold(c[0], |p, &ci| p.mul_add(x, ci))
}

/// `e^x` for `x ≤ 0` (and NaN → NaN), within 2 ulp, subnormal results included.
///
/// `x = n·ln 2 + r` with `|r| ≤ ln 2 / 2` (Cody–Waite, two-part ln 2), `e^r` by its Taylor
/// series to degree 13 (truncation below 5e-18 relative), then the exponent `n` put in by
/// bits; below 2⁻¹⁰²² the scaling goes in two steps so that subnormal results round once.
#[inline(always)]
pub fn exp_nonpositive(x: f64) -> f64 {
    let t = x.mul_add(LOG2E, ROUNDER);
    let n = t - ROUNDER;
    let r = (-n).mul_add(LN2_HI, x);
    let r = (-n).mul_add(LN2_LO, r);
    let p = horner(r, &EXP_TAYLOR);
    // n sits in the low bits of t (t = 1.5·2⁵² + n exactly, |n| ≤ 1100 here).
    // (Wrapping: for x = −∞ or NaN the bits are meaningless, and the select below or the NaN
    // in p decides the result.)
    let ni = (t.to_bits() as i64).wrapping_sub(ROUNDER.to_bits() as i64);
    // Results below 2⁻¹⁰²²: scale by 2^(n + 600), then by 2⁻⁶⁰⁰ (one rounding, into the
    // subnormal range); otherwise by 2ⁿ and 1.
    let deep = ni < -1000;
    let bias = if deep { 600 } else { 0 };
    let scale = f64::from_bits((ni.wrapping_add(bias + 1023) as u64) << 52);
    let post = if deep {
        f64::from_bits(((1023 - 600) as u64) << 52)
    } else {
        1.0
    };
    let v = p * scale * post;
    // e^x underflows to 0 below −745.14; −∞ would make r NaN above.
    if x < -746.0 { 0.0 } else { v }
}

/// `ln(1 + e)` for `0 ≤ e ≤ 1` (and NaN → NaN), within 2 ulp, together with the rounded
/// `1 + e` (σ's denominator).
///
/// `u = 1 + e` rounded, and `c = (e − (u − 1))/u` corrects for that rounding (ln(1 + e) ≈
/// ln u + c). `ln u` with `u ∈ [1, 2]`: for u > √2 it is ln 2 + ln(u/2), so `f = u − 1` or
/// `u/2 − 1` lies in [−0.293, 0.415] (exact by Sterbenz), and `ln(1 + f) = 2s·Σ s^{2j}/(2j+1)`
/// with `s = f/(2 + f)`, |s| ≤ 0.172, to j = 11 (truncation below 2e-18 relative).
#[inline(always)]
pub fn ln_1p_unit(e: f64) -> (f64, f64) {
    let u = 1.0 + e;
    let c = (e - (u - 1.0)) / u;
    let high = u > std::f64::consts::SQRT_2;
    let f = if high { u * 0.5 - 1.0 } else { u - 1.0 };
    let s = f / (2.0 + f);
    let z = s * s;
    let p = horner(z, &ATANH_SERIES);
    // 2s + 2s·z·p: the leading 2s exactly, the tail rounded once more.
    let two_s = 2.0 * s;
    let tail = (two_s * z).mul_add(p, c);
    let (hi, lo) = if high { (LN2_HI, LN2_LO) } else { (0.0, 0.0) };
    (hi + (two_s + (tail + lo)), u)
}

/// `σ(t) = 1/(1+e^{−t})`, evaluated without overflow for any finite t.
#[inline(always)]
pub fn sigmoid(t: f64) -> f64 {
    let e = exp_nonpositive(-t.abs());
    let num = if t >= 0.0 { 1.0 } else { e };
    num / (1.0 + e)
}

/// `sp(t) = ln(1 + e^t) = max(t, 0) + ln(1 + e^{−|t|})`; `sp'(t) = σ(t)`.
#[inline(always)]
pub fn softplus(t: f64) -> f64 {
    t.max(0.0) + ln_1p_unit(exp_nonpositive(-t.abs())).0
}

/// `(σ(t), sp(t))` from one `e^{−|t|}` and one `1 + e^{−|t|}`: the same bits as [`sigmoid`] and
/// [`softplus`].
#[inline(always)]
pub fn sigmoid_and_softplus(t: f64) -> (f64, f64) {
    let e = exp_nonpositive(-t.abs());
    let (l, u) = ln_1p_unit(e);
    let num = if t >= 0.0 { 1.0 } else { e };
    (num / u, t.max(0.0) + l)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Distance in units in the last place between two finite values of the same sign.
    fn ulps(a: f64, b: f64) -> u64 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
    }

    #[test]
    fn ln2_split_is_exact() {
        assert!(LN2_HI.to_bits().trailing_zeros() >= 21);
        // LN2_HI + LN2_LO rounds to ln 2; the split itself is checked by the exp test (an
        // error in LN2_LO shows as n·error at large |x|).
        assert_eq!(LN2_HI + LN2_LO, std::f64::consts::LN_2);
        assert_eq!(LN2_HI, 0.693_147_180_369_123_8);
    }

    #[test]
    fn exp_is_within_two_ulp_of_libm_down_to_subnormals() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut worst = 0;
        // Uniform on [−750, 0], dense near 0, and at the boundaries of the scaling steps.
        let mut xs: Vec<f64> = (0..200_000).map(|_| -750.0 * rng.r#gen::<f64>()).collect();
        xs.extend((0..100_000).map(|_| -rng.r#gen::<f64>() * 2f64.powi(-rng.gen_range(0..60))));
        xs.extend([
            0.0,
            -0.0,
            -1e-300,
            -0.5 * std::f64::consts::LN_2,
            -708.3,
            -708.4,
            -708.5,
        ]);
        xs.extend([
            -744.0,
            -745.0,
            -745.13,
            -745.2,
            -746.0,
            -1000.0,
            // Margins of a diverging H: t = x·log2(e) + 1.5·2⁵² is then negative, below
            // −1.5·2⁵² (−1e16) or above it (−6e15, whose bits minus ROUNDER's overflow i64).
            -1e16,
            -6e15,
            -f64::MAX,
            f64::NEG_INFINITY,
        ]);
        for x in xs {
            let (got, want) = (exp_nonpositive(x), x.exp());
            if want >= f64::MIN_POSITIVE {
                let d = ulps(got, want);
                worst = worst.max(d);
                assert!(d <= 2, "e^{x}: {got:e} vs {want:e} ({d} ulp)");
            } else {
                // Subnormal results: absolute error within 2 units of the smallest subnormal.
                assert!(
                    (got - want).abs() <= 2.0 * 4.9e-324,
                    "e^{x}: {got:e} vs {want:e}"
                );
            }
        }
        assert!(exp_nonpositive(f64::NAN).is_nan());
        eprintln!("exp: worst {worst} ulp");
    }

    #[test]
    fn ln_1p_is_within_two_ulp_of_libm_on_the_unit_interval() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut es: Vec<f64> = (0..200_000).map(|_| rng.r#gen::<f64>()).collect();
        es.extend((0..100_000).map(|_| rng.r#gen::<f64>() * 2f64.powi(-rng.gen_range(0..1074))));
        let near_split = std::f64::consts::SQRT_2 - 1.0;
        es.extend([
            0.0, 1.0, 5e-324, 1e-300, 1e-17, 1.1e-16, 2.3e-16, near_split,
        ]);
        es.extend([
            near_split.next_up(),
            near_split.next_down(),
            0.5,
            1.0f64.next_down(),
        ]);
        let mut worst = 0;
        for e in es {
            let ((got, u), want) = (ln_1p_unit(e), e.ln_1p());
            assert_eq!(u, 1.0 + e);
            if want == 0.0 {
                assert_eq!(got, 0.0, "ln(1 + {e:e})");
                continue;
            }
            let d = ulps(got, want);
            worst = worst.max(d);
            assert!(d <= 2, "ln(1 + {e:e}): {got:e} vs {want:e} ({d} ulp)");
        }
        assert!(ln_1p_unit(f64::NAN).0.is_nan());
        eprintln!("ln_1p: worst {worst} ulp");
    }

    #[test]
    fn stable_at_extremes_and_consistent() {
        assert_eq!(sigmoid(1000.0), 1.0);
        assert_eq!(sigmoid(-1000.0), 0.0);
        assert_eq!(sigmoid(0.0), 0.5);
        assert!((sigmoid(0.3) + sigmoid(-0.3) - 1.0).abs() < 1e-15);
        assert_eq!(softplus(1000.0), 1000.0);
        assert_eq!(softplus(-1000.0), 0.0);
        assert_eq!(softplus(f64::INFINITY), f64::INFINITY);
        assert_eq!(softplus(f64::NEG_INFINITY), 0.0);
        assert!(softplus(f64::NAN).is_nan() && sigmoid(f64::NAN).is_nan());
        assert!((softplus(0.0) - 2f64.ln()).abs() < 1e-15);
        let h = 1e-6;
        for t in [-3.0, -0.1, 0.0, 0.7, 5.0] {
            let fd = (softplus(t + h) - softplus(t - h)) / (2.0 * h);
            assert!((fd - sigmoid(t)).abs() < 1e-9);
            assert_eq!(sigmoid_and_softplus(t), (sigmoid(t), softplus(t)));
        }
        // Against the libm forms, over the range margins take.
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..100_000 {
            let t = (rng.r#gen::<f64>() - 0.5) * 80.0;
            let sig = if t >= 0.0 {
                1.0 / (1.0 + (-t).exp())
            } else {
                t.exp() / (1.0 + t.exp())
            };
            let sp = t.max(0.0) + (-t.abs()).exp().ln_1p();
            assert!(
                (sigmoid(t) - sig).abs() <= 4.0 * f64::EPSILON * sig,
                "σ({t})"
            );
            assert!(
                (softplus(t) - sp).abs() <= 4.0 * f64::EPSILON * sp,
                "sp({t})"
            );
        }
    }
}
