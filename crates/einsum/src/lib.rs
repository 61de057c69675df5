//! # strata-einsum: einsum expressions over strata's op traits
//!
//! This layer turns numpy's einsum notation into a short program of strata ops: it
//! parses the spec ([`EinsumSpec`]), binds it to operand shapes, sums what single
//! operands sum alone, searches a contraction order ([`PathStrategy`]: exact dynamic
//! programming over subsets for up to 12 operands, greedy beyond), picks each step's
//! operand order and result layout so the next step reads it without a copy, and keeps
//! all of that in a [`PreparedEinsum`] that runs again on operands of the same shapes
//! without planning anything. [`ContractionPath`] shows what was chosen, like
//! `np.einsum_path`.
//!
//! **Promises.** numpy's semantics (`np.einsum` without `optimize`): explicit and implicit
//! output, `...` broadcasting, diagonals and traces, size-1 broadcasting between operands
//! and only there. Paths as cheap in flops as opt_einsum's `optimal` (same cost model;
//! summing single-operand labels first can only make ours cheaper). Bad specs, shapes and
//! dtypes are typed [`strata_tensor::Error`]s (op `einsum`, an [`EinsumError`] source)
//! before any op runs. Every step is one op of [`EinsumOps`]: a `dot_general`
//! for each pair that sums a shared label, an elementwise multiply for pairs that sum
//! nothing, a reduction for single-operand sums, at most one final transpose; so the
//! backend's placement, thread budget and plan caches apply to every step, and
//! intermediates go back to its pool when no longer needed.
//!
//! **Does not.** Cache prepared expressions itself (the backend does:
//! `CpuBackend::einsum` keeps an LRU of them), promote dtypes (operands share one, as
//! everywhere in strata), or compute on Bool.
//!
//! ```
//! use strata_backend::prelude::*;
//! use strata_einsum::{EinsumOptions, PreparedEinsum};
//! let backend = CpuBackend::with_threads(1)?;
//! // An MPS left environment: E' = A* E A with bond 4 and physical dimension 2.
//! let a = TypedTensor::from_fn(&[4, 2, 4], |i| (i[0] + 2 * i[1] + 3 * i[2]) as f64)?;
//! let e = TypedTensor::from_fn(&[4, 4], |i| if i[0] == i[1] { 1.0 } else { 0.0 })?;
//! let env = PreparedEinsum::new("ab,asc,bsd->cd", &[&[4, 4], &[4, 2, 4], &[4, 2, 4]])?;
//! println!("{}", env.path());
//! let next = env.execute(&backend, &[(&e).into(), (&a).into(), (&a).into()])?;
//! assert_eq!(next.shape(), &[4, 4]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod error;
mod execute;
mod label;
mod layout;
mod path;
mod plan;
mod prepared;
mod report;
mod spec;

pub use error::EinsumError;
pub use execute::EinsumOps;
pub use path::{AUTO_OPTIMAL_MAX_OPERANDS, EinsumOptions, OPTIMAL_MAX_OPERANDS, PathStrategy};
pub use prepared::{PreparedEinsum, einsum, einsum_path};
pub use report::{ContractionPath, PathStep, StepKind};
pub use spec::EinsumSpec;
