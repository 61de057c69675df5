//! # strata-mpi: strata as the node-local executor of a distributed computation
//!
//! A layer above the facade for MPI jobs. Each rank gets a share of its node (its own
//! NUMA node, or a disjoint share of the allowed CPUs when ranks outnumber nodes) and a
//! [`strata_backend::CpuBackend`] placed there; dense tensors are split in blocks over a
//! process grid; collectives move strata tensors of every dtype; and a distributed
//! `dot_general` runs SUMMA on a 2-D grid with every local block product going through
//! the rank's backend.
//!
//! **Two halves.** The planning half is pure Rust and always built: rank placement
//! ([`plan_rank_share`], [`RankShare::backend`]), process grids ([`ProcessGrid`]),
//! distributions ([`Distribution`], [`AxisLayout`]), distributed tensors made from a
//! generator ([`DistTensor::from_fn`]) and the SUMMA plan with its communication model
//! ([`SummaPlan`], [`summa_plan::matmul_lower_bound_words`]). The communicating half,
//! [`MpiContext`] (initialisation, placement map, scatter, gather, redistribution,
//! all-reduce, broadcast, all-gather, distributed `dot_general`), needs the `mpi`
//! feature, which links the system MPI through rsmpi (Debian: `libopenmpi-dev
//! openmpi-bin libclang-dev`). Without it the workspace builds and tests with no MPI
//! installed, and the `distributed` test target says that it skipped.
//!
//! **Promises.** Every collective agrees on validity before moving data: each rank
//! checks its own arguments, then all ranks exchange a small signature (dtype, shapes,
//! distribution, root, op) and either all proceed or all return the same typed
//! [`strata_tensor::Error`] naming the op and the ranks that differ: bad input never
//! hangs a job. Results of the distributed `dot_general` equal the single-node result
//! up to the reassociation of the contracted sum across panels (see docs/SEMANTICS.md).
//!
//! **Does not.** Launch processes, choose the MPI transport, or give async progress: a
//! broadcast overlapped with a local product progresses when the rank calls into MPI
//! between the pieces of its product.
//!
//! ```
//! use strata_mpi::{AxisLayout, DistTensor, Distribution, ProcessGrid, SummaOptions, SummaPlan};
//! use strata_tensor::config::DotGeneralConfig;
//! // Plan a 4-rank contraction, then build rank 0's lhs block in the plan's layout.
//! let plan = SummaPlan::new(&[64, 32], &[32, 48], &DotGeneralConfig::matmul(), 4, &SummaOptions::default())?;
//! let a = DistTensor::from_fn(&[64, 32], plan.lhs.clone(), 0, |ix| (ix[0] + ix[1]) as f64)?;
//! assert_eq!(a.local().shape(), &[32, 16]);
//! # Ok::<(), strata_tensor::Error>(())
//! ```
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod dist_tensor;
mod distribution;
mod grid;
mod placement;
pub mod summa_plan;

#[cfg(feature = "mpi")]
mod agree;
#[cfg(feature = "mpi")]
mod collectives;
#[cfg(feature = "mpi")]
mod context;
#[cfg(feature = "mpi")]
mod redistribute;
#[cfg(feature = "mpi")]
mod summa;

pub use dist_tensor::DistTensor;
pub use distribution::{AxisLayout, Distribution};
pub use grid::ProcessGrid;
pub use placement::{PlacementMap, RankPlacement, RankShare, ShareKind, plan_rank_share, restrict_topology};
pub use summa_plan::{SummaOptions, SummaPlan};

#[cfg(feature = "mpi")]
pub use collectives::ReduceKind;
#[cfg(feature = "mpi")]
pub use context::{MpiContext, PlacementOptions};
#[cfg(feature = "mpi")]
pub use summa::SummaReport;
