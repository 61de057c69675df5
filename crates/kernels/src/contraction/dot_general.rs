//! The `dot_general` entries: validation, analysis lookup, dtype dispatch.

use std::sync::Arc;

use strata_tensor::config::DotGeneralConfig;
use strata_tensor::shape::row_major_strides;
use strata_tensor::{DType, Error, Result, Scalar, Tensor, TensorRead, TensorWrite, c64};

use strata_provider::GemmProvider;

use super::cache::{PlanCache, PlanKey};
use super::execute::{Destination, Operands, run_plan};
use super::plan::{ContractionPlan, Geometry, analyze};
use super::scalar::{ContractScalar, check_dtype, dispatch_contract};
use super::tiny::{CompactMatrixProduct, TINY_CONTRACTION, contract_tiny, multiply_adds};
use crate::alloc::fill_output;
use crate::context::KernelContext;

const OP: &str = "dot_general";

/// Checks everything about the operands that does not involve the destination (dtypes,
/// the config against the shapes, the cache slot), and gives the common dtype.
/// Allocates nothing.
fn check_operands(
    lhs: &TensorRead<'_>,
    rhs: &TensorRead<'_>,
    config: &DotGeneralConfig,
    cache: Option<&PlanCache<'_>>,
) -> Result<DType> {
    check_dtype(OP, lhs.dtype())?;
    if rhs.dtype() != lhs.dtype() {
        return Err(Error::dtype_mismatch(
            OP,
            format!("lhs has dtype {}, rhs has dtype {}; operands share one dtype", lhs.dtype(), rhs.dtype()),
        ));
    }
    config.validate(lhs.shape(), rhs.shape())?;
    if let Some(c) = cache {
        c.check(OP)?;
    }
    Ok(lhs.dtype())
}

/// The result's shape, for operands that passed [`check_operands`].
fn output_shape(lhs: &TensorRead<'_>, rhs: &TensorRead<'_>, config: &DotGeneralConfig) -> Result<Vec<usize>> {
    config.output_shape(lhs.shape(), rhs.shape())
}

pub(crate) fn needs_unit_stride(provider: Option<&dyn GemmProvider>) -> bool {
    provider.is_some_and(|p| p.capabilities().needs_unit_stride)
}

/// Converts alpha or beta to `T`, refusing an imaginary part a real dtype cannot hold.
pub(crate) fn coefficient<T: ContractScalar>(op: &'static str, name: &str, v: c64) -> Result<T> {
    super::scalar::exact_from_c64::<T>(v).ok_or_else(|| {
        Error::invalid_argument(
            op,
            format!("{name} = {v} has an imaginary part, the operands have real dtype {}", T::DTYPE),
        )
    })
}

#[allow(clippy::too_many_arguments)]
fn plan_for(
    dtype: DType,
    needs_unit_stride: bool,
    lhs: &TensorRead<'_>,
    rhs: &TensorRead<'_>,
    out_strides: &[isize],
    out_shape: &[usize],
    config: &DotGeneralConfig,
    cache: Option<&PlanCache<'_>>,
) -> Arc<ContractionPlan> {
    let (lv, rv) = (lhs.view(), rhs.view());
    let geometry = Geometry {
        lhs_shape: lv.shape(),
        lhs_strides: lv.layout().strides(),
        rhs_shape: rv.shape(),
        rhs_strides: rv.layout().strides(),
        out_strides,
        needs_unit_stride,
        elem_bytes: dtype.size_bytes(),
    };
    let build = || analyze(config, &geometry, out_shape.to_vec());
    match cache {
        None => Arc::new(build()),
        Some(c) => c.get_or_analyze(PlanKey::new(dtype, &geometry, config), build),
    }
}

/// Multiply-adds that weigh as much as touching one element, for [`dot_general_work`].
/// At 1 a contraction's work is its multiply-adds plus its elements, so the facade's
/// inline rule (2^20 elements touched, set for memory-bound ops, whose pool hop costs
/// tens of microseconds on a virtual machine) sends products of about a million
/// multiply-adds and more to the workers (measured: an MPS environment step of 0.5M
/// multiply-adds ran at 50 GFLOP/s inline against 32 through the domain at 2 threads,
/// a 6M one at 80 through the domain against 54 inline).
pub const MACS_PER_ELEMENT: usize = 1;

/// The work of a `dot_general` in elements-touched equivalents, for a caller's choice
/// between running inline and entering a parallel domain: the elements of both operands
/// and of the result, plus one per [`MACS_PER_ELEMENT`] multiply-adds. Counting elements
/// alone misjudges contractions (a product of two 1000² matrices touches 3·10⁶ elements
/// but does 10⁹ multiply-adds). Never fails: a config that does not fit the shapes gets
/// an estimate, and the op itself reports the error.
///
/// ```
/// use strata_kernels::contraction::dot_general_work;
/// use strata_tensor::config::DotGeneralConfig;
/// let mm = DotGeneralConfig::matmul();
/// // 3 · 64² elements plus 64³ multiply-adds.
/// assert_eq!(dot_general_work(&[64, 64], &[64, 64], &mm), 3 * 4096 + 262_144);
/// ```
pub fn dot_general_work(lhs_shape: &[usize], rhs_shape: &[usize], config: &DotGeneralConfig) -> usize {
    let product = |shape: &[usize], dims: &[usize]| {
        dims.iter().map(|&d| shape.get(d).copied().unwrap_or(1)).fold(1usize, usize::saturating_mul)
    };
    let len = |shape: &[usize]| shape.iter().fold(1usize, |a, &e| a.saturating_mul(e));
    let (lhs_len, rhs_len) = (len(lhs_shape), len(rhs_shape));
    let shared = product(rhs_shape, &config.rhs_batch).saturating_mul(product(rhs_shape, &config.rhs_contracting));
    let rhs_free = rhs_len.checked_div(shared).unwrap_or(0);
    let macs = lhs_len.saturating_mul(rhs_free);
    let out = macs.checked_div(product(lhs_shape, &config.lhs_contracting)).unwrap_or(0);
    lhs_len.saturating_add(rhs_len).saturating_add(out).saturating_add(macs / MACS_PER_ELEMENT)
}

/// `dot_general` into a fresh row-major tensor: output axes are the batch axes, then the
/// lhs free axes, then the rhs free axes. `conj_lhs` / `conj_rhs` use the complex
/// conjugate of an operand (no effect on real dtypes). `cache` is where the analysis is
/// looked up (none: analyse every call).
///
/// ```
/// use strata_kernels::KernelContext;
/// use strata_kernels::contraction::dot_general;
/// use strata_tensor::{Tensor, config::DotGeneralConfig};
/// let a = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// let b = Tensor::from_vec(vec![5.0f64, 6.0, 7.0, 8.0], &[2, 2]).unwrap();
/// let ctx = KernelContext::sequential();
/// let faer = strata_provider::FaerGemmProvider;
/// let c = dot_general(&ctx, (&a).into(), (&b).into(), &DotGeneralConfig::matmul(), false, false, &faer, None)
///     .unwrap();
/// assert_eq!(c.as_typed::<f64>().unwrap().data(), &[19.0, 22.0, 43.0, 50.0]);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn dot_general(
    ctx: &KernelContext<'_>,
    lhs: TensorRead<'_>,
    rhs: TensorRead<'_>,
    config: &DotGeneralConfig,
    conj_lhs: bool,
    conj_rhs: bool,
    provider: &dyn GemmProvider,
    cache: Option<&PlanCache<'_>>,
) -> Result<Tensor> {
    dot_general_with(ctx, lhs, rhs, config, [conj_lhs, conj_rhs], Some(provider), cache)
}

/// [`dot_general`] with the provider optional (our own loops stand in for it).
pub(crate) fn dot_general_with(
    ctx: &KernelContext<'_>,
    lhs: TensorRead<'_>,
    rhs: TensorRead<'_>,
    config: &DotGeneralConfig,
    [conj_lhs, conj_rhs]: [bool; 2],
    provider: Option<&dyn GemmProvider>,
    cache: Option<&PlanCache<'_>>,
) -> Result<Tensor> {
    let dtype = check_operands(&lhs, &rhs, config, cache)?;
    // Two small compact matrices: straight from the slices, no views, no shape vector.
    if let Some(product) = CompactMatrixProduct::of(lhs.shape(), rhs.shape(), config)
        && product.multiply_adds() <= TINY_CONTRACTION
    {
        let done: Result<Option<Tensor>> = dispatch_contract!(OP, dtype, T => match (lhs.contiguous::<T>(), rhs.contiguous::<T>()) {
            (Some(a), Some(b)) => {
                fill_output::<T>(ctx, OP, &product.out_shape(), |buf| product.run(a, b, [conj_lhs, conj_rhs], buf))
                    .map(|t| Some(Tensor::from(t)))
            }
            _ => Ok(None),
        });
        if let Some(result) = done? {
            return Ok(result);
        }
    }
    let out_shape = output_shape(&lhs, &rhs, config)?;
    // A zero-size operand may still ask for more outputs than a usize counts.
    let out_len = strata_tensor::shape::checked_len(OP, &out_shape)?;
    if multiply_adds(lhs.shape(), config, out_len) <= TINY_CONTRACTION {
        return dispatch_contract!(OP, dtype, T => {
            let (l, r) = (lhs.typed_view::<T>()?, rhs.typed_view::<T>()?);
            fill_output::<T>(ctx, OP, &out_shape, |buf| contract_tiny(&l, &r, config, [conj_lhs, conj_rhs], buf))
                .map(Tensor::from)
        });
    }
    let out_strides = row_major_strides(&out_shape);
    let unit = needs_unit_stride(provider);
    let plan = plan_for(dtype, unit, &lhs, &rhs, &out_strides, &out_shape, config, cache);
    dispatch_contract!(OP, dtype, T => {
        let ops = Operands {
            lhs: lhs.typed_view::<T>()?,
            rhs: rhs.typed_view::<T>()?,
            conj: [conj_lhs, conj_rhs],
            alpha: T::one(),
            beta: T::zero(),
        };
        let layout = strata_tensor::Layout::row_major(&out_shape);
        let mut status = Ok(());
        let out = fill_output::<T>(ctx, OP, &out_shape, |buf| {
            status = run_plan(ctx, &plan, &ops, Destination { buf, layout: &layout }, provider);
        })?;
        status.map(|()| Tensor::from(out))
    })
}

/// `out = alpha · dot_general(op(lhs), op(rhs)) + beta · out`. The destination must have
/// the result's dtype and shape; any strides it has are honoured. When `beta` is zero the
/// destination is not read (NaN in it does not propagate). Every check runs before the
/// destination is written. For real dtypes alpha and beta must be real.
#[allow(clippy::too_many_arguments)]
pub fn dot_general_into(
    ctx: &KernelContext<'_>,
    lhs: TensorRead<'_>,
    rhs: TensorRead<'_>,
    config: &DotGeneralConfig,
    conj_lhs: bool,
    conj_rhs: bool,
    alpha: c64,
    beta: c64,
    mut out: TensorWrite<'_>,
    provider: &dyn GemmProvider,
    cache: Option<&PlanCache<'_>>,
) -> Result<()> {
    let dtype = check_operands(&lhs, &rhs, config, cache)?;
    let out_shape = output_shape(&lhs, &rhs, config)?;
    out.expect(OP, dtype, &out_shape)?;
    dispatch_contract!(OP, dtype, T => {
        let ops = Operands {
            lhs: lhs.typed_view::<T>()?,
            rhs: rhs.typed_view::<T>()?,
            conj: [conj_lhs, conj_rhs],
            alpha: coefficient::<T>(OP, "alpha", alpha)?,
            beta: coefficient::<T>(OP, "beta", beta)?,
        };
        let mut view = out.typed_view_mut::<T>()?;
        let (buf, layout) = view.buffer_and_layout();
        let unit = needs_unit_stride(Some(provider));
        let plan = plan_for(dtype, unit, &lhs, &rhs, layout.strides(), &out_shape, config, cache);
        run_plan(ctx, &plan, &ops, Destination { buf, layout }, Some(provider))
    })
}
