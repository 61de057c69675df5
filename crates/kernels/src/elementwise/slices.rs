//! The inner loops: one op over contiguous slices. Each `match` on the op happens once
//! per block, and each arm is a plain zip loop over a known function, which the compiler
//! vectorises. Both the elementwise kernels and the fusion interpreter run these.

use strata_tensor::config::{BinaryOp, CompareDir, UnaryOp};

use super::scalar::ElementwiseScalar;
use crate::structural::CastScalar;

#[inline(always)]
fn zip1<A: Copy, O>(a: &[A], out: &mut [O], f: impl Fn(A) -> O) {
    for (o, &x) in out.iter_mut().zip(a) {
        *o = f(x);
    }
}

#[inline(always)]
fn zip2<A: Copy, B: Copy, O>(a: &[A], b: &[B], out: &mut [O], f: impl Fn(A, B) -> O) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
}

/// `out[i] = op(a[i], b[i])`.
pub(crate) fn binary<T: ElementwiseScalar>(op: BinaryOp, a: &[T], b: &[T], out: &mut [T]) {
    match op {
        BinaryOp::Add => zip2(a, b, out, T::add),
        BinaryOp::Sub => zip2(a, b, out, T::sub),
        BinaryOp::Mul => zip2(a, b, out, T::mul),
        BinaryOp::Div => zip2(a, b, out, T::div),
        BinaryOp::Rem => zip2(a, b, out, T::rem),
        BinaryOp::Pow => zip2(a, b, out, T::pow),
        BinaryOp::Max => zip2(a, b, out, T::max),
        BinaryOp::Min => zip2(a, b, out, T::min),
    }
}

/// `out[i] = op(a[i])` for every op whose result has the input's dtype (all but `abs`).
pub(crate) fn unary_same<T: ElementwiseScalar>(op: UnaryOp, a: &[T], out: &mut [T]) {
    if T::analytic_slice(op, a, out) {
        return;
    }
    match op {
        UnaryOp::Neg => zip1(a, out, T::neg),
        UnaryOp::Conj => zip1(a, out, T::conj),
        // `abs` is routed to `abs` below by the callers; reals map to themselves here.
        UnaryOp::Abs => zip1(a, out, |x| T::from_wide(T::abs(x).to_wide())),
        UnaryOp::Sign => zip1(a, out, T::sign),
        UnaryOp::Exp => zip1(a, out, T::exp),
        UnaryOp::Log => zip1(a, out, T::log),
        UnaryOp::Sin => zip1(a, out, T::sin),
        UnaryOp::Cos => zip1(a, out, T::cos),
        UnaryOp::Tanh => zip1(a, out, T::tanh),
        UnaryOp::Sqrt => zip1(a, out, T::sqrt),
        UnaryOp::Rsqrt => zip1(a, out, T::rsqrt),
        UnaryOp::Expm1 => zip1(a, out, T::expm1),
        UnaryOp::Log1p => zip1(a, out, T::log1p),
    }
}

/// `out[i] = |a[i]|` in the real counterpart.
pub(crate) fn abs<T: ElementwiseScalar>(a: &[T], out: &mut [T::RealPart]) {
    zip1(a, out, T::abs)
}

/// `out[i] = a[i] <dir> b[i]`.
pub(crate) fn compare<T: ElementwiseScalar>(dir: CompareDir, a: &[T], b: &[T], out: &mut [bool]) {
    match dir {
        CompareDir::Eq => zip2(a, b, out, T::equal),
        CompareDir::Ne => zip2(a, b, out, |x, y| !T::equal(x, y)),
        CompareDir::Lt => zip2(a, b, out, T::less),
        CompareDir::Le => zip2(a, b, out, T::less_eq),
        CompareDir::Gt => zip2(a, b, out, |x, y| T::less(y, x)),
        CompareDir::Ge => zip2(a, b, out, |x, y| T::less_eq(y, x)),
    }
}

/// `out[i] = pred[i] ? t[i] : f[i]`.
pub(crate) fn select<T: Copy>(pred: &[bool], t: &[T], f: &[T], out: &mut [T]) {
    for (((o, &p), &x), &y) in out.iter_mut().zip(pred).zip(t).zip(f) {
        *o = if p { x } else { y };
    }
}

/// `out[i] = clamp(lo[i], x[i], hi[i])` (`min(max(x, lo), hi)`; complex by real parts).
pub(crate) fn clamp<T: ElementwiseScalar>(lo: &[T], x: &[T], hi: &[T], out: &mut [T]) {
    for (((o, &l), &v), &h) in out.iter_mut().zip(lo).zip(x).zip(hi) {
        *o = T::clamp(l, v, h);
    }
}
