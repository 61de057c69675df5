//! Elementwise kernels with jax.lax semantics: binary arithmetic, unary ops, compare,
//! select and clamp, each with an allocating form and an `_into` form, plus one generic
//! entry ([`elementwise_into`]) taking an [`ElementwiseOp`].
//!
//! Operands must have one dtype and exactly one shape (no implicit broadcasting: make a
//! broadcast view with `broadcast_in_dim`, which costs nothing). Every check happens
//! before anything is written; an `_into` destination is untouched on error.
//!
//! ```
//! use strata_kernels::{KernelContext, elementwise};
//! use strata_tensor::{Tensor, config::BinaryOp};
//! let ctx = KernelContext::sequential();
//! let a = Tensor::from_vec(vec![7i32, -7, i32::MIN, 5], &[4]).unwrap();
//! let b = Tensor::from_vec(vec![2i32, 2, -1, 0], &[4]).unwrap();
//! let q = elementwise::binary(&ctx, BinaryOp::Div, (&a).into(), (&b).into()).unwrap();
//! // Truncating division; MIN / -1 wraps to MIN and x / 0 is -1, as in XLA.
//! assert_eq!(q.as_typed::<i32>().unwrap().data(), &[3, -3, i32::MIN, -1]);
//! ```

mod scalar;
pub(crate) mod slices;

pub use scalar::ElementwiseScalar;

use strata_tensor::config::{BinaryOp, CompareDir, UnaryOp};
use strata_tensor::{DType, Error, Result, Tensor, TensorRead, TensorWrite, TypedView, dispatch_dtype};

use crate::alloc::fill_output;
use crate::context::KernelContext;
use crate::strided::{GRAIN, for_each_block, gather};
use crate::structural::{cast, cast_into, write_into};

/// Any elementwise op, for the generic entry [`elementwise_into`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementwiseOp {
    /// A unary op on one input.
    Unary(UnaryOp),
    /// A binary op on two inputs.
    Binary(BinaryOp),
    /// A comparison of two inputs, giving Bool.
    Compare(CompareDir),
    /// `select(pred, on_true, on_false)`.
    Select,
    /// `clamp(lo, x, hi)`.
    Clamp,
}

/// `op(a, b)` elementwise into a new tensor.
pub fn binary(ctx: &KernelContext<'_>, op: BinaryOp, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
    op.validate(a.dtype(), a.shape(), b.dtype(), b.shape())?;
    dispatch_dtype!(a.dtype(), T => {
        // Small compact operands skip the strided planner: one slice loop, no views.
        if let (Some(x), Some(y)) = (a.contiguous::<T>(), b.contiguous::<T>())
            && x.len() < GRAIN
        {
            return fill_output::<T>(ctx, op.name(), a.shape(), |out| slices::binary(op, x, y, out)).map(Tensor::from);
        }
        let (a, b) = (a.typed_view::<T>()?, b.typed_view::<T>()?);
        fill_output::<T>(ctx, op.name(), a.shape(), |out| binary_typed(ctx, op, &a, &b, out)).map(Tensor::from)
    })
}

/// `op(a, b)` elementwise into `out` (same dtype and shape as the operands).
pub fn binary_into(
    ctx: &KernelContext<'_>,
    op: BinaryOp,
    a: TensorRead<'_>,
    b: TensorRead<'_>,
    mut out: TensorWrite<'_>,
) -> Result<()> {
    op.validate(a.dtype(), a.shape(), b.dtype(), b.shape())?;
    out.expect(op.name(), a.dtype(), a.shape())?;
    dispatch_dtype!(a.dtype(), T => {
        // Small compact operands and destination: one slice loop, no views, no planner.
        if let (Some(x), Some(y)) = (a.contiguous::<T>(), b.contiguous::<T>())
            && x.len() < GRAIN
            && let Some(o) = out.contiguous_mut::<T>()
        {
            slices::binary(op, x, y, o);
            return Ok(());
        }
        let (a, b) = (a.typed_view::<T>()?, b.typed_view::<T>()?);
        write_into::<T>(ctx, &mut out, |o| binary_typed(ctx, op, &a, &b, o))
    })
}

fn binary_typed<T: ElementwiseScalar>(
    ctx: &KernelContext<'_>,
    op: BinaryOp,
    a: &TypedView<'_, T>,
    b: &TypedView<'_, T>,
    out: &mut [T],
) {
    let (ab, bb) = (a.buffer(), b.buffer());
    for_each_block(ctx.par(), a.shape(), [a.layout(), b.layout()], out, |block, [oa, ob], [sa, sb]| {
        let (mut ga, mut gb) = (Vec::new(), Vec::new());
        let n = block.len();
        slices::binary(op, gather(ab, oa, sa, n, &mut ga), gather(bb, ob, sb, n, &mut gb), block);
    });
}

/// `op(x)` elementwise into a new tensor (`abs` of complex gives the real counterpart,
/// `conj` of a real float its complex counterpart, as jax.lax does).
pub fn unary(ctx: &KernelContext<'_>, op: UnaryOp, x: TensorRead<'_>) -> Result<Tensor> {
    let out_dtype = op.validate(x.dtype())?;
    if op == UnaryOp::Conj && out_dtype != x.dtype() {
        // The conjugate of a real x is x + 0i: exactly the real → complex conversion.
        return cast(ctx, x, out_dtype).map_err(|e| e.in_op(op.name()));
    }
    dispatch_dtype!(x.dtype(), T => {
        if out_dtype == x.dtype()
            && let Some(src) = x.contiguous::<T>()
            && src.len() < GRAIN
        {
            return fill_output::<T>(ctx, op.name(), x.shape(), |out| slices::unary_same(op, src, out)).map(Tensor::from);
        }
        let v = x.typed_view::<T>()?;
        if out_dtype == x.dtype() {
            fill_output::<T>(ctx, op.name(), v.shape(), |out| unary_typed(ctx, op, &v, out)).map(Tensor::from)
        } else {
            fill_output::<<T as ElementwiseScalar>::RealPart>(ctx, op.name(), v.shape(), |out| abs_typed(ctx, &v, out)).map(Tensor::from)
        }
    })
}

/// `op(x)` elementwise into `out`, whose dtype is the op's result dtype.
pub fn unary_into(ctx: &KernelContext<'_>, op: UnaryOp, x: TensorRead<'_>, mut out: TensorWrite<'_>) -> Result<()> {
    let out_dtype = op.validate(x.dtype())?;
    out.expect(op.name(), out_dtype, x.shape())?;
    if op == UnaryOp::Conj && out_dtype != x.dtype() {
        return cast_into(ctx, x, out).map_err(|e| e.in_op(op.name()));
    }
    dispatch_dtype!(x.dtype(), T => {
        if out_dtype == x.dtype()
            && let Some(src) = x.contiguous::<T>()
            && src.len() < GRAIN
            && let Some(o) = out.contiguous_mut::<T>()
        {
            slices::unary_same(op, src, o);
            return Ok(());
        }
        let v = x.typed_view::<T>()?;
        if out_dtype == x.dtype() {
            write_into::<T>(ctx, &mut out, |o| unary_typed(ctx, op, &v, o))
        } else {
            write_into::<<T as ElementwiseScalar>::RealPart>(ctx, &mut out, |o| abs_typed(ctx, &v, o))
        }
    })
}

fn unary_typed<T: ElementwiseScalar>(ctx: &KernelContext<'_>, op: UnaryOp, x: &TypedView<'_, T>, out: &mut [T]) {
    let buf = x.buffer();
    for_each_block(ctx.par(), x.shape(), [x.layout()], out, |block, [o], [s]| {
        let mut g = Vec::new();
        slices::unary_same(op, gather(buf, o, s, block.len(), &mut g), block);
    });
}

fn abs_typed<T: ElementwiseScalar>(ctx: &KernelContext<'_>, x: &TypedView<'_, T>, out: &mut [T::RealPart]) {
    let buf = x.buffer();
    for_each_block(ctx.par(), x.shape(), [x.layout()], out, |block, [o], [s]| {
        let mut g = Vec::new();
        slices::abs(gather(buf, o, s, block.len(), &mut g), block);
    });
}

/// `a <dir> b` elementwise into a new Bool tensor.
pub fn compare(ctx: &KernelContext<'_>, dir: CompareDir, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
    dir.validate(a.dtype(), a.shape(), b.dtype(), b.shape())?;
    dispatch_dtype!(a.dtype(), T => {
        if let (Some(x), Some(y)) = (a.contiguous::<T>(), b.contiguous::<T>())
            && x.len() < GRAIN
        {
            return fill_output::<bool>(ctx, "compare", a.shape(), |out| slices::compare(dir, x, y, out)).map(Tensor::from);
        }
        let (a, b) = (a.typed_view::<T>()?, b.typed_view::<T>()?);
        fill_output::<bool>(ctx, "compare", a.shape(), |out| compare_typed(ctx, dir, &a, &b, out)).map(Tensor::from)
    })
}

/// `a <dir> b` elementwise into a Bool destination.
pub fn compare_into(
    ctx: &KernelContext<'_>,
    dir: CompareDir,
    a: TensorRead<'_>,
    b: TensorRead<'_>,
    mut out: TensorWrite<'_>,
) -> Result<()> {
    dir.validate(a.dtype(), a.shape(), b.dtype(), b.shape())?;
    out.expect("compare", DType::Bool, a.shape())?;
    dispatch_dtype!(a.dtype(), T => {
        if let (Some(x), Some(y)) = (a.contiguous::<T>(), b.contiguous::<T>())
            && x.len() < GRAIN
            && let Some(o) = out.contiguous_mut::<bool>()
        {
            slices::compare(dir, x, y, o);
            return Ok(());
        }
        let (a, b) = (a.typed_view::<T>()?, b.typed_view::<T>()?);
        write_into::<bool>(ctx, &mut out, |o| compare_typed(ctx, dir, &a, &b, o))
    })
}

fn compare_typed<T: ElementwiseScalar>(
    ctx: &KernelContext<'_>,
    dir: CompareDir,
    a: &TypedView<'_, T>,
    b: &TypedView<'_, T>,
    out: &mut [bool],
) {
    let (ab, bb) = (a.buffer(), b.buffer());
    for_each_block(ctx.par(), a.shape(), [a.layout(), b.layout()], out, |block, [oa, ob], [sa, sb]| {
        let (mut ga, mut gb) = (Vec::new(), Vec::new());
        let n = block.len();
        slices::compare(dir, gather(ab, oa, sa, n, &mut ga), gather(bb, ob, sb, n, &mut gb), block);
    });
}

/// Checks select's operands: a Bool predicate and two branches of one dtype, all of one
/// shape. Gives the result dtype.
fn validate_select(pred: &TensorRead<'_>, t: &TensorRead<'_>, f: &TensorRead<'_>) -> Result<DType> {
    const OP: &str = "select";
    if pred.dtype() != DType::Bool {
        return Err(Error::dtype_mismatch(OP, format!("the predicate has dtype {}, expected bool", pred.dtype())));
    }
    if t.dtype() != f.dtype() {
        return Err(Error::dtype_mismatch(
            OP,
            format!("on_true has dtype {}, on_false has dtype {}", t.dtype(), f.dtype()),
        ));
    }
    if pred.shape() != t.shape() || t.shape() != f.shape() {
        return Err(Error::shape_mismatch(
            OP,
            format!(
                "pred has shape {:?}, on_true {:?}, on_false {:?}; all must be equal",
                pred.shape(),
                t.shape(),
                f.shape()
            ),
        ));
    }
    Ok(t.dtype())
}

/// `pred ? on_true : on_false` elementwise (lax.select), into a new tensor.
pub fn select(
    ctx: &KernelContext<'_>,
    pred: TensorRead<'_>,
    on_true: TensorRead<'_>,
    on_false: TensorRead<'_>,
) -> Result<Tensor> {
    let dtype = validate_select(&pred, &on_true, &on_false)?;
    let p = pred.typed_view::<bool>()?;
    dispatch_dtype!(dtype, T => {
        let (t, f) = (on_true.typed_view::<T>()?, on_false.typed_view::<T>()?);
        fill_output::<T>(ctx, "select", t.shape(), |out| select_typed(ctx, &p, &t, &f, out)).map(Tensor::from)
    })
}

/// [`select`] into a destination of the branches' dtype and shape.
pub fn select_into(
    ctx: &KernelContext<'_>,
    pred: TensorRead<'_>,
    on_true: TensorRead<'_>,
    on_false: TensorRead<'_>,
    mut out: TensorWrite<'_>,
) -> Result<()> {
    let dtype = validate_select(&pred, &on_true, &on_false)?;
    out.expect("select", dtype, on_true.shape())?;
    let p = pred.typed_view::<bool>()?;
    dispatch_dtype!(dtype, T => {
        let (t, f) = (on_true.typed_view::<T>()?, on_false.typed_view::<T>()?);
        write_into::<T>(ctx, &mut out, |o| select_typed(ctx, &p, &t, &f, o))
    })
}

fn select_typed<T: ElementwiseScalar>(
    ctx: &KernelContext<'_>,
    p: &TypedView<'_, bool>,
    t: &TypedView<'_, T>,
    f: &TypedView<'_, T>,
    out: &mut [T],
) {
    let (pb, tb, fb) = (p.buffer(), t.buffer(), f.buffer());
    for_each_block(
        ctx.par(),
        t.shape(),
        [p.layout(), t.layout(), f.layout()],
        out,
        |block, [op, ot, of], [sp, st, sf]| {
            let (mut gp, mut gt, mut gf) = (Vec::new(), Vec::new(), Vec::new());
            let n = block.len();
            slices::select(
                gather(pb, op, sp, n, &mut gp),
                gather(tb, ot, st, n, &mut gt),
                gather(fb, of, sf, n, &mut gf),
                block,
            );
        },
    );
}

/// Checks clamp's operands (one dtype; `lo` and `hi` of `x`'s shape or rank 0; max/min
/// defined) and gives views of `lo` and `hi` broadcast to `x`'s shape.
fn clamp_views<'a, T: ElementwiseScalar>(
    lo: &TensorRead<'a>,
    x: &TensorRead<'a>,
    hi: &TensorRead<'a>,
) -> Result<(TypedView<'a, T>, TypedView<'a, T>)> {
    let fit = |b: &TensorRead<'a>| -> Result<TypedView<'a, T>> {
        let v = b.typed_view::<T>()?;
        if v.rank() == 0 { v.broadcast_in_dim(x.shape(), &[]).map_err(|e| e.in_op("clamp")) } else { Ok(v) }
    };
    Ok((fit(lo)?, fit(hi)?))
}

fn validate_clamp(lo: &TensorRead<'_>, x: &TensorRead<'_>, hi: &TensorRead<'_>) -> Result<()> {
    const OP: &str = "clamp";
    for (name, b) in [("lo", lo), ("hi", hi)] {
        if b.dtype() != x.dtype() {
            return Err(Error::dtype_mismatch(
                OP,
                format!("{name} has dtype {}, x has dtype {}", b.dtype(), x.dtype()),
            ));
        }
        if b.rank() != 0 && b.shape() != x.shape() {
            return Err(Error::shape_mismatch(
                OP,
                format!(
                    "{name} has shape {:?}, x has shape {:?}; bounds must match x or be rank 0",
                    b.shape(),
                    x.shape()
                ),
            ));
        }
    }
    Ok(())
}

/// `clamp(lo, x, hi) = min(max(x, lo), hi)` (lax.clamp's argument order); `lo` and `hi`
/// have `x`'s shape or are rank 0.
pub fn clamp(ctx: &KernelContext<'_>, lo: TensorRead<'_>, x: TensorRead<'_>, hi: TensorRead<'_>) -> Result<Tensor> {
    validate_clamp(&lo, &x, &hi)?;
    dispatch_dtype!(x.dtype(), T => {
        let (l, h) = clamp_views::<T>(&lo, &x, &hi)?;
        let v = x.typed_view::<T>()?;
        fill_output::<T>(ctx, "clamp", v.shape(), |out| clamp_typed(ctx, &l, &v, &h, out)).map(Tensor::from)
    })
}

/// [`clamp`] into a destination of `x`'s dtype and shape.
pub fn clamp_into(
    ctx: &KernelContext<'_>,
    lo: TensorRead<'_>,
    x: TensorRead<'_>,
    hi: TensorRead<'_>,
    mut out: TensorWrite<'_>,
) -> Result<()> {
    validate_clamp(&lo, &x, &hi)?;
    out.expect("clamp", x.dtype(), x.shape())?;
    dispatch_dtype!(x.dtype(), T => {
        let (l, h) = clamp_views::<T>(&lo, &x, &hi)?;
        let v = x.typed_view::<T>()?;
        write_into::<T>(ctx, &mut out, |o| clamp_typed(ctx, &l, &v, &h, o))
    })
}

fn clamp_typed<T: ElementwiseScalar>(
    ctx: &KernelContext<'_>,
    lo: &TypedView<'_, T>,
    x: &TypedView<'_, T>,
    hi: &TypedView<'_, T>,
    out: &mut [T],
) {
    let (lb, xb, hb) = (lo.buffer(), x.buffer(), hi.buffer());
    for_each_block(
        ctx.par(),
        x.shape(),
        [lo.layout(), x.layout(), hi.layout()],
        out,
        |block, [ol, ox, oh], [sl, sx, sh]| {
            let (mut gl, mut gx, mut gh) = (Vec::new(), Vec::new(), Vec::new());
            let n = block.len();
            slices::clamp(
                gather(lb, ol, sl, n, &mut gl),
                gather(xb, ox, sx, n, &mut gx),
                gather(hb, oh, sh, n, &mut gh),
                block,
            );
        },
    );
}

/// The generic entry: runs `op` on `inputs` (one for unary, two for binary and compare,
/// three for select `[pred, on_true, on_false]` and clamp `[lo, x, hi]`) into `out`.
pub fn elementwise_into(
    ctx: &KernelContext<'_>,
    op: ElementwiseOp,
    inputs: &[TensorRead<'_>],
    out: TensorWrite<'_>,
) -> Result<()> {
    let arity = match op {
        ElementwiseOp::Unary(_) => 1,
        ElementwiseOp::Binary(_) | ElementwiseOp::Compare(_) => 2,
        ElementwiseOp::Select | ElementwiseOp::Clamp => 3,
    };
    if inputs.len() != arity {
        return Err(Error::invalid_argument(
            "elementwise",
            format!("{op:?} takes {arity} inputs, {} were given", inputs.len()),
        ));
    }
    let i = |k: usize| inputs[k].clone();
    match op {
        ElementwiseOp::Unary(u) => unary_into(ctx, u, i(0), out),
        ElementwiseOp::Binary(b) => binary_into(ctx, b, i(0), i(1), out),
        ElementwiseOp::Compare(d) => compare_into(ctx, d, i(0), i(1), out),
        ElementwiseOp::Select => select_into(ctx, i(0), i(1), i(2), out),
        ElementwiseOp::Clamp => clamp_into(ctx, i(0), i(1), i(2), out),
    }
}

macro_rules! named_binary {
    ($($name:ident, $into:ident, $op:ident, $doc:literal;)*) => {$(
        #[doc = concat!("`", $doc, "` elementwise: [`binary`] with [`BinaryOp::", stringify!($op), "`].")]
        pub fn $name(ctx: &KernelContext<'_>, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
            binary(ctx, BinaryOp::$op, a, b)
        }
        #[doc = concat!("`", $doc, "` elementwise into `out`: [`binary_into`] with [`BinaryOp::", stringify!($op), "`].")]
        pub fn $into(ctx: &KernelContext<'_>, a: TensorRead<'_>, b: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()> {
            binary_into(ctx, BinaryOp::$op, a, b, out)
        }
    )*};
}

named_binary! {
    add, add_into, Add, "a + b";
    sub, sub_into, Sub, "a - b";
    mul, mul_into, Mul, "a * b";
    div, div_into, Div, "a / b";
    rem, rem_into, Rem, "a % b";
    maximum, maximum_into, Max, "max(a, b)";
    minimum, minimum_into, Min, "min(a, b)";
}

macro_rules! named_unary {
    ($($name:ident, $into:ident, $op:ident;)*) => {$(
        #[doc = concat!("[`unary`] with [`UnaryOp::", stringify!($op), "`].")]
        pub fn $name(ctx: &KernelContext<'_>, x: TensorRead<'_>) -> Result<Tensor> {
            unary(ctx, UnaryOp::$op, x)
        }
        #[doc = concat!("[`unary_into`] with [`UnaryOp::", stringify!($op), "`].")]
        pub fn $into(ctx: &KernelContext<'_>, x: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()> {
            unary_into(ctx, UnaryOp::$op, x, out)
        }
    )*};
}

named_unary! {
    neg, neg_into, Neg;
    conj, conj_into, Conj;
    abs, abs_into, Abs;
    sign, sign_into, Sign;
}

pub(crate) use named_unary;
