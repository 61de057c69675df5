//! BLAS-1 operations over whole tensors of any strides: `vdot` (conjugating its first
//! argument), `norm_squared` (a real result for complex input) and `axpby_into`.

use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{Error, Result, Scalar, Tensor, TensorRead, TensorWrite, TypedTensor, c64};

use super::dot_general::{coefficient, dot_general_with};
use super::scalar::{ContractScalar, check_dtype, dispatch_contract};
use crate::context::KernelContext;
use crate::strided::StridedPlan;
use crate::structural;

fn check_pair(op: &'static str, x: &TensorRead<'_>, y_dtype: strata_tensor::DType, y_shape: &[usize]) -> Result<()> {
    check_dtype(op, x.dtype())?;
    if x.dtype() != y_dtype {
        return Err(Error::dtype_mismatch(op, format!("x has dtype {}, y has dtype {y_dtype}", x.dtype())));
    }
    if x.shape() != y_shape {
        return Err(Error::shape_mismatch(op, format!("x has shape {:?}, y has shape {y_shape:?}", x.shape())));
    }
    Ok(())
}

/// `Σ conj(x[i]) · y[i]` over every element of two tensors of one shape and dtype, as a
/// rank-0 tensor (numpy's `vdot`).
///
/// ```
/// use strata_kernels::{KernelContext, contraction::vdot};
/// use strata_tensor::{Tensor, c64};
/// let x = Tensor::from_vec(vec![c64::new(0.0, 1.0), c64::new(2.0, 0.0)], &[2]).unwrap();
/// let y = Tensor::from_vec(vec![c64::new(0.0, 1.0), c64::new(3.0, 0.0)], &[2]).unwrap();
/// let d = vdot(&KernelContext::sequential(), (&x).into(), (&y).into()).unwrap();
/// assert_eq!(d.as_typed::<c64>().unwrap().data(), &[c64::new(7.0, 0.0)]);
/// ```
pub fn vdot(ctx: &KernelContext<'_>, x: TensorRead<'_>, y: TensorRead<'_>) -> Result<Tensor> {
    const OP: &str = "vdot";
    check_pair(OP, &x, y.dtype(), y.shape())?;
    let all: Vec<usize> = (0..x.rank()).collect();
    let config = DotGeneralConfig::new(vec![], vec![], all.clone(), all);
    // Every axis contracted: m = n = 1, the dot route, which never needs a provider.
    dot_general_with(ctx, x, y, &config, [true, false], None, None).map_err(|e| e.in_op(OP))
}

/// `Σ |x[i]|²` over every element, as a rank-0 tensor of the real dtype (f32 for c32,
/// f64 for c64).
///
/// ```
/// use strata_kernels::{KernelContext, contraction::norm_squared};
/// use strata_tensor::{Tensor, c32};
/// let x = Tensor::from_vec(vec![c32::new(3.0, 4.0), c32::new(1.0, 0.0)], &[2]).unwrap();
/// let n = norm_squared(&KernelContext::sequential(), (&x).into()).unwrap();
/// assert_eq!(n.as_typed::<f32>().unwrap().data(), &[26.0]);
/// ```
pub fn norm_squared(ctx: &KernelContext<'_>, x: TensorRead<'_>) -> Result<Tensor> {
    const OP: &str = "norm_squared";
    check_dtype(OP, x.dtype())?;
    dispatch_contract!(OP, x.dtype(), T => {
        let v = x.typed_view::<T>()?;
        let copied;
        let data = match v.as_contiguous() {
            Some(d) => d,
            None => {
                copied = structural::to_contiguous_typed(ctx, &v)?;
                copied.data()
            }
        };
        Ok(Tensor::from(TypedTensor::scalar(sum_abs2::<T>(data))))
    })
}

/// Sum of `|x|²` in fixed lanes (the order never depends on threads).
fn sum_abs2<T: ContractScalar>(data: &[T]) -> T::Real
where
    T::Real: ContractScalar,
{
    const LANES: usize = 8;
    let mut acc = [<T::Real as Scalar>::zero(); LANES];
    let chunks = data.chunks_exact(LANES);
    let tail = chunks.remainder();
    for c in chunks {
        for i in 0..LANES {
            acc[i] = acc[i] + c[i].abs2();
        }
    }
    let mut total = <T::Real as Scalar>::zero();
    for a in acc {
        total = total + a;
    }
    for &t in tail {
        total = total + t.abs2();
    }
    total
}

/// `y = a · x + b · y`, elementwise over two tensors of one shape and dtype (any
/// strides). When `b` is zero, `y` is not read. For real dtypes `a` and `b` must be real.
/// Every check runs before `y` is written.
///
/// ```
/// use strata_kernels::{KernelContext, contraction::axpby_into};
/// use strata_tensor::{Tensor, c64};
/// let x = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
/// let mut y = Tensor::from_vec(vec![10.0f64, 20.0], &[2]).unwrap();
/// let ctx = KernelContext::sequential();
/// axpby_into(&ctx, c64::new(2.0, 0.0), (&x).into(), c64::new(0.5, 0.0), (&mut y).into()).unwrap();
/// assert_eq!(y.as_typed::<f64>().unwrap().data(), &[7.0, 14.0]);
/// ```
pub fn axpby_into(_ctx: &KernelContext<'_>, a: c64, x: TensorRead<'_>, b: c64, mut y: TensorWrite<'_>) -> Result<()> {
    const OP: &str = "axpby_into";
    check_pair(OP, &x, y.dtype(), y.shape())?;
    dispatch_contract!(OP, x.dtype(), T => {
        let (a, b) = (coefficient::<T>(OP, "a", a)?, coefficient::<T>(OP, "b", b)?);
        let xv = x.typed_view::<T>()?;
        let mut yv = y.typed_view_mut::<T>()?;
        let combine = |xe: T, ye: T| if b == T::zero() { a * xe } else { a * xe + b * ye };
        if let (Some(xs), Some(ys)) = (xv.as_contiguous(), yv.as_contiguous_mut()) {
            for (ye, &xe) in ys.iter_mut().zip(xs) {
                *ye = combine(xe, *ye);
            }
        } else {
            let xbuf = xv.buffer();
            let (ybuf, ylayout) = yv.buffer_and_layout();
            let walk = StridedPlan::new(xv.shape(), [xv.layout(), ylayout]);
            let [xs, ys] = walk.inner_strides();
            walk.for_each_run(0, walk.len(), |_, [xo, yo], len| {
                for i in 0..len as isize {
                    let yi = (yo + i * ys) as usize;
                    ybuf[yi] = combine(xbuf[(xo + i * xs) as usize], ybuf[yi]);
                }
            });
        }
        Ok(())
    })
}
