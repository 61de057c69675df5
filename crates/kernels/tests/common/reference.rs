//! Naive reference semantics written independently of the kernels: integers in i128 then
//! wrapped, floats in f64, complex in c64, each rule spelled out from SPEC §3.

use strata_tensor::config::{BinaryOp, CompareDir, UnaryOp};
use strata_tensor::{c32, c64};

use super::TestValue;

/// Reference results of one dtype. `None` means "not defined for this dtype".
pub trait Reference: TestValue {
    fn ref_binary(op: BinaryOp, a: Self, b: Self) -> Option<Self>;
    /// Unary result, widened to c64 (abs of complex is real: im = 0).
    fn ref_unary(op: UnaryOp, a: Self) -> Option<c64>;
    fn ref_compare(dir: CompareDir, a: Self, b: Self) -> Option<bool>;
    /// Equal up to the dtype's rounding (NaN equals NaN).
    fn close(a: Self, b: Self) -> bool;
}

fn close_f64(a: f64, b: f64, tol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-30)
}

pub fn close_c64(a: c64, b: c64, tol: f64) -> bool {
    let scale = a.norm().max(b.norm());
    (a.re.is_nan() || a.im.is_nan()) && (b.re.is_nan() || b.im.is_nan())
        || a == b
        || ((a - b).norm() <= tol * scale.max(1e-30))
        || (close_f64(a.re, b.re, tol) && close_f64(a.im, b.im, tol))
}

fn lax_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_positive() || b.is_sign_positive() { 0.0 } else { -0.0 }
    } else if a > b {
        a
    } else {
        b
    }
}

fn lax_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_negative() || b.is_sign_negative() { -0.0 } else { 0.0 }
    } else if a < b {
        a
    } else {
        b
    }
}

fn float_binary(op: BinaryOp, a: f64, b: f64) -> f64 {
    match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div => a / b,
        BinaryOp::Rem => {
            // fmod: a - trunc(a / b) * b, computed exactly through libm's definition.
            if b == 0.0 || a.is_infinite() || a.is_nan() || b.is_nan() {
                f64::NAN
            } else if b.is_infinite() {
                a
            } else {
                let r = a.abs() % b.abs();
                if a < 0.0 || (a == 0.0 && a.is_sign_negative()) { -r } else { r }
            }
        }
        BinaryOp::Pow => a.powf(b),
        BinaryOp::Max => lax_max(a, b),
        BinaryOp::Min => lax_min(a, b),
    }
}

fn float_unary(op: UnaryOp, a: f64) -> f64 {
    match op {
        UnaryOp::Neg => -a,
        UnaryOp::Conj => a,
        UnaryOp::Abs => a.abs(),
        UnaryOp::Sign => {
            if a.is_nan() {
                f64::NAN
            } else if a > 0.0 {
                1.0
            } else if a < 0.0 {
                -1.0
            } else {
                a
            }
        }
        UnaryOp::Exp => a.exp(),
        UnaryOp::Log => a.ln(),
        UnaryOp::Sin => a.sin(),
        UnaryOp::Cos => a.cos(),
        UnaryOp::Tanh => a.tanh(),
        UnaryOp::Sqrt => a.sqrt(),
        UnaryOp::Rsqrt => 1.0 / a.sqrt(),
        UnaryOp::Expm1 => a.exp_m1(),
        UnaryOp::Log1p => a.ln_1p(),
    }
}

fn float_compare(dir: CompareDir, a: f64, b: f64) -> bool {
    match dir {
        CompareDir::Eq => a == b,
        CompareDir::Ne => a != b,
        CompareDir::Lt => a < b,
        CompareDir::Le => a <= b,
        CompareDir::Gt => a > b,
        CompareDir::Ge => a >= b,
    }
}

macro_rules! float_reference {
    ($t:ty, $tol:expr) => {
        impl Reference for $t {
            fn ref_binary(op: BinaryOp, a: Self, b: Self) -> Option<Self> {
                Some(float_binary(op, a as f64, b as f64) as $t)
            }
            fn ref_unary(op: UnaryOp, a: Self) -> Option<c64> {
                Some(c64::new(float_unary(op, a as f64), 0.0))
            }
            fn ref_compare(dir: CompareDir, a: Self, b: Self) -> Option<bool> {
                Some(float_compare(dir, a as f64, b as f64))
            }
            fn close(a: Self, b: Self) -> bool {
                close_f64(a as f64, b as f64, $tol)
            }
        }
    };
}
float_reference!(f32, 2e-6);
float_reference!(f64, 1e-14);

macro_rules! int_reference {
    ($t:ty) => {
        impl Reference for $t {
            fn ref_binary(op: BinaryOp, a: Self, b: Self) -> Option<Self> {
                let (x, y) = (a as i128, b as i128);
                Some(match op {
                    BinaryOp::Add => (x + y) as $t,
                    BinaryOp::Sub => (x - y) as $t,
                    BinaryOp::Mul => (x * y) as $t,
                    BinaryOp::Div => {
                        if y == 0 {
                            -1
                        } else {
                            (x / y) as $t
                        }
                    }
                    BinaryOp::Rem => {
                        if y == 0 {
                            a
                        } else {
                            (x % y) as $t
                        }
                    }
                    // lax.pow rejects integer bases.
                    BinaryOp::Pow => return None,
                    BinaryOp::Max => {
                        if x > y {
                            a
                        } else {
                            b
                        }
                    }
                    BinaryOp::Min => {
                        if x < y {
                            a
                        } else {
                            b
                        }
                    }
                })
            }
            fn ref_unary(op: UnaryOp, a: Self) -> Option<c64> {
                let x = a as i128;
                let r = match op {
                    UnaryOp::Neg => (-x) as $t,
                    UnaryOp::Conj => a,
                    UnaryOp::Abs => x.abs() as $t,
                    UnaryOp::Sign => (x > 0) as $t - (x < 0) as $t,
                    _ => return None,
                };
                Some(c64::new(r as f64, 0.0))
            }
            fn ref_compare(dir: CompareDir, a: Self, b: Self) -> Option<bool> {
                let (x, y) = (a as i128, b as i128);
                Some(match dir {
                    CompareDir::Eq => x == y,
                    CompareDir::Ne => x != y,
                    CompareDir::Lt => x < y,
                    CompareDir::Le => x <= y,
                    CompareDir::Gt => x > y,
                    CompareDir::Ge => x >= y,
                })
            }
            fn close(a: Self, b: Self) -> bool {
                a == b
            }
        }
    };
}
int_reference!(i32);
int_reference!(i64);

impl Reference for bool {
    fn ref_binary(op: BinaryOp, a: Self, b: Self) -> Option<Self> {
        match op {
            BinaryOp::Max => Some(a || b),
            BinaryOp::Min => Some(a && b),
            _ => None,
        }
    }
    fn ref_unary(_op: UnaryOp, _a: Self) -> Option<c64> {
        None
    }
    fn ref_compare(dir: CompareDir, a: Self, b: Self) -> Option<bool> {
        let (x, y) = (a as u8, b as u8);
        Some(match dir {
            CompareDir::Eq => x == y,
            CompareDir::Ne => x != y,
            CompareDir::Lt => x < y,
            CompareDir::Le => x <= y,
            CompareDir::Gt => x > y,
            CompareDir::Ge => x >= y,
        })
    }
    fn close(a: Self, b: Self) -> bool {
        a == b
    }
}

fn lex_gt(a: c64, b: c64) -> bool {
    a.re > b.re || (a.re == b.re && a.im > b.im)
}

fn complex_binary(op: BinaryOp, a: c64, b: c64) -> Option<c64> {
    Some(match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div => a * b.conj() / b.norm_sqr(),
        BinaryOp::Rem => return None,
        BinaryOp::Pow => (b * a.ln()).exp(),
        BinaryOp::Max => {
            if lex_gt(b, a) {
                b
            } else {
                a
            }
        }
        BinaryOp::Min => {
            if lex_gt(a, b) {
                b
            } else {
                a
            }
        }
    })
}

fn complex_unary(op: UnaryOp, a: c64) -> c64 {
    match op {
        UnaryOp::Neg => -a,
        UnaryOp::Conj => c64::new(a.re, -a.im),
        UnaryOp::Abs => c64::new(a.re.hypot(a.im), 0.0),
        UnaryOp::Sign => {
            if a.re == 0.0 && a.im == 0.0 {
                c64::new(0.0, 0.0)
            } else {
                a / a.re.hypot(a.im)
            }
        }
        UnaryOp::Exp => c64::new(a.re.exp() * a.im.cos(), a.re.exp() * a.im.sin()),
        UnaryOp::Log => c64::new(a.re.hypot(a.im).ln(), a.im.atan2(a.re)),
        UnaryOp::Sin => c64::new(a.re.sin() * a.im.cosh(), a.re.cos() * a.im.sinh()),
        UnaryOp::Cos => c64::new(a.re.cos() * a.im.cosh(), -a.re.sin() * a.im.sinh()),
        UnaryOp::Tanh => {
            let (e, m) = ((2.0 * a).exp(), c64::new(1.0, 0.0));
            (e - m) / (e + m)
        }
        UnaryOp::Sqrt => a.sqrt(),
        UnaryOp::Rsqrt => c64::new(1.0, 0.0) / a.sqrt(),
        UnaryOp::Expm1 => complex_unary(UnaryOp::Exp, a) - c64::new(1.0, 0.0),
        UnaryOp::Log1p => complex_unary(UnaryOp::Log, a + c64::new(1.0, 0.0)),
    }
}

macro_rules! complex_reference {
    ($t:ty, $r:ty, $tol:expr) => {
        impl Reference for $t {
            fn ref_binary(op: BinaryOp, a: Self, b: Self) -> Option<Self> {
                complex_binary(op, a.wide(), b.wide()).map(|z| <$t>::new(z.re as $r, z.im as $r))
            }
            fn ref_unary(op: UnaryOp, a: Self) -> Option<c64> {
                Some(complex_unary(op, a.wide()))
            }
            fn ref_compare(dir: CompareDir, a: Self, b: Self) -> Option<bool> {
                match dir {
                    CompareDir::Eq => Some(a.re == b.re && a.im == b.im),
                    CompareDir::Ne => Some(!(a.re == b.re && a.im == b.im)),
                    _ => None,
                }
            }
            fn close(a: Self, b: Self) -> bool {
                close_c64(a.wide(), b.wide(), $tol)
            }
        }
    };
}
complex_reference!(c32, f32, 1e-5);
complex_reference!(c64, f64, 1e-12);
