//! Shared test support: a real multi-threaded executor, layouts of every kind, and
//! naive index helpers the references are written with.
#![allow(dead_code)]

pub mod reference;

use strata_engine::RayonCpuDomainExecutor;
use strata_kernels::{KernelContext, Parallelism};
use strata_tensor::{Scalar, TypedView, c32, c64};

/// Records fork-join violations of the executors used here (none are expected).
static AUDIT: strata_kernels::ScheduleAudit = strata_kernels::ScheduleAudit::new();

/// A private Rayon pool behind the engine's adapter, so parallel paths really run on threads.
pub type RayonExecutor = RayonCpuDomainExecutor;

/// An executor over a fresh private pool of `threads` workers.
pub fn rayon_executor(threads: usize) -> RayonExecutor {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("test pool");
    RayonCpuDomainExecutor::new(std::sync::Arc::new(pool))
}

pub fn executor() -> &'static RayonExecutor {
    static EXEC: std::sync::OnceLock<RayonExecutor> = std::sync::OnceLock::new();
    EXEC.get_or_init(|| rayon_executor(4))
}

/// A context splitting work over `budget` workers of the shared test pool.
pub fn ctx(budget: usize) -> KernelContext<'static> {
    KernelContext::new(Parallelism::new(executor(), budget, &AUDIT))
}

/// Every multi-index of `shape` in row-major order.
pub fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let len: usize = shape.iter().product();
    let mut out = Vec::with_capacity(len);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..len {
        out.push(idx.clone());
        for k in (0..shape.len()).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

/// Reads the element at `index` of a view the slow way.
pub fn at<T: Scalar>(v: &TypedView<'_, T>, index: &[usize]) -> T {
    *v.get(index).expect("index in range")
}

/// The layouts every op is exercised on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutKind {
    Contiguous,
    Transposed,
    NegativeStride,
    Broadcast,
}

pub const LAYOUTS: [LayoutKind; 4] =
    [LayoutKind::Contiguous, LayoutKind::Transposed, LayoutKind::NegativeStride, LayoutKind::Broadcast];

/// Owns a buffer and describes a view of `shape` laid out as `kind`, with element `i`
/// (row-major position in the view) equal to `value(i)` — except Broadcast, whose
/// first axis repeats the values of index 0.
pub struct Operand<T> {
    pub buf: Vec<T>,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    pub offset: usize,
}

impl<T: Scalar> Operand<T> {
    pub fn new(shape: &[usize], kind: LayoutKind, value: impl Fn(usize) -> T) -> Self {
        let len: usize = shape.iter().product();
        let r = shape.len();
        match kind {
            LayoutKind::Contiguous => Operand {
                buf: (0..len).map(&value).collect(),
                shape: shape.to_vec(),
                strides: strata_tensor::shape::row_major_strides(shape),
                offset: 0,
            },
            LayoutKind::Transposed => {
                // Stored column-major: element with row-major position i lives at its
                // column-major position.
                let mut buf = vec![T::zero(); len];
                let cm = column_major_strides(shape);
                for (i, idx) in indices(shape).iter().enumerate() {
                    let at: isize = idx.iter().zip(&cm).map(|(&a, &s)| a as isize * s).sum();
                    buf[at as usize] = value(i);
                }
                Operand { buf, shape: shape.to_vec(), strides: cm, offset: 0 }
            }
            LayoutKind::NegativeStride => {
                // Every axis reversed, with a gap of one element between rows of the last axis.
                let padded: Vec<usize> =
                    shape.iter().enumerate().map(|(k, &d)| if k + 1 == r { d + 1 } else { d }).collect();
                let plen: usize = padded.iter().product::<usize>().max(1);
                let rm = strata_tensor::shape::row_major_strides(&padded);
                let mut buf = vec![T::zero(); plen];
                let strides: Vec<isize> = rm.iter().map(|s| -s).collect();
                let offset: isize = shape.iter().zip(&rm).map(|(&d, &s)| (d.max(1) as isize - 1) * s).sum();
                for (i, idx) in indices(shape).iter().enumerate() {
                    let at = offset + idx.iter().zip(&strides).map(|(&a, &s)| a as isize * s).sum::<isize>();
                    buf[at as usize] = value(i);
                }
                Operand { buf, shape: shape.to_vec(), strides, offset: offset as usize }
            }
            LayoutKind::Broadcast => {
                if r == 0 {
                    return Self::new(shape, LayoutKind::Contiguous, value);
                }
                // Axis 0 has stride 0: every slice repeats slice 0.
                let inner = &shape[1..];
                let ilen: usize = inner.iter().product();
                let mut strides = vec![0isize];
                strides.extend(strata_tensor::shape::row_major_strides(inner));
                Operand { buf: (0..ilen.max(1)).map(&value).collect(), shape: shape.to_vec(), strides, offset: 0 }
            }
        }
    }

    pub fn view(&self) -> TypedView<'_, T> {
        TypedView::new(&self.buf, &self.shape, &self.strides, self.offset).expect("valid test layout")
    }
}

pub fn column_major_strides(shape: &[usize]) -> Vec<isize> {
    let mut s = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for (k, &d) in shape.iter().enumerate() {
        s[k] = acc;
        acc *= d.max(1) as isize;
    }
    s
}

/// Deterministic pseudo-random values per dtype, including negatives and (for ints)
/// the extremes.
pub trait TestValue: Scalar {
    fn test_value(i: usize) -> Self;
    /// Values usable as exponents (small for integers, so references stay cheap).
    fn exponent(i: usize) -> Self {
        Self::test_value(i)
    }
    /// Values small enough that integer sums and products of a few dozen stay exact.
    fn small(i: usize) -> Self {
        Self::test_value(i)
    }
    /// Widened to c64 for references.
    fn wide(self) -> c64;
}

fn mix(i: usize) -> u64 {
    let mut x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(0x2545_F491);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^ (x >> 32)
}

fn unit(i: usize) -> f64 {
    (mix(i) % 2001) as f64 / 250.0 - 4.0
}

impl TestValue for f32 {
    fn test_value(i: usize) -> Self {
        unit(i) as f32
    }
    fn wide(self) -> c64 {
        c64::new(self as f64, 0.0)
    }
}
impl TestValue for f64 {
    fn test_value(i: usize) -> Self {
        unit(i)
    }
    fn wide(self) -> c64 {
        c64::new(self, 0.0)
    }
}
impl TestValue for i32 {
    fn small(i: usize) -> Self {
        (mix(i) % 7) as i32 - 3
    }
    fn exponent(i: usize) -> Self {
        (mix(i) % 11) as i32 - 3
    }
    fn test_value(i: usize) -> Self {
        match mix(i) % 11 {
            0 => i32::MIN,
            1 => i32::MAX,
            2 => 0,
            3 => -1,
            _ => (mix(i + 7) % 41) as i32 - 20,
        }
    }
    fn wide(self) -> c64 {
        c64::new(self as f64, 0.0)
    }
}
impl TestValue for i64 {
    fn small(i: usize) -> Self {
        (mix(i) % 7) as i64 - 3
    }
    fn exponent(i: usize) -> Self {
        (mix(i) % 11) as i64 - 3
    }
    fn test_value(i: usize) -> Self {
        match mix(i) % 11 {
            0 => i64::MIN,
            1 => i64::MAX,
            2 => 0,
            3 => -1,
            _ => (mix(i + 7) % 41) as i64 - 20,
        }
    }
    fn wide(self) -> c64 {
        c64::new(self as f64, 0.0)
    }
}
impl TestValue for bool {
    fn test_value(i: usize) -> Self {
        mix(i).is_multiple_of(2)
    }
    fn wide(self) -> c64 {
        c64::new(self as u8 as f64, 0.0)
    }
}
impl TestValue for c32 {
    fn test_value(i: usize) -> Self {
        c32::new(unit(i) as f32, unit(i + 1_000_003) as f32)
    }
    fn wide(self) -> c64 {
        c64::new(self.re as f64, self.im as f64)
    }
}
impl TestValue for c64 {
    fn test_value(i: usize) -> Self {
        c64::new(unit(i), unit(i + 1_000_003))
    }
    fn wide(self) -> c64 {
        self
    }
}

/// Shapes every op is exercised on: rank 0, empty, small matrices and a higher rank.
pub const SHAPES: [&[usize]; 5] = [&[], &[0, 3], &[5], &[3, 4], &[2, 3, 4]];

/// The elements of any tensor widened to c64, in row-major order.
pub fn wide_data(t: &strata_tensor::Tensor) -> Vec<c64> {
    strata_tensor::dispatch_dtype!(t.dtype(), U => t.as_typed::<U>().expect("dtype").data().iter().map(|&x| x.wide()).collect())
}

/// The elements of a view widened to c64, in row-major order (read the slow way).
pub fn wide_view<T: TestValue>(v: &TypedView<'_, T>) -> Vec<T> {
    indices(v.shape()).iter().map(|i| at(v, i)).collect()
}

/// Runs a generic test body once per dtype.
#[macro_export]
macro_rules! for_each_dtype {
    ($f:ident) => {{
        $f::<f32>();
        $f::<f64>();
        $f::<i32>();
        $f::<i64>();
        $f::<bool>();
        $f::<strata_tensor::c32>();
        $f::<strata_tensor::c64>();
    }};
}
