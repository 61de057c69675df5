//! The description of one strided batched GEMM and its validation.

use crate::error::{GemmError, Operand};
use crate::scalar::GemmScalar;

/// A read-only batch of matrices inside one buffer: element `(b, i, j)` lives at
/// `data[offset + b·batch_stride + i·row_stride + j·col_stride]`.
///
/// Strides are in elements and may be negative or zero (a zero stride repeats a row, a
/// column or a whole matrix). Transposition is a swap of `row_stride` and `col_stride`.
///
/// ```
/// use strata_provider::GemmMatrix;
/// let data = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let a = GemmMatrix::row_major(&data, 2, 3); // [[1, 2, 3], [4, 5, 6]]
/// let at = a.transposed(); // 3 × 2
/// assert_eq!((at.row_stride, at.col_stride), (1, 3));
/// ```
#[derive(Debug)]
pub struct GemmMatrix<'a, T> {
    /// The buffer holding every matrix of the batch.
    pub data: &'a [T],
    /// Index of element `(0, 0, 0)`.
    pub offset: usize,
    /// Distance between consecutive rows.
    pub row_stride: isize,
    /// Distance between consecutive columns.
    pub col_stride: isize,
    /// Distance between consecutive matrices of the batch.
    pub batch_stride: isize,
}

impl<T> Clone for GemmMatrix<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for GemmMatrix<'_, T> {}

impl<'a, T> GemmMatrix<'a, T> {
    /// A matrix (batch) with explicit offset and strides.
    pub fn new(data: &'a [T], offset: usize, row_stride: isize, col_stride: isize, batch_stride: isize) -> Self {
        GemmMatrix { data, offset, row_stride, col_stride, batch_stride }
    }

    /// Consecutive dense row-major `rows × cols` matrices starting at index 0.
    pub fn row_major(data: &'a [T], rows: usize, cols: usize) -> Self {
        let (rs, bs) = dense_strides(rows, cols);
        GemmMatrix { data, offset: 0, row_stride: rs, col_stride: 1, batch_stride: bs }
    }

    /// The transpose (row and column strides swapped), no copy.
    pub fn transposed(self) -> Self {
        GemmMatrix { row_stride: self.col_stride, col_stride: self.row_stride, ..self }
    }
}

/// The mutable counterpart of [`GemmMatrix`], for the output `C`.
#[derive(Debug)]
pub struct GemmMatrixMut<'a, T> {
    /// The buffer holding every matrix of the batch.
    pub data: &'a mut [T],
    /// Index of element `(0, 0, 0)`.
    pub offset: usize,
    /// Distance between consecutive rows.
    pub row_stride: isize,
    /// Distance between consecutive columns.
    pub col_stride: isize,
    /// Distance between consecutive matrices of the batch.
    pub batch_stride: isize,
}

impl<'a, T> GemmMatrixMut<'a, T> {
    /// A matrix (batch) with explicit offset and strides.
    pub fn new(data: &'a mut [T], offset: usize, row_stride: isize, col_stride: isize, batch_stride: isize) -> Self {
        GemmMatrixMut { data, offset, row_stride, col_stride, batch_stride }
    }

    /// Consecutive dense row-major `rows × cols` matrices starting at index 0.
    pub fn row_major(data: &'a mut [T], rows: usize, cols: usize) -> Self {
        let (rs, bs) = dense_strides(rows, cols);
        GemmMatrixMut { data, offset: 0, row_stride: rs, col_stride: 1, batch_stride: bs }
    }

    /// A read-only view of the same elements.
    pub fn as_ref(&self) -> GemmMatrix<'_, T> {
        GemmMatrix {
            data: self.data,
            offset: self.offset,
            row_stride: self.row_stride,
            col_stride: self.col_stride,
            batch_stride: self.batch_stride,
        }
    }

    /// A shorter-lived mutable view of the same elements.
    pub fn reborrow(&mut self) -> GemmMatrixMut<'_, T> {
        GemmMatrixMut {
            data: self.data,
            offset: self.offset,
            row_stride: self.row_stride,
            col_stride: self.col_stride,
            batch_stride: self.batch_stride,
        }
    }
}

fn dense_strides(rows: usize, cols: usize) -> (isize, isize) {
    // Saturating: absurd sizes then fail validation as out of bounds instead of wrapping.
    let rs = isize::try_from(cols).unwrap_or(isize::MAX);
    let bs = isize::try_from(rows.saturating_mul(cols)).unwrap_or(isize::MAX);
    (rs, bs)
}

/// One strided batched GEMM: for every `b < batch`,
/// `C[b] = alpha · op(A[b]) · op(B[b]) + beta · C[b]`, where `op` conjugates when the
/// operand's `conj_*` flag is set (transposition is expressed by strides).
///
/// Semantics shared by every provider (as in BLAS):
/// * `beta == 0` overwrites `C` without reading it: NaN or infinity already in `C` does
///   not reach the result;
/// * `alpha == 0` (or `k == 0`) does not read `A` or `B`: `C` becomes `beta · C`;
/// * nothing is computed when `batch`, `m` or `n` is zero.
///
/// ```
/// use strata_provider::{BatchedGemm, GemmMatrix, GemmMatrixMut, reference};
/// let a = [1.0, 2.0, 3.0, 4.0]; // [[1, 2], [3, 4]]
/// let b = [5.0, 6.0, 7.0, 8.0]; // [[5, 6], [7, 8]]
/// let mut c = [f64::NAN; 4];
/// let mut job = BatchedGemm {
///     batch: 1, m: 2, n: 2, k: 2,
///     alpha: 1.0, a: GemmMatrix::row_major(&a, 2, 2), conj_a: false,
///     b: GemmMatrix::row_major(&b, 2, 2), conj_b: false,
///     beta: 0.0, c: GemmMatrixMut::row_major(&mut c, 2, 2),
/// };
/// reference::gemm(&mut job).unwrap();
/// assert_eq!(c, [19.0, 22.0, 43.0, 50.0]);
/// ```
#[derive(Debug)]
pub struct BatchedGemm<'a, T> {
    /// Number of independent products.
    pub batch: usize,
    /// Rows of `op(A)` and `C`.
    pub m: usize,
    /// Columns of `op(B)` and `C`.
    pub n: usize,
    /// Columns of `op(A)`, rows of `op(B)`.
    pub k: usize,
    /// Scale of the product.
    pub alpha: T,
    /// Left factor, `m × k` per batch.
    pub a: GemmMatrix<'a, T>,
    /// Use the complex conjugate of `A` (ignored for real dtypes).
    pub conj_a: bool,
    /// Right factor, `k × n` per batch.
    pub b: GemmMatrix<'a, T>,
    /// Use the complex conjugate of `B` (ignored for real dtypes).
    pub conj_b: bool,
    /// Scale of the old `C`; zero means `C` is not read.
    pub beta: T,
    /// Output, `m × n` per batch.
    pub c: GemmMatrixMut<'a, T>,
}

/// Lowest and highest element index addressed by a strided 3-D operand, or `None` when
/// it has no elements.
fn span(
    operand: Operand,
    offset: usize,
    extents: [usize; 3],
    strides: [isize; 3],
) -> Result<Option<(i128, i128)>, GemmError> {
    if extents.contains(&0) {
        return Ok(None);
    }
    let overflow = || GemmError::IndexOverflow { operand, extents, strides };
    let (mut lo, mut hi) = (offset as i128, offset as i128);
    for (&e, &s) in extents.iter().zip(&strides) {
        // (e - 1) < 2^64 and |s| <= 2^63, so the product fits in i128; the sums may not.
        let reach = (e as i128 - 1) * s as i128;
        if reach < 0 {
            lo = lo.checked_add(reach).ok_or_else(overflow)?;
        } else {
            hi = hi.checked_add(reach).ok_or_else(overflow)?;
        }
    }
    Ok(Some((lo, hi)))
}

fn check_in_bounds(
    operand: Operand,
    len: usize,
    offset: usize,
    extents: [usize; 3],
    strides: [isize; 3],
) -> Result<(), GemmError> {
    if let Some((lowest, highest)) = span(operand, offset, extents, strides)?
        && (lowest < 0 || highest >= len as i128)
    {
        return Err(GemmError::OutOfBounds { operand, extents, strides, offset, lowest, highest, len });
    }
    Ok(())
}

/// Sufficient test that a strided layout maps distinct indices to distinct locations:
/// sorted by stride, every axis must step over everything the smaller axes reach.
fn check_no_alias(extents: [usize; 3], strides: [isize; 3]) -> Result<(), GemmError> {
    if extents.contains(&0) {
        return Ok(());
    }
    let mut axes = [(0u128, 0u128); 3];
    let mut used = 0;
    for (&e, &s) in extents.iter().zip(&strides) {
        if e > 1 {
            axes[used] = (s.unsigned_abs() as u128, e as u128);
            used += 1;
        }
    }
    let axes = &mut axes[..used];
    axes.sort_unstable();
    let mut reach: u128 = 0;
    for &(stride, extent) in axes.iter() {
        if stride <= reach {
            return Err(GemmError::OutputAliasing { extents, strides });
        }
        reach += stride * (extent - 1);
    }
    Ok(())
}

impl<T: GemmScalar> BatchedGemm<'_, T> {
    /// Extents `(batch, rows, cols)` of `A`, `B` and `C`.
    pub fn extents(&self) -> [[usize; 3]; 3] {
        [[self.batch, self.m, self.k], [self.batch, self.k, self.n], [self.batch, self.m, self.n]]
    }

    /// Checks that every operand stays inside its buffer (spans computed in `i128`) and
    /// that no two elements of `C` share a location. Operands without elements are not
    /// checked. Called by every built-in provider before touching memory.
    pub fn validate(&self) -> Result<(), GemmError> {
        let [ea, eb, ec] = self.extents();
        let sa = [self.a.batch_stride, self.a.row_stride, self.a.col_stride];
        let sb = [self.b.batch_stride, self.b.row_stride, self.b.col_stride];
        let sc = [self.c.batch_stride, self.c.row_stride, self.c.col_stride];
        check_in_bounds(Operand::A, self.a.data.len(), self.a.offset, ea, sa)?;
        check_in_bounds(Operand::B, self.b.data.len(), self.b.offset, eb, sb)?;
        check_in_bounds(Operand::C, self.c.data.len(), self.c.offset, ec, sc)?;
        check_no_alias(ec, sc)
    }

    /// Whether the product term contributes nothing, so that `C = beta · C` is the whole
    /// result and `A`, `B` must not be read (`k == 0` or `alpha == 0`).
    pub fn product_vanishes(&self) -> bool {
        self.k == 0 || self.alpha == T::zero()
    }

    /// Whether `C` has no elements (nothing to compute).
    pub fn is_empty(&self) -> bool {
        self.batch == 0 || self.m == 0 || self.n == 0
    }

    /// Sets `C = beta · C` (zero-fills when `beta == 0`, without reading `C`). Call only
    /// on a validated job.
    pub fn scale_c(&mut self) {
        let beta = self.beta;
        if beta == T::one() {
            return;
        }
        let zero = beta == T::zero();
        let c = &mut self.c;
        for b in 0..self.batch {
            for i in 0..self.m {
                for j in 0..self.n {
                    let idx = element_index(c.offset, c.batch_stride, c.row_stride, c.col_stride, b, i, j);
                    let slot = &mut c.data[idx];
                    *slot = if zero { T::zero() } else { beta * *slot };
                }
            }
        }
    }

    /// Handles the cases every provider shares after validation: an empty `C`, or a
    /// vanishing product (then `C = beta · C`). Returns `true` when the job is finished.
    pub fn finish_trivial(&mut self) -> bool {
        if self.is_empty() {
            return true;
        }
        if self.product_vanishes() {
            self.scale_c();
            return true;
        }
        false
    }
}

/// Index of element `(b, i, j)` of a validated operand. The in-bounds check of
/// [`BatchedGemm::validate`] bounds every partial sum by the buffer length, so the
/// `isize` arithmetic cannot overflow.
#[inline]
pub(crate) fn element_index(offset: usize, bs: isize, rs: isize, cs: isize, b: usize, i: usize, j: usize) -> usize {
    (offset as isize + b as isize * bs + i as isize * rs + j as isize * cs) as usize
}

/// Validates `job` and the thread count: the first step of every built-in provider.
pub(crate) fn prepare<T: GemmScalar>(job: &BatchedGemm<'_, T>, threads: usize) -> Result<(), GemmError> {
    if threads == 0 {
        return Err(GemmError::ZeroThreads);
    }
    job.validate()
}
