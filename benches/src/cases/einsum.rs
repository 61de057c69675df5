//! The `einsum` group (issue 17): the tensor-network suite written as einsum strings,
//! strata's einsum against `np.einsum(optimize=path)` with the path precomputed,
//! `np.einsum(optimize='optimal')` as users call it, opt_einsum + numpy and
//! `jax.jit(jnp.einsum)`, at one thread and at the run's count.
//!
//! Empty until the `strata-einsum` crate is part of the workspace. To fill it: for each
//! workload of [`crate::tn::workloads`], a [`Case`] named `einsum_<workload>_<t1|tmax>` in
//! group `einsum` whose measurement calls the einsum through the facade on the
//! workload's inputs ([`crate::cases::tn::inputs`]) with [`crate::tn::Workload::einsum`]
//! as the spec, checks it against [`crate::tn::reference`], and records GFLOP/s
//! of the workload's steps; the Python side's `einsum_*` cases in `xtask/py/peers.py`
//! measure the peers on the same strings.

use crate::suite::Case;

/// The einsum cases (none yet) and a note saying why.
pub fn cases(_threads: usize) -> (Vec<Case>, Vec<String>) {
    (Vec::new(), vec!["einsum: group empty until strata-einsum lands (issue 17)".into()])
}
