//! Bad input on some ranks: every rank gets the same typed error, no data moves, nobody
//! hangs, and the next collective works (the ranks stayed in step).

use strata_mpi::{AxisLayout, Distribution, MpiContext, ProcessGrid, ReduceKind};
use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{DType, ErrorKind, Result as StrataResult, Tensor};

use super::Case;
use crate::check;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![
        ("mismatched_dtypes_shapes_and_roots_fail_every_rank", collectives),
        ("mismatched_distributions_and_configs_fail_every_rank", contraction),
    ]
}

/// Checks the error kind and op, and that the ranks still agree afterwards.
fn expect_error<T>(ctx: &MpiContext, what: &str, r: StrataResult<T>, kind: ErrorKind, op: &str) -> Result<(), String> {
    match r {
        Ok(_) => return Err(format!("{what}: succeeded on rank {}", ctx.rank())),
        Err(e) => {
            check!(e.kind() == kind, "{what}: kind {:?}, want {kind:?}: {e}", e.kind());
            check!(e.op() == op, "{what}: op {}, want {op}: {e}", e.op());
        }
    }
    // In step: a sum of ones counts every rank.
    let one = Tensor::from_vec(vec![1i64], &[1]).map_err(|e| e.to_string())?;
    let n = ctx.all_reduce((&one).into(), ReduceKind::Sum).map_err(|e| format!("{what}: after: {e}"))?;
    let n = n.as_typed::<i64>().map_err(|e| e.to_string())?.data()[0];
    check!(n == ctx.size() as i64, "{what}: after the error a sum counted {n} ranks");
    Ok(())
}

fn collectives(ctx: &MpiContext) -> Result<(), String> {
    let last = ctx.size() - 1;
    let me = ctx.rank();
    let dtype = if me == last { DType::F32 } else { DType::F64 };
    let x = Tensor::zeros(dtype, &[3]).map_err(|e| e.to_string())?;
    expect_error(ctx, "dtype", ctx.all_reduce((&x).into(), ReduceKind::Sum), ErrorKind::DTypeMismatch, "all_reduce")?;
    let shape: &[usize] = if me == 0 { &[2, 3] } else { &[3, 2] };
    let y = Tensor::zeros(DType::C64, shape).map_err(|e| e.to_string())?;
    expect_error(ctx, "shape", ctx.all_gather((&y).into()), ErrorKind::ShapeMismatch, "all_gather")?;
    let z = Tensor::zeros(DType::I32, &[2]).map_err(|e| e.to_string())?;
    let kind = if me == 0 { ReduceKind::Max } else { ReduceKind::Min };
    expect_error(ctx, "reduction", ctx.all_reduce((&z).into(), kind), ErrorKind::InvalidArgument, "all_reduce")?;
    expect_error(ctx, "root", ctx.broadcast(Some((&z).into()), ctx.size()), ErrorKind::InvalidArgument, "broadcast")?;
    expect_error(ctx, "roots", ctx.broadcast(Some((&z).into()), me), ErrorKind::InvalidArgument, "broadcast")?;
    expect_error(ctx, "no tensor at root", ctx.broadcast(None, 0), ErrorKind::InvalidArgument, "broadcast")?;
    let dist = Distribution::new(
        ProcessGrid::line(ctx.size()).map_err(|e| e.to_string())?,
        vec![AxisLayout::Block { grid_dim: 0 }],
    )
    .map_err(|e| e.to_string())?;
    let wrong_rank = Tensor::zeros(DType::F64, &[4, 4]).map_err(|e| e.to_string())?;
    expect_error(
        ctx,
        "scatter rank mismatch",
        ctx.scatter((me == 0).then(|| (&wrong_rank).into()), 0, &dist),
        ErrorKind::ShapeMismatch,
        "scatter",
    )?;
    Ok(())
}

fn contraction(ctx: &MpiContext) -> Result<(), String> {
    let me = ctx.rank();
    let line = ProcessGrid::line(ctx.size()).map_err(|e| e.to_string())?;
    let rows = Distribution::new(line.clone(), vec![AxisLayout::Block { grid_dim: 0 }, AxisLayout::Whole])
        .map_err(|e| e.to_string())?;
    let cols = Distribution::new(line.clone(), vec![AxisLayout::Whole, AxisLayout::Block { grid_dim: 0 }])
        .map_err(|e| e.to_string())?;
    let matmul = DotGeneralConfig::matmul();
    let a = ctx.from_fn(&[6, 4], rows.clone(), |ix| ix[0] as f64).map_err(|e| e.to_string())?;
    // The last rank lays the rhs out differently.
    let b_dist = if me == ctx.size() - 1 { &cols } else { &rows };
    let b = ctx.from_fn(&[4, 5], b_dist.clone(), |ix| ix[1] as f64).map_err(|e| e.to_string())?;
    expect_error(
        ctx,
        "distributions",
        ctx.dot_general(&a, &b, &matmul),
        ErrorKind::InvalidArgument,
        "distributed_dot_general",
    )?;

    // One rank's config does not fit the shapes: its own validation fails, everyone errs.
    let b = ctx.from_fn(&[4, 5], rows.clone(), |ix| ix[1] as f64).map_err(|e| e.to_string())?;
    let config = if me == 0 { DotGeneralConfig::new(vec![], vec![], vec![0], vec![0]) } else { matmul.clone() };
    expect_error(
        ctx,
        "config on rank 0",
        ctx.dot_general(&a, &b, &config),
        ErrorKind::ShapeMismatch,
        "distributed_dot_general",
    )?;

    // Different shapes on one rank.
    let shape: &[usize] = if me == 0 { &[4, 7] } else { &[4, 5] };
    let b = ctx.from_fn(shape, rows.clone(), |ix| ix[1] as f64).map_err(|e| e.to_string())?;
    expect_error(ctx, "shapes", ctx.dot_general(&a, &b, &matmul), ErrorKind::ShapeMismatch, "distributed_dot_general")?;

    // Operands of different dtypes.
    let b = ctx.from_fn(&[4, 5], rows.clone(), |ix| ix[1] as f32).map_err(|e| e.to_string())?;
    expect_error(ctx, "dtypes", ctx.dot_general(&a, &b, &matmul), ErrorKind::DTypeMismatch, "distributed_dot_general")?;

    // Redistribution to a layout whose grid does not span the job.
    let small = Distribution::replicated(ProcessGrid::line(ctx.size() + 1).map_err(|e| e.to_string())?, 2);
    expect_error(ctx, "grid", ctx.redistribute(&a, &small), ErrorKind::InvalidArgument, "redistribute")?;
    Ok(())
}
