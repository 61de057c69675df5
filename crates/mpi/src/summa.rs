//! Distributed `dot_general` by SUMMA on a 2-D process grid (the plan is
//! [`crate::SummaPlan`]): at each step the owners of the next panels broadcast them along
//! their grid row (lhs) and column (rhs) while every rank multiplies the current panels
//! into its result block through its own strata backend.

use std::borrow::Cow;
use std::time::Instant;

use mpi::collective::Root;
use mpi::request::{LocalScope, Request};
use mpi::topology::{Communicator, SimpleCommunicator};
use strata_backend::CpuBackend;
use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{
    BufferOps, Error, ErrorKind, Result, Scalar, Tensor, TensorWrite, TypedTensor, c64, dispatch_dtype,
};

use crate::agree::{Signature, agree};
use crate::collectives::{MpiScalar, check_count, dtype_code, shape_words};
use crate::context::MpiContext;
use crate::dist_tensor::DistTensor;
use crate::summa_plan::{SummaOptions, SummaPlan, matmul_lower_bound_words};

const OP: &str = "distributed_dot_general";

/// Pieces a step's product is cut into (along the result's split M axis) while the next
/// panels' broadcasts are pending, so each piece ends in an `MPI_Test` that moves them:
/// Open MPI has no progress thread, and a broadcast left alone during the product
/// happens in the wait after it.
const PROGRESS_PIECES: usize = 4;

/// Fewest rows of that axis in one piece: thinner pieces would cost the local GEMM more
/// than the progress saves.
const MIN_PIECE_ROWS: usize = 64;

/// What one distributed `dot_general` did, on this rank.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaReport {
    /// The plan it ran.
    pub plan: SummaPlan,
    /// Whether an operand had to be redistributed into the plan's layout first.
    pub redistributed: bool,
    /// Elements this rank received in panel broadcasts (redistribution not counted).
    pub words_received: u64,
    /// The most elements any rank receives, by the plan's model.
    pub max_words_model: u64,
    /// The lower bound on elements some rank must move for this matrix form
    /// ([`matmul_lower_bound_words`]; 0 with batch axes, which can split without any
    /// communication).
    pub lower_bound_words: f64,
    /// Wall time of the SUMMA steps on this rank, in seconds.
    pub seconds: f64,
    /// Of which in local products.
    pub compute_seconds: f64,
    /// Of which waiting for broadcasts.
    pub wait_seconds: f64,
}

impl MpiContext {
    /// `dot_general(lhs, rhs, config)` of distributed operands, distributed as
    /// [`SummaPlan::out`]. Equal to the single-node `dot_general` up to the order of the
    /// contracted sum (panel by panel).
    ///
    /// Errors: see [`MpiContext::dot_general_with`].
    pub fn dot_general(&self, lhs: &DistTensor, rhs: &DistTensor, config: &DotGeneralConfig) -> Result<DistTensor> {
        self.dot_general_with(lhs, rhs, config, &SummaOptions::default()).map(|(out, _)| out)
    }

    /// [`MpiContext::dot_general`] with explicit options (grid, panel width, overlap,
    /// conjugation), also returning this rank's [`SummaReport`].
    ///
    /// Operands in other layouts than the plan's are redistributed first. Errors (on
    /// every rank, before any data moves): operands of different dtypes, a config that
    /// does not fit the shapes, grids that do not span the job, and any disagreement
    /// across ranks on dtypes, shapes, config, distributions or options.
    pub fn dot_general_with(
        &self,
        lhs: &DistTensor,
        rhs: &DistTensor,
        config: &DotGeneralConfig,
        options: &SummaOptions,
    ) -> Result<(DistTensor, SummaReport)> {
        let planned = self.plan_dot_general(lhs, rhs, config, options);
        let signature = dot_signature(lhs, rhs, config, options);
        agree(&self.world, OP, planned.as_ref().map(|_| ()).map_err(copy_error), &signature)?;
        let plan = planned?;
        let mut redistributed = false;
        let a = if lhs.distribution() == &plan.lhs {
            Cow::Borrowed(lhs)
        } else {
            redistributed = true;
            Cow::Owned(self.redistribute(lhs, &plan.lhs)?)
        };
        let b = if rhs.distribution() == &plan.rhs {
            Cow::Borrowed(rhs)
        } else {
            redistributed = true;
            Cow::Owned(self.redistribute(rhs, &plan.rhs)?)
        };
        let (local, mut report) = self.with_grid_comms(&plan.grid, |comms| {
            dispatch_dtype!(lhs.dtype(), T => summa_typed::<T>(
                self.backend(),
                &comms.row,
                &comms.col,
                &plan,
                a.local(),
                b.local(),
                config,
                options,
            ))
        })?;
        let (batch, m, n, k) = plan.matrix_form(config);
        report.redistributed = redistributed;
        report.lower_bound_words = if batch == 1 { matmul_lower_bound_words(self.size(), m, n, k) } else { 0.0 };
        report.max_words_model = plan.max_words_received()?;
        let out = DistTensor::from_local(&plan.out_shape, plan.out.clone(), self.rank(), local)?;
        report.plan = plan;
        Ok((out, report))
    }

    /// Local checks and the plan (the same on every rank once the inputs agree).
    fn plan_dot_general(
        &self,
        lhs: &DistTensor,
        rhs: &DistTensor,
        config: &DotGeneralConfig,
        options: &SummaOptions,
    ) -> Result<SummaPlan> {
        if !lhs.dtype().is_inexact() {
            return Err(Error::unsupported(
                OP,
                format!("dot_general is defined for f32, f64, c32 and c64, not {:?}", lhs.dtype()),
            ));
        }
        if lhs.dtype() != rhs.dtype() {
            return Err(Error::dtype_mismatch(OP, format!("lhs is {:?}, rhs is {:?}", lhs.dtype(), rhs.dtype())));
        }
        for (side, x) in [("lhs", lhs), ("rhs", rhs)] {
            self.check_grid(OP, x.distribution().grid())?;
            if x.grid_rank() != self.rank() {
                return Err(Error::invalid_argument(
                    OP,
                    format!("the {side} is grid rank {}'s block, this is rank {}", x.grid_rank(), self.rank()),
                ));
            }
        }
        let plan = SummaPlan::new(lhs.shape(), rhs.shape(), config, self.size(), options)?;
        for t in 0..plan.steps() {
            let (a, b) = plan.panel_shapes(self.rank(), t)?;
            check_count(OP, a.iter().product())?;
            check_count(OP, b.iter().product())?;
        }
        check_count(OP, plan.out.local_shape(&plan.out_shape, self.rank())?.iter().product())?;
        Ok(plan)
    }
}

fn copy_error(e: &Error) -> Error {
    Error::new(e.kind(), e.op().to_string(), e.message().to_string())
}

fn dot_signature(lhs: &DistTensor, rhs: &DistTensor, config: &DotGeneralConfig, options: &SummaOptions) -> Signature {
    let dims = |v: &[usize]| -> Vec<u64> { shape_words(v) };
    let mut config_words = dims(&config.lhs_batch);
    config_words.extend(dims(&config.rhs_batch));
    config_words.extend(dims(&config.lhs_contracting));
    config_words.extend(dims(&config.rhs_contracting));
    let mut option_words = options.grid.as_ref().map_or(vec![0], |g| shape_words(g.dims()));
    option_words.extend([
        options.panel.map_or(0, |p| p as u64 + 1),
        u64::from(options.no_overlap),
        u64::from(options.conj_lhs),
        u64::from(options.conj_rhs),
    ]);
    let mut shapes = shape_words(lhs.shape());
    shapes.extend(shape_words(rhs.shape()));
    Signature::default()
        .part("operation", vec![3], OP.to_string(), ErrorKind::InvalidArgument)
        .part(
            "dtypes",
            vec![dtype_code(lhs.dtype()), dtype_code(rhs.dtype())],
            format!("{:?} x {:?}", lhs.dtype(), rhs.dtype()),
            ErrorKind::DTypeMismatch,
        )
        .part("shapes", shapes, format!("{:?} x {:?}", lhs.shape(), rhs.shape()), ErrorKind::ShapeMismatch)
        .part("config", config_words, format!("{config:?}"), ErrorKind::InvalidArgument)
        .part(
            "lhs distribution",
            lhs.distribution().encode(),
            lhs.distribution().to_string(),
            ErrorKind::InvalidArgument,
        )
        .part(
            "rhs distribution",
            rhs.distribution().encode(),
            rhs.distribution().to_string(),
            ErrorKind::InvalidArgument,
        )
        .part("options", option_words, format!("{options:?}"), ErrorKind::InvalidArgument)
}

/// One step's panels on this rank: packed by their owners, buffers to receive into
/// elsewhere. All four come from the rank backend's pool and go back to it when the
/// step's product drops them, so the steps of one product (and the products of a
/// user's loop) reuse mapped pages instead of faulting fresh ones.
struct Panels<T: Scalar> {
    lhs: TypedTensor<T>,
    rhs: TypedTensor<T>,
}

/// A panel's elements as MPI sees them (the tensor's own memory: every dtype SUMMA
/// takes is its own wire type).
fn wire<T: MpiScalar>(panel: &mut TypedTensor<T>) -> Result<&mut [T::Wire]> {
    T::wire_mut(panel.data_mut()).ok_or_else(|| Error::internal(OP, "a panel dtype without a wire form of its own"))
}

#[allow(clippy::too_many_arguments)]
fn summa_typed<T: MpiScalar>(
    backend: &CpuBackend,
    row: &SimpleCommunicator,
    col: &SimpleCommunicator,
    plan: &SummaPlan,
    a: &Tensor,
    b: &Tensor,
    config: &DotGeneralConfig,
    options: &SummaOptions,
) -> Result<(Tensor, SummaReport)> {
    let start = Instant::now();
    let me_row = col.rank() as usize;
    let me_col = row.rank() as usize;
    let rank = plan.grid.rank(&[me_row, me_col]);
    let out_shape = plan.out.local_shape(&plan.out_shape, rank)?;
    // The first step overwrites it (beta = 0), so its prior contents never matter.
    let mut c = BufferOps::empty(backend, T::DTYPE, &out_shape)?.into_typed::<T>()?;
    let mut report = SummaReport {
        plan: plan.clone(),
        redistributed: false,
        words_received: 0,
        max_words_model: 0,
        lower_bound_words: 0.0,
        seconds: 0.0,
        compute_seconds: 0.0,
        wait_seconds: 0.0,
    };
    // The result's axis that holds the lhs's split free axis: the product is cut along
    // it when broadcasts are pending, so that they progress between the pieces.
    let m_axes = plan.m_axis.and_then(|m| {
        let free = (0..a.rank()).filter(|x| !config.lhs_batch.contains(x) && !config.lhs_contracting.contains(x));
        free.into_iter().position(|x| x == m).map(|i| (m, config.lhs_batch.len() + i))
    });
    // `progress` runs between the pieces of the product (and once when it is not cut).
    let step_product = |c: &mut TypedTensor<T>,
                        lhs: Tensor,
                        rhs: Tensor,
                        first: bool,
                        report: &mut SummaReport,
                        progress: &mut dyn FnMut()|
     -> Result<()> {
        let t0 = Instant::now();
        let beta = if first { c64::new(0.0, 0.0) } else { c64::new(1.0, 0.0) };
        let one = c64::new(1.0, 0.0);
        let (conj_lhs, conj_rhs) = (options.conj_lhs, options.conj_rhs);
        let extent = m_axes.map_or(0, |(m, _)| lhs.shape()[m]);
        let pieces = PROGRESS_PIECES.min(extent / MIN_PIECE_ROWS);
        let r = match m_axes {
            Some((m, out_m)) if pieces >= 2 => (0..pieces).try_for_each(|i| {
                let (lo, hi) = (extent * i / pieces, extent * (i + 1) / pieces);
                let lhs_rows = lhs.view().slice_axis(m, lo, hi, 1)?;
                let out_rows = c.view_mut().slice_axis(out_m, lo, hi, 1)?;
                let r = strata_backend::ContractionOps::dot_general_into(
                    backend,
                    lhs_rows.into(),
                    (&rhs).into(),
                    config,
                    conj_lhs,
                    conj_rhs,
                    one,
                    beta,
                    out_rows.into(),
                );
                progress();
                r
            }),
            _ => {
                progress();
                strata_backend::ContractionOps::dot_general_into(
                    backend,
                    (&lhs).into(),
                    (&rhs).into(),
                    config,
                    conj_lhs,
                    conj_rhs,
                    one,
                    beta,
                    TensorWrite::from(&mut *c),
                )
            }
        };
        report.compute_seconds += t0.elapsed().as_secs_f64();
        r
    };

    let Some((lhs_axis, rhs_axis)) = plan.k_axes else {
        // No contracted axis: every rank already holds its rows and columns whole.
        step_product(&mut c, a.clone(), b.clone(), true, &mut report, &mut || ())?;
        report.seconds = start.elapsed().as_secs_f64();
        return Ok((T::into_tensor(c), report));
    };

    let (rows, cols) = (plan.grid.dims()[0], plan.grid.dims()[1]);
    // The step's panels: the owner's slice of its block, a buffer to receive into elsewhere.
    let panels = |t: usize| -> Result<Panels<T>> {
        let step = plan.panel_of(t).ok_or_else(|| Error::internal(OP, "a step without a panel"))?;
        let (lhs_shape, rhs_shape) = plan.panel_shapes(rank, t)?;
        let cut = |x: &Tensor, axis: usize, from: usize| -> Result<TypedTensor<T>> {
            let view = x.view().slice_axis(axis, from, from + step.width, 1)?;
            backend.to_contiguous(view)?.into_typed::<T>()
        };
        let receive = |shape: &[usize]| BufferOps::empty(backend, T::DTYPE, shape)?.into_typed::<T>();
        let lhs = if step.owner_col == me_col { cut(a, lhs_axis, step.lhs_local)? } else { receive(&lhs_shape)? };
        let rhs = if step.owner_row == me_row { cut(b, rhs_axis, step.rhs_local)? } else { receive(&rhs_shape)? };
        Ok(Panels { lhs, rhs })
    };
    let received = |t: usize, p: &Panels<T>| -> u64 {
        let Some(step) = plan.panel_of(t) else { return 0 };
        let l = if cols > 1 && step.owner_col != me_col { p.lhs.len() } else { 0 };
        let r = if rows > 1 && step.owner_row != me_row { p.rhs.len() } else { 0 };
        (l + r) as u64
    };
    let owners = |t: usize| plan.panel_of(t).map_or((0, 0), |s| (s.owner_col as i32, s.owner_row as i32));

    let steps = plan.steps();
    let mut current = Some(panels(0)?);
    if let Some(current) = current.as_mut() {
        let t0 = Instant::now();
        let (oc, or) = owners(0);
        if cols > 1 {
            row.process_at_rank(oc).broadcast_into(wire(&mut current.lhs)?);
        }
        if rows > 1 {
            col.process_at_rank(or).broadcast_into(wire(&mut current.rhs)?);
        }
        report.wait_seconds += t0.elapsed().as_secs_f64();
        report.words_received += received(0, current);
    }
    for t in 0..steps {
        let mut next = if t + 1 < steps { Some(panels(t + 1)?) } else { None };
        let Panels { lhs, rhs } = current.take().ok_or_else(|| Error::internal(OP, "a step without its panels"))?;
        let (lhs, rhs) = (T::into_tensor(lhs), T::into_tensor(rhs));
        let outcome = match next.as_mut() {
            Some(next) if !options.no_overlap => mpi::request::scope(|scope| -> Result<()> {
                let (oc, or) = owners(t + 1);
                let mut pending: Vec<Request<'_, [T::Wire], &LocalScope<'_>>> = Vec::new();
                if cols > 1 {
                    pending.push(row.process_at_rank(oc).immediate_broadcast_into(scope, wire(&mut next.lhs)?));
                }
                if rows > 1 {
                    pending.push(col.process_at_rank(or).immediate_broadcast_into(scope, wire(&mut next.rhs)?));
                }
                // Without a progress thread a broadcast moves only inside MPI calls: test
                // the pending ones before the product and between its pieces.
                let mut push =
                    || pending = std::mem::take(&mut pending).into_iter().filter_map(|r| r.test().err()).collect();
                let computed = step_product(&mut c, lhs, rhs, t == 0, &mut report, &mut push);
                let t0 = Instant::now();
                for r in pending {
                    r.wait();
                }
                report.wait_seconds += t0.elapsed().as_secs_f64();
                computed
            }),
            _ => step_product(&mut c, lhs, rhs, t == 0, &mut report, &mut || ()),
        };
        outcome?;
        if let Some(mut next) = next {
            if options.no_overlap {
                let t0 = Instant::now();
                let (oc, or) = owners(t + 1);
                if cols > 1 {
                    row.process_at_rank(oc).broadcast_into(wire(&mut next.lhs)?);
                }
                if rows > 1 {
                    col.process_at_rank(or).broadcast_into(wire(&mut next.rhs)?);
                }
                report.wait_seconds += t0.elapsed().as_secs_f64();
            }
            report.words_received += received(t + 1, &next);
            current = Some(next);
        }
    }
    report.seconds = start.elapsed().as_secs_f64();
    Ok((T::into_tensor(c), report))
}
