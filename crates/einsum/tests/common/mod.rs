//! Shared test support: the fixture formula (identical to generate.py's), fixture
//! parsing, layout variants of an operand, and typed-error access.
#![allow(dead_code)]

use strata_einsum::EinsumError;
use strata_tensor::{Error, Scalar, TypedView, c32, c64};

/// generate.py's `value`: operand `k`, row-major element `i`.
pub fn value(k: u64, i: u64) -> f64 {
    ((i * 7919 + k * 104729 + 13) % 1999) as f64 / 1999.0 - 0.5
}

/// generate.py's `int_value`.
pub fn int_value(k: u64, i: u64) -> i64 {
    ((i * 7919 + k * 104729 + 13) % 19) as i64 - 9
}

/// A dtype the fixtures cover: how to fill it, compare it and read expected values.
pub trait FixtureScalar: Scalar {
    /// Machine epsilon of the real type (0 for integers: exact).
    const EPS: f64;
    /// Fixture scalars per element (2 for complex).
    const PARTS: usize;
    fn make(k: u64, i: u64) -> Self;
    fn parse(parts: &[&str]) -> Self;
    fn as_c64(self) -> c64;
}

macro_rules! real {
    ($t:ty, $eps:expr) => {
        impl FixtureScalar for $t {
            const EPS: f64 = $eps;
            const PARTS: usize = 1;
            fn make(k: u64, i: u64) -> Self {
                value(k, i) as $t
            }
            fn parse(parts: &[&str]) -> Self {
                parts[0].parse::<f64>().unwrap() as $t
            }
            fn as_c64(self) -> c64 {
                c64::new(self as f64, 0.0)
            }
        }
    };
}
real!(f32, f32::EPSILON as f64);
real!(f64, f64::EPSILON);

macro_rules! integer {
    ($t:ty) => {
        impl FixtureScalar for $t {
            const EPS: f64 = 0.0;
            const PARTS: usize = 1;
            fn make(k: u64, i: u64) -> Self {
                int_value(k, i) as $t
            }
            fn parse(parts: &[&str]) -> Self {
                parts[0].parse::<$t>().unwrap()
            }
            fn as_c64(self) -> c64 {
                c64::new(self as f64, 0.0)
            }
        }
    };
}
integer!(i32);
integer!(i64);

macro_rules! complex {
    ($t:ty, $r:ty, $eps:expr) => {
        impl FixtureScalar for $t {
            const EPS: f64 = $eps;
            const PARTS: usize = 2;
            fn make(k: u64, i: u64) -> Self {
                <$t>::new(value(k, 2 * i) as $r, value(k, 2 * i + 1) as $r)
            }
            fn parse(parts: &[&str]) -> Self {
                <$t>::new(parts[0].parse::<f64>().unwrap() as $r, parts[1].parse::<f64>().unwrap() as $r)
            }
            fn as_c64(self) -> c64 {
                c64::new(self.re as f64, self.im as f64)
            }
        }
    };
}
complex!(c32, f32, f32::EPSILON as f64);
complex!(c64, f64, f64::EPSILON);

/// The logical (row-major) elements of operand `k` of `shape`.
pub fn operand_data<T: FixtureScalar>(k: u64, shape: &[usize]) -> Vec<T> {
    let n: usize = shape.iter().product();
    (0..n as u64).map(|i| T::make(k, i)).collect()
}

/// How an operand is laid out in memory for a test run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrangement {
    /// Compact row-major.
    RowMajor,
    /// Every axis reversed in memory, read through negative strides.
    Reversed,
    /// Column-major.
    ColumnMajor,
    /// Every other element of a buffer twice as long (non-unit strides).
    Strided,
}

pub const LAYOUTS: [Arrangement; 4] =
    [Arrangement::RowMajor, Arrangement::Reversed, Arrangement::ColumnMajor, Arrangement::Strided];

/// A buffer and the view of it that presents `logical` (row-major elements of `shape`)
/// in the layout asked for.
pub struct Laid<T> {
    pub buffer: Vec<T>,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    pub offset: usize,
}

impl<T: Scalar> Laid<T> {
    pub fn new(logical: &[T], shape: &[usize], layout: Arrangement) -> Self {
        let n = logical.len();
        let row_major = strata_tensor::shape::row_major_strides(shape);
        let index = |flat: usize| -> Vec<usize> {
            let mut rest = flat;
            let mut idx = vec![0; shape.len()];
            for a in (0..shape.len()).rev() {
                idx[a] = rest % shape[a].max(1);
                rest /= shape[a].max(1);
            }
            idx
        };
        match layout {
            Arrangement::RowMajor => {
                Laid { buffer: logical.to_vec(), shape: shape.to_vec(), strides: row_major, offset: 0 }
            }
            Arrangement::Reversed => {
                let buffer: Vec<T> = logical.iter().rev().copied().collect();
                let strides = row_major.iter().map(|s| -s).collect();
                Laid { buffer, shape: shape.to_vec(), strides, offset: n.saturating_sub(1) }
            }
            Arrangement::ColumnMajor => {
                let mut strides = vec![0isize; shape.len()];
                let mut acc = 1isize;
                for a in 0..shape.len() {
                    strides[a] = acc;
                    acc *= shape[a].max(1) as isize;
                }
                let mut buffer = logical.to_vec();
                for (flat, &x) in logical.iter().enumerate() {
                    let idx = index(flat);
                    let at: isize = idx.iter().zip(&strides).map(|(&i, &s)| i as isize * s).sum();
                    buffer[at as usize] = x;
                }
                Laid { buffer, shape: shape.to_vec(), strides, offset: 0 }
            }
            Arrangement::Strided => {
                let mut buffer = vec![T::zero(); 2 * n.max(1)];
                for (flat, &x) in logical.iter().enumerate() {
                    buffer[2 * flat] = x;
                }
                let strides = row_major.iter().map(|s| 2 * s).collect();
                Laid { buffer, shape: shape.to_vec(), strides, offset: 0 }
            }
        }
    }

    pub fn view(&self) -> TypedView<'_, T> {
        TypedView::new(&self.buffer, &self.shape, &self.strides, self.offset).unwrap()
    }
}

/// The typed einsum rule inside a strata error.
pub fn rule(e: &Error) -> EinsumError {
    std::error::Error::source(e)
        .and_then(|s| s.downcast_ref::<EinsumError>())
        .cloned()
        .unwrap_or_else(|| panic!("no EinsumError inside {e}"))
}

/// Parses `2,3;4` (and `-` for rank 0) into shapes.
pub fn parse_shapes(s: &str) -> Vec<Vec<usize>> {
    s.split(';').map(parse_shape).collect()
}

pub fn parse_shape(s: &str) -> Vec<usize> {
    if s == "-" { Vec::new() } else { s.split(',').map(|d| d.parse().unwrap()).collect() }
}
