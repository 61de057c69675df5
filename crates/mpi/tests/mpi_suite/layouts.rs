//! Placement, and moving tensors between layouts: scatter, gather, redistribution.

use strata_mpi::{AxisLayout, DistTensor, Distribution, MpiContext, ProcessGrid, ShareKind};
use strata_tensor::Tensor;

use super::Case;
use super::reference::{compare, full, value};
use crate::{check, each_dtype};

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![
        ("placement_map_is_disjoint_and_matches_the_backend", placement),
        ("scatter_then_gather_is_identity_for_every_dtype_and_layout", scatter_gather),
        ("redistribution_between_layouts_for_every_dtype", redistribution),
    ]
}

/// Grids and layouts to try for a rank-3 tensor on `size` ranks.
pub fn layouts(size: usize) -> Vec<Distribution> {
    let line = ProcessGrid::line(size).expect("a line grid");
    let mut out = vec![
        Distribution::new(line.clone(), vec![AxisLayout::Block { grid_dim: 0 }, AxisLayout::Whole, AxisLayout::Whole]),
        Distribution::new(
            line.clone(),
            vec![AxisLayout::Whole, AxisLayout::Whole, AxisLayout::BlockCyclic { grid_dim: 0, block: 2 }],
        ),
        Ok(Distribution::replicated(line, 3)),
    ];
    let rows = (1..=size).rev().find(|r| size.is_multiple_of(*r) && r * r <= size).unwrap_or(1);
    let grid = ProcessGrid::new(vec![rows, size / rows]).expect("a 2-D grid");
    out.push(Distribution::new(
        grid.clone(),
        vec![AxisLayout::BlockCyclic { grid_dim: 1, block: 1 }, AxisLayout::Whole, AxisLayout::Block { grid_dim: 0 }],
    ));
    // Grid dimension 0 unused: replicas along it.
    out.push(Distribution::new(grid, vec![AxisLayout::Whole, AxisLayout::Block { grid_dim: 1 }, AxisLayout::Whole]));
    out.into_iter().map(|d| d.expect("valid test layouts")).collect()
}

const SHAPE: [usize; 3] = [7, 3, 5];

fn placement(ctx: &MpiContext) -> Result<(), String> {
    let map = ctx.placement_map();
    check!(map.ranks.len() == ctx.size(), "map has {} lines for {} ranks", map.ranks.len(), ctx.size());
    let me = ctx.placement();
    check!(me.world_rank == ctx.rank(), "line {} is not rank {}", me.world_rank, ctx.rank());
    check!(ctx.backend().num_threads() == me.share.threads, "backend has {} threads", ctx.backend().num_threads());
    check!(me.share.threads >= 1 && me.share.threads <= me.share.cpus.len(), "threads {}", me.share.threads);
    let on_node: Vec<_> = map.ranks.iter().filter(|r| r.host == me.host).collect();
    check!(on_node.len() == me.local_size, "{} ranks on {} but local size {}", on_node.len(), me.host, me.local_size);
    if me.share.kind != ShareKind::Oversubscribed && me.share.kind != ShareKind::Overlapping {
        for other in on_node.iter().filter(|r| r.world_rank != me.world_rank) {
            check!(
                !other.share.cpus.overlaps(&me.share.cpus),
                "rank {} CPUs {} overlap rank {} CPUs {}",
                me.world_rank,
                me.share.cpus,
                other.world_rank,
                other.share.cpus
            );
        }
    }
    if ctx.backend().topology().is_pinnable() {
        check!(
            ctx.backend().topology().allowed_cpus() == &me.share.cpus,
            "backend placed on {}, share is {}",
            ctx.backend().topology().allowed_cpus(),
            me.share.cpus
        );
        if me.main_thread_pinned {
            let now = strata_topology::current_thread_affinity().map_err(|e| e.to_string())?;
            check!(now == me.share.cpus, "main thread runs on {now}, share {}", me.share.cpus);
        }
    }
    Ok(())
}

fn scatter_gather(ctx: &MpiContext) -> Result<(), String> {
    for (n, dist) in layouts(ctx.size()).into_iter().enumerate() {
        let root = n % ctx.size();
        each_dtype!(T => {
            let seed = 11 + n as u64;
            let whole = full::<T>(seed, &SHAPE);
            let x = (ctx.rank() == root).then(|| (&whole).into());
            let scattered = ctx.scatter(x, root, &dist).map_err(|e| e.to_string())?;
            let expected = DistTensor::from_fn(&SHAPE, dist.clone(), ctx.rank(), |ix| value::<T>(seed, ix))
                .map_err(|e| e.to_string())?;
            compare::<T>(&format!("scatter {dist}"), scattered.local(), expected.local(), None)?;
            let gathered = ctx.gather(&scattered, root).map_err(|e| e.to_string())?;
            match gathered {
                Some(g) => {
                    check!(ctx.rank() == root, "rank {} got a gather result", ctx.rank());
                    compare::<T>(&format!("gather {dist}"), &g, &whole, None)
                }
                None => {
                    check!(ctx.rank() != root, "the root got nothing");
                    Ok(())
                }
            }
        })?;
    }
    // Rank 0 and empty tensors.
    let dist = Distribution::replicated(ProcessGrid::line(ctx.size()).map_err(|e| e.to_string())?, 0);
    let scalar = Tensor::scalar(2.5f64);
    let s = ctx.scatter((ctx.rank() == 0).then(|| (&scalar).into()), 0, &dist).map_err(|e| e.to_string())?;
    check!(s.local().as_typed::<f64>().map_err(|e| e.to_string())?.data() == [2.5], "scalar scatter");
    let dist = Distribution::new(
        ProcessGrid::line(ctx.size()).map_err(|e| e.to_string())?,
        vec![AxisLayout::Block { grid_dim: 0 }, AxisLayout::Whole],
    )
    .map_err(|e| e.to_string())?;
    let empty = Tensor::zeros(strata_tensor::DType::C32, &[0, 4]).map_err(|e| e.to_string())?;
    let e = ctx.scatter((ctx.rank() == 0).then(|| (&empty).into()), 0, &dist).map_err(|e| e.to_string())?;
    check!(e.local().shape() == [0, 4], "empty block shape {:?}", e.local().shape());
    let back = ctx.gather(&e, 0).map_err(|e| e.to_string())?;
    check!(back.is_none_or(|b| b.shape() == [0, 4]), "empty gather");
    Ok(())
}

fn redistribution(ctx: &MpiContext) -> Result<(), String> {
    let all = layouts(ctx.size());
    for (i, from) in all.iter().enumerate() {
        for to in all.iter().skip(i % 2).step_by(2) {
            each_dtype!(T => {
                let seed = 40 + i as u64;
                let x = ctx.from_fn(&SHAPE, from.clone(), |ix| value::<T>(seed, ix)).map_err(|e| e.to_string())?;
                let y = ctx.redistribute(&x, to).map_err(|e| e.to_string())?;
                let want = ctx.from_fn(&SHAPE, to.clone(), |ix| value::<T>(seed, ix)).map_err(|e| e.to_string())?;
                check!(y.distribution() == to, "result is laid out {}", y.distribution());
                compare::<T>(&format!("{from} -> {to}"), y.local(), want.local(), None)
            })?;
        }
    }
    Ok(())
}
