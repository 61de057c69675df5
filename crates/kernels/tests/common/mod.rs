//! Shared test support: a real multi-threaded executor, layouts of every kind, and
//! naive index helpers the references are written with.
#![allow(dead_code)]

use rayon::prelude::*;
use strata_engine::{AffinityClaim, CpuDomainExecutor, ExecutorCapabilities, ReentrancyBehaviour, ShutdownOwner};
use strata_kernels::{KernelContext, Parallelism};
use strata_tensor::{Scalar, TypedView, c32, c64};

/// A private Rayon pool behind the executor seam, so parallel paths really run on threads.
#[derive(Debug)]
pub struct RayonExecutor(rayon::ThreadPool);

impl RayonExecutor {
    pub fn new(threads: usize) -> Self {
        RayonExecutor(rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("test pool"))
    }
}

impl CpuDomainExecutor for RayonExecutor {
    fn run(&self, job: &mut (dyn FnMut() + Send)) {
        self.0.install(job)
    }
    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        self.0.install(|| (0..n).into_par_iter().for_each(body))
    }
    fn capabilities(&self) -> ExecutorCapabilities {
        ExecutorCapabilities {
            workers: self.0.current_num_threads(),
            affinity: AffinityClaim::Unconstrained,
            shutdown: ShutdownOwner::Strata,
            reentrancy: ReentrancyBehaviour::RunsInline,
        }
    }
}

pub fn executor() -> &'static RayonExecutor {
    static EXEC: std::sync::OnceLock<RayonExecutor> = std::sync::OnceLock::new();
    EXEC.get_or_init(|| RayonExecutor::new(4))
}

/// A context splitting work over `budget` workers of the shared test pool.
pub fn ctx(budget: usize) -> KernelContext<'static> {
    KernelContext::new(Parallelism::new(executor(), budget))
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
        mix(i) % 2 == 0
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

// ---- contraction test support ----

use strata_tensor::{Tensor, TensorView};

/// SplitMix64: tiny, seedable, good enough to draw test cases.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.range(0, i);
            v.swap(i, j);
        }
    }
}

/// The four contraction dtypes, as a tag the tests draw from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    F32,
    F64,
    C32,
    C64,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::F32, Kind::F64, Kind::C32, Kind::C64];
    pub fn is_complex(self) -> bool {
        matches!(self, Kind::C32 | Kind::C64)
    }
    /// Relative accuracy expected of one accumulation step.
    pub fn eps(self) -> f64 {
        match self {
            Kind::F32 | Kind::C32 => f32::EPSILON as f64,
            Kind::F64 | Kind::C64 => f64::EPSILON,
        }
    }
    /// A tensor of `shape` (row-major) with random entries of this dtype.
    pub fn random(self, rng: &mut Rng, shape: &[usize]) -> Tensor {
        let len: usize = shape.iter().product();
        let mut vals = || (rng.unit(), rng.unit());
        match self {
            Kind::F32 => Tensor::from_vec((0..len).map(|_| vals().0 as f32).collect(), shape),
            Kind::F64 => Tensor::from_vec((0..len).map(|_| vals().0).collect(), shape),
            Kind::C32 => Tensor::from_vec(
                (0..len)
                    .map(|_| {
                        let (a, b) = vals();
                        c32::new(a as f32, b as f32)
                    })
                    .collect(),
                shape,
            ),
            Kind::C64 => Tensor::from_vec(
                (0..len)
                    .map(|_| {
                        let (a, b) = vals();
                        c64::new(a, b)
                    })
                    .collect(),
                shape,
            ),
        }
        .unwrap()
    }
    /// A random scalar of this dtype, as `c64` (imaginary part zero for real dtypes).
    pub fn random_scalar(self, rng: &mut Rng) -> c64 {
        let re = rng.unit() * 2.0;
        let im = if self.is_complex() { rng.unit() * 2.0 } else { 0.0 };
        self.round(c64::new(re, im))
    }
    /// Rounds a `c64` to what this dtype can hold.
    pub fn round(self, v: c64) -> c64 {
        match self {
            Kind::F32 => c64::new(v.re as f32 as f64, 0.0),
            Kind::F64 => c64::new(v.re, 0.0),
            Kind::C32 => c64::new(v.re as f32 as f64, v.im as f32 as f64),
            Kind::C64 => v,
        }
    }
}

/// The element at `index` of a view, widened to `c64`.
pub fn get_c64(v: &TensorView<'_>, index: &[usize]) -> c64 {
    match v {
        TensorView::F32(v) => c64::new(*v.get(index).unwrap() as f64, 0.0),
        TensorView::F64(v) => c64::new(*v.get(index).unwrap(), 0.0),
        TensorView::C32(v) => {
            let x = v.get(index).unwrap();
            c64::new(x.re as f64, x.im as f64)
        }
        TensorView::C64(v) => *v.get(index).unwrap(),
        other => panic!("not a contraction dtype: {:?}", other.dtype()),
    }
}

/// A backing buffer and the recipe of a random strided view of logical `shape` into it:
/// the axes stored in a random physical order, some with a step of 2 or a leading
/// margin, some reversed.
pub struct Strided {
    pub base: Tensor,
    phys_order: Vec<usize>,
    starts: Vec<usize>,
    steps: Vec<usize>,
    reversed: Vec<bool>,
    shape: Vec<usize>,
}

impl Strided {
    pub fn random(rng: &mut Rng, kind: Kind, shape: &[usize], plain: bool) -> Strided {
        let rank = shape.len();
        let mut phys_order: Vec<usize> = (0..rank).collect();
        let (mut starts, mut steps, mut reversed) = (vec![0; rank], vec![1; rank], vec![false; rank]);
        if !plain {
            rng.shuffle(&mut phys_order);
            for a in 0..rank {
                if rng.chance(0.2) {
                    steps[a] = 2;
                }
                if rng.chance(0.2) {
                    starts[a] = 1;
                }
                reversed[a] = rng.chance(0.25);
            }
        }
        // Physical extents: room for start + extent * step on every stored axis.
        let phys_shape: Vec<usize> =
            phys_order.iter().map(|&a| starts[a] + shape[a].max(1) * steps[a] - (steps[a] - 1)).collect();
        let base = kind.random(rng, &phys_shape);
        Strided { base, phys_order, starts, steps, reversed, shape: shape.to_vec() }
    }

    /// Physical axis of logical axis `a`.
    fn phys_axis(&self, a: usize) -> usize {
        self.phys_order.iter().position(|&p| p == a).unwrap()
    }

    pub fn view(&self) -> TensorView<'_> {
        let mut v = self.base.view();
        for a in 0..self.shape.len() {
            let p = self.phys_axis(a);
            let (s, st) = (self.starts[a], self.steps[a]);
            v = v.slice_axis(p, s, limit(s, self.shape[a], st), st).unwrap();
            if self.reversed[a] {
                v = v.reverse_axis(p).unwrap();
            }
        }
        // Logical axis a lives at physical position phys_axis(a).
        let perm: Vec<usize> = (0..self.shape.len()).map(|a| self.phys_axis(a)).collect();
        v.permute(&perm).unwrap()
    }

    pub fn view_mut(&mut self) -> strata_tensor::TensorViewMut<'_> {
        let rank = self.shape.len();
        let perm: Vec<usize> = (0..rank).map(|a| self.phys_axis(a)).collect();
        let (starts, steps, reversed, shape) = (&self.starts, &self.steps, &self.reversed, &self.shape);
        let order = &self.phys_order;
        let mut v = self.base.view_mut();
        for (p, &a) in order.iter().enumerate() {
            let (s, st) = (starts[a], steps[a]);
            v = v.slice_axis(p, s, limit(s, shape[a], st), st).unwrap();
            if reversed[a] {
                v = v.reverse_axis(p).unwrap();
            }
        }
        v.permute(&perm).unwrap()
    }
}

/// The exclusive slice limit that keeps `extent` elements from `start` with `step`.
fn limit(start: usize, extent: usize, step: usize) -> usize {
    if extent == 0 { start } else { start + (extent - 1) * step + 1 }
}

/// A test executor on real threads: each `for_each_index` spreads the indices over
/// `workers` scoped threads (joined before returning, so no wait is unbounded).
#[derive(Debug)]
pub struct ThreadExecutor {
    pub workers: usize,
    pub forks: std::sync::atomic::AtomicUsize,
}

impl ThreadExecutor {
    pub fn new(workers: usize) -> Self {
        ThreadExecutor { workers, forks: std::sync::atomic::AtomicUsize::new(0) }
    }
}

impl strata_engine::CpuDomainExecutor for ThreadExecutor {
    fn run(&self, job: &mut (dyn FnMut() + Send)) {
        job()
    }
    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        self.forks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..self.workers.min(n) {
                s.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= n {
                            break;
                        }
                        body(i);
                    }
                });
            }
        });
    }
    fn capabilities(&self) -> strata_engine::ExecutorCapabilities {
        strata_engine::ExecutorCapabilities {
            workers: self.workers,
            affinity: strata_engine::AffinityClaim::Unconstrained,
            shutdown: strata_engine::ShutdownOwner::Caller,
            reentrancy: strata_engine::ReentrancyBehaviour::RunsInline,
        }
    }
}
