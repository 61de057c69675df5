//! Shared test support: a seeded generator, random strided operands, and element access
//! in `c64` for the independent references.
#![allow(dead_code)]

use strata_tensor::{Tensor, TensorView, c32, c64};

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

/// Every multi-index of `shape`, row-major order.
pub fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let len: usize = shape.iter().product();
    let mut out = Vec::with_capacity(len);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..len {
        out.push(idx.clone());
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
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

/// A BLAS-like test double: declares `needs_unit_stride`, refuses any matrix without a
/// unit stride and a covering leading dimension, and computes with the provider crate's
/// naive reference GEMM.
#[derive(Debug, Default)]
pub struct UnitStrideProvider {
    calls: std::sync::atomic::AtomicUsize,
}

impl UnitStrideProvider {
    pub fn calls(&self) -> usize {
        self.calls.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn run<T: strata_provider::GemmScalar>(
        &self,
        job: &mut strata_provider::BatchedGemm<'_, T>,
    ) -> Result<(), strata_provider::GemmError> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let ok = |rows: usize, cols: usize, rs: isize, cs: isize| {
            let row_major = (cols <= 1 || cs == 1) && (rows <= 1 || rs >= cols as isize);
            let col_major = (rows <= 1 || rs == 1) && (cols <= 1 || cs >= rows as isize);
            row_major || col_major
        };
        let (m, n, k) = (job.m, job.n, job.k);
        assert!(
            ok(m, k, job.a.row_stride, job.a.col_stride),
            "A without unit stride: {m}x{k} {:?}",
            (job.a.row_stride, job.a.col_stride)
        );
        assert!(
            ok(k, n, job.b.row_stride, job.b.col_stride),
            "B without unit stride: {k}x{n} {:?}",
            (job.b.row_stride, job.b.col_stride)
        );
        assert!(
            ok(m, n, job.c.row_stride, job.c.col_stride),
            "C without unit stride: {m}x{n} {:?}",
            (job.c.row_stride, job.c.col_stride)
        );
        strata_provider::reference::gemm(job)
    }
}

impl strata_provider::GemmProvider for UnitStrideProvider {
    fn capabilities(&self) -> strata_provider::ProviderCapabilities {
        strata_provider::ProviderCapabilities {
            name: "unit-stride test double".into(),
            threads: strata_provider::ThreadControl::Sequential,
            placement: strata_provider::PlacementControl::CallingThread,
            dtypes: strata_provider::GemmDTypes::ALL,
            needs_unit_stride: true,
        }
    }
    fn gemm_f32(
        &self,
        job: &mut strata_provider::BatchedGemm<'_, f32>,
        _: &dyn strata_provider::ProviderParallelism,
    ) -> Result<(), strata_provider::GemmError> {
        self.run(job)
    }
    fn gemm_f64(
        &self,
        job: &mut strata_provider::BatchedGemm<'_, f64>,
        _: &dyn strata_provider::ProviderParallelism,
    ) -> Result<(), strata_provider::GemmError> {
        self.run(job)
    }
    fn gemm_c32(
        &self,
        job: &mut strata_provider::BatchedGemm<'_, c32>,
        _: &dyn strata_provider::ProviderParallelism,
    ) -> Result<(), strata_provider::GemmError> {
        self.run(job)
    }
    fn gemm_c64(
        &self,
        job: &mut strata_provider::BatchedGemm<'_, c64>,
        _: &dyn strata_provider::ProviderParallelism,
    ) -> Result<(), strata_provider::GemmError> {
        self.run(job)
    }
}
