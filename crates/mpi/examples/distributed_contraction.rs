//! One tensor-network step across MPI ranks, checked against the single-node result.
//!
//! ```text
//! mpirun -np 2 cargo run --release --example distributed_contraction -p strata-mpi --features mpi
//! ```
//! (as root, also `OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`).
//!
//! The step is a TEBD-style two-site update of an MPS: `theta = A · B` over the shared
//! bond (`[χ, d, χ] x [χ, d, χ] → [χ, d, d, χ]`), then the two-site gate applied to the
//! physical axes (`theta x G[d, d, d', d'] → [χ, χ, d', d']`). Both contractions run by
//! SUMMA on the ranks' backends; rank 0 gathers the result and compares it with the
//! single-node `dot_general` of the same tensors.

use strata_mpi::{Distribution, MpiContext, ProcessGrid, SummaOptions, SummaPlan};
use strata_tensor::config::{DotGeneral, DotGeneralConfig};
use strata_tensor::{Tensor, TypedTensor, c64};

fn entry(seed: u64, ix: &[usize]) -> c64 {
    let mut h = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for &i in ix {
        h = (h ^ i as u64).wrapping_mul(0xff51_afd7_ed55_8ccd).rotate_left(29);
    }
    let unit = |x: u64| ((x >> 11) % 10_007) as f64 / 10_006.0 - 0.5;
    c64::new(unit(h), unit(h.rotate_left(17)))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = MpiContext::init()?;
    let (chi, d) = (96, 2);
    if ctx.rank() == 0 {
        println!("{} ranks\n{}", ctx.size(), ctx.placement_map());
    }
    let bond = DotGeneralConfig::new(vec![], vec![], vec![2], vec![0]);
    let gate = DotGeneralConfig::new(vec![], vec![], vec![1, 2], vec![0, 1]);
    let (a_shape, b_shape, g_shape) = ([chi, d, chi], [chi, d, chi], [d, d, d, d]);

    // Operands made where they live, in the layouts SUMMA reads.
    let plan = SummaPlan::new(&a_shape, &b_shape, &bond, ctx.size(), &SummaOptions::default())?;
    let a = ctx.from_fn(&a_shape, plan.lhs.clone(), |ix| entry(1, ix))?;
    let b = ctx.from_fn(&b_shape, plan.rhs.clone(), |ix| entry(2, ix))?;
    let start = std::time::Instant::now();
    let (theta, report) = ctx.dot_general_with(&a, &b, &bond, &SummaOptions::default())?;
    // The gate is small: every rank holds it whole; theta is redistributed as needed.
    let g = ctx.from_fn(&g_shape, Distribution::replicated(ProcessGrid::line(ctx.size())?, 4), |ix| entry(3, ix))?;
    let out = ctx.dot_general(&theta, &g, &gate)?;
    let seconds = start.elapsed().as_secs_f64();
    let gathered = ctx.gather(&out, 0)?;

    if let Some(got) = gathered {
        let backend = ctx.backend();
        let whole = |shape: &[usize], seed| TypedTensor::from_fn(shape, |ix| entry(seed, ix)).map(Tensor::C64);
        let (a, b, g) = (whole(&a_shape, 1)?, whole(&b_shape, 2)?, whole(&g_shape, 3)?);
        let theta = backend.dot_general(&a, &b, &DotGeneral::from(&bond))?;
        let want = backend.dot_general(&theta, &g, &DotGeneral::from(&gate))?;
        let (got, want) = (got.as_typed::<c64>()?.data(), want.as_typed::<c64>()?.data());
        let scale = want.iter().map(|z| z.norm()).fold(0.0, f64::max);
        let err = got.iter().zip(want).map(|(x, y)| (x - y).norm()).fold(0.0, f64::max) / scale;
        println!(
            "theta on grid {} ({} steps of {}), {:.1} ms; max relative difference to one node: {err:.2e}",
            report.plan.grid,
            report.plan.steps(),
            report.plan.panel,
            seconds * 1e3
        );
        // Both are the same sums of products in different orders: within a few hundred
        // ulps of each other here (see docs/SEMANTICS.md); an indexing error would be O(1).
        let tolerance = 1e-10;
        if err > tolerance {
            return Err(format!("distributed result differs by {err:e} > {tolerance:e}").into());
        }
        println!("ok: equal to the single-node result within {tolerance:.1e}");
    }
    Ok(())
}
