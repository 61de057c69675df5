//! Test data and comparisons: deterministic values per dtype from a global index, and
//! element-wise comparison (exact for integers and bool, within an error bound for
//! floats and complex).

use strata_tensor::{DType, Scalar, Tensor, TypedTensor, c32, c64};

/// A strata scalar the tests can make and compare.
pub trait TestScalar: Scalar {
    /// A value from a hash (not dyadic for floats, so sums round).
    fn make(h: u64) -> Self;
    /// The value as a complex double.
    fn to_c64(self) -> c64;
    /// Machine epsilon of the real part (0 for exact types).
    fn eps() -> f64;
}

fn unit(h: u64) -> f64 {
    ((h >> 11) % 1999) as f64 / 1998.0 - 0.5
}

impl TestScalar for f32 {
    fn make(h: u64) -> Self {
        unit(h) as f32
    }
    fn to_c64(self) -> c64 {
        c64::new(self as f64, 0.0)
    }
    fn eps() -> f64 {
        f32::EPSILON as f64
    }
}
impl TestScalar for f64 {
    fn make(h: u64) -> Self {
        unit(h)
    }
    fn to_c64(self) -> c64 {
        c64::new(self, 0.0)
    }
    fn eps() -> f64 {
        f64::EPSILON
    }
}
impl TestScalar for i32 {
    fn make(h: u64) -> Self {
        ((h >> 7) % 11) as i32 - 5
    }
    fn to_c64(self) -> c64 {
        c64::new(self as f64, 0.0)
    }
    fn eps() -> f64 {
        0.0
    }
}
impl TestScalar for i64 {
    fn make(h: u64) -> Self {
        // Some large values, so sums wrap as two's complement would.
        if h.is_multiple_of(13) { i64::MAX - (h % 5) as i64 } else { ((h >> 7) % 11) as i64 - 5 }
    }
    fn to_c64(self) -> c64 {
        c64::new(self as f64, 0.0)
    }
    fn eps() -> f64 {
        0.0
    }
}
impl TestScalar for bool {
    fn make(h: u64) -> Self {
        (h >> 9).is_multiple_of(3)
    }
    fn to_c64(self) -> c64 {
        c64::new(f64::from(u8::from(self)), 0.0)
    }
    fn eps() -> f64 {
        0.0
    }
}
impl TestScalar for c32 {
    fn make(h: u64) -> Self {
        c32::new(unit(h) as f32, unit(h.rotate_left(29)) as f32)
    }
    fn to_c64(self) -> c64 {
        c64::new(self.re as f64, self.im as f64)
    }
    fn eps() -> f64 {
        f32::EPSILON as f64
    }
}
impl TestScalar for c64 {
    fn make(h: u64) -> Self {
        c64::new(unit(h), unit(h.rotate_left(29)))
    }
    fn to_c64(self) -> c64 {
        self
    }
    fn eps() -> f64 {
        f64::EPSILON
    }
}

/// A well-mixed hash of a seed and an index.
pub fn hash(seed: u64, ix: &[usize]) -> u64 {
    let mut h = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x2545_f491_4f6c_dd1d;
    for &i in ix {
        h ^= i as u64;
        h = h.wrapping_mul(0x100_0000_01b3).rotate_left(23) ^ (h >> 17);
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    }
    h ^ (h >> 31)
}

/// A value of type `T` for global index `ix` of tensor `seed`.
pub fn value<T: TestScalar>(seed: u64, ix: &[usize]) -> T {
    T::make(hash(seed, ix))
}

/// The whole tensor of `shape` made by [`value`].
pub fn full<T: TestScalar>(seed: u64, shape: &[usize]) -> Tensor {
    // INVARIANT: the tests use small shapes.
    T::into_tensor(TypedTensor::from_fn(shape, |ix| value::<T>(seed, ix)).expect("a small test tensor"))
}

/// Element-wise magnitudes as an f64 tensor.
pub fn magnitudes<T: TestScalar>(x: &Tensor) -> Tensor {
    let t = x.as_typed::<T>().expect("dtype checked by the caller");
    let data: Vec<f64> = t.data().iter().map(|v| v.to_c64().norm()).collect();
    Tensor::from_vec(data, t.shape()).expect("same shape")
}

/// `got == want` exactly (integers, bool) or within `bound` element-wise (inexact types;
/// `bound` is an f64 tensor of want's shape).
pub fn compare<T: TestScalar>(what: &str, got: &Tensor, want: &Tensor, bound: Option<&Tensor>) -> Result<(), String> {
    if got.dtype() != want.dtype() || got.shape() != want.shape() {
        return Err(format!(
            "{what}: got {:?} {:?}, want {:?} {:?}",
            got.dtype(),
            got.shape(),
            want.dtype(),
            want.shape()
        ));
    }
    let g = got.as_typed::<T>().map_err(|e| e.to_string())?.data();
    let w = want.as_typed::<T>().map_err(|e| e.to_string())?.data();
    let b = bound.map(|b| b.as_typed::<f64>().expect("an f64 bound").data());
    for i in 0..g.len() {
        let ok = match (T::DTYPE.is_inexact(), b) {
            (true, Some(b)) => (g[i].to_c64() - w[i].to_c64()).norm() <= b[i],
            _ => g[i] == w[i] || (g[i].to_c64().re.is_nan() && w[i].to_c64().re.is_nan()),
        };
        if !ok {
            let allowed = b.map_or(0.0, |b| b[i]);
            return Err(format!("{what}: element {i} is {:?}, want {:?} (allowed error {allowed:e})", g[i], w[i]));
        }
    }
    Ok(())
}

/// Every dtype, for looping cases over.
pub const DTYPES: [DType; 7] = DType::ALL;

/// Runs `$body` with `$T` bound to each dtype's type, collecting the first failure.
#[macro_export]
macro_rules! each_dtype {
    ($T:ident => $body:expr) => {{
        let mut outcome: Result<(), String> = Ok(());
        for dtype in $crate::suite::reference::DTYPES {
            let r: Result<(), String> = strata_tensor::dispatch_dtype!(dtype, $T => $body);
            if let Err(e) = r {
                outcome = Err(format!("{dtype:?}: {e}"));
                break;
            }
        }
        outcome
    }};
}
