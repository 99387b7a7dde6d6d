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

/// `x` with at most `digits` significant digits and no trailing zeros: plain between 0.001
/// and 100 000 ("1", "0.25", "1500"), scientific outside ("1e-5", "2.5e6"). For parameter
/// values and axis labels, where "1.00e0" read as noise.
pub fn short_number(x: f64, digits: usize) -> String {
    if x == 0.0 {
        return "0".to_owned();
    }
    if !x.is_finite() {
        return format!("{x}");
    }
    let digits = digits.max(1);
    let a = x.abs();
    if (1e-3..1e5).contains(&a) {
        let mag = a.log10().floor() as i64;
        let decimals = usize::try_from(digits as i64 - 1 - mag).unwrap_or(0);
        trim_zeros(&format!("{x:.decimals$}"))
    } else {
        let s = format!("{x:.prec$e}", prec = digits - 1);
        match s.split_once('e') {
            Some((m, e)) => format!("{}e{e}", trim_zeros(m)),
            None => s,
        }
    }
}

/// "1.500" → "1.5", "2.000" → "2"; integers unchanged.
fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s.to_owned()
    }
}

/// A share in [0, 1] as a percentage with one decimal: "99.8 %".
/// An iteration rate as people read it: whole iterations a second from 10 up, one decimal
/// from 1, and seconds an iteration below (a 200,000-sample fit runs at 0.5 it/s, which
/// rounded to "0 it/s").
pub fn rate(per_second: f64) -> String {
    if per_second >= 9.95 {
        format!("{per_second:.0} it/s")
    } else if per_second >= 0.995 {
        format!("{per_second:.1} it/s")
    } else if per_second > 0.0 {
        format!("{} s/it", short_number(1.0 / per_second, 2))
    } else {
        "0 it/s".to_owned()
    }
}

pub fn percent(share: f64) -> String {
    format!("{:.1} %", 100.0 * share)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_keep_their_digits_at_every_speed() {
        assert_eq!(rate(1234.4), "1234 it/s");
        assert_eq!(rate(12.3), "12 it/s");
        assert_eq!(rate(4.26), "4.3 it/s");
        assert_eq!(rate(0.5), "2 s/it");
        assert_eq!(rate(0.0), "0 it/s");
    }

    #[test]
    fn short_numbers_have_no_noise_digits() {
        assert_eq!(short_number(1.0, 3), "1");
        assert_eq!(short_number(100.0, 3), "100");
        assert_eq!(short_number(0.25, 3), "0.25");
        assert_eq!(short_number(1e-5, 3), "1e-5");
        assert_eq!(short_number(2.5e6, 3), "2.5e6");
        assert_eq!(short_number(-0.001234, 3), "-0.00123");
        assert_eq!(short_number(12345.0, 2), "12345");
        assert_eq!(short_number(0.0, 3), "0");
        assert_eq!(counted(1, "iteration", "iterations"), "1 iteration");
        assert_eq!(percent(0.998), "99.8 %");
    }
}
