//! What a kernel is given besides its operands: the parallelism it may use and (once
//! wired) the domain's buffer pool for its outputs.

use crate::par::Parallelism;

/// The resources one kernel call may use. Built by the engine/backend per call.
///
/// ```
/// use strata_kernels::KernelContext;
/// let ctx = KernelContext::sequential();
/// assert_eq!(ctx.par().budget(), 1);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct KernelContext<'a> {
    par: Parallelism<'a>,
}

impl<'a> KernelContext<'a> {
    /// A context that runs everything on the calling thread.
    pub fn sequential() -> KernelContext<'static> {
        KernelContext { par: Parallelism::sequential() }
    }

    /// A context with the given parallelism.
    pub fn new(par: Parallelism<'a>) -> Self {
        KernelContext { par }
    }

    /// The parallelism the kernel may use.
    pub fn par(&self) -> Parallelism<'a> {
        self.par
    }
}
