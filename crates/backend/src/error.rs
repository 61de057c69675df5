//! The facade's typed error and its conversion into the tensor error model.

use strata_engine::EngineError;
use strata_provider::BundleError;

/// Why a backend could not be built, placed or entered.
///
/// Every variant keeps the typed error of the layer that failed as its `source`. Op
/// errors stay [`strata_tensor::Error`] (the op traits return it); a `CpuBackendError`
/// converts into one with `?` or `From`, keeping the kind and the source.
///
/// ```
/// use strata_backend::{CpuBackend, CpuBackendError};
/// let err = CpuBackend::with_threads(0).unwrap_err();
/// assert!(matches!(err, CpuBackendError::Placement { .. }));
/// let as_tensor: strata_tensor::Error = err.into();
/// assert_eq!(as_tensor.kind(), strata_tensor::ErrorKind::InvalidArgument);
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CpuBackendError {
    /// An op or a tensor-level check failed.
    #[error("{source}")]
    Tensor {
        /// The tensor error.
        #[from]
        source: strata_tensor::Error,
    },
    /// A placement could not be resolved, a thread budget is invalid, a domain could not
    /// be built or entered (including re-entry from inside an execution), or a provider
    /// bundle cannot serve a domain.
    #[error("{source}")]
    Placement {
        /// The engine's error.
        #[source]
        source: EngineError,
    },
    /// A registry of external domains failed validation.
    #[error("invalid external domain registry: {source}")]
    ExternalRegistry {
        /// The engine's validation error.
        #[source]
        source: EngineError,
    },
    /// A provider bundle could not be built.
    #[error("{source}")]
    Provider {
        /// The provider layer's error.
        #[source]
        source: BundleError,
    },
}

impl From<EngineError> for CpuBackendError {
    fn from(source: EngineError) -> Self {
        CpuBackendError::Placement { source }
    }
}

impl From<BundleError> for CpuBackendError {
    fn from(source: BundleError) -> Self {
        CpuBackendError::Provider { source }
    }
}

impl From<CpuBackendError> for strata_tensor::Error {
    fn from(e: CpuBackendError) -> Self {
        match e {
            CpuBackendError::Tensor { source } => source,
            CpuBackendError::Placement { source } => source.into(),
            CpuBackendError::ExternalRegistry { source } => {
                let inner: strata_tensor::Error = source.into();
                strata_tensor::Error::new(inner.kind(), "external_domain_registry", inner.message().to_string())
                    .with_source(inner)
            }
            CpuBackendError::Provider { source } => {
                strata_tensor::Error::invalid_argument("provider_bundle", source.to_string()).with_source(source)
            }
        }
    }
}
