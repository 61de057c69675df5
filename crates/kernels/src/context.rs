//! What a kernel is given besides its operands: the parallelism it may use and the
//! domain's buffer pool for its outputs.

use strata_pool::BufferPool;

use crate::par::Parallelism;

/// The resources one kernel call may use. Built by the engine/backend per call.
///
/// ```
/// use strata_kernels::KernelContext;
/// use strata_pool::BufferPool;
/// let pool = BufferPool::new(1 << 20);
/// let ctx = KernelContext::sequential().with_pool(&pool);
/// assert_eq!(ctx.par().budget(), 1);
/// assert!(ctx.pool().is_some());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct KernelContext<'a> {
    par: Parallelism<'a>,
    pool: Option<&'a BufferPool>,
}

impl<'a> KernelContext<'a> {
    /// A context that runs everything on the calling thread and allocates outputs fresh.
    pub fn sequential() -> KernelContext<'static> {
        KernelContext { par: Parallelism::sequential(), pool: None }
    }

    /// A context with the given parallelism (outputs allocated fresh until a pool is given).
    pub fn new(par: Parallelism<'a>) -> Self {
        KernelContext { par, pool: None }
    }

    /// The same context, taking output buffers from `pool`.
    pub fn with_pool<'b>(self, pool: &'b BufferPool) -> KernelContext<'b>
    where
        'a: 'b,
    {
        KernelContext { par: self.par, pool: Some(pool) }
    }

    /// The parallelism the kernel may use.
    pub fn par(&self) -> Parallelism<'a> {
        self.par
    }

    /// The pool outputs come from, if any.
    pub fn pool(&self) -> Option<&'a BufferPool> {
        self.pool
    }
}
