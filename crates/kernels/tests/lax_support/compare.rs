//! Comparison of a kernel's result with jax's: dtype and shape exactly; elements exactly
//! (any NaN matching any NaN) or within a tolerance; digests by their bits.
//!
//! One documented difference is accepted everywhere: XLA on CPU flushes subnormal results
//! to zero (FTZ), strata keeps IEEE gradual underflow, so a subnormal strata result matches
//! a jax zero of the same sign. (The inputs of the golden data hold no subnormal numbers,
//! where XLA's DAZ would change results further.)

use strata_tensor::{DType, Tensor, c32, c64};

use super::data::{Want, digest};

/// Allowed error: `ulps * eps * max(|want|, floor) + abs`, with `eps` the dtype's epsilon.
/// All zero means exact.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tol {
    pub ulps: f64,
    pub floor: f64,
    pub abs: f64,
}

pub const EXACT: Tol = Tol { ulps: 0.0, floor: 0.0, abs: 0.0 };

pub fn ulps(n: f64) -> Tol {
    Tol { ulps: n, floor: f64::from(f32::MIN_POSITIVE), abs: 0.0 }
}

impl Tol {
    /// Adds an absolute allowance of `n · eps · magnitude` in the dtype's epsilon.
    pub fn with_abs(mut self, n: f64, magnitude: f64, dtype: DType) -> Tol {
        self.abs = n * eps_of(dtype) * magnitude;
        self
    }
}

pub fn eps_of(dtype: DType) -> f64 {
    match dtype {
        DType::F32 | DType::C32 => f64::from(f32::EPSILON),
        _ => f64::EPSILON,
    }
}

/// Elements as pairs of f64 (imaginary part 0 for reals), or integers.
pub enum Flat {
    Inexact(Vec<(f64, f64)>, f64, f64),
    Integer(Vec<i64>),
}

pub fn flatten(t: &Tensor) -> Flat {
    fn get<T: strata_tensor::Scalar>(t: &Tensor) -> &[T] {
        t.as_typed::<T>().expect("dtype").data()
    }
    let (f32_eps, f32_tiny) = (f64::from(f32::EPSILON), f64::from(f32::MIN_POSITIVE));
    match t.dtype() {
        DType::F32 => Flat::Inexact(get::<f32>(t).iter().map(|&v| (f64::from(v), 0.0)).collect(), f32_eps, f32_tiny),
        DType::F64 => Flat::Inexact(get::<f64>(t).iter().map(|&v| (v, 0.0)).collect(), f64::EPSILON, f64::MIN_POSITIVE),
        DType::C32 => {
            Flat::Inexact(get::<c32>(t).iter().map(|v| (f64::from(v.re), f64::from(v.im))).collect(), f32_eps, f32_tiny)
        }
        DType::C64 => {
            Flat::Inexact(get::<c64>(t).iter().map(|v| (v.re, v.im)).collect(), f64::EPSILON, f64::MIN_POSITIVE)
        }
        DType::I32 => Flat::Integer(get::<i32>(t).iter().map(|&v| i64::from(v)).collect()),
        DType::I64 => Flat::Integer(get::<i64>(t).to_vec()),
        DType::Bool => Flat::Integer(get::<bool>(t).iter().map(|&v| i64::from(v)).collect()),
    }
}

fn same_exact(g: f64, w: f64) -> bool {
    (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits()
}

/// `g` with a subnormal value (below `tiny`) flushed to zero of its sign, where `w` is 0.
fn flushed(g: f64, w: f64, tiny: f64) -> f64 {
    if w == 0.0 && g != 0.0 && g.abs() < tiny { 0.0f64.copysign(g) } else { g }
}

/// Whether `g` matches `w`: exactly when the tolerance is zero; otherwise within the
/// tolerance of `|w|`, or, when a part of `w` is infinite or NaN, that part exactly and the
/// other within the tolerance of its own magnitude.
pub fn close(g: (f64, f64), w: (f64, f64), eps: f64, tiny: f64, tol: Tol) -> bool {
    let g = (flushed(g.0, w.0, tiny), flushed(g.1, w.1, tiny));
    let exact = same_exact(g.0, w.0) && same_exact(g.1, w.1);
    if exact || (tol.ulps == 0.0 && tol.abs == 0.0) {
        return exact;
    }
    let within = |err: f64, magnitude: f64| err <= tol.ulps * eps * magnitude.max(tol.floor) + tol.abs;
    if !(w.0.is_finite() && w.1.is_finite()) {
        let part = |g: f64, w: f64| same_exact(g, w) || (w.is_finite() && within((g - w).abs(), w.abs()));
        return part(g.0, w.0) && part(g.1, w.1);
    }
    within((g.0 - w.0).hypot(g.1 - w.1), w.0.hypot(w.1))
}

/// Compares dtype, shape and every element; the message names the first mismatch.
pub fn check(got: &Tensor, want: &Tensor, tol: Tol) -> Result<(), String> {
    if got.dtype() != want.dtype() || got.shape() != want.shape() {
        return Err(format!("got {} {:?}, want {} {:?}", got.dtype(), got.shape(), want.dtype(), want.shape()));
    }
    match (flatten(got), flatten(want)) {
        (Flat::Integer(g), Flat::Integer(w)) => match g.iter().zip(&w).position(|(a, b)| a != b) {
            None => Ok(()),
            Some(i) => Err(format!("element {i}: got {}, want {}", g[i], w[i])),
        },
        (Flat::Inexact(g, eps, tiny), Flat::Inexact(w, _, _)) => {
            let bad: Vec<usize> = (0..g.len()).filter(|&i| !close(g[i], w[i], eps, tiny, tol)).collect();
            match bad.first() {
                None => Ok(()),
                Some(&i) => Err(format!(
                    "{} of {} elements differ; element {i}: got {:?}, want {:?} (tol {tol:?})",
                    bad.len(),
                    g.len(),
                    g[i],
                    w[i]
                )),
            }
        }
        _ => unreachable!("dtypes were compared"),
    }
}

/// [`check`] against a tensor, or the digest of the result's bits against a digest.
pub fn check_want(got: &Tensor, want: &Want, tol: Tol) -> Result<(), String> {
    match want {
        Want::Tensor(w) => check(got, w, tol),
        Want::Digest { dtype, shape, digest: d } => {
            if got.dtype() != *dtype || got.shape() != &shape[..] {
                return Err(format!("got {} {:?}, want {} {:?}", got.dtype(), got.shape(), dtype, shape));
            }
            let g = digest(got);
            if g == *d { Ok(()) } else { Err(format!("digest {g:016x}, want {d:016x}")) }
        }
    }
}

/// Largest |x| over a tensor's elements (complex modulus), for error bounds.
pub fn max_abs(t: &Tensor) -> f64 {
    match flatten(t) {
        Flat::Inexact(v, _, _) => v.iter().map(|c| c.0.hypot(c.1)).fold(0.0, f64::max),
        Flat::Integer(v) => v.iter().map(|&x| (x as f64).abs()).fold(0.0, f64::max),
    }
}

/// Σ |x|^power over the finite elements (non-finite inputs make non-finite outputs, which
/// are compared exactly).
pub fn sum_abs(t: &Tensor, power: i32) -> f64 {
    match flatten(t) {
        Flat::Inexact(v, _, _) => v.iter().map(|c| c.0.hypot(c.1).powi(power)).filter(|m| m.is_finite()).sum(),
        Flat::Integer(_) => 0.0,
    }
}
