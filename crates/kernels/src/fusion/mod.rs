//! Fusion: an [`ElementwiseFusionPlan`] executed in one pass over its inputs, and a
//! broadcast-multiply that never materialises its broadcasts.
//!
//! The interpreter walks the output in blocks of a thousand elements; per block it
//! evaluates the live instructions in order into small column buffers (which stay in
//! L1) using the same inner loops as the standalone elementwise kernels, so a fused plan
//! gives bit-identical results to the unfused sequence without any full-size
//! intermediate. Each output is computed by its own pass; outputs that share
//! subexpressions recompute them.
//!
//! ```
//! use strata_kernels::{KernelContext, fusion};
//! use strata_tensor::{DType, Tensor, config::{BinaryOp, ElementwiseFusionPlan, FusionConstant, FusionInstr}};
//! // out = x * 3 + y
//! let mut plan = ElementwiseFusionPlan::default();
//! let x = plan.push(FusionInstr::Input(0));
//! let y = plan.push(FusionInstr::Input(1));
//! let three = plan.push(FusionInstr::Constant(FusionConstant::F64(3.0)));
//! let x3 = plan.push(FusionInstr::Binary(BinaryOp::Mul, x, three));
//! let out = plan.push(FusionInstr::Binary(BinaryOp::Add, x3, y));
//! plan.add_output(out);
//! let a = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
//! let b = Tensor::from_vec(vec![10.0f64, 20.0], &[2]).unwrap();
//! let r = fusion::execute(&KernelContext::sequential(), &plan, &[(&a).into(), (&b).into()]).unwrap();
//! assert_eq!(r[0].as_typed::<f64>().unwrap().data(), &[13.0, 26.0]);
//! ```

use std::sync::Mutex;

use strata_tensor::config::{
    BinaryOp, ElementwiseFusionPlan, FusionConstant, FusionInstr, FusionSignature, FusionValue, UnaryOp,
};
use strata_tensor::{
    DType, Error, Result, Scalar, Tensor, TensorRead, TensorView, TypedTensor, dispatch_dtype, shape::checked_len,
};

use crate::alloc::fill_output;
use crate::context::KernelContext;
use crate::elementwise::{ElementwiseScalar, binary, slices};
use crate::strided::{BLOCK, GRAIN, StridedPlan, par_chunks_mut};
use crate::structural::cast_slices;

/// Runs `plan` over `inputs` (one shape, the dtypes the plan expects) and returns one
/// tensor per plan output. The plan is validated first; nothing runs on error.
pub fn execute(
    ctx: &KernelContext<'_>,
    plan: &ElementwiseFusionPlan,
    inputs: &[TensorRead<'_>],
) -> Result<Vec<Tensor>> {
    let described: Vec<(DType, &[usize])> = inputs.iter().map(|x| (x.dtype(), x.shape())).collect();
    let sig = plan.validate(&described)?;
    checked_len("fusion", &sig.shape)?;
    let views: Vec<TensorView<'_>> = inputs.iter().map(|x| x.view()).collect();
    let plans: Vec<StridedPlan<1>> = views.iter().map(|v| StridedPlan::new(&sig.shape, [v.layout()])).collect();
    let constants: Vec<Option<Tensor>> = plan
        .instructions()
        .iter()
        .map(|i| match i {
            FusionInstr::Constant(c) => Some(constant_tensor(*c)),
            _ => None,
        })
        .collect();
    let program = Program { plan, sig: &sig, views: &views, plans: &plans, constants: &constants };
    plan.outputs()
        .iter()
        .zip(&sig.output_dtypes)
        .map(|(&target, &dtype)| {
            let failure: Mutex<Option<Error>> = Mutex::new(None);
            let out = dispatch_dtype!(dtype, O => fill_output::<O>(ctx, "fusion", &sig.shape, |out| {
                program.run(ctx, target, out, &failure)
            }).map(Tensor::from))?;
            match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
                Some(e) => Err(e),
                None => Ok(out),
            }
        })
        .collect()
}

fn constant_tensor(c: FusionConstant) -> Tensor {
    match c {
        FusionConstant::F32(v) => Tensor::scalar(v),
        FusionConstant::F64(v) => Tensor::scalar(v),
        FusionConstant::I32(v) => Tensor::scalar(v),
        FusionConstant::I64(v) => Tensor::scalar(v),
        FusionConstant::Bool(v) => Tensor::scalar(v),
        FusionConstant::C32(v) => Tensor::scalar(v),
        FusionConstant::C64(v) => Tensor::scalar(v),
    }
}

/// A validated plan bound to its inputs.
struct Program<'p> {
    plan: &'p ElementwiseFusionPlan,
    sig: &'p FusionSignature,
    views: &'p [TensorView<'p>],
    plans: &'p [StridedPlan<1>],
    constants: &'p [Option<Tensor>],
}

impl Program<'_> {
    /// The instructions `target` depends on, in order.
    fn live(&self, target: FusionValue) -> Vec<usize> {
        let instrs = self.plan.instructions();
        let mut live = vec![false; instrs.len()];
        live[target] = true;
        for at in (0..=target).rev() {
            if !live[at] {
                continue;
            }
            match instrs[at] {
                FusionInstr::Input(_) | FusionInstr::Constant(_) => {}
                FusionInstr::Unary(_, a) | FusionInstr::Cast(a, _) => live[a] = true,
                FusionInstr::Binary(_, a, b) | FusionInstr::Compare(_, a, b) => {
                    live[a] = true;
                    live[b] = true;
                }
                FusionInstr::Select { pred: a, on_true: b, on_false: c }
                | FusionInstr::Clamp { lo: a, x: b, hi: c } => {
                    live[a] = true;
                    live[b] = true;
                    live[c] = true;
                }
            }
        }
        (0..=target).filter(|&i| live[i]).collect()
    }

    fn run<O: Scalar>(
        &self,
        ctx: &KernelContext<'_>,
        target: FusionValue,
        out: &mut [O],
        failure: &Mutex<Option<Error>>,
    ) {
        let live = self.live(target);
        par_chunks_mut(ctx.par(), out, GRAIN, 1, |start, chunk| {
            if let Err(e) = self.run_chunk(&live, target, start, chunk) {
                failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
            }
        });
    }

    fn run_chunk<O: Scalar>(&self, live: &[usize], target: FusionValue, start: usize, chunk: &mut [O]) -> Result<()> {
        let mut cols: Vec<Option<Tensor>> = vec![None; self.plan.instructions().len()];
        for &i in live {
            cols[i] = Some(Tensor::zeros(self.sig.value_dtypes[i], &[BLOCK])?);
        }
        for (b, block) in chunk.chunks_mut(BLOCK).enumerate() {
            let pos = start + b * BLOCK;
            for &i in live {
                let mut col = cols[i].take().ok_or_else(|| internal("a live column is missing"))?;
                self.eval(i, &cols, &mut col, pos, block.len())?;
                cols[i] = Some(col);
            }
            let result = cols[target].as_ref().ok_or_else(|| internal("the target column is missing"))?;
            block.copy_from_slice(&result.as_typed::<O>()?.data()[..block.len()]);
        }
        Ok(())
    }

    /// Evaluates instruction `at` for elements `pos..pos + n` into `dst`.
    fn eval(&self, at: usize, cols: &[Option<Tensor>], dst: &mut Tensor, pos: usize, n: usize) -> Result<()> {
        let dtype_of = |v: FusionValue| self.sig.value_dtypes[v];
        match self.plan.instructions()[at] {
            FusionInstr::Input(i) => dispatch_dtype!(dtype_of(at), T => {
                let buf = T::from_view(self.views[i].clone())
                    .map_err(|_| internal("input dtype changed after validation"))?
                    .buffer();
                let d = &mut dst.as_typed_mut::<T>()?.data_mut()[..n];
                let [stride] = self.plans[i].inner_strides();
                self.plans[i].for_each_run(pos, pos + n, |p, [off], len| {
                    let dd = &mut d[p - pos..p - pos + len];
                    for (k, e) in dd.iter_mut().enumerate() {
                        *e = buf[(off + k as isize * stride) as usize];
                    }
                });
                Ok(())
            }),
            FusionInstr::Constant(_) => dispatch_dtype!(dtype_of(at), T => {
                let c = self.constants[at].as_ref().ok_or_else(|| internal("constant missing"))?;
                let value = c.as_typed::<T>()?.data()[0];
                dst.as_typed_mut::<T>()?.data_mut()[..n].fill(value);
                Ok(())
            }),
            FusionInstr::Unary(op, a) => dispatch_dtype!(dtype_of(a), T => {
                let src = column::<T>(cols, a, n)?;
                if op == UnaryOp::Abs && dtype_of(at) != dtype_of(a) {
                    slices::abs(src, &mut dst.as_typed_mut::<<T as ElementwiseScalar>::RealPart>()?.data_mut()[..n]);
                } else if op == UnaryOp::Conj && dtype_of(at) != dtype_of(a) {
                    // conj of a real value is the value with imaginary part +0: a cast.
                    dispatch_dtype!(dtype_of(at), C => {
                        cast_slices(src, &mut dst.as_typed_mut::<C>()?.data_mut()[..n]);
                    })
                } else {
                    slices::unary_same(op, src, &mut dst.as_typed_mut::<T>()?.data_mut()[..n]);
                }
                Ok(())
            }),
            FusionInstr::Binary(op, a, b) => dispatch_dtype!(dtype_of(a), T => {
                slices::binary(op, column::<T>(cols, a, n)?, column::<T>(cols, b, n)?, &mut dst.as_typed_mut::<T>()?.data_mut()[..n]);
                Ok(())
            }),
            FusionInstr::Compare(dir, a, b) => dispatch_dtype!(dtype_of(a), T => {
                slices::compare(dir, column::<T>(cols, a, n)?, column::<T>(cols, b, n)?, &mut dst.as_typed_mut::<bool>()?.data_mut()[..n]);
                Ok(())
            }),
            FusionInstr::Select { pred, on_true, on_false } => dispatch_dtype!(dtype_of(on_true), T => {
                slices::select(
                    column::<bool>(cols, pred, n)?,
                    column::<T>(cols, on_true, n)?,
                    column::<T>(cols, on_false, n)?,
                    &mut dst.as_typed_mut::<T>()?.data_mut()[..n],
                );
                Ok(())
            }),
            FusionInstr::Clamp { lo, x, hi } => dispatch_dtype!(dtype_of(x), T => {
                slices::clamp(
                    column::<T>(cols, lo, n)?,
                    column::<T>(cols, x, n)?,
                    column::<T>(cols, hi, n)?,
                    &mut dst.as_typed_mut::<T>()?.data_mut()[..n],
                );
                Ok(())
            }),
            FusionInstr::Cast(a, to) => dispatch_dtype!(dtype_of(a), S => {
                let src = column::<S>(cols, a, n)?;
                dispatch_dtype!(to, D => {
                    cast_slices(src, &mut dst.as_typed_mut::<D>()?.data_mut()[..n]);
                    Ok(())
                })
            }),
        }
    }
}

fn column<T: Scalar>(cols: &[Option<Tensor>], v: FusionValue, n: usize) -> Result<&[T]> {
    let t: &TypedTensor<T> =
        cols[v].as_ref().ok_or_else(|| internal("an operand column is missing"))?.as_typed::<T>()?;
    Ok(&t.data()[..n])
}

fn internal(what: &str) -> Error {
    Error::internal("fusion", what.to_string())
}

/// `a * b` where `a` and `b` are broadcast into `out_shape` (operand axis `k` of `a`
/// becomes axis `a_dims[k]`, likewise for `b`), without materialising either broadcast:
/// both are read through stride-0 views.
///
/// ```
/// use strata_kernels::{KernelContext, fusion};
/// use strata_tensor::Tensor;
/// let col = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
/// let row = Tensor::from_vec(vec![10.0f32, 20.0, 30.0], &[3]).unwrap();
/// let outer = fusion::broadcast_multiply(&KernelContext::sequential(), (&col).into(), &[0], (&row).into(), &[1], &[2, 3]).unwrap();
/// assert_eq!(outer.as_typed::<f32>().unwrap().data(), &[10.0, 20.0, 30.0, 20.0, 40.0, 60.0]);
/// ```
pub fn broadcast_multiply(
    ctx: &KernelContext<'_>,
    a: TensorRead<'_>,
    a_dims: &[usize],
    b: TensorRead<'_>,
    b_dims: &[usize],
    out_shape: &[usize],
) -> Result<Tensor> {
    const OP: &str = "broadcast_multiply";
    let a = a.view().broadcast_in_dim(out_shape, a_dims).map_err(|e| e.in_op(OP))?;
    let b = b.view().broadcast_in_dim(out_shape, b_dims).map_err(|e| e.in_op(OP))?;
    binary(ctx, BinaryOp::Mul, a.into(), b.into()).map_err(|e| e.in_op(OP))
}
