//! The built-in faer provider: pure Rust, any strides, conjugation for free, parallel on
//! the current Rayon pool (the domain's workers) with a per-call thread count.
//!
//! With several threads a product is cut into [`PANELS_PER_THREAD`] panels of C per thread
//! (rows, or columns when C is wider than tall), each computed by faer's sequential
//! kernel and balanced by Rayon's work stealing: measured on this
//! project's 2-vCPU machine at m = n = k = 1024 (f64), 150-160 GFLOP/s against 120-125 for
//! faer's own two-thread split, and far less sensitive to a busy second core. Products too
//! narrow to cut into panels of [`MIN_PANEL`] use faer's own parallelism.

use faer::linalg::matmul::matmul;
use faer::traits::{ComplexField, Conjugate};
use faer::{Accum, MatMut, MatRef, Par};

use crate::error::GemmError;
use crate::job::{BatchedGemm, element_index, prepare};
use crate::provider::{GemmDTypes, GemmProvider, PlacementControl, ProviderCapabilities, ThreadControl};
use crate::scalar::GemmScalar;

/// GEMM through `faer::linalg::matmul::matmul`, one call per batch entry.
///
/// `threads == 1` runs with `Par::Seq` on the calling thread; `threads > 1` forks panels
/// (or faer's `Par::rayon(threads)`) on the *current* Rayon pool. The engine calls it
/// from inside the domain's executor, so those are the domain's pinned workers; called
/// from outside any pool it would use Rayon's global pool, which strata never does.
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
/// f64::gemm(&FaerGemmProvider, &mut job, 1).unwrap();
/// assert_eq!(c, [5.0, 11.0, 11.0, 25.0]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct FaerGemmProvider;

/// The fewest rows (or columns) of C a panel gets: below it, faer's own blocking inside
/// one call parallelises better than thin independent panels.
pub const MIN_PANEL: usize = 64;

/// Panels per thread: two, so that a core slowed by other work delays a quarter of the
/// product rather than half while the other worker steals the rest (measured equal to
/// one panel per thread on an idle machine, and steadier beside other load).
pub const PANELS_PER_THREAD: usize = 2;

/// `C = accum(C) + alpha · A · B` on `threads` workers of the current Rayon pool: one
/// sequential faer call per panel of C, split in halves recursively with `rayon::join`.
fn matmul_in_panels<T, L, R>(
    c: MatMut<'_, T>,
    accum: Accum,
    a: MatRef<'_, L>,
    b: MatRef<'_, R>,
    alpha: T,
    threads: usize,
) where
    T: ComplexField,
    L: Conjugate<Canonical = T>,
    R: Conjugate<Canonical = T>,
{
    if threads <= 1 {
        // One thread never forks: outside a pool, `rayon::join` would use the global one.
        return matmul(c, accum, a, b, alpha, Par::Seq);
    }
    let (m, n) = (c.nrows(), c.ncols());
    let panels = (threads * PANELS_PER_THREAD).min(m.max(n) / MIN_PANEL);
    if panels <= 1 {
        return matmul(c, accum, a, b, alpha, Par::rayon(threads));
    }
    split_panels(c, accum, a, b, alpha, panels);
}

fn split_panels<T, L, R>(c: MatMut<'_, T>, accum: Accum, a: MatRef<'_, L>, b: MatRef<'_, R>, alpha: T, panels: usize)
where
    T: ComplexField,
    L: Conjugate<Canonical = T>,
    R: Conjugate<Canonical = T>,
{
    if panels <= 1 {
        return matmul(c, accum, a, b, alpha, Par::Seq);
    }
    let left = panels / 2;
    let alpha_right = alpha.clone();
    if c.nrows() >= c.ncols() {
        let rows = c.nrows() * left / panels;
        let (c0, c1) = c.split_at_row_mut(rows);
        let (a0, a1) = a.split_at_row(rows);
        rayon::join(
            || split_panels(c0, accum, a0, b, alpha, left),
            || split_panels(c1, accum, a1, b, alpha_right, panels - left),
        );
    } else {
        let cols = c.ncols() * left / panels;
        let (c0, c1) = c.split_at_col_mut(cols);
        let (b0, b1) = b.split_at_col(cols);
        rayon::join(
            || split_panels(c0, accum, a, b0, alpha, left),
            || split_panels(c1, accum, a, b1, alpha_right, panels - left),
        );
    }
}

impl FaerGemmProvider {
    fn run<T>(&self, job: &mut BatchedGemm<'_, T>, threads: usize) -> Result<(), GemmError>
    where
        T: GemmScalar + ComplexField + Conjugate<Canonical = T>,
    {
        prepare(job, threads)?;
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
                (false, false) => matmul_in_panels(cm, accum, am, bm, alpha, threads),
                (true, false) => matmul_in_panels(cm, accum, am.conjugate(), bm, alpha, threads),
                (false, true) => matmul_in_panels(cm, accum, am, bm.conjugate(), alpha, threads),
                (true, true) => matmul_in_panels(cm, accum, am.conjugate(), bm.conjugate(), alpha, threads),
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
