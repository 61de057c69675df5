//! The built-in faer provider: pure Rust, any strides, conjugation for free, parallel
//! only through the fork-join its caller hands in (the domain's executor).
//!
//! With several threads a product is cut into [`PANELS_PER_THREAD`] panels of C per thread
//! (rows, or columns when C is wider than tall), each computed by faer's sequential
//! kernel and run by the caller's [`ProviderParallelism`]: measured on this project's
//! 2-vCPU machine at m = n = k = 1024 (f64), 150-160 GFLOP/s against 120-125 for faer's
//! own two-thread split, and far less sensitive to a busy second core. faer's own
//! parallelism (`Par::rayon`) is never used: it would fork on whatever Rayon pool the
//! calling thread belongs to, or on Rayon's global pool. Products too narrow to cut into
//! panels of [`MIN_PANEL`] run sequentially.

use faer::linalg::matmul::matmul;
use faer::traits::{ComplexField, Conjugate};
use faer::{Accum, MatMut, MatRef, Par};

use crate::error::GemmError;
use crate::job::{BatchedGemm, element_index, prepare};
use crate::parallelism::ProviderParallelism;
use crate::provider::{GemmDTypes, GemmProvider, PlacementControl, ProviderCapabilities, ThreadControl};
use crate::scalar::GemmScalar;

/// GEMM through `faer::linalg::matmul::matmul`, one call per batch entry.
///
/// One thread runs with `Par::Seq` on the calling thread; more threads fork panels of C
/// through the call's [`ProviderParallelism`], so they run where the caller says.
///
/// ```
/// use strata_provider::{BatchedGemm, FaerGemmProvider, GemmMatrix, GemmMatrixMut, GemmScalar};
/// let a = [1.0f64, 2.0, 3.0, 4.0];
/// let mut c = [0.0f64; 4];
/// let mut job = BatchedGemm {
///     batch: 1, m: 2, n: 2, k: 2, alpha: 1.0,
///     a: GemmMatrix::row_major(&a, 2, 2), conj_a: false,
///     b: GemmMatrix::row_major(&a, 2, 2).transposed(), conj_b: false, // A · Aᵀ
///     beta: 0.0, c: GemmMatrixMut::row_major(&mut c, 2, 2),
/// };
/// f64::gemm(&FaerGemmProvider, &mut job, &strata_provider::SequentialParallelism).unwrap();
/// assert_eq!(c, [5.0, 11.0, 11.0, 25.0]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct FaerGemmProvider;

/// The fewest rows (or columns) of C a panel gets: thinner panels repeat the packing of
/// the shared operand for too little work.
pub const MIN_PANEL: usize = 32;

/// Panels per thread: two, so that a core slowed by other work delays a quarter of the
/// product rather than half while the other worker steals the rest (measured equal to
/// one panel per thread on an idle machine, and steadier beside other load).
pub const PANELS_PER_THREAD: usize = 2;

/// The output matrix of one product as raw parts, so that the panels of C can be handed
/// to different workers of the caller's fork-join.
#[derive(Clone, Copy)]
struct OutputMatrix<T> {
    ptr: *mut T,
    rows: usize,
    cols: usize,
    row_stride: isize,
    col_stride: isize,
}

// SAFETY: an `OutputMatrix` is the exclusive borrow of C's elements, split between workers
// that each touch only their own panel (see `panel`); sharing it is as safe as sending
// `&mut [T]` when `T: Send`.
unsafe impl<T: Send> Sync for OutputMatrix<T> {}

impl<T> OutputMatrix<T> {
    /// The rows (`by_rows`) or columns `range` of C.
    ///
    /// # Safety
    /// The matrix must address valid, pairwise distinct elements of a live exclusive
    /// borrow, and no other live view may reach the same rows (columns) while the
    /// returned one lives.
    unsafe fn panel<'a>(&self, by_rows: bool, range: std::ops::Range<usize>) -> MatMut<'a, T> {
        let (rows, cols, step) =
            if by_rows { (range.len(), self.cols, self.row_stride) } else { (self.rows, range.len(), self.col_stride) };
        // SAFETY: `range` lies inside the matrix, so the offset stays inside the borrow;
        // exclusivity of the panel is the caller's promise.
        unsafe {
            MatMut::from_raw_parts_mut(
                self.ptr.offset(range.start as isize * step),
                rows,
                cols,
                self.row_stride,
                self.col_stride,
            )
        }
    }
}

/// `C = accum(C) + alpha · A · B` with the parallelism of `par`: one sequential faer call
/// per panel of C (rows, or columns when C is wider), the panels run by `par`'s fork-join.
/// faer's own parallelism is never used, so no work escapes the workers `par` names.
fn matmul_in_panels<T, L, R>(
    c: MatMut<'_, T>,
    accum: Accum,
    a: MatRef<'_, L>,
    b: MatRef<'_, R>,
    alpha: T,
    par: &dyn ProviderParallelism,
) -> Result<(), GemmError>
where
    T: ComplexField,
    L: Conjugate<Canonical = T>,
    R: Conjugate<Canonical = T>,
{
    let (m, n) = (c.nrows(), c.ncols());
    let threads = par.threads();
    let panels = if threads <= 1 { 1 } else { (threads * PANELS_PER_THREAD).min(m.max(n) / MIN_PANEL) };
    if panels <= 1 {
        matmul(c, accum, a, b, alpha, Par::Seq);
        return Ok(());
    }
    let by_rows = m >= n;
    let extent = if by_rows { m } else { n };
    let out =
        OutputMatrix { ptr: c.as_ptr_mut(), rows: m, cols: n, row_stride: c.row_stride(), col_stride: c.col_stride() };
    par.for_each_index(panels, &|p| {
        let range = p * extent / panels..(p + 1) * extent / panels;
        // SAFETY: `out` is the exclusive borrow `c` (moved into it above, not used again);
        // panels of different indices are disjoint ranges of rows (columns), and the
        // `ProviderParallelism` contract runs each index at most once, so no two live
        // panels overlap.
        let cp = unsafe { out.panel(by_rows, range.clone()) };
        if by_rows {
            matmul(cp, accum, a.subrows(range.start, range.len()), b, alpha.clone(), Par::Seq);
        } else {
            matmul(cp, accum, a, b.subcols(range.start, range.len()), alpha.clone(), Par::Seq);
        }
    })?;
    Ok(())
}

impl FaerGemmProvider {
    fn run<T>(&self, job: &mut BatchedGemm<'_, T>, par: &dyn ProviderParallelism) -> Result<(), GemmError>
    where
        T: GemmScalar + ComplexField + Conjugate<Canonical = T>,
    {
        prepare(job, par.threads())?;
        if job.finish_trivial() {
            return Ok(());
        }
        let accum = if job.beta == T::zero() {
            Accum::Replace
        } else {
            job.scale_c();
            Accum::Add
        };
        let (m, n, k, alpha) = (job.m, job.n, job.k, job.alpha);
        let (a, b) = (job.a, job.b);
        let c = &mut job.c;
        for bi in 0..job.batch {
            let ia = element_index(a.offset, a.batch_stride, 0, 0, bi, 0, 0);
            let ib = element_index(b.offset, b.batch_stride, 0, 0, bi, 0, 0);
            let ic = element_index(c.offset, c.batch_stride, 0, 0, bi, 0, 0);
            // SAFETY: `prepare` validated that every element (bi, i, j) of A (m × k),
            // B (k × n) and C (m × n) lies inside its buffer, starting from these
            // indices with these strides; C's elements are pairwise distinct, and the
            // shared borrows of A and B cannot overlap the exclusive borrow of C.
            let (am, bm, cm) = unsafe {
                (
                    MatRef::<T>::from_raw_parts(a.data.as_ptr().add(ia), m, k, a.row_stride, a.col_stride),
                    MatRef::<T>::from_raw_parts(b.data.as_ptr().add(ib), k, n, b.row_stride, b.col_stride),
                    MatMut::<T>::from_raw_parts_mut(c.data.as_mut_ptr().add(ic), m, n, c.row_stride, c.col_stride),
                )
            };
            // Conjugation is a view flag in faer; real types conjugate to themselves.
            match (job.conj_a, job.conj_b) {
                (false, false) => matmul_in_panels(cm, accum, am, bm, alpha, par)?,
                (true, false) => matmul_in_panels(cm, accum, am.conjugate(), bm, alpha, par)?,
                (false, true) => matmul_in_panels(cm, accum, am, bm.conjugate(), alpha, par)?,
                (true, true) => matmul_in_panels(cm, accum, am.conjugate(), bm.conjugate(), alpha, par)?,
            }
        }
        Ok(())
    }
}

impl GemmProvider for FaerGemmProvider {
    fn capabilities(&self) -> ProviderCapabilities {
        ProviderCapabilities {
            name: "faer".into(),
            threads: ThreadControl::PerCall,
            placement: PlacementControl::EngineWorkers,
            dtypes: GemmDTypes::ALL,
            needs_unit_stride: false,
        }
    }
    crate::provider::forward_gemm_dtypes_to_run!();
}
