//! The closed set of element types strata computes with.

use std::fmt;

/// An element type. The set is closed: every op dispatches over exactly these seven.
///
/// ```
/// use strata_tensor::DType;
/// assert_eq!(DType::C64.size_bytes(), 16);
/// assert_eq!(DType::C64.real_counterpart(), DType::F64);
/// assert!(DType::I32.is_integer() && !DType::I32.is_float());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// 32-bit IEEE float.
    F32,
    /// 64-bit IEEE float.
    F64,
    /// 32-bit two's complement integer.
    I32,
    /// 64-bit two's complement integer.
    I64,
    /// Boolean (one byte).
    Bool,
    /// Complex number of two `f32`.
    C32,
    /// Complex number of two `f64`.
    C64,
}

impl DType {
    /// Every dtype, in declaration order.
    pub const ALL: [DType; 7] = [DType::F32, DType::F64, DType::I32, DType::I64, DType::Bool, DType::C32, DType::C64];

    /// Size of one element in bytes.
    pub const fn size_bytes(self) -> usize {
        match self {
            DType::F32 | DType::I32 => 4,
            DType::F64 | DType::I64 | DType::C32 => 8,
            DType::Bool => 1,
            DType::C64 => 16,
        }
    }

    /// True for `C32` and `C64`.
    pub const fn is_complex(self) -> bool {
        matches!(self, DType::C32 | DType::C64)
    }

    /// True for the real floating types `F32` and `F64`.
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    /// True for floats and complex: the types analytic functions are defined on.
    pub const fn is_inexact(self) -> bool {
        self.is_float() || self.is_complex()
    }

    /// True for `I32` and `I64`.
    pub const fn is_integer(self) -> bool {
        matches!(self, DType::I32 | DType::I64)
    }

    /// True for `Bool`.
    pub const fn is_bool(self) -> bool {
        matches!(self, DType::Bool)
    }

    /// The real type of a complex dtype (`C32 → F32`, `C64 → F64`); other dtypes map to themselves.
    pub const fn real_counterpart(self) -> DType {
        match self {
            DType::C32 => DType::F32,
            DType::C64 => DType::F64,
            other => other,
        }
    }

    /// The complex type of a real float dtype (`F32 → C32`, `F64 → C64`); other dtypes map
    /// to themselves.
    pub const fn complex_counterpart(self) -> DType {
        match self {
            DType::F32 => DType::C32,
            DType::F64 => DType::C64,
            other => other,
        }
    }

    /// Lower-case name as jax/numpy spell it (`float32`, `complex64`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::Bool => "bool",
            DType::C32 => "complex64",
            DType::C64 => "complex128",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
