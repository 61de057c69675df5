//! The one error type every strata layer above this one converts into.

use std::borrow::Cow;
use std::fmt;

/// What went wrong, coarsely: lets callers branch without parsing messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An argument is malformed on its own (an axis out of range, a zero stride, ...).
    InvalidArgument,
    /// Shapes that must agree do not.
    ShapeMismatch,
    /// Dtypes that must agree do not, or a tensor holds another dtype than asked for.
    DTypeMismatch,
    /// The operation is not defined for this input (ordering on complex, ...) or platform.
    Unsupported,
    /// The backend is in a state that forbids the call (re-entry, shutdown, ...).
    RuntimeState,
    /// A provider or the operating system failed.
    BackendFailure,
    /// A broken internal invariant: a bug in strata.
    Internal,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ErrorKind::InvalidArgument => "invalid argument",
            ErrorKind::ShapeMismatch => "shape mismatch",
            ErrorKind::DTypeMismatch => "dtype mismatch",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::RuntimeState => "runtime state",
            ErrorKind::BackendFailure => "backend failure",
            ErrorKind::Internal => "internal error",
        })
    }
}

/// Source errors carried by [`Error`].
pub type BoxedSource = Box<dyn std::error::Error + Send + Sync + 'static>;

/// An error from a strata operation: its kind, the operation's name, a message a person
/// can act on, and the typed source error where there is one.
///
/// ```
/// use strata_tensor::{Error, ErrorKind};
/// let e = Error::shape_mismatch("add", "lhs has shape [2, 3], rhs has shape [3, 2]");
/// assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
/// assert_eq!(e.op(), "add");
/// assert_eq!(e.to_string(), "add: lhs has shape [2, 3], rhs has shape [3, 2]");
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{op}: {message}")]
pub struct Error {
    kind: ErrorKind,
    op: Cow<'static, str>,
    message: String,
    #[source]
    source: Option<BoxedSource>,
    clobbered: bool,
}

/// `Result` with strata's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A new error of `kind` raised by operation `op`.
    pub fn new(kind: ErrorKind, op: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Error { kind, op: op.into(), message: message.into(), source: None, clobbered: false }
    }

    /// Attaches the typed error that caused this one.
    pub fn with_source(mut self, source: impl Into<BoxedSource>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// An [`ErrorKind::InvalidArgument`] error.
    pub fn invalid_argument(op: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, op, message)
    }

    /// An [`ErrorKind::ShapeMismatch`] error.
    pub fn shape_mismatch(op: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::ShapeMismatch, op, message)
    }

    /// An [`ErrorKind::DTypeMismatch`] error.
    pub fn dtype_mismatch(op: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::DTypeMismatch, op, message)
    }

    /// An [`ErrorKind::Unsupported`] error.
    pub fn unsupported(op: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, op, message)
    }

    /// An [`ErrorKind::RuntimeState`] error.
    pub fn runtime_state(op: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::RuntimeState, op, message)
    }

    /// An [`ErrorKind::BackendFailure`] error.
    pub fn backend_failure(op: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::BackendFailure, op, message)
    }

    /// An [`ErrorKind::Internal`] error.
    pub fn internal(op: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, op, message)
    }

    /// The coarse kind of the failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The name of the operation that failed.
    pub fn op(&self) -> &str {
        &self.op
    }

    /// The human-readable message (without the op name).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Marks a failure that happened after the op began writing: an `_into` destination
    /// it was given may be partly written and holds unspecified values (valid values of
    /// its dtype, but neither the old contents nor the result). The message says so.
    ///
    /// ```
    /// use strata_tensor::Error;
    /// let e = Error::backend_failure("dot_general_into", "the provider failed").with_clobbered_destination();
    /// assert!(e.destination_clobbered());
    /// assert!(e.message().contains("unspecified"));
    /// assert!(!Error::backend_failure("add", "x").destination_clobbered());
    /// ```
    pub fn with_clobbered_destination(mut self) -> Self {
        if !self.clobbered {
            self.clobbered = true;
            self.message.push_str("; the destination may be partly written: its contents are unspecified");
        }
        self
    }

    /// Whether the failure came after the op began writing, so that an `_into`
    /// destination holds unspecified values ([`Error::with_clobbered_destination`]).
    /// Errors without it left every destination untouched; validation errors never
    /// carry it (inputs are checked before anything is written).
    pub fn destination_clobbered(&self) -> bool {
        self.clobbered
    }

    /// Renames the operation, keeping everything else: used when a helper that validated
    /// on behalf of a public op reports under that op's name.
    pub fn in_op(mut self, op: impl Into<Cow<'static, str>>) -> Self {
        self.op = op.into();
        self
    }
}

/// The message of a caught panic (`panic!` with a literal or a formatted string), or a
/// placeholder for other payloads: used where a panic in a user hook becomes an [`Error`].
///
/// ```
/// let payload = std::panic::catch_unwind(|| panic!("bad hook {}", 7)).unwrap_err();
/// assert_eq!(strata_tensor::panic_message(payload.as_ref()), "bad hook 7");
/// ```
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(a panic without a message)"
    }
}
