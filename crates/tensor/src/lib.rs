//! # strata-tensor: the plain data at the bottom of strata
//!
//! This layer holds what every other layer talks about: the seven [`DType`]s and the
//! [`Scalar`] trait, owned row-major tensors ([`TypedTensor`], [`Tensor`]), borrowed
//! strided views ([`TypedView`], [`TypedViewMut`], [`TensorView`], [`TensorViewMut`]),
//! the op inputs and outputs [`TensorRead`] and [`TensorWrite`], op configs with their
//! validation, the [`Error`] model, cache statistics and the object-safe backend op traits.
//!
//! **Promises.** A tensor's buffer always holds exactly the product of its shape in
//! elements (one for rank 0). A view addresses only elements inside its buffer, checked
//! once at construction without overflow; a mutable view never lets two indices reach
//! one element. Every config is validated by one `validate` method that names the op and
//! the offending value.
//!
//! **Does not.** Compute anything beyond metadata: kernels live in `strata-kernels`.
//! It has no threads, no allocation policy and no dependency besides num-complex and
//! thiserror.
//!
//! ```
//! use strata_tensor::{Tensor, TensorRead, TypedTensor};
//! let a = TypedTensor::from_fn(&[2, 3], |i| (i[0] * 3 + i[1]) as f32).unwrap();
//! let t: Tensor = a.into();
//! // A transposed view: no copy, just another layout.
//! let at = t.view().permute(&[1, 0]).unwrap();
//! assert_eq!(at.shape(), &[3, 2]);
//! let input: TensorRead<'_> = at.into();
//! assert_eq!(input.len(), 6);
//! ```
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod access;
mod cache_stats;
pub mod config;
mod display;
mod dtype;
mod error;
mod extents;
pub mod interop;
mod layout;
mod scalar;
pub mod shape;
mod tensor;
mod traits;
mod value;
mod view;

pub use access::{TensorRead, TensorWrite};
pub use cache_stats::CacheStats;
pub use dtype::DType;
pub use error::{BoxedSource, Error, ErrorKind, Result};
pub use layout::Layout;
pub use num_complex::Complex;
pub use scalar::{Scalar, c32, c64};
pub use tensor::{Tensor, TypedTensor};
pub use traits::*;
pub use value::ScalarValue;
pub use view::{TensorView, TensorViewMut, TypedView, TypedViewMut};

#[cfg(feature = "npy")]
pub use interop::npy;
