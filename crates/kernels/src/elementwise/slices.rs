//! The inner loops: one op over contiguous slices. Each `match` on the op happens once
//! per block, and each arm is a plain zip loop over a known function, which the compiler
//! vectorises; each entry runs as a [`SimdTask`], so the loops are compiled for AVX-512
//! and AVX2 as well and the widest the CPU has runs, up to a cap per loop (the same bits
//! at every level). Both
//! the elementwise kernels and the fusion interpreter run these.

use strata_tensor::config::{BinaryOp, CompareDir, UnaryOp};

use super::scalar::ElementwiseScalar;
use crate::simd::{self, SimdLevel, SimdTask};
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

// The element functions are functions, not closures: a closure is compiled once, at the
// baseline, whichever SIMD copy calls it, unless it happens to be inlined.

#[inline(always)]
fn abs_same<T: ElementwiseScalar>(x: T) -> T {
    T::from_wide(T::abs(x).to_wide())
}

#[inline(always)]
fn not_equal<T: ElementwiseScalar>(x: T, y: T) -> bool {
    !T::equal(x, y)
}

#[inline(always)]
fn greater<T: ElementwiseScalar>(x: T, y: T) -> bool {
    T::less(y, x)
}

#[inline(always)]
fn greater_eq<T: ElementwiseScalar>(x: T, y: T) -> bool {
    T::less_eq(y, x)
}

/// Declares a slice loop: a task struct with the named fields, its `SimdTask::run` body,
/// and the `pub(crate)` entry that runs it at the widest SIMD level up to `$level`.
macro_rules! slice_loops {
    ($(
        $(#[$doc:meta])*
        fn $entry:ident<$t:ident: $bound:path>($($arg:ident: $ty:ty),*) as $task:ident up to $level:ident $body:block
    )*) => {$(
        struct $task<'a, $t: $bound> {
            $($arg: $ty,)*
            _lifetime: std::marker::PhantomData<&'a ()>,
        }

        impl<$t: $bound> SimdTask for $task<'_, $t> {
            type Output = ();
            #[inline(always)]
            fn run(self) {
                let $task { $($arg,)* .. } = self;
                $body
            }
        }

        $(#[$doc])*
        #[inline]
        pub(crate) fn $entry<'a, $t: $bound>($($arg: $ty),*) {
            simd::run_at(SimdLevel::$level, $task::<'a, $t> { $($arg,)* _lifetime: std::marker::PhantomData })
        }
    )*};
}

slice_loops! {
    /// `out[i] = op(a[i], b[i])`, at most 256 bits wide: one arithmetic op per element
    /// leaves the loop bound by loads and stores, and a 512-bit access of a buffer that
    /// starts 16 bytes into a line (as the allocator's do) straddles two lines every
    /// time, a 256-bit one every other time. Measured on the AMD Zen 4 guest (thread CPU
    /// time, 16-byte-offset buffers): f64 add of 4 Ki elements 80 GB/s at AVX-512 against
    /// 102 at AVX2, 16 Ki 92 against 103, 64 Ki 73 against 80, 256 Ki 66 against 71;
    /// with 64-byte-aligned buffers the two widths were within 3 %.
    fn binary<T: ElementwiseScalar>(op: BinaryOp, a: &'a [T], b: &'a [T], out: &'a mut [T]) as BinaryLoop up to Avx2 {
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
    fn unary_same<T: ElementwiseScalar>(op: UnaryOp, a: &'a [T], out: &'a mut [T]) as UnaryLoop up to Avx512 {
        if T::analytic_slice(op, a, out) {
            return;
        }
        match op {
            UnaryOp::Neg => zip1(a, out, T::neg),
            UnaryOp::Conj => zip1(a, out, T::conj),
            // `abs` is routed to `abs` below by the callers; reals map to themselves here.
            UnaryOp::Abs => zip1(a, out, abs_same::<T>),
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
    fn abs<T: ElementwiseScalar>(a: &'a [T], out: &'a mut [T::RealPart]) as AbsLoop up to Avx512 {
        zip1(a, out, T::abs)
    }

    /// `out[i] = a[i] <dir> b[i]`.
    fn compare<T: ElementwiseScalar>(dir: CompareDir, a: &'a [T], b: &'a [T], out: &'a mut [bool]) as CompareLoop up to Avx512 {
        match dir {
            CompareDir::Eq => zip2(a, b, out, T::equal),
            CompareDir::Ne => zip2(a, b, out, not_equal::<T>),
            CompareDir::Lt => zip2(a, b, out, T::less),
            CompareDir::Le => zip2(a, b, out, T::less_eq),
            CompareDir::Gt => zip2(a, b, out, greater::<T>),
            CompareDir::Ge => zip2(a, b, out, greater_eq::<T>),
        }
    }

    /// `out[i] = pred[i] ? t[i] : f[i]`.
    fn select<T: Copy>(pred: &'a [bool], t: &'a [T], f: &'a [T], out: &'a mut [T]) as SelectLoop up to Avx512 {
        for (((o, &p), &x), &y) in out.iter_mut().zip(pred).zip(t).zip(f) {
            *o = if p { x } else { y };
        }
    }

    /// `out[i] = clamp(lo[i], x[i], hi[i])` (`min(max(x, lo), hi)`; complex by real parts).
    fn clamp<T: ElementwiseScalar>(lo: &'a [T], x: &'a [T], hi: &'a [T], out: &'a mut [T]) as ClampLoop up to Avx512 {
        for (((o, &l), &v), &h) in out.iter_mut().zip(lo).zip(x).zip(hi) {
            *o = T::clamp(l, v, h);
        }
    }
}
