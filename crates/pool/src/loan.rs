//! Loans: a pool buffer lent to one owner, returned on drop.

use std::fmt;
use std::mem;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use strata_tensor::{Error, Result, Scalar, TypedTensor, shape::checked_len};

use crate::pool::{PoolShared, Returned};
use crate::raw::LentVec;

/// A buffer of `len` elements lent by a [`BufferPool`](crate::BufferPool).
///
/// Reads and writes through `Deref`/`DerefMut` to `[T]`. Dropping the loan (also while
/// unwinding from a panic) returns the buffer to the pool, subject to the cap; the pool's
/// `outstanding_loans` counts live loans. [`into_vec`](Self::into_vec) and
/// [`into_tensor`](Self::into_tensor) end the loan: a vector leaves the pool for good (it
/// can come back through [`BufferPool::recycle`](crate::BufferPool::recycle)), a tensor
/// brings its buffer back by itself when it drops.
///
/// A loan is typed: its buffer can only go back to the pool under its own dtype, so a
/// wrong-dtype release cannot be expressed.
///
/// ```
/// use strata_pool::BufferPool;
/// let pool = BufferPool::new(1 << 20);
/// let mut loan = pool.acquire_zeroed::<i32>(6).unwrap();
/// loan.copy_from_slice(&[1, 2, 3, 4, 5, 6]);
/// let t = loan.into_tensor(&[2, 3]).unwrap();
/// assert_eq!(t.get(&[1, 0]), Some(&4));
/// assert_eq!(pool.stats().outstanding_loans, 0);
/// ```
pub struct BufferLoan<T: Scalar> {
    lent: LentVec<T>,
    /// `None` once the buffer has left the pool (the loan is then inert).
    pool: Option<Arc<PoolShared>>,
}

impl<T: Scalar> BufferLoan<T> {
    pub(crate) fn new(lent: LentVec<T>, pool: Arc<PoolShared>) -> Self {
        BufferLoan { lent, pool: Some(pool) }
    }

    /// Capacity of the underlying buffer in elements (at least `len`; at most about twice
    /// it, see the reuse rule on [`BufferPool`](crate::BufferPool)).
    pub fn capacity(&self) -> usize {
        self.lent.capacity()
    }

    /// Takes the buffer out of the pool as a `Vec` of `len` elements (its capacity may be
    /// larger). The loan ends in the pool's accounting.
    pub fn into_vec(mut self) -> Vec<T> {
        self.detach().into_vec()
    }

    /// Ends the loan, giving its buffer as a row-major tensor of `shape`. When that tensor
    /// (or a clone of it) drops, its buffer comes back to this pool by itself, within the
    /// cap like any returned buffer (counted in
    /// [`PoolStats::returned_on_drop`](crate::PoolStats::returned_on_drop)); if the pool is
    /// gone by then, the buffer is simply freed. `into_vec` on the tensor takes the buffer
    /// away for good. When the shape's element count differs from the loan's length the
    /// error names both and the buffer returns to the pool.
    ///
    /// ```
    /// use strata_pool::BufferPool;
    /// let pool = BufferPool::new(1 << 20);
    /// let loan = pool.acquire_zeroed::<f64>(1024).unwrap();
    /// let t = loan.into_tensor(&[32, 32]).unwrap();
    /// drop(t); // the 8 KiB come back
    /// assert_eq!((pool.stats().buffers, pool.stats().returned_on_drop), (1, 1));
    /// let again = pool.acquire_zeroed::<f64>(1024).unwrap();
    /// assert_eq!(pool.stats().hits, 1);
    /// # drop(again);
    /// ```
    pub fn into_tensor(self, shape: &[usize]) -> Result<TypedTensor<T>> {
        const OP: &str = "BufferLoan::into_tensor";
        let len = checked_len(OP, shape)?;
        if len != self.len() {
            return Err(Error::shape_mismatch(
                OP,
                format!("shape {shape:?} needs {len} elements, the loan holds {}", self.len()),
            ));
        }
        let pool = self.pool.as_ref().map(|p| p.drop_return());
        let tensor = TypedTensor::from_vec(self.into_vec(), shape).map_err(|e| e.in_op(OP))?;
        Ok(match pool {
            Some(way_back) => tensor.with_recycler(way_back),
            None => tensor,
        })
    }

    /// Ends the loan in the accounting and hands over its vector.
    fn detach(&mut self) -> LentVec<T> {
        let lent = mem::replace(&mut self.lent, LentVec::empty());
        if let Some(pool) = self.pool.take() {
            pool.forget_loan();
        }
        lent
    }
}

impl<T: Scalar> Deref for BufferLoan<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.lent.as_slice()
    }
}

impl<T: Scalar> DerefMut for BufferLoan<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.lent.as_mut_slice()
    }
}

impl<T: Scalar> Drop for BufferLoan<T> {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            let lent = mem::replace(&mut self.lent, LentVec::empty());
            pool.retain(lent.into_erased(), Returned::Loan);
        }
    }
}

impl<T: Scalar> fmt::Debug for BufferLoan<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufferLoan")
            .field("dtype", &T::DTYPE)
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish()
    }
}

/// A lent buffer whose contents are unspecified until written: the write-before-read
/// guard of [`BufferPool::acquire_for_overwrite`](crate::BufferPool::acquire_for_overwrite).
///
/// It cannot be read, dereferenced or turned into a vector or tensor; the only way to its
/// elements is [`write_with`](Self::write_with), whose closure must overwrite every
/// element. Dropping it unwritten returns the buffer to the pool.
///
/// **Safety argument.** The guard protects meaning, not memory safety: the contents are
/// always valid values of `T` (stale values of the same dtype from an earlier loan, or
/// zeros from fresh memory: every strata scalar is valid as all-zero bits), so a closure
/// that forgets an element yields a wrong number, never undefined behaviour. Reuse
/// therefore needs no memset and fresh memory costs only its lazy page faults.
///
/// ```compile_fail
/// use strata_pool::BufferPool;
/// let pool = BufferPool::new(1 << 20);
/// let loan = pool.acquire_for_overwrite::<f64>(4).unwrap();
/// let stale = loan[0]; // no Deref: unwritten contents cannot be read
/// ```
///
/// ```compile_fail
/// use strata_pool::BufferPool;
/// let pool = BufferPool::new(1 << 20);
/// let loan = pool.acquire_for_overwrite::<f64>(4).unwrap();
/// let t = loan.into_tensor(&[4]); // must go through write_with first
/// ```
///
/// ```
/// use strata_pool::BufferPool;
/// let pool = BufferPool::new(1 << 20);
/// let loan = pool.acquire_for_overwrite::<f64>(4).unwrap();
/// let (loan, ()) = loan.write_with(|out| {
///     for (i, x) in out.iter_mut().enumerate() {
///         *x = i as f64;
///     }
/// });
/// assert_eq!(&loan[..], &[0.0, 1.0, 2.0, 3.0]);
/// ```
pub struct OverwriteLoan<T: Scalar> {
    loan: BufferLoan<T>,
}

impl<T: Scalar> OverwriteLoan<T> {
    pub(crate) fn new(loan: BufferLoan<T>) -> Self {
        OverwriteLoan { loan }
    }

    /// Number of elements the closure of [`write_with`](Self::write_with) must write.
    pub fn len(&self) -> usize {
        self.loan.len()
    }

    /// True for a zero-length loan.
    pub fn is_empty(&self) -> bool {
        self.loan.is_empty()
    }

    /// Capacity of the underlying buffer in elements.
    pub fn capacity(&self) -> usize {
        self.loan.capacity()
    }

    /// Runs `write` on the elements, which it must overwrite every one of (their prior
    /// values are unspecified), and gives back the now readable loan with `write`'s result.
    /// If `write` panics the buffer returns to the pool during unwinding.
    pub fn write_with<R>(mut self, write: impl FnOnce(&mut [T]) -> R) -> (BufferLoan<T>, R) {
        let result = write(&mut self.loan);
        (self.loan, result)
    }
}

impl<T: Scalar> fmt::Debug for OverwriteLoan<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OverwriteLoan")
            .field("dtype", &T::DTYPE)
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish()
    }
}
