//! strata as the suite measures it: the `CpuBackend` facade users hold, plus the small
//! conveniences the cases share (the default budget, GEMM on plain slices).

use strata_backend::prelude::*;

/// A strata CPU backend with a fixed thread budget.
pub struct Strata {
    backend: CpuBackend,
}

impl Strata {
    /// strata's default thread budget on this machine (affinity ∩ quota, `RAYON_NUM_THREADS`).
    pub fn default_threads() -> Result<usize, String> {
        Ok(CpuBackend::new().map_err(|e| format!("CpuBackend::new: {e}"))?.num_threads())
    }

    /// A backend whose operations may use `threads` workers.
    pub fn with_threads(threads: usize) -> Result<Self, String> {
        let backend =
            CpuBackend::with_threads(threads).map_err(|e| format!("CpuBackend::with_threads({threads}): {e}"))?;
        Ok(Strata { backend })
    }

    /// The facade itself.
    pub fn backend(&self) -> &CpuBackend {
        &self.backend
    }

    /// The thread budget operations may use.
    pub fn budget(&self) -> usize {
        self.backend.num_threads()
    }

    /// `c = a · b` for row-major `n × n` tensors through the facade's `dot_general_into`
    /// (the destination is reused, as a caller's preallocated output would be).
    pub fn matmul_into(&self, a: &Tensor, b: &Tensor, c: &mut Tensor) -> Result<(), String> {
        self.backend.dot_general_into(a, b, &DotGeneral::matmul(), c).map_err(|e| e.to_string())
    }
}
