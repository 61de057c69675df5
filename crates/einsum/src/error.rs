//! Why an einsum expression was refused: one typed variant per rule of numpy's notation,
//! each naming the subscript, operand and extents involved.
//!
//! Every public function of this crate returns [`strata_tensor::Error`] (the op traits'
//! error, so `?` works across layers); its [`source`](std::error::Error::source) is the
//! [`EinsumError`], for callers that branch on the exact rule.

use strata_tensor::{DType, Error, ErrorKind};

/// The operation name einsum errors carry.
pub(crate) const OP: &str = "einsum";

/// A rule of the einsum notation or of a prepared expression that the input broke.
///
/// ```
/// use strata_einsum::{EinsumError, EinsumSpec};
/// use strata_tensor::ErrorKind;
/// let err = EinsumSpec::parse("ij,jk->ikk").unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InvalidArgument);
/// assert_eq!(err.to_string(), "einsum: output subscript 'k' appears more than once");
/// let typed = std::error::Error::source(&err).unwrap().downcast_ref::<EinsumError>().unwrap();
/// assert_eq!(typed, &EinsumError::OutputLabelRepeated { label: 'k' });
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EinsumError {
    /// A character that is neither a letter nor part of `,`, `->`, `...` or a space.
    #[error(
        "character {character:?} at position {position} is not a subscript: subscripts are the letters A-Z and a-z"
    )]
    InvalidCharacter {
        /// Byte position in the spec.
        position: usize,
        /// The character.
        character: char,
    },
    /// A `.` that does not start or belong to a `...`.
    #[error("the '.' at position {position} is not part of an ellipsis '...'")]
    StrayDot {
        /// Byte position in the spec.
        position: usize,
    },
    /// A term with two ellipses.
    #[error("{term} has more than one ellipsis '...'")]
    SecondEllipsis {
        /// `operand N` or `the output`.
        term: String,
    },
    /// A `-` not followed by `>`, or a `>` not preceded by `-`.
    #[error("the {character:?} at position {position} is not part of an arrow '->'")]
    BrokenArrow {
        /// Byte position in the spec.
        position: usize,
        /// `-` or `>`.
        character: char,
    },
    /// A second `->`.
    #[error("the spec has a second '->' at position {position}")]
    SecondArrow {
        /// Byte position in the spec.
        position: usize,
    },
    /// A `,` after the `->`.
    #[error("the output has a ',' at position {position}: the output is one term")]
    CommaInOutput {
        /// Byte position in the spec.
        position: usize,
    },
    /// An output subscript listed twice.
    #[error("output subscript '{label}' appears more than once")]
    OutputLabelRepeated {
        /// The subscript.
        label: char,
    },
    /// An output subscript no operand has.
    #[error("output subscript '{label}' appears in no operand")]
    OutputLabelUnknown {
        /// The subscript.
        label: char,
    },
    /// The number of operands given differs from the spec's number of terms.
    #[error("the spec has {terms} operand term(s), {operands} operand(s) were given")]
    OperandCount {
        /// Terms before the `->`.
        terms: usize,
        /// Operands (or shapes) given.
        operands: usize,
    },
    /// An operand's rank does not fit its subscripts.
    #[error("operand {operand} has rank {rank}, its subscripts '{subscripts}' {expected}")]
    RankMismatch {
        /// Operand position.
        operand: usize,
        /// The operand's subscripts as written.
        subscripts: String,
        /// The operand's rank.
        rank: usize,
        /// What the subscripts need, in words (`name 2 axes`, `name at least 2 axes`).
        expected: String,
    },
    /// A subscript repeated within one operand (a diagonal) over axes of different extents.
    #[error(
        "subscript '{label}' is repeated in operand {operand} over axes of extents {first} and {second}; a diagonal needs equal extents"
    )]
    DiagonalExtents {
        /// Operand position.
        operand: usize,
        /// The subscript.
        label: char,
        /// Extent of its first axis.
        first: usize,
        /// Extent of the disagreeing axis.
        second: usize,
    },
    /// A subscript whose extents in two operands are different and neither is 1.
    #[error(
        "subscript '{label}' has extent {first_extent} in operand {first_operand} and extent {second_extent} in operand {second_operand}; extents must be equal or 1"
    )]
    ExtentMismatch {
        /// The subscript (a letter, or `...[k]` for axis `k` of the broadcast ellipsis).
        label: String,
        /// The operand that set the extent.
        first_operand: usize,
        /// Its extent.
        first_extent: usize,
        /// The operand that disagrees.
        second_operand: usize,
        /// Its extent.
        second_extent: usize,
    },
    /// The ellipsis covers axes but the explicit output has no `...` to keep them.
    #[error("the ellipsis covers {axes} axis/axes but the output has no '...' to keep them (numpy refuses this too)")]
    OutputEllipsisMissing {
        /// Broadcast ellipsis rank.
        axes: usize,
    },
    /// More ellipsis axes than labels are available.
    #[error("the ellipsis covers {axes} axes; at most {max} are supported")]
    TooManyAxes {
        /// Broadcast ellipsis rank.
        axes: usize,
        /// The maximum.
        max: usize,
    },
    /// Operands of different dtypes.
    #[error("operand {operand} has dtype {dtype}, operand 0 has dtype {expected}; operands share one dtype")]
    DTypeMismatch {
        /// Operand position.
        operand: usize,
        /// Its dtype.
        dtype: DType,
        /// Operand 0's dtype.
        expected: DType,
    },
    /// A dtype einsum has no arithmetic for.
    #[error("dtype {dtype} has no einsum (cast to an integer or float dtype first)")]
    UnsupportedDType {
        /// The dtype.
        dtype: DType,
    },
    /// An operand's shape differs from the one the expression was prepared for.
    #[error("operand {operand} has shape {given:?}, the prepared expression was built for {prepared:?}")]
    ShapeChanged {
        /// Operand position.
        operand: usize,
        /// The prepared shape.
        prepared: Vec<usize>,
        /// The given shape.
        given: Vec<usize>,
    },
    /// No contraction order keeps every intermediate within the memory limit.
    #[error(
        "no contraction order found keeps every intermediate within memory_limit = {limit} elements; it needs an intermediate of {needed} elements"
    )]
    MemoryLimit {
        /// The limit asked for.
        limit: u128,
        /// The exact search: the smallest largest intermediate of any order. The greedy
        /// search: the smallest intermediate it would have had to form next.
        needed: u128,
    },
    /// The exhaustive search was asked for more operands than it can handle.
    #[error(
        "the optimal path search handles at most {max} operands, the expression has {operands}; use PathStrategy::Greedy"
    )]
    TooManyOperands {
        /// Operands of the expression (after single-operand reductions).
        operands: usize,
        /// The maximum.
        max: usize,
    },
    /// A path given by the caller does not describe a contraction of the operands.
    #[error("the given path is invalid: {reason}")]
    InvalidPath {
        /// What is wrong with it.
        reason: String,
    },
}

impl EinsumError {
    /// The coarse kind of [`strata_tensor::Error`] this rule maps to.
    pub fn kind(&self) -> ErrorKind {
        match self {
            EinsumError::RankMismatch { .. }
            | EinsumError::DiagonalExtents { .. }
            | EinsumError::ExtentMismatch { .. }
            | EinsumError::ShapeChanged { .. } => ErrorKind::ShapeMismatch,
            EinsumError::DTypeMismatch { .. } => ErrorKind::DTypeMismatch,
            EinsumError::UnsupportedDType { .. } => ErrorKind::Unsupported,
            _ => ErrorKind::InvalidArgument,
        }
    }
}

impl From<EinsumError> for Error {
    fn from(e: EinsumError) -> Self {
        Error::new(e.kind(), OP, e.to_string()).with_source(e)
    }
}

/// `Err` of the tensor error carrying `e`.
pub(crate) fn fail<T>(e: EinsumError) -> strata_tensor::Result<T> {
    Err(e.into())
}
