//! Grouped GEMM: many independent matrix products of different sizes in one call.
//!
//! The schedule comes from a cost model (multiply-adds per job). A job worth at least a
//! worker's fair share of the whole call, and big enough to split, runs alone with the
//! provider owning all the parallelism, exactly as if it had been called by itself. The
//! remaining jobs are packed onto the workers (largest first, each to the least loaded
//! worker) and each runs single-threaded there. So a large job plus many tiny ones costs
//! the large job's own time plus the tiny ones spread over the workers, never the sum of
//! separate calls.

use std::sync::Mutex;

use strata_provider::GemmProvider;
use strata_tensor::config::{DotGeneralConfig, GemmShape, GroupedGemmConfig};
use strata_tensor::shape::row_major_strides;
use strata_tensor::{Error, Layout, Result, Tensor, TensorRead, TypedTensor};

use super::execute::{Destination, Operands, run_plan};
use super::plan::{Geometry, analyze};
use super::scalar::{ContractScalar, check_dtype, dispatch_contract};
use crate::alloc::fill_output;
use crate::context::KernelContext;

const OP: &str = "grouped_gemm";

/// Jobs below this many multiply-adds are never split internally: a 64³ product is
/// where a provider's own threading starts to pay.
const SPLIT_MIN_MACS: u64 = 64 * 64 * 64;

/// How the jobs of one call are run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GroupedSchedule {
    /// Jobs run one after another, each with the whole budget.
    pub alone: Vec<usize>,
    /// Per worker, the jobs it runs single-threaded.
    pub packed: Vec<Vec<usize>>,
}

/// The cost model: see the module docs.
pub(crate) fn schedule(shapes: &[GemmShape], budget: usize) -> GroupedSchedule {
    let macs: Vec<u64> = shapes.iter().map(|s| s.flops() / 2).collect();
    let total: u64 = macs.iter().fold(0u64, |a, &b| a.saturating_add(b));
    let budget = budget.max(1);
    let fair_share = total / budget as u64;
    let mut alone = Vec::new();
    let mut rest = Vec::new();
    for (i, &c) in macs.iter().enumerate() {
        if budget > 1 && c >= SPLIT_MIN_MACS && c >= fair_share {
            alone.push(i);
        } else {
            rest.push(i);
        }
    }
    // Longest processing time first onto the least loaded worker: within 4/3 of optimal.
    rest.sort_by_key(|&i| std::cmp::Reverse(macs[i]));
    let workers = budget.min(rest.len()).max(1);
    let mut packed: Vec<Vec<usize>> = vec![Vec::new(); workers];
    let mut load = vec![0u64; workers];
    for i in rest {
        let w = (0..workers).min_by_key(|&w| load[w]).unwrap_or(0);
        load[w] = load[w].saturating_add(macs[i].max(1));
        packed[w].push(i);
    }
    packed.retain(|jobs| !jobs.is_empty());
    GroupedSchedule { alone, packed }
}

/// The work of a grouped GEMM in elements-touched equivalents (see
/// [`dot_general_work`](super::dot_general_work)): the sum over its jobs, each a matrix
/// product (rank 2) or a batched one (rank 3, leading batch axis). Never fails.
///
/// ```
/// use strata_kernels::contraction::grouped_gemm_work;
/// use strata_tensor::Tensor;
/// let a = Tensor::zeros(strata_tensor::DType::F64, &[64, 64]).unwrap();
/// assert_eq!(grouped_gemm_work(&[(&a).into()], &[(&a).into()]), 3 * 4096 + 262_144);
/// ```
pub fn grouped_gemm_work(lhs: &[TensorRead<'_>], rhs: &[TensorRead<'_>]) -> usize {
    let matmul = DotGeneralConfig::matmul();
    let batched = DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1]);
    lhs.iter()
        .zip(rhs)
        .map(|(l, r)| {
            let config = if l.rank() == 3 { &batched } else { &matmul };
            super::dot_general_work(l.shape(), r.shape(), config)
        })
        .fold(0usize, usize::saturating_add)
}

/// Runs every job `lhs[i] x rhs[i]` (rank 2, or rank 3 with a leading batch axis) and
/// gives the products in job order, each a fresh row-major tensor. Every operand is
/// checked before anything runs.
///
/// ```
/// use strata_kernels::{KernelContext, contraction::grouped_gemm};
/// use strata_tensor::{Tensor, config::GroupedGemmConfig};
/// let a = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2]).unwrap();
/// let b = Tensor::from_vec(vec![3.0f32, 4.0], &[2, 1]).unwrap();
/// let faer = strata_provider::FaerGemmProvider;
/// let outs = grouped_gemm(&KernelContext::sequential(), &[(&a).into(), (&b).into()],
///     &[(&b).into(), (&a).into()], &GroupedGemmConfig::default(), &faer).unwrap();
/// assert_eq!(outs[0].as_typed::<f32>().unwrap().data(), &[11.0]);
/// assert_eq!(outs[1].as_typed::<f32>().unwrap().data(), &[3.0, 6.0, 4.0, 8.0]);
/// ```
pub fn grouped_gemm(
    ctx: &KernelContext<'_>,
    lhs: &[TensorRead<'_>],
    rhs: &[TensorRead<'_>],
    config: &GroupedGemmConfig,
    provider: &dyn GemmProvider,
) -> Result<Vec<Tensor>> {
    let lhs_shapes: Vec<&[usize]> = lhs.iter().map(|t| t.shape()).collect();
    let rhs_shapes: Vec<&[usize]> = rhs.iter().map(|t| t.shape()).collect();
    let shapes = config.validate(&lhs_shapes, &rhs_shapes)?;
    let Some(first) = lhs.first() else { return Ok(Vec::new()) };
    let dtype = first.dtype();
    check_dtype(OP, dtype)?;
    for (i, t) in lhs.iter().chain(rhs).enumerate() {
        if t.dtype() != dtype {
            let (side, job) = if i < lhs.len() { ("lhs", i) } else { ("rhs", i - lhs.len()) };
            return Err(Error::dtype_mismatch(
                OP,
                format!(
                    "job {job}: {side} has dtype {}, job 0's lhs has {dtype}; all operands share one dtype",
                    t.dtype()
                ),
            ));
        }
    }
    dispatch_contract!(OP, dtype, T => run_grouped::<T>(ctx, lhs, rhs, config, &shapes, provider))
}

fn run_grouped<T: ContractScalar>(
    ctx: &KernelContext<'_>,
    lhs: &[TensorRead<'_>],
    rhs: &[TensorRead<'_>],
    config: &GroupedGemmConfig,
    shapes: &[GemmShape],
    provider: &dyn GemmProvider,
) -> Result<Vec<Tensor>> {
    let plan = schedule(shapes, ctx.par().budget());
    let results: Vec<Mutex<Option<Result<TypedTensor<T>>>>> = shapes.iter().map(|_| Mutex::new(None)).collect();
    let run_job = |job: usize, job_ctx: &KernelContext<'_>| {
        let out = one_job::<T>(job_ctx, &lhs[job], &rhs[job], config, shapes[job], provider);
        // A job's cell is written once by the one worker that ran it.
        *results[job].lock().unwrap_or_else(|p| p.into_inner()) = Some(out);
    };
    for &job in &plan.alone {
        run_job(job, ctx);
    }
    // Packed jobs run one per worker, single-threaded, with the domain's pool (their
    // outputs are the domain's like any other).
    let sequential = match ctx.pool() {
        Some(pool) => KernelContext::sequential().with_pool(pool),
        None => KernelContext::sequential(),
    };
    ctx.par().for_each_index(plan.packed.len(), &|w| {
        for &job in &plan.packed[w] {
            run_job(job, &sequential);
        }
    });
    results
        .into_iter()
        .enumerate()
        .map(|(job, cell)| match cell.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(r) => r.map(Tensor::from),
            None => Err(Error::internal(OP, format!("job {job} was not scheduled"))),
        })
        .collect()
}

fn one_job<T: ContractScalar>(
    ctx: &KernelContext<'_>,
    lhs: &TensorRead<'_>,
    rhs: &TensorRead<'_>,
    config: &GroupedGemmConfig,
    shape: GemmShape,
    provider: &dyn GemmProvider,
) -> Result<TypedTensor<T>> {
    let batched = lhs.rank() == 3;
    let dot =
        if batched { DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1]) } else { DotGeneralConfig::matmul() };
    let out_shape = shape.output_shape(batched);
    let out_strides = row_major_strides(&out_shape);
    let (lv, rv) = (lhs.typed_view::<T>()?, rhs.typed_view::<T>()?);
    let geometry = Geometry {
        lhs_shape: lv.shape(),
        lhs_strides: lv.strides(),
        rhs_shape: rv.shape(),
        rhs_strides: rv.strides(),
        out_strides: &out_strides,
        needs_unit_stride: provider.capabilities().needs_unit_stride,
        elem_bytes: T::DTYPE.size_bytes(),
    };
    let plan = analyze(&dot, &geometry, out_shape.clone());
    let ops = Operands { lhs: lv, rhs: rv, conj: [config.conj_lhs, config.conj_rhs], alpha: T::one(), beta: T::zero() };
    let layout = Layout::row_major(&out_shape);
    let mut status = Ok(());
    let out = fill_output::<T>(ctx, OP, &out_shape, |buf| {
        status = run_plan(ctx, &plan, &ops, Destination { buf, layout: &layout }, Some(provider));
    })?;
    status.map(|()| out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(n: usize) -> GemmShape {
        GemmShape { batch: 1, m: n, k: n, n }
    }

    #[test]
    fn one_large_job_runs_alone_and_tiny_ones_are_spread() {
        let mut shapes = vec![sq(512)];
        shapes.extend(std::iter::repeat_n(sq(4), 100));
        let s = schedule(&shapes, 4);
        assert_eq!(s.alone, vec![0]);
        assert_eq!(s.packed.len(), 4);
        assert_eq!(s.packed.iter().map(Vec::len).sum::<usize>(), 100);
        assert!(s.packed.iter().all(|w| w.len() == 25));
    }

    #[test]
    fn budget_one_or_only_tiny_jobs_never_split_a_job() {
        let shapes = vec![sq(512), sq(256), sq(2)];
        let s = schedule(&shapes, 1);
        assert!(s.alone.is_empty());
        assert_eq!(s.packed, vec![vec![0, 1, 2]]);
        let s = schedule(&[sq(8), sq(8), sq(8)], 8);
        assert!(s.alone.is_empty());
        assert_eq!(s.packed.len(), 3);
    }

    #[test]
    fn equal_large_jobs_beyond_the_budget_are_packed_not_split() {
        // Eight equal 128³ jobs on 4 workers: each is half a fair share, so two per
        // worker, single-threaded (no intra-GEMM synchronisation at all).
        let s = schedule(&vec![sq(128); 8], 4);
        assert!(s.alone.is_empty());
        assert_eq!(s.packed.iter().map(Vec::len).collect::<Vec<_>>(), vec![2, 2, 2, 2]);
        // Many medium jobs, one huge: the huge one alone, the rest packed.
        let mut shapes = vec![sq(1024)];
        shapes.extend(vec![sq(96); 16]);
        let s = schedule(&shapes, 4);
        assert_eq!(s.alone, vec![0]);
        assert_eq!(s.packed.iter().map(Vec::len).sum::<usize>(), 16);
    }
}
