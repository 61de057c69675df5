//! Injected BLAS: CBLAS or Fortran `?gemm` function pointers registered at run time, and
//! the mapping of a strided batched GEMM onto BLAS's column-major calls.

use std::borrow::Cow;
use std::ffi::{c_char, c_int};

use strata_tensor::{c32, c64};

use crate::error::GemmError;
use crate::job::{BatchedGemm, element_index, prepare};
use crate::parallelism::ProviderParallelism;
use crate::provider::{GemmDTypes, GemmProvider, PlacementControl, ProviderCapabilities, ThreadControl};
use crate::scalar::GemmScalar;

/// `cblas_sgemm` / `cblas_dgemm`: `(layout, transa, transb, m, n, k, alpha, a, lda, b,
/// ldb, beta, c, ldc)` with 32-bit integers (LP64 BLAS).
pub type CblasRealGemm<T> = unsafe extern "C" fn(
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    T,
    *const T,
    c_int,
    *const T,
    c_int,
    T,
    *mut T,
    c_int,
);

/// `cblas_cgemm` / `cblas_zgemm`: like [`CblasRealGemm`] with `alpha` and `beta` passed by
/// pointer (CBLAS declares every complex pointer as `void *`; the layout is identical).
pub type CblasComplexGemm<T> = unsafe extern "C" fn(
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const T,
    *const T,
    c_int,
    *const T,
    c_int,
    *const T,
    *mut T,
    c_int,
);

/// Fortran `sgemm_` / `dgemm_` / `cgemm_` / `zgemm_`: every argument by pointer,
/// `transa`/`transb` as one character, 32-bit integers. The hidden string-length
/// arguments of some compilers are not passed (every `?gemm` reads one character only).
pub type FortranGemm<T> = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const c_int,
    *const c_int,
    *const c_int,
    *const T,
    *const T,
    *const c_int,
    *const T,
    *const c_int,
    *const T,
    *mut T,
    *const c_int,
);

/// CBLAS entry points, one per dtype; `None` where the library has none.
#[derive(Clone, Copy, Debug, Default)]
pub struct CblasGemmFns {
    /// `cblas_sgemm`.
    pub sgemm: Option<CblasRealGemm<f32>>,
    /// `cblas_dgemm`.
    pub dgemm: Option<CblasRealGemm<f64>>,
    /// `cblas_cgemm`.
    pub cgemm: Option<CblasComplexGemm<c32>>,
    /// `cblas_zgemm`.
    pub zgemm: Option<CblasComplexGemm<c64>>,
}

/// Fortran entry points, one per dtype; `None` where the library has none.
#[derive(Clone, Copy, Debug, Default)]
pub struct FortranGemmFns {
    /// `sgemm_`.
    pub sgemm: Option<FortranGemm<f32>>,
    /// `dgemm_`.
    pub dgemm: Option<FortranGemm<f64>>,
    /// `cgemm_`.
    pub cgemm: Option<FortranGemm<c32>>,
    /// `zgemm_`.
    pub zgemm: Option<FortranGemm<c64>>,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum EntryPoints {
    Cblas(CblasGemmFns),
    Fortran(FortranGemmFns),
}

/// How a registered BLAS uses threads and CPUs: declared by whoever registers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlasThreading {
    /// Its thread-count control.
    pub threads: ThreadControl,
    /// Where its threads run.
    pub placement: PlacementControl,
}

impl BlasThreading {
    /// A BLAS that runs on the calling thread only (a sequential build, or one whose
    /// team was set to one thread).
    pub const SEQUENTIAL: BlasThreading =
        BlasThreading { threads: ThreadControl::Sequential, placement: PlacementControl::CallingThread };
    /// A BLAS with a process-wide thread team (OpenBLAS with threads).
    pub const PROCESS_TEAM: BlasThreading =
        BlasThreading { threads: ThreadControl::GlobalOnly, placement: PlacementControl::OwnWorkers };
}

/// A GEMM provider over `?gemm` function pointers registered at run time (CBLAS or
/// Fortran ABI). Needs one unit stride and a non-negative leading dimension per matrix;
/// other requests (negative or two non-unit strides, conjugation without transposition,
/// sizes beyond `i32`) answer [`GemmError::Unsupported`] before anything is written.
/// Batches run as one BLAS call each.
#[derive(Clone, Debug)]
pub struct BlasGemmProvider {
    name: Cow<'static, str>,
    entry: EntryPoints,
    threading: BlasThreading,
}

impl BlasGemmProvider {
    /// Registers CBLAS entry points.
    ///
    /// # Safety
    /// Every non-`None` pointer must implement the standard CBLAS `?gemm` for its dtype
    /// with 32-bit integers, be callable from any thread concurrently, and access only
    /// the elements of the matrices it is given.
    pub unsafe fn from_cblas(name: impl Into<Cow<'static, str>>, fns: CblasGemmFns, threading: BlasThreading) -> Self {
        BlasGemmProvider { name: name.into(), entry: EntryPoints::Cblas(fns), threading }
    }

    /// Registers Fortran entry points.
    ///
    /// # Safety
    /// As for [`BlasGemmProvider::from_cblas`], for the reference-BLAS Fortran `?gemm`
    /// interface (arguments by pointer, column-major).
    pub unsafe fn from_fortran(
        name: impl Into<Cow<'static, str>>,
        fns: FortranGemmFns,
        threading: BlasThreading,
    ) -> Self {
        BlasGemmProvider { name: name.into(), entry: EntryPoints::Fortran(fns), threading }
    }

    fn dtypes(&self) -> GemmDTypes {
        let mut set = GemmDTypes::NONE;
        for d in GemmDTypes::ORDER {
            let present = match d {
                strata_tensor::DType::F32 => f32::has_entry(&self.entry),
                strata_tensor::DType::F64 => f64::has_entry(&self.entry),
                strata_tensor::DType::C32 => c32::has_entry(&self.entry),
                _ => c64::has_entry(&self.entry),
            };
            if present {
                set = set.with(d);
            }
        }
        set
    }

    pub(crate) fn run<T: BlasScalar>(
        &self,
        job: &mut BatchedGemm<'_, T>,
        par: &dyn ProviderParallelism,
    ) -> Result<(), GemmError> {
        prepare(job, par.threads())?;
        if !T::has_entry(&self.entry) {
            return Err(GemmError::unsupported(
                self.name.clone(),
                format!("no {} entry point registered", T::DTYPE.name()),
            ));
        }
        if job.finish_trivial() {
            return Ok(());
        }
        let plan = ColMajorPlan::new(job).map_err(|reason| GemmError::unsupported(self.name.clone(), reason))?;
        let (a, b) = (job.a, job.b);
        let c = &mut job.c;
        for bi in 0..job.batch {
            let ia = element_index(a.offset, a.batch_stride, 0, 0, bi, 0, 0);
            let ib = element_index(b.offset, b.batch_stride, 0, 0, bi, 0, 0);
            let ic = element_index(c.offset, c.batch_stride, 0, 0, bi, 0, 0);
            let (pa, pb) = (a.data[ia..].as_ptr(), b.data[ib..].as_ptr());
            let pc = c.data[ic..].as_mut_ptr();
            // In the swapped orientation BLAS computes Cᵀ = op(B)ᵀ·op(A)ᵀ: B is its left factor.
            let (left, right) = if plan.swapped { (pb, pa) } else { (pa, pb) };
            // SAFETY: validation put every element of A, B, C inside its buffer;
            // `ColMajorPlan` chose transposes and leading dimensions under which BLAS
            // addresses exactly those elements; C's elements are pairwise distinct and
            // the registrant guaranteed the entry point's ABI (see `from_cblas`).
            unsafe { T::call(&self.entry, &plan, job.alpha, left, right, job.beta, pc) };
        }
        Ok(())
    }
}

impl GemmProvider for BlasGemmProvider {
    fn capabilities(&self) -> ProviderCapabilities {
        ProviderCapabilities {
            name: self.name.clone(),
            threads: self.threading.threads,
            placement: self.threading.placement,
            dtypes: self.dtypes(),
            needs_unit_stride: true,
        }
    }
    crate::provider::forward_gemm_dtypes_to_run!();
}

/// A BLAS transpose flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Trans {
    No,
    Yes,
    Conj,
}

impl Trans {
    fn cblas(self) -> c_int {
        match self {
            Trans::No => 111,
            Trans::Yes => 112,
            Trans::Conj => 113,
        }
    }
    fn fortran(self) -> c_char {
        (match self {
            Trans::No => b'N',
            Trans::Yes => b'T',
            Trans::Conj => b'C',
        }) as c_char
    }
}

const CBLAS_COL_MAJOR: c_int = 102;

/// One column-major BLAS call shape, identical for every batch entry (only base pointers
/// differ): `C' (m × n) = alpha · ta(L) · tb(R) + beta · C'`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ColMajorPlan {
    swapped: bool,
    ta: Trans,
    tb: Trans,
    m: c_int,
    n: c_int,
    k: c_int,
    lda: c_int,
    ldb: c_int,
    ldc: c_int,
}

/// Leading dimension under which a `rows × cols` matrix with strides `(rs, cs)` is a
/// column-major BLAS matrix (unit row stride), if it is one. Strides of extent-1 axes
/// do not matter.
fn col_major_ld(rows: usize, cols: usize, rs: isize, cs: isize) -> Option<usize> {
    if rows > 1 && rs != 1 {
        return None;
    }
    let need = rows.max(1);
    if cols <= 1 {
        return Some(need);
    }
    usize::try_from(cs).ok().filter(|&ld| ld >= need)
}

fn to_int(v: usize, what: &str) -> Result<c_int, String> {
    c_int::try_from(v).map_err(|_| format!("{what} = {v} exceeds the 32-bit BLAS integer"))
}

/// A factor as BLAS sees it: transpose flag and leading dimension.
fn factor(name: &str, rows: usize, cols: usize, rs: isize, cs: isize, conj: bool) -> Result<(Trans, usize), String> {
    let as_is = col_major_ld(rows, cols, rs, cs);
    let transposed = col_major_ld(cols, rows, cs, rs);
    match (conj, as_is, transposed) {
        (false, Some(ld), _) => Ok((Trans::No, ld)),
        (false, None, Some(ld)) => Ok((Trans::Yes, ld)),
        (true, _, Some(ld)) => Ok((Trans::Conj, ld)),
        (true, Some(_), None) => Err(format!(
            "operand {name} is conjugated but stored column-major (strides ({rs}, {cs})); BLAS conjugates only with a transpose"
        )),
        (_, None, None) => Err(format!(
            "operand {name} ({rows} × {cols}, strides ({rs}, {cs})) needs one unit stride and a leading dimension at least the other extent"
        )),
    }
}

impl ColMajorPlan {
    /// Chooses the orientation and flags of a non-trivial validated job, or says why
    /// BLAS cannot express it.
    pub(crate) fn new<T: GemmScalar>(job: &BatchedGemm<'_, T>) -> Result<Self, String> {
        let complex = T::DTYPE.is_complex();
        let (conj_a, conj_b) = (job.conj_a && complex, job.conj_b && complex);
        let (a, b, c) = (&job.a, &job.b, &job.c);
        let (m, n, k) = (job.m, job.n, job.k);
        // C column-major: C = op(A)·op(B). C row-major: Cᵀ = op(B)ᵀ·op(A)ᵀ, i.e. the
        // same problem on transposed strides with the factors exchanged.
        let (swapped, ldc) = match col_major_ld(m, n, c.row_stride, c.col_stride) {
            Some(ld) => (false, ld),
            None => match col_major_ld(n, m, c.col_stride, c.row_stride) {
                Some(ld) => (true, ld),
                None => {
                    return Err(format!(
                        "output C ({m} × {n}, strides ({}, {})) needs one unit stride and a positive leading dimension",
                        c.row_stride, c.col_stride
                    ));
                }
            },
        };
        let (pm, pn, (ta, lda), (tb, ldb)) = if swapped {
            (
                n,
                m,
                factor("B", n, k, b.col_stride, b.row_stride, conj_b)?,
                factor("A", k, m, a.col_stride, a.row_stride, conj_a)?,
            )
        } else {
            (
                m,
                n,
                factor("A", m, k, a.row_stride, a.col_stride, conj_a)?,
                factor("B", k, n, b.row_stride, b.col_stride, conj_b)?,
            )
        };
        Ok(ColMajorPlan {
            swapped,
            ta,
            tb,
            m: to_int(pm, "rows")?,
            n: to_int(pn, "cols")?,
            k: to_int(k, "k")?,
            lda: to_int(lda, "lda")?,
            ldb: to_int(ldb, "ldb")?,
            ldc: to_int(ldc, "ldc")?,
        })
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for strata_tensor::c32 {}
    impl Sealed for strata_tensor::c64 {}
}

/// The one place where a GEMM dtype picks its BLAS entry point.
pub(crate) trait BlasScalar: GemmScalar + sealed::Sealed {
    fn has_entry(entry: &EntryPoints) -> bool;

    /// Calls the entry point for one batch entry.
    ///
    /// # Safety
    /// `left`, `right`, `c` must address matrices valid under `plan`, and the entry
    /// point must exist ([`BlasScalar::has_entry`]) and honour the BLAS ABI.
    unsafe fn call(
        entry: &EntryPoints,
        plan: &ColMajorPlan,
        alpha: Self,
        left: *const Self,
        right: *const Self,
        beta: Self,
        c: *mut Self,
    );
}

macro_rules! blas_scalar {
    ($t:ty, $field:ident, real) => {
        blas_scalar!(@impl $t, $field, |f: CblasRealGemm<$t>, p: &ColMajorPlan, alpha: $t, l: *const $t, r: *const $t, beta: $t, c: *mut $t| {
            // SAFETY: forwarded from `BlasScalar::call`.
            unsafe { f(CBLAS_COL_MAJOR, p.ta.cblas(), p.tb.cblas(), p.m, p.n, p.k, alpha, l, p.lda, r, p.ldb, beta, c, p.ldc) }
        });
    };
    ($t:ty, $field:ident, complex) => {
        blas_scalar!(@impl $t, $field, |f: CblasComplexGemm<$t>, p: &ColMajorPlan, alpha: $t, l: *const $t, r: *const $t, beta: $t, c: *mut $t| {
            // SAFETY: forwarded from `BlasScalar::call`; alpha and beta outlive the call.
            unsafe { f(CBLAS_COL_MAJOR, p.ta.cblas(), p.tb.cblas(), p.m, p.n, p.k, &alpha, l, p.lda, r, p.ldb, &beta, c, p.ldc) }
        });
    };
    (@impl $t:ty, $field:ident, $cblas:expr) => {
        impl BlasScalar for $t {
            fn has_entry(entry: &EntryPoints) -> bool {
                match entry {
                    EntryPoints::Cblas(f) => f.$field.is_some(),
                    EntryPoints::Fortran(f) => f.$field.is_some(),
                }
            }
            unsafe fn call(
                entry: &EntryPoints,
                p: &ColMajorPlan,
                alpha: Self,
                l: *const Self,
                r: *const Self,
                beta: Self,
                c: *mut Self,
            ) {
                match entry {
                    EntryPoints::Cblas(fns) => {
                        if let Some(f) = fns.$field {
                            ($cblas)(f, p, alpha, l, r, beta, c)
                        }
                    }
                    EntryPoints::Fortran(fns) => {
                        if let Some(f) = fns.$field {
                            let (ta, tb) = (p.ta.fortran(), p.tb.fortran());
                            // SAFETY: forwarded from `BlasScalar::call`; every pointer
                            // argument points at a local that outlives the call.
                            unsafe {
                                f(&ta, &tb, &p.m, &p.n, &p.k, &alpha, l, &p.lda, r, &p.ldb, &beta, c, &p.ldc)
                            }
                        }
                    }
                }
            }
        }
    };
}

blas_scalar!(f32, sgemm, real);
blas_scalar!(f64, dgemm, real);
blas_scalar!(c32, cgemm, complex);
blas_scalar!(c64, zgemm, complex);
