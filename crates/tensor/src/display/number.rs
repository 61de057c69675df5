//! numpy's element formatting (`arrayprint.FloatingFormat`, `ComplexFloatingFormat`,
//! `IntegerFormat`, `BoolFormat` with the default options): every entry of one printout
//! gets the same width, floats switch to scientific notation when their magnitudes call
//! for it, and decimals line up.

use std::fmt::{Display, LowerExp};

use crate::value::ScalarValue;

/// Digits after the point at most (numpy's `precision`).
const PRECISION: usize = 8;

/// A real float type as the formatter needs it.
pub(super) trait Float: Copy + Display + LowerExp + PartialOrd {
    fn to_f64(self) -> f64;
}

impl Float for f32 {
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Float for f64 {
    fn to_f64(self) -> f64 {
        self
    }
}

/// The shown entries as strings of one common width.
pub(super) fn render(values: &[ScalarValue]) -> Vec<String> {
    macro_rules! pick {
        ($variant:ident) => {
            values.iter().filter_map(|v| if let ScalarValue::$variant(x) = v { Some(*x) } else { None })
        };
    }
    match values.first() {
        None => Vec::new(),
        Some(ScalarValue::F32(_)) => floats(&pick!(F32).collect::<Vec<_>>()),
        Some(ScalarValue::F64(_)) => floats(&pick!(F64).collect::<Vec<_>>()),
        Some(ScalarValue::I32(_)) => integers(pick!(I32).map(i64::from).collect()),
        Some(ScalarValue::I64(_)) => integers(pick!(I64).collect()),
        Some(ScalarValue::Bool(_)) => pick!(Bool).map(|b| if b { " True" } else { "False" }.to_string()).collect(),
        Some(ScalarValue::C32(_)) => {
            let (re, im): (Vec<f32>, Vec<f32>) = pick!(C32).map(|c| (c.re, c.im)).unzip();
            complexes(&re, &im)
        }
        Some(ScalarValue::C64(_)) => {
            let (re, im): (Vec<f64>, Vec<f64>) = pick!(C64).map(|c| (c.re, c.im)).unzip();
            complexes(&re, &im)
        }
    }
}

/// One value alone, as `str()` of a rank-0 numpy array prints it (Python's `repr` of the
/// scalar).
pub(super) fn scalar_repr(value: ScalarValue) -> String {
    match value {
        ScalarValue::F32(x) => float_repr(x, true),
        ScalarValue::F64(x) => float_repr(x, true),
        ScalarValue::I32(x) => x.to_string(),
        ScalarValue::I64(x) => x.to_string(),
        ScalarValue::Bool(b) => if b { "True" } else { "False" }.to_string(),
        ScalarValue::C32(c) => complex_repr(c.re, c.im),
        ScalarValue::C64(c) => complex_repr(c.re, c.im),
    }
}

fn complex_repr<F: Float>(re: F, im: F) -> String {
    let imag = float_repr(im, false);
    if re.to_f64() == 0.0 && !re.to_f64().is_sign_negative() {
        return format!("{imag}j");
    }
    let sign = if imag.starts_with('-') { "" } else { "+" };
    format!("({}{sign}{imag}j)", float_repr(re, false))
}

/// Python's `repr` of a float: the shortest round-trip digits, positional for decimal
/// exponents in -4..16, else `d.ddde±XX`; integral values keep `.0` when `point` is set.
fn float_repr<F: Float>(x: F, point: bool) -> String {
    let v = x.to_f64();
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.into();
    }
    let shortest = format!("{x:e}");
    let (mantissa, exp) = split_exp(&shortest);
    if v == 0.0 || (-4..16).contains(&exp) {
        let s = x.to_string();
        if point && !s.contains('.') { format!("{s}.0") } else { s }
    } else {
        format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs())
    }
}

/// `"1.5e-7"` → `("1.5", -7)`.
fn split_exp(s: &str) -> (&str, i32) {
    match s.split_once('e') {
        Some((m, e)) => (m, e.parse().unwrap_or(0)),
        None => (s, 0),
    }
}

/// A sign rule: `-` only for negatives (numpy's default), or `+` for non-negatives too
/// (the imaginary parts of complex numbers).
#[derive(Clone, Copy, PartialEq)]
enum Sign {
    Minus,
    Plus,
}

/// The decided layout of a column of floats (numpy's `FloatingFormat.fillFormat`).
struct FloatFormat {
    scientific: bool,
    pad_left: usize,
    pad_right: usize,
    /// Digits after the point in scientific notation (all entries the same).
    digits: usize,
    exp_digits: usize,
    sign: Sign,
}

impl FloatFormat {
    fn new<F: Float>(data: &[F], sign: Sign) -> FloatFormat {
        let finite: Vec<F> = data.iter().copied().filter(|x| x.to_f64().is_finite()).collect();
        let magnitudes = finite.iter().map(|x| x.to_f64().abs()).filter(|&a| a != 0.0);
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        for a in magnitudes {
            lo = lo.min(a);
            hi = hi.max(a);
        }
        let scientific = hi > 0.0 && (hi >= 1e8 || lo < 1e-4 || hi / lo > 1e3);
        let mut format = FloatFormat { scientific, pad_left: 0, pad_right: 0, digits: 0, exp_digits: 0, sign };
        if !finite.is_empty() {
            if scientific {
                let parts: Vec<(String, i32)> = finite.iter().map(|&x| scientific_unique(x, sign)).collect();
                format.digits =
                    parts.iter().map(|(m, _)| m.split_once('.').map_or(0, |(_, f)| f.len())).max().unwrap_or(0);
                format.exp_digits = parts.iter().map(|(_, e)| digit_count(e.unsigned_abs()).max(2)).max().unwrap_or(2);
                format.pad_left = parts.iter().map(|(m, _)| m.split('.').next().map_or(0, str::len)).max().unwrap_or(0);
                format.pad_right = format.exp_digits + 2 + format.digits;
            } else {
                let strs: Vec<String> = finite.iter().map(|&x| positional_unique(x, sign)).collect();
                format.pad_left = strs.iter().map(|s| s.split('.').next().map_or(0, str::len)).max().unwrap_or(0);
                format.pad_right =
                    strs.iter().map(|s| s.split_once('.').map_or(0, |(_, f)| f.len())).max().unwrap_or(0);
            }
        }
        if finite.len() != data.len() {
            let neg_inf = sign == Sign::Plus || data.iter().any(|x| x.to_f64() == f64::NEG_INFINITY);
            let offset = format.pad_right + 1;
            format.pad_left = format
                .pad_left
                .max(3usize.saturating_sub(offset))
                .max((3 + usize::from(neg_inf)).saturating_sub(offset));
        }
        format
    }

    fn format<F: Float>(&self, x: F) -> String {
        let v = x.to_f64();
        if !v.is_finite() {
            let signed = if v.is_nan() {
                if self.sign == Sign::Plus { "+nan" } else { "nan" }
            } else if v < 0.0 {
                "-inf"
            } else if self.sign == Sign::Plus {
                "+inf"
            } else {
                "inf"
            };
            return format!("{signed:>width$}", width = self.pad_left + self.pad_right + 1);
        }
        if self.scientific {
            let (mantissa, exp) = scientific_unique(x, self.sign);
            let (int, frac) = mantissa.split_once('.').unwrap_or((&mantissa, ""));
            let exp_sign = if exp < 0 { '-' } else { '+' };
            format!(
                "{int:>left$}.{frac:0<digits$}e{exp_sign}{:0>exp_digits$}",
                exp.unsigned_abs(),
                left = self.pad_left,
                digits = self.digits,
                exp_digits = self.exp_digits
            )
        } else {
            let s = positional_unique(x, self.sign);
            let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
            format!("{int:>left$}.{frac:<right$}", left = self.pad_left, right = self.pad_right)
        }
    }
}

fn digit_count(mut n: u32) -> usize {
    let mut digits = 1;
    while n >= 10 {
        n /= 10;
        digits += 1;
    }
    digits
}

fn signed(s: String, negative: bool, sign: Sign) -> String {
    if !negative && sign == Sign::Plus { format!("+{s}") } else { s }
}

/// The shortest round-trip digits, cut (rounded) to at most [`PRECISION`] after the
/// point, trailing zeros dropped, the point kept (`1.`, `0.5`, `0.33333333`).
fn positional_unique<F: Float>(x: F, sign: Sign) -> String {
    let mut s = x.to_string();
    if s.split_once('.').is_some_and(|(_, frac)| frac.len() > PRECISION) {
        s = format!("{x:.PRECISION$}");
        let trimmed = s.trim_end_matches('0').len();
        s.truncate(trimmed);
    }
    if !s.contains('.') {
        s.push('.');
    }
    signed(s, x.to_f64().is_sign_negative(), sign)
}

/// The shortest round-trip mantissa (at most [`PRECISION`] digits after the point, the
/// point kept) and the decimal exponent.
fn scientific_unique<F: Float>(x: F, sign: Sign) -> (String, i32) {
    let shortest = format!("{x:e}");
    let (mantissa, exp) = split_exp(&shortest);
    let (mut mantissa, exp) = if mantissa.split_once('.').is_some_and(|(_, f)| f.len() > PRECISION) {
        let rounded = format!("{x:.PRECISION$e}");
        let (m, e) = split_exp(&rounded);
        (m.trim_end_matches('0').to_string(), e)
    } else {
        (mantissa.to_string(), exp)
    };
    if !mantissa.contains('.') {
        mantissa.push('.');
    }
    (signed(mantissa, x.to_f64().is_sign_negative(), sign), exp)
}

fn floats<F: Float>(data: &[F]) -> Vec<String> {
    let format = FloatFormat::new(data, Sign::Minus);
    data.iter().map(|&x| format.format(x)).collect()
}

fn complexes<F: Float>(re: &[F], im: &[F]) -> Vec<String> {
    let (real, imag) = (FloatFormat::new(re, Sign::Minus), FloatFormat::new(im, Sign::Plus));
    re.iter()
        .zip(im)
        .map(|(&r, &i)| {
            let i = imag.format(i);
            // The `j` goes before the imaginary part's right padding.
            let end = i.trim_end().len();
            format!("{}{}j{}", real.format(r), &i[..end], &i[end..])
        })
        .collect()
}

fn integers(data: Vec<i64>) -> Vec<String> {
    let width = data.iter().map(|v| v.to_string().len()).max().unwrap_or(0);
    data.iter().map(|v| format!("{v:>width$}")).collect()
}
