//! The distributed `dot_general` against the single-node `dot_general` of the rank's
//! backend on the whole operands, for every dtype, several contraction shapes, grids,
//! panel widths, operand layouts and conjugations.
//!
//! Tolerance: integers and bool exactly; floats and complex element-wise within
//! `4·k·ε·(|A|·|B|)ᵢⱼ` (k the contracted extent): both results are sums of the same k
//! products in different orders, each within `γ_k (|A|·|B|)ᵢⱼ` of the exact value.

use strata_backend::ContractionOps;
use strata_mpi::{AxisLayout, Distribution, MpiContext, ProcessGrid, SummaOptions, SummaPlan};
use strata_tensor::Tensor;
use strata_tensor::config::DotGeneralConfig;

use super::Case;
use super::reference::{TestScalar, compare, full, magnitudes, value};
use crate::{check, each_dtype};

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![
        ("summa_equals_single_node_for_every_dtype_and_shape", shapes_and_dtypes),
        ("summa_grids_panels_overlap_and_conjugation", grids_and_options),
        ("summa_redistributes_operands_in_other_layouts", other_layouts),
        ("summa_words_received_match_the_plan", words_received),
    ]
}

fn cfg(lb: &[usize], rb: &[usize], lc: &[usize], rc: &[usize]) -> DotGeneralConfig {
    DotGeneralConfig::new(lb.to_vec(), rb.to_vec(), lc.to_vec(), rc.to_vec())
}

/// Contractions to try: (lhs shape, rhs shape, config).
fn contractions() -> Vec<(Vec<usize>, Vec<usize>, DotGeneralConfig)> {
    vec![
        (vec![13, 11], vec![11, 9], DotGeneralConfig::matmul()),
        // MPS-style step: [chi, d, chi] x [chi, d, d', chi'] over the bond and physical axes.
        (vec![10, 3, 12], vec![12, 3, 2, 8], cfg(&[], &[], &[2, 1], &[0, 1])),
        // Batched, contracted axis not last on the lhs.
        (vec![2, 7, 6], vec![2, 7, 5], cfg(&[0], &[0], &[1], &[1])),
        // Matrix-vector and a full contraction.
        (vec![9, 14], vec![14], cfg(&[], &[], &[1], &[0])),
        (vec![6, 5], vec![5, 6], cfg(&[], &[], &[0, 1], &[1, 0])),
        // Outer product, and an empty contracted axis.
        (vec![4, 3], vec![5], cfg(&[], &[], &[], &[])),
        (vec![4, 0], vec![0, 3], DotGeneralConfig::matmul()),
    ]
}

/// The single-node result and the error bound for it.
fn single_node<T: TestScalar>(
    ctx: &MpiContext,
    a: &Tensor,
    b: &Tensor,
    config: &DotGeneralConfig,
    conj: (bool, bool),
) -> Result<(Tensor, Tensor), String> {
    let backend = ctx.backend();
    let want =
        ContractionOps::dot_general(backend, a.into(), b.into(), config, conj.0, conj.1).map_err(|e| e.to_string())?;
    let (ma, mb) = (magnitudes::<T>(a), magnitudes::<T>(b));
    let mag = ContractionOps::dot_general(backend, (&ma).into(), (&mb).into(), config, false, false)
        .map_err(|e| e.to_string())?;
    let k: usize = config.lhs_contracting.iter().map(|&d| a.shape()[d]).product();
    let scale = 4.0 * k.max(1) as f64 * T::eps();
    let bound: Vec<f64> = mag.as_typed::<f64>().map_err(|e| e.to_string())?.data().iter().map(|m| m * scale).collect();
    Ok((want, Tensor::from_vec(bound, mag.shape()).map_err(|e| e.to_string())?))
}

/// Runs one distributed contraction with operands laid out by the plan (or by `layouts`)
/// and compares the gathered result at rank 0 with the single-node one.
fn check_one<T: TestScalar>(
    ctx: &MpiContext,
    (ls, rs, config): (&[usize], &[usize], &DotGeneralConfig),
    options: &SummaOptions,
    layouts: Option<(&Distribution, &Distribution)>,
    seed: u64,
) -> Result<(), String> {
    let plan = SummaPlan::new(ls, rs, config, ctx.size(), options).map_err(|e| e.to_string())?;
    let (ld, rd) = layouts.unwrap_or((&plan.lhs, &plan.rhs));
    let a = ctx.from_fn(ls, ld.clone(), |ix| value::<T>(seed, ix)).map_err(|e| e.to_string())?;
    let b = ctx.from_fn(rs, rd.clone(), |ix| value::<T>(seed + 1, ix)).map_err(|e| e.to_string())?;
    let result = ctx.dot_general_with(&a, &b, config, options);
    if !T::DTYPE.is_inexact() {
        // As on one node: dot_general is defined for floats and complex only.
        let e = result.err().ok_or("an integer or bool dot_general succeeded")?;
        check!(e.kind() == strata_tensor::ErrorKind::Unsupported, "{e}");
        let single = ContractionOps::dot_general(
            ctx.backend(),
            (&a.local().clone()).into(),
            (&b.local().clone()).into(),
            config,
            false,
            false,
        );
        check!(single.is_err(), "the single-node dot_general accepts {:?}", T::DTYPE);
        return Ok(());
    }
    let (c, report) = result.map_err(|e| e.to_string())?;
    check!(report.redistributed == layouts.is_some(), "redistributed = {}", report.redistributed);
    check!(c.shape() == plan.out_shape.as_slice(), "result shape {:?}", c.shape());
    let whole = ctx.gather(&c, 0).map_err(|e| e.to_string())?;
    if let Some(got) = whole {
        let (fa, fb) = (full::<T>(seed, ls), full::<T>(seed + 1, rs));
        let (want, bound) = single_node::<T>(ctx, &fa, &fb, config, (options.conj_lhs, options.conj_rhs))?;
        compare::<T>(&format!("{ls:?} x {rs:?} {config:?} on {}", plan.grid), &got, &want, Some(&bound))?;
    }
    Ok(())
}

fn shapes_and_dtypes(ctx: &MpiContext) -> Result<(), String> {
    for (i, (ls, rs, config)) in contractions().iter().enumerate() {
        each_dtype!(T => check_one::<T>(ctx, (ls, rs, config), &SummaOptions::default(), None, 500 + i as u64))?;
    }
    Ok(())
}

fn grids_and_options(ctx: &MpiContext) -> Result<(), String> {
    let p = ctx.size();
    let mut grids = vec![ProcessGrid::new(vec![1, p]), ProcessGrid::new(vec![p, 1])];
    if p == 4 {
        grids.push(ProcessGrid::new(vec![2, 2]));
    }
    let (ls, rs, config) = (vec![11, 3, 10], vec![10, 3, 9], cfg(&[], &[], &[2, 1], &[0, 1]));
    for grid in grids {
        let grid = grid.map_err(|e| e.to_string())?;
        for panel in [1, 3, 64] {
            for no_overlap in [false, true] {
                let options =
                    SummaOptions { grid: Some(grid.clone()), panel: Some(panel), no_overlap, ..Default::default() };
                check_one::<f64>(ctx, (&ls, &rs, &config), &options, None, 700)?;
            }
        }
    }
    // Local blocks tall enough that each step's product is cut into pieces along the split
    // M axis (the pending broadcasts are tested between them): M the first free axis, and
    // M the second one (each piece then writes a strided slice of the result).
    let tall = [
        (vec![600, 3, 4], vec![4, 3, 5], cfg(&[], &[], &[2, 1], &[0, 1])),
        (vec![3, 600, 4], vec![4, 2, 3], cfg(&[], &[], &[2], &[0])),
    ];
    for (ls, rs, config) in &tall {
        for no_overlap in [false, true] {
            let options = SummaOptions { panel: Some(1), no_overlap, ..Default::default() };
            check_one::<f64>(ctx, (ls, rs, config), &options, None, 750)?;
        }
        let options = SummaOptions { panel: Some(2), conj_lhs: true, ..Default::default() };
        check_one::<strata_tensor::c64>(ctx, (ls, rs, config), &options, None, 760)?;
    }
    for conj in [(true, false), (false, true), (true, true)] {
        let options = SummaOptions { conj_lhs: conj.0, conj_rhs: conj.1, panel: Some(2), ..Default::default() };
        check_one::<strata_tensor::c64>(ctx, (&ls, &rs, &config), &options, None, 800)?;
        check_one::<strata_tensor::c32>(ctx, (&ls, &rs, &config), &options, None, 810)?;
        // Ignored for real dtypes.
        check_one::<f32>(ctx, (&ls, &rs, &config), &options, None, 820)?;
    }
    Ok(())
}

fn other_layouts(ctx: &MpiContext) -> Result<(), String> {
    let line = ProcessGrid::line(ctx.size()).map_err(|e| e.to_string())?;
    let rows = Distribution::new(line.clone(), vec![AxisLayout::Block { grid_dim: 0 }, AxisLayout::Whole])
        .map_err(|e| e.to_string())?;
    let cyclic =
        Distribution::new(line.clone(), vec![AxisLayout::Whole, AxisLayout::BlockCyclic { grid_dim: 0, block: 2 }])
            .map_err(|e| e.to_string())?;
    let replicated = Distribution::replicated(line, 2);
    let (ls, rs) = (vec![12, 10], vec![10, 7]);
    for (ld, rd) in [(&rows, &cyclic), (&replicated, &rows), (&cyclic, &replicated)] {
        each_dtype!(T => check_one::<T>(ctx, (&ls, &rs, &DotGeneralConfig::matmul()), &SummaOptions::default(), Some((ld, rd)), 900))?;
    }
    Ok(())
}

fn words_received(ctx: &MpiContext) -> Result<(), String> {
    let (ls, rs) = (vec![24, 20], vec![20, 18]);
    let config = DotGeneralConfig::matmul();
    for panel in [3, 7] {
        let options = SummaOptions { panel: Some(panel), ..Default::default() };
        let plan = SummaPlan::new(&ls, &rs, &config, ctx.size(), &options).map_err(|e| e.to_string())?;
        let a = ctx.from_fn(&ls, plan.lhs.clone(), |ix| value::<f64>(1, ix)).map_err(|e| e.to_string())?;
        let b = ctx.from_fn(&rs, plan.rhs.clone(), |ix| value::<f64>(2, ix)).map_err(|e| e.to_string())?;
        let (_, report) = ctx.dot_general_with(&a, &b, &config, &options).map_err(|e| e.to_string())?;
        let model = plan.words_received(ctx.rank()).map_err(|e| e.to_string())?;
        check!(report.words_received == model, "received {} words, the plan says {model}", report.words_received);
        check!(report.max_words_model >= model, "max model {} < {model}", report.max_words_model);
        check!(
            report.lower_bound_words <= report.max_words_model as f64 + 1e-9,
            "bound {} above what SUMMA moves {}",
            report.lower_bound_words,
            report.max_words_model
        );
    }
    Ok(())
}
