//! All-reduce, broadcast and all-gather of every dtype against references computed on
//! each rank from every rank's (deterministic) input.

use strata_backend::CpuBackend;
use strata_mpi::{MpiContext, ReduceKind};
use strata_tensor::config::BinaryOp;
use strata_tensor::{Scalar, Tensor, TypedTensor};

use super::Case;
use super::reference::{TestScalar, compare, full};
use crate::{check, each_dtype};

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![
        ("all_reduce_sum_max_min_for_every_dtype", all_reduce),
        ("all_reduce_float_max_min_propagate_nan_and_order_zeros", all_reduce_special_values),
        ("broadcast_for_every_dtype_rank_0_and_empty", broadcast),
        ("all_gather_for_every_dtype", all_gather),
    ]
}

const SHAPE: [usize; 2] = [5, 13];

/// The reference: a fold over every rank's input with the backend's element-wise op
/// (add for sums, with f64 accumulation for inexact types compared within a bound).
fn reference<T: TestScalar>(backend: &CpuBackend, size: usize, kind: ReduceKind) -> Result<Tensor, String> {
    let op = match kind {
        // strata's add is not defined for bool; the all-reduce sums bools as logical or.
        ReduceKind::Sum if T::DTYPE == strata_tensor::DType::Bool => BinaryOp::Max,
        ReduceKind::Sum => BinaryOp::Add,
        ReduceKind::Max => BinaryOp::Max,
        ReduceKind::Min => BinaryOp::Min,
    };
    let mut acc = full::<T>(100, &SHAPE);
    for r in 1..size {
        let x = full::<T>(100 + r as u64, &SHAPE);
        acc = backend.binary(op, &acc, &x).map_err(|e| e.to_string())?;
    }
    Ok(acc)
}

fn all_reduce(ctx: &MpiContext) -> Result<(), String> {
    let size = ctx.size();
    for kind in [ReduceKind::Sum, ReduceKind::Max, ReduceKind::Min] {
        each_dtype!(T => {
            let mine = full::<T>(100 + ctx.rank() as u64, &SHAPE);
            let got = ctx.all_reduce((&mine).into(), kind).map_err(|e| e.to_string())?;
            let want = reference::<T>(ctx.backend(), size, kind)?;
            // A sum of `size` terms in MPI's order: within size·eps·Σ|x| of any other order.
            let bound = Tensor::from_vec(vec![2.0 * (size * size) as f64 * T::eps(); got.len()], &SHAPE)
                .map_err(|e| e.to_string())?;
            compare::<T>(&format!("{kind:?}"), &got, &want, Some(&bound))?;
            // A strided view reduces like its compact copy.
            let view = mine.view().permute(&[1, 0]).map_err(|e| e.to_string())?;
            let got_t = ctx.all_reduce(view.into(), kind).map_err(|e| e.to_string())?;
            let want_t = strata_backend::StructuralOps::transpose(ctx.backend(), (&got).into(), &[1, 0])
                .map_err(|e| e.to_string())?;
            compare::<T>(&format!("{kind:?} of a transposed view"), &got_t, &want_t, None)
        })?;
    }
    Ok(())
}

fn all_reduce_special_values(ctx: &MpiContext) -> Result<(), String> {
    // Rank r holds [NaN on rank 1 only, -0 on even ranks / +0 on odd, r].
    let r = ctx.rank();
    let nan_here = if r == 1 { f64::NAN } else { 1.0 };
    let zero = if r.is_multiple_of(2) { -0.0 } else { 0.0 };
    let x = Tensor::from_vec(vec![nan_here, zero, r as f64], &[3]).map_err(|e| e.to_string())?;
    let max = ctx.all_reduce((&x).into(), ReduceKind::Max).map_err(|e| e.to_string())?;
    let min = ctx.all_reduce((&x).into(), ReduceKind::Min).map_err(|e| e.to_string())?;
    let max = max.as_typed::<f64>().map_err(|e| e.to_string())?.data().to_vec();
    let min = min.as_typed::<f64>().map_err(|e| e.to_string())?.data().to_vec();
    let n = ctx.size();
    check!(max[0].is_nan() && min[0].is_nan(), "NaN on rank 1 must propagate: max {} min {}", max[0], min[0]);
    check!(max[1] == 0.0 && max[1].is_sign_positive(), "max of zeros is {:?}", max[1]);
    check!(min[1] == 0.0 && min[1].is_sign_negative(), "min of zeros is {:?}", min[1]);
    check!(max[2] == (n - 1) as f64 && min[2] == 0.0, "max {} min {}", max[2], min[2]);
    // Complex: by real part, then imaginary.
    let z = Tensor::from_vec(vec![strata_tensor::c64::new(1.0, r as f64)], &[1]).map_err(|e| e.to_string())?;
    let zmax = ctx.all_reduce((&z).into(), ReduceKind::Max).map_err(|e| e.to_string())?;
    let zmax = zmax.as_typed::<strata_tensor::c64>().map_err(|e| e.to_string())?.data()[0];
    check!(zmax == strata_tensor::c64::new(1.0, (n - 1) as f64), "complex max {zmax}");
    Ok(())
}

fn broadcast(ctx: &MpiContext) -> Result<(), String> {
    let root = ctx.size() - 1;
    each_dtype!(T => {
        let want = full::<T>(7, &[3, 4, 2]);
        let x = (ctx.rank() == root).then(|| (&want).into());
        let got = ctx.broadcast(x, root).map_err(|e| e.to_string())?;
        compare::<T>("broadcast", &got, &want, None)?;
        let scalar = T::into_tensor(TypedTensor::scalar(T::one()));
        let got = ctx.broadcast((ctx.rank() == 0).then(|| (&scalar).into()), 0).map_err(|e| e.to_string())?;
        compare::<T>("broadcast of a scalar", &got, &scalar, None)?;
        let empty = T::into_tensor(TypedTensor::<T>::zeros(&[2, 0]).map_err(|e| e.to_string())?);
        let got = ctx.broadcast((ctx.rank() == 0).then(|| (&empty).into()), 0).map_err(|e| e.to_string())?;
        compare::<T>("broadcast of an empty tensor", &got, &empty, None)
    })
}

fn all_gather(ctx: &MpiContext) -> Result<(), String> {
    each_dtype!(T => {
        let mine = full::<T>(300 + ctx.rank() as u64, &[2, 3]);
        let got = ctx.all_gather((&mine).into()).map_err(|e| e.to_string())?;
        check!(got.shape() == [ctx.size(), 2, 3], "shape {:?}", got.shape());
        let data = got.as_typed::<T>().map_err(|e| e.to_string())?.data();
        for r in 0..ctx.size() {
            let want = full::<T>(300 + r as u64, &[2, 3]);
            let part = T::into_tensor(TypedTensor::from_vec(data[r * 6..(r + 1) * 6].to_vec(), &[2, 3]).map_err(|e| e.to_string())?);
            compare::<T>(&format!("block of rank {r}"), &part, &want, None)?;
        }
        Ok(())
    })
}
