//! The scatter combiners per element type: the one place where add, multiply, max and min
//! are spelled out for floats, integers, bool and complex numbers.

use strata_tensor::{Complex, Scalar};

/// Element types scatter can combine. Semantics follow SPEC §3: integers wrap, float
/// max/min propagate NaN and order -0 below +0, complex max/min order by real part then
/// imaginary part, bool add/multiply/max/min are or/and/or/and.
pub(crate) trait Combine: Scalar {
    /// `self + other`.
    fn add(self, other: Self) -> Self;
    /// `self * other`.
    fn mul(self, other: Self) -> Self;
    /// The larger of the two.
    fn max(self, other: Self) -> Self;
    /// The smaller of the two.
    fn min(self, other: Self) -> Self;
}

macro_rules! float_combine {
    ($t:ty) => {
        impl Combine for $t {
            #[inline]
            fn add(self, other: Self) -> Self {
                self + other
            }
            #[inline]
            fn mul(self, other: Self) -> Self {
                self * other
            }
            #[inline]
            fn max(self, other: Self) -> Self {
                if self.is_nan() || other.is_nan() {
                    self + other
                } else if self == other {
                    // Equal values differ at most in the sign of zero: +0 is the larger.
                    if self.is_sign_negative() { other } else { self }
                } else if self > other {
                    self
                } else {
                    other
                }
            }
            #[inline]
            fn min(self, other: Self) -> Self {
                if self.is_nan() || other.is_nan() {
                    self + other
                } else if self == other {
                    if self.is_sign_negative() { self } else { other }
                } else if self < other {
                    self
                } else {
                    other
                }
            }
        }
    };
}

macro_rules! int_combine {
    ($t:ty) => {
        impl Combine for $t {
            #[inline]
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline]
            fn mul(self, other: Self) -> Self {
                self.wrapping_mul(other)
            }
            #[inline]
            fn max(self, other: Self) -> Self {
                Ord::max(self, other)
            }
            #[inline]
            fn min(self, other: Self) -> Self {
                Ord::min(self, other)
            }
        }
    };
}

macro_rules! complex_combine {
    ($t:ty) => {
        impl Combine for Complex<$t> {
            #[inline]
            fn add(self, other: Self) -> Self {
                self + other
            }
            #[inline]
            fn mul(self, other: Self) -> Self {
                self * other
            }
            #[inline]
            fn max(self, other: Self) -> Self {
                if self.re.is_nan() || self.im.is_nan() {
                    self
                } else if other.re.is_nan() || other.im.is_nan() {
                    other
                } else if (other.re, other.im) > (self.re, self.im) {
                    other
                } else {
                    self
                }
            }
            #[inline]
            fn min(self, other: Self) -> Self {
                if self.re.is_nan() || self.im.is_nan() {
                    self
                } else if other.re.is_nan() || other.im.is_nan() {
                    other
                } else if (other.re, other.im) < (self.re, self.im) {
                    other
                } else {
                    self
                }
            }
        }
    };
}

float_combine!(f32);
float_combine!(f64);
int_combine!(i32);
int_combine!(i64);
complex_combine!(f32);
complex_combine!(f64);

impl Combine for bool {
    #[inline]
    fn add(self, other: Self) -> Self {
        self | other
    }
    #[inline]
    fn mul(self, other: Self) -> Self {
        self & other
    }
    #[inline]
    fn max(self, other: Self) -> Self {
        self | other
    }
    #[inline]
    fn min(self, other: Self) -> Self {
        self & other
    }
}
