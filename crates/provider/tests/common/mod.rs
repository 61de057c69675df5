//! Random strided GEMM cases and the comparison against the reference GEMM.
#![allow(dead_code)]

pub mod naive_blas;

use proptest::prelude::*;
use strata_provider::{
    BatchedGemm, GemmError, GemmMatrix, GemmMatrixMut, GemmProvider, GemmScalar, ProviderParallelism, ScheduleError,
    ScopedThreadParallelism, SequentialParallelism, reference,
};
use strata_tensor::c64;

/// How one operand is laid out in its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    RowMajor,
    ColMajor,
    /// Row-major with two unused elements after each row.
    RowMajorPadded,
    /// Column-major with one unused element after each column.
    ColMajorPadded,
    /// Rows stored last-to-first.
    NegRows,
    /// Columns stored last-to-first.
    NegCols,
    /// Both strides non-unit (every other element of a row-major block).
    Spaced,
    /// One matrix shared by every batch entry (batch stride 0); only for inputs.
    BroadcastBatch,
    /// Batches stored last-to-first.
    NegBatch,
}

pub const INPUT_LAYOUTS: [Layout; 9] = [
    Layout::RowMajor,
    Layout::ColMajor,
    Layout::RowMajorPadded,
    Layout::ColMajorPadded,
    Layout::NegRows,
    Layout::NegCols,
    Layout::Spaced,
    Layout::BroadcastBatch,
    Layout::NegBatch,
];

impl Layout {
    pub fn is_negative(self) -> bool {
        matches!(self, Layout::NegRows | Layout::NegCols)
    }
    pub fn has_unit_stride(self) -> bool {
        !matches!(self, Layout::Spaced)
    }
}

/// Offset and (batch, row, col) strides, and the buffer length, for a layout; the
/// buffer starts with `lead` unused elements.
pub fn place(layout: Layout, batch: usize, rows: usize, cols: usize, lead: usize) -> (usize, [isize; 3], usize) {
    let (r, c, b) = (rows as isize, cols as isize, batch as isize);
    let (rs, cs, per): (isize, isize, isize) = match layout {
        Layout::RowMajor | Layout::BroadcastBatch | Layout::NegBatch => (c, 1, r * c),
        Layout::ColMajor => (1, r, r * c),
        Layout::RowMajorPadded => (c + 2, 1, r * (c + 2)),
        Layout::ColMajorPadded => (1, r + 1, (r + 1) * c),
        Layout::NegRows => (-c, 1, r * c),
        Layout::NegCols => (1, -r, r * c),
        Layout::Spaced => (2 * c, 2, 2 * r * c),
    };
    let per = per.max(1);
    let (bs, nmat) = match layout {
        Layout::BroadcastBatch => (0, 1),
        Layout::NegBatch => (-per, b),
        _ => (per, b),
    };
    // Start at the lowest-addressed element so negative strides stay in bounds.
    let mut offset = lead as isize;
    if rows > 0 && rs < 0 {
        offset += -rs * (r - 1);
    }
    if cols > 0 && cs < 0 {
        offset += -cs * (c - 1);
    }
    if batch > 0 && bs < 0 {
        offset += -bs * (b - 1);
    }
    let len = lead as isize + per * nmat.max(1) + 3;
    (offset as usize, [bs, rs, cs], len as usize)
}

/// One random GEMM case.
#[derive(Clone, Debug)]
pub struct Case {
    pub batch: usize,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub la: Layout,
    pub lb: Layout,
    pub lc: Layout,
    pub conj_a: bool,
    pub conj_b: bool,
    /// 0: alpha = 0, 1: alpha = 1, 2: random.
    pub alpha_kind: u8,
    /// 0: beta = 0 (C starts as NaN), 1: beta = 1, 2: random.
    pub beta_kind: u8,
    pub seed: u64,
}

pub fn case_strategy() -> impl Strategy<Value = Case> {
    let out_layouts = prop::sample::select(vec![
        Layout::RowMajor,
        Layout::ColMajor,
        Layout::RowMajorPadded,
        Layout::ColMajorPadded,
        Layout::NegRows,
        Layout::NegCols,
        Layout::Spaced,
        Layout::NegBatch,
    ]);
    (
        (1usize..=3, 0usize..=7, 0usize..=7, 0usize..=8),
        (prop::sample::select(INPUT_LAYOUTS.to_vec()), prop::sample::select(INPUT_LAYOUTS.to_vec()), out_layouts),
        (
            any::<bool>(),
            any::<bool>(),
            prop::sample::select(vec![0u8, 1, 2, 2, 2]),
            prop::sample::select(vec![0u8, 0, 1, 2, 2]),
        ),
        any::<u64>(),
    )
        .prop_map(|((batch, m, n, k), (la, lb, lc), (conj_a, conj_b, alpha_kind, beta_kind), seed)| Case {
            batch,
            m,
            n,
            k,
            la,
            lb,
            lc,
            conj_a,
            conj_b,
            alpha_kind,
            beta_kind,
            seed,
        })
}

/// SplitMix64: reproducible values from the case seed.
pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    pub fn scalar<T: GemmScalar>(&mut self) -> T {
        let re = self.unit();
        let im = self.unit();
        T::from_c64(c64::new(re, im))
    }
}

/// The buffers of one case, ready to be run through any provider.
pub struct Buffers<T> {
    pub a: Vec<T>,
    pub b: Vec<T>,
    pub c: Vec<T>,
    pub sa: (usize, [isize; 3]),
    pub sb: (usize, [isize; 3]),
    pub sc: (usize, [isize; 3]),
    pub alpha: T,
    pub beta: T,
}

pub fn buffers<T: GemmScalar>(case: &Case) -> Buffers<T> {
    let mut rng = Rng::new(case.seed);
    let (oa, sa, na) = place(case.la, case.batch, case.m, case.k, 1);
    let (ob, sb, nb) = place(case.lb, case.batch, case.k, case.n, 2);
    let (oc, sc, nc) = place(case.lc, case.batch, case.m, case.n, 3);
    let a: Vec<T> = (0..na).map(|_| rng.scalar()).collect();
    let b: Vec<T> = (0..nb).map(|_| rng.scalar()).collect();
    let nan = T::from_c64(c64::new(f64::NAN, f64::NAN));
    let c: Vec<T> = (0..nc).map(|_| if case.beta_kind == 0 { nan } else { rng.scalar() }).collect();
    let alpha = match case.alpha_kind {
        0 => T::zero(),
        1 => T::one(),
        _ => rng.scalar(),
    };
    let beta = match case.beta_kind {
        0 => T::zero(),
        1 => T::one(),
        _ => rng.scalar(),
    };
    Buffers { a, b, c, sa: (oa, sa), sb: (ob, sb), sc: (oc, sc), alpha, beta }
}

/// Builds the job over the buffers (C = `c`).
pub fn job<'a, T: GemmScalar>(case: &Case, bufs: &'a Buffers<T>, c: &'a mut [T]) -> BatchedGemm<'a, T> {
    let m = |data: &'a [T], (o, s): (usize, [isize; 3])| GemmMatrix::new(data, o, s[1], s[2], s[0]);
    BatchedGemm {
        batch: case.batch,
        m: case.m,
        n: case.n,
        k: case.k,
        alpha: bufs.alpha,
        a: m(&bufs.a, bufs.sa),
        conj_a: case.conj_a,
        b: m(&bufs.b, bufs.sb),
        conj_b: case.conj_b,
        beta: bufs.beta,
        c: GemmMatrixMut::new(c, bufs.sc.0, bufs.sc.1[1], bufs.sc.1[2], bufs.sc.1[0]),
    }
}

fn eps<T: GemmScalar>() -> f64 {
    if T::DTYPE.real_counterpart() == strata_tensor::DType::F32 { f32::EPSILON as f64 } else { f64::EPSILON }
}

/// Runs `case` through `run` (a provider call) and the reference; on success the buffers
/// must agree element for element (NaN padding included), on `Unsupported` C must be
/// untouched. Returns whether the provider computed the case.
pub fn check_case<T: GemmScalar>(
    case: &Case,
    run: impl FnOnce(&mut BatchedGemm<'_, T>) -> Result<(), GemmError>,
) -> Result<bool, TestCaseError> {
    let bufs = buffers::<T>(case);
    let mut expected = bufs.c.clone();
    reference::gemm(&mut job(case, &bufs, &mut expected))
        .map_err(|e| TestCaseError::fail(format!("reference: {e}")))?;
    let mut actual = bufs.c.clone();
    let outcome = run(&mut job(case, &bufs, &mut actual));
    match outcome {
        Ok(()) => {}
        Err(e) if e.is_unsupported() => {
            let same = actual.iter().zip(&bufs.c).all(|(x, y)| same_bits(*x, *y));
            prop_assert!(same, "refused request wrote into C: {e}");
            return Ok(false);
        }
        Err(e) => return Err(TestCaseError::fail(format!("provider failed: {e}"))),
    }
    let scale = (bufs.alpha.to_c64().norm() + bufs.beta.to_c64().norm() + 1.0) * 2.0;
    let tol = 16.0 * eps::<T>() * (case.k as f64 + 2.0) * scale;
    for (i, (x, y)) in actual.iter().zip(&expected).enumerate() {
        let (x, y) = (x.to_c64(), y.to_c64());
        if y.re.is_nan() || y.im.is_nan() {
            prop_assert!(x.re.is_nan() || x.im.is_nan(), "element {i}: expected untouched NaN, got {x}");
        } else {
            prop_assert!((x - y).norm() <= tol, "element {i}: got {x}, expected {y} (tol {tol}) in {case:?}");
        }
    }
    Ok(true)
}

fn same_bits<T: GemmScalar>(x: T, y: T) -> bool {
    let (x, y) = (x.to_c64(), y.to_c64());
    (x.re.to_bits() == y.re.to_bits() || (x.re.is_nan() && y.re.is_nan()))
        && (x.im.to_bits() == y.im.to_bits() || (x.im.is_nan() && y.im.is_nan()))
}

/// Runs `cases` random cases per dtype through `provider`, returning how many were
/// computed (not refused) per dtype.
pub fn check_provider(provider: &dyn GemmProvider, threads: usize, cases: u32) -> [usize; 4] {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let computed = [AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0)];
    let config = ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() };
    fn one<T: GemmScalar>(
        p: &dyn GemmProvider,
        threads: usize,
        case: &Case,
        counter: &AtomicUsize,
    ) -> Result<(), TestCaseError> {
        if check_case::<T>(case, |job| T::gemm(p, job, &*par(threads)))? {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let result = runner.run(&case_strategy(), |case| {
        one::<f32>(provider, threads, &case, &computed[0])?;
        one::<f64>(provider, threads, &case, &computed[1])?;
        one::<strata_tensor::c32>(provider, threads, &case, &computed[2])?;
        one::<strata_tensor::c64>(provider, threads, &case, &computed[3])
    });
    if let Err(e) = result {
        panic!("{provider:?}: {e}");
    }
    computed.map(|c| c.into_inner())
}

/// A zero-thread parallelism: breaks the "at least one thread" rule, so providers must
/// refuse it (`GemmError::ZeroThreads`).
#[derive(Debug)]
struct ZeroThreads;

// SAFETY: a plain loop (each index once, in range, all finished before returning).
unsafe impl ProviderParallelism for ZeroThreads {
    fn threads(&self) -> usize {
        0
    }
    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) -> Result<(), ScheduleError> {
        (0..n).for_each(body);
        Ok(())
    }
}

/// The parallelism of `threads` workers for a provider used on its own: the calling
/// thread for 1, scoped threads for more, and a rule-breaking double for 0.
pub fn par(threads: usize) -> Box<dyn ProviderParallelism> {
    match threads {
        0 => Box::new(ZeroThreads),
        1 => Box::new(SequentialParallelism),
        t => Box::new(ScopedThreadParallelism::new(t)),
    }
}
