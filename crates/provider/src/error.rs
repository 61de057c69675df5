//! Typed errors of one GEMM request and of provider bundles.

use std::borrow::Cow;
use std::fmt;

use strata_tensor::{DType, Error};

/// One of the three matrices of a GEMM, for error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// The left factor `A` (`m × k` per batch).
    A,
    /// The right factor `B` (`k × n` per batch).
    B,
    /// The output `C` (`m × n` per batch).
    C,
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operand::A => "A",
            Operand::B => "B",
            Operand::C => "C",
        })
    }
}

/// Why one GEMM request was refused or failed. Every refusal happens before any element
/// of `C` is written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GemmError {
    /// An operand's strides reach elements outside its buffer (or below index 0).
    #[error(
        "gemm: operand {operand} with extents {extents:?} (batch, rows, cols), strides {strides:?} and offset {offset} addresses elements {lowest}..={highest}, but its buffer holds {len} elements"
    )]
    OutOfBounds {
        /// Which matrix.
        operand: Operand,
        /// Extents (batch, rows, cols).
        extents: [usize; 3],
        /// Strides (batch, row, col) in elements.
        strides: [isize; 3],
        /// Offset of element (0, 0, 0).
        offset: usize,
        /// Lowest element index addressed.
        lowest: i128,
        /// Highest element index addressed.
        highest: i128,
        /// Length of the buffer.
        len: usize,
    },
    /// The index arithmetic of an operand does not fit in 128 bits.
    #[error("gemm: operand {operand} with extents {extents:?} and strides {strides:?} overflows index arithmetic")]
    IndexOverflow {
        /// Which matrix.
        operand: Operand,
        /// Extents (batch, rows, cols).
        extents: [usize; 3],
        /// Strides (batch, row, col) in elements.
        strides: [isize; 3],
    },
    /// Two elements of `C` share one memory location, so the result would depend on the
    /// order of writes.
    #[error(
        "gemm: output C with extents {extents:?} (batch, rows, cols) and strides {strides:?} lets two elements share one memory location"
    )]
    OutputAliasing {
        /// Extents (batch, rows, cols).
        extents: [usize; 3],
        /// Strides (batch, row, col) in elements.
        strides: [isize; 3],
    },
    /// A thread count of zero was passed.
    #[error("gemm: the thread count must be at least 1, got 0")]
    ZeroThreads,
    /// The provider cannot run this request (dtype, strides, conjugation, sizes): the
    /// caller should fall back to another provider. Nothing was written.
    #[error("gemm: provider {provider} does not support this request: {reason}")]
    Unsupported {
        /// Diagnostic name of the provider.
        provider: Cow<'static, str>,
        /// What it cannot do.
        reason: String,
    },
    /// The fork-join handed to the provider did not run every part of the product
    /// exactly once; `C` may be partly written.
    #[error("gemm: {0}")]
    Schedule(#[from] crate::parallelism::ScheduleError),
    /// The provider failed while computing; `C` may be partly written.
    #[error("gemm: provider {provider} failed: {message}")]
    ProviderFailure {
        /// Diagnostic name of the provider.
        provider: Cow<'static, str>,
        /// What went wrong.
        message: String,
    },
}

impl GemmError {
    /// A refusal by `provider`: the caller should fall back.
    pub fn unsupported(provider: impl Into<Cow<'static, str>>, reason: impl Into<String>) -> Self {
        GemmError::Unsupported { provider: provider.into(), reason: reason.into() }
    }

    /// True when the request was merely refused (fall back to another provider).
    pub fn is_unsupported(&self) -> bool {
        matches!(self, GemmError::Unsupported { .. })
    }
}

impl From<GemmError> for Error {
    fn from(e: GemmError) -> Self {
        let msg = e.to_string();
        // The Display text starts with "gemm: "; strata's Error prefixes the op itself.
        let msg = msg.strip_prefix("gemm: ").unwrap_or(&msg).to_owned();
        let base = match &e {
            GemmError::OutOfBounds { .. }
            | GemmError::IndexOverflow { .. }
            | GemmError::OutputAliasing { .. }
            | GemmError::ZeroThreads => Error::invalid_argument("gemm", msg),
            GemmError::Unsupported { .. } => Error::unsupported("gemm", msg),
            GemmError::ProviderFailure { .. } => Error::backend_failure("gemm", msg),
            GemmError::Schedule(_) => Error::runtime_state("gemm", msg),
        };
        base.with_source(e)
    }
}

/// Why a provider bundle could not be built, or cannot serve a domain.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BundleError {
    /// No provider was given for a dtype and the kind has no default for it.
    #[error("provider bundle: no GEMM provider for {dtype:?} (the {kind:?} kind has no default for it)")]
    MissingProvider {
        /// The uncovered dtype.
        dtype: DType,
        /// The kind of bundle being built.
        kind: crate::ProviderKind,
    },
    /// A provider was assigned a dtype its capabilities do not declare, or a dtype that
    /// GEMM does not compute with (integers, bool).
    #[error("provider bundle: provider {provider} does not declare support for {dtype:?}")]
    DTypeNotDeclared {
        /// Diagnostic name of the provider.
        provider: String,
        /// The dtype.
        dtype: DType,
    },
    /// The kind needs a cargo feature that this build does not have.
    #[error("provider bundle: the {kind:?} kind needs the cargo feature `{feature}`, which this build lacks")]
    FeatureNotCompiled {
        /// The requested kind.
        kind: crate::ProviderKind,
        /// The missing cargo feature.
        feature: &'static str,
    },
    /// The domain contract itself is malformed.
    #[error("provider bundle: domain {domain}: {reason}")]
    InvalidContract {
        /// Label of the domain.
        domain: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A provider cannot honour the domain's contract.
    #[error("provider bundle: provider {provider} ({dtype:?}) cannot serve domain {domain}: {reason}")]
    CannotHonourDomain {
        /// Label of the domain.
        domain: String,
        /// Diagnostic name of the provider.
        provider: String,
        /// The dtype slot it serves.
        dtype: DType,
        /// Why, and what would make it acceptable.
        reason: String,
    },
    /// A provider could not be initialised (a missing library, a failed probe).
    #[error("provider bundle: provider {provider} failed to initialise: {message}")]
    ProviderInit {
        /// Diagnostic name of the provider.
        provider: String,
        /// What went wrong.
        message: String,
    },
}

impl From<BundleError> for Error {
    fn from(e: BundleError) -> Self {
        let msg = e.to_string();
        let msg = msg.strip_prefix("provider bundle: ").unwrap_or(&msg).to_owned();
        let base = match &e {
            BundleError::MissingProvider { .. }
            | BundleError::DTypeNotDeclared { .. }
            | BundleError::InvalidContract { .. } => Error::invalid_argument("provider bundle", msg),
            BundleError::FeatureNotCompiled { .. } | BundleError::CannotHonourDomain { .. } => {
                Error::unsupported("provider bundle", msg)
            }
            BundleError::ProviderInit { .. } => Error::backend_failure("provider bundle", msg),
        };
        base.with_source(e)
    }
}
