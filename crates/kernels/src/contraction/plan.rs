//! The contraction analysis: classify every axis of a `dot_general` as batch, m (lhs
//! free), n (rhs free) or k (contracted), then find the cheapest way to express it as
//! (batched) GEMM.
//!
//! The key fact: within one group the axes may be visited in any order, and a group
//! collapses to a single GEMM index when, in one common order, every tensor that carries
//! the group can address it with one stride (`stride[i] == stride[i + 1] * extent[i + 1]`).
//! Transposed, column-major and reversed operands usually satisfy this, so they go to the
//! GEMM without a copy. Only an operand whose axes interleave badly is permuted into a
//! compact `[batch, m, k]` / `[batch, k, n]` buffer first. The analysis is metadata only,
//! independent of the data and of the offsets, so it is cached by shapes and strides.

use strata_tensor::config::DotGeneralConfig;
use strata_tensor::shape::row_major_strides;

use super::microkernel::{TileLayout, tile_layout};

/// Tensor slots in [`Axis::strides`].
pub(crate) const LHS: usize = 0;
pub(crate) const RHS: usize = 1;
pub(crate) const OUT: usize = 2;

/// One logical axis of the contraction, with its stride in each tensor that has it
/// (zero in a tensor that lacks it, which never matters because that tensor never moves
/// along it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Axis {
    pub extent: usize,
    pub strides: [isize; 3],
    /// The axis number in lhs and rhs (for building packing permutations).
    pub lhs_axis: Option<usize>,
    pub rhs_axis: Option<usize>,
}

/// How the planned GEMM is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// Some output extent is zero: nothing to do.
    Empty,
    /// The contraction is empty (k = 0): the output is `beta * out` (zeros when fresh).
    ScaleOnly,
    /// m = n = 1: a strided dot product per batch.
    Dot,
    /// Our register tiles over the operands as they lie (`plan.tiles`).
    Tiles,
    /// The GEMM provider.
    Provider,
}

/// The result of the analysis; cached, so it holds no data and no offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ContractionPlan {
    /// Shape of the result: batch, lhs free, rhs free.
    pub out_shape: Vec<usize>,
    /// When set, the lhs is copied first into a compact buffer of its axes in this order.
    pub pack_lhs: Option<Vec<usize>>,
    /// When set, the rhs is copied first, likewise.
    pub pack_rhs: Option<Vec<usize>>,
    /// The destination's strides do not collapse: compute into a row-major staging
    /// tensor and copy it into the destination afterwards.
    pub stage_out: bool,
    /// Batch axes after collapsing, outermost first, with strides in the (possibly packed
    /// or staged) tensors.
    pub batch: Vec<Axis>,
    /// The GEMM sizes.
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// (row, column) strides of the lhs `[m, k]`, rhs `[k, n]` and output `[m, n]` matrices.
    pub lhs_mat: [isize; 2],
    pub rhs_mat: [isize; 2],
    pub out_mat: [isize; 2],
    pub route: Route,
    /// The tile mapping, for [`Route::Tiles`].
    pub tiles: Option<TileLayout>,
    /// The packed operand that is gathered block by block instead of copied whole first
    /// (its `pack_*` entry is then unused).
    pub blocked: Option<BlockedPack>,
}

/// A packed operand gathered in blocks of its free rows, each block multiplied as soon as
/// it is gathered (see `contraction/blocked.rs`). Only shapes and strides: cacheable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BlockedPack {
    /// [`LHS`] (blocks of m) or [`RHS`] (blocks of n).
    pub operand: usize,
    /// The operand's free axes in the GEMM's order, outermost first: (extent, stride in
    /// the operand as it lies).
    pub rows: Vec<(usize, isize)>,
    /// Offset in the operand of each contraction term, in the GEMM's k order.
    pub terms: Vec<isize>,
    /// Free rows per block (the last block may be shorter).
    pub block_rows: usize,
}

impl BlockedPack {
    /// Number of blocks.
    pub(crate) fn blocks(&self) -> usize {
        self.free().div_ceil(self.block_rows)
    }

    /// Extent of the free group.
    pub(crate) fn free(&self) -> usize {
        self.rows.iter().map(|r| r.0).product()
    }
}

impl ContractionPlan {
    /// Number of GEMMs the batch axes describe.
    pub fn batch_count(&self) -> usize {
        self.batch.iter().map(|a| a.extent).product()
    }

    /// Multiply-adds of the whole contraction, saturating.
    pub fn macs(&self) -> usize {
        [self.batch_count(), self.m, self.n].iter().fold(self.k, |acc, &d| acc.saturating_mul(d))
    }

    /// Bytes this plan occupies in a cache (an estimate for the byte limit).
    pub fn footprint_bytes(&self) -> usize {
        let vecs = self.out_shape.len() * size_of::<usize>()
            + self.pack_lhs.as_ref().map_or(0, |p| p.len() * size_of::<usize>())
            + self.pack_rhs.as_ref().map_or(0, |p| p.len() * size_of::<usize>())
            + self.batch.len() * size_of::<Axis>()
            + self.tiles.as_ref().map_or(0, TileLayout::footprint_bytes)
            + self.blocked.as_ref().map_or(0, |b| b.rows.len() * 16 + b.terms.len() * size_of::<isize>());
        size_of::<Self>() + vecs
    }
}

/// The operand geometry the analysis depends on.
pub(crate) struct Geometry<'a> {
    pub lhs_shape: &'a [usize],
    pub lhs_strides: &'a [isize],
    pub rhs_shape: &'a [usize],
    pub rhs_strides: &'a [isize],
    /// The destination's strides (row-major for a fresh output).
    pub out_strides: &'a [isize],
    /// The GEMM provider accepts only matrices with one unit stride (BLAS).
    pub needs_unit_stride: bool,
    /// Bytes of one element (block sizes are in bytes).
    pub elem_bytes: usize,
}

struct Groups {
    batch: Vec<Axis>,
    m: Vec<Axis>,
    n: Vec<Axis>,
    k: Vec<Axis>,
}

fn classify(cfg: &DotGeneralConfig, g: &Geometry<'_>, out_strides: &[isize]) -> Groups {
    let lhs_free = cfg.lhs_free(g.lhs_shape.len());
    let rhs_free = cfg.rhs_free(g.rhs_shape.len());
    let nb = cfg.lhs_batch.len();
    let batch = cfg
        .lhs_batch
        .iter()
        .zip(&cfg.rhs_batch)
        .enumerate()
        .map(|(i, (&l, &r))| Axis {
            extent: g.lhs_shape[l],
            strides: [g.lhs_strides[l], g.rhs_strides[r], out_strides[i]],
            lhs_axis: Some(l),
            rhs_axis: Some(r),
        })
        .collect();
    let m = lhs_free
        .iter()
        .enumerate()
        .map(|(j, &l)| Axis {
            extent: g.lhs_shape[l],
            strides: [g.lhs_strides[l], 0, out_strides[nb + j]],
            lhs_axis: Some(l),
            rhs_axis: None,
        })
        .collect();
    let n = rhs_free
        .iter()
        .enumerate()
        .map(|(j, &r)| Axis {
            extent: g.rhs_shape[r],
            strides: [0, g.rhs_strides[r], out_strides[nb + lhs_free.len() + j]],
            lhs_axis: None,
            rhs_axis: Some(r),
        })
        .collect();
    let k = cfg
        .lhs_contracting
        .iter()
        .zip(&cfg.rhs_contracting)
        .map(|(&l, &r)| Axis {
            extent: g.lhs_shape[l],
            strides: [g.lhs_strides[l], g.rhs_strides[r], 0],
            lhs_axis: Some(l),
            rhs_axis: Some(r),
        })
        .collect();
    Groups { batch, m, n, k }
}

/// Orders a group outermost-first by the magnitude of `slot`'s stride (stable, so equal
/// strides keep the config's order). Extent-1 axes are dropped: they address nothing.
fn ordered(axes: &[Axis], slot: usize) -> Vec<Axis> {
    let mut v: Vec<Axis> = axes.iter().filter(|a| a.extent != 1).cloned().collect();
    v.sort_by_key(|a| std::cmp::Reverse(a.strides[slot].unsigned_abs()));
    v
}

/// True when `axes`, in this order, collapse to one index with one stride in `slot`.
fn collapses(axes: &[Axis], slot: usize) -> bool {
    axes.windows(2).all(|w| w[0].strides[slot] == w[1].strides[slot].wrapping_mul(w[1].extent as isize))
}

/// Merges neighbours that collapse in every slot of `slots`.
fn collapse(axes: &[Axis], slots: &[usize]) -> Vec<Axis> {
    let mut out: Vec<Axis> = Vec::with_capacity(axes.len());
    for a in axes {
        if let Some(last) = out.last_mut()
            && slots.iter().all(|&s| last.strides[s] == a.strides[s].wrapping_mul(a.extent as isize))
        {
            last.extent *= a.extent;
            last.strides = a.strides;
            continue;
        }
        out.push(a.clone());
    }
    out
}

/// The (extent, stride) of a group that collapses in `slot`, or (1, 0) for no axes.
fn single(axes: &[Axis], slot: usize) -> (usize, isize) {
    match axes.last() {
        Some(inner) => (axes.iter().map(|a| a.extent).product(), inner.strides[slot]),
        None => (1, 0),
    }
}

/// Rewrites `slot`'s strides as those of a compact buffer holding the axes in the order
/// `groups` lists them (outermost group first); returns that axis order for the packing
/// permutation, extent-1 axes of the operand (which the groups omit) placed first.
fn pack(groups: &mut [&mut Vec<Axis>], slot: usize, rank: usize, axis_of: fn(&Axis) -> Option<usize>) -> Vec<usize> {
    let mut order: Vec<usize> = groups.iter().flat_map(|g| g.iter().filter_map(axis_of)).collect();
    let mut perm: Vec<usize> = (0..rank).filter(|a| !order.contains(a)).collect();
    perm.append(&mut order);
    let mut stride: isize = 1;
    for g in groups.iter_mut().rev() {
        for a in g.iter_mut().rev() {
            a.strides[slot] = stride;
            stride *= a.extent as isize;
        }
    }
    perm
}

/// True when a BLAS-style provider can take the matrix as it is: one unit stride and a
/// leading dimension covering the other extent, both non-negative.
fn blas_friendly(rows: usize, cols: usize, [rs, cs]: [isize; 2]) -> bool {
    let row_major = (cols <= 1 || cs == 1) && (rows <= 1 || rs >= cols as isize);
    let col_major = (rows <= 1 || rs == 1) && (cols <= 1 || cs >= rows as isize);
    row_major || col_major
}

/// Analyses a validated `dot_general`: the provider's GEMM formulation, replaced by our
/// register tiles where those are expected to be faster.
pub(crate) fn analyze(cfg: &DotGeneralConfig, g: &Geometry<'_>, out_shape: Vec<usize>) -> ContractionPlan {
    let plan = analyze_for_provider(cfg, g, out_shape);
    if plan.route != Route::Provider {
        return plan;
    }
    let groups = classify(cfg, g, g.out_strides);
    match tile_layout(&groups.batch, &groups.m, &groups.n, &groups.k) {
        Some(tiles) if prefer_tiles(&plan, &tiles) => ContractionPlan {
            pack_lhs: None,
            pack_rhs: None,
            stage_out: false,
            route: Route::Tiles,
            tiles: Some(tiles),
            blocked: None,
            ..plan
        },
        _ => plan,
    }
}

/// Products of at most this many multiply-adds per item run on the tiles: below it the
/// provider's fixed cost per call (dispatch, packing) outweighs its better blocking.
pub(crate) const TILE_ITEM_MACS: usize = 64 * 64 * 64;

/// The choice between the provider's GEMM and our tiles.
fn prefer_tiles(plan: &ContractionPlan, tiles: &TileLayout) -> bool {
    let item = plan.m.saturating_mul(plan.n).saturating_mul(plan.k);
    let _ = tiles;
    item <= TILE_ITEM_MACS
}

/// The provider's formulation: packing where the provider needs it.
fn analyze_for_provider(cfg: &DotGeneralConfig, g: &Geometry<'_>, out_shape: Vec<usize>) -> ContractionPlan {
    let plan = analyze_forcing(cfg, g, out_shape.clone(), [false; 3]);
    if !g.needs_unit_stride || plan.route != Route::Provider {
        return plan;
    }
    let force = [
        !blas_friendly(plan.m, plan.k, plan.lhs_mat),
        !blas_friendly(plan.k, plan.n, plan.rhs_mat),
        !blas_friendly(plan.m, plan.n, plan.out_mat),
    ];
    if force.contains(&true) { analyze_forcing(cfg, g, out_shape, force) } else { plan }
}

/// The analysis, with `force[t]` packing (or staging) tensor `t` whatever its strides.
fn analyze_forcing(
    cfg: &DotGeneralConfig,
    g: &Geometry<'_>,
    out_shape: Vec<usize>,
    force: [bool; 3],
) -> ContractionPlan {
    let empty = out_shape.contains(&0);
    let mut groups = classify(cfg, g, g.out_strides);
    // The destination is the costliest operand to copy, so it fixes the order of the
    // axes it carries. Only when its own axes cannot collapse in any order do we compute
    // into a row-major staging tensor (which collapses in the config's order).
    let stage_out = !empty
        && (force[OUT] || !(collapses(&ordered(&groups.m, OUT), OUT) && collapses(&ordered(&groups.n, OUT), OUT)));
    if stage_out {
        groups = classify(cfg, g, &row_major_strides(&out_shape));
    }
    let mut batch = ordered(&groups.batch, OUT);
    let mut m = ordered(&groups.m, OUT);
    let mut n = ordered(&groups.n, OUT);
    // The contracted axes follow whichever operand can then go uncopied.
    let k_by_rhs = ordered(&groups.k, RHS);
    let mut k = ordered(&groups.k, LHS);
    if !collapses(&k, LHS) && collapses(&k_by_rhs, RHS) {
        k = k_by_rhs;
    }

    let k_extent: usize = k.iter().map(|a| a.extent).product();
    let mut pack_lhs = None;
    let mut pack_rhs = None;
    // The operands' free and contracted axes as they lie, before packing rewrites them.
    let (m_src, n_src, k_src) = (m.clone(), n.clone(), k.clone());
    if !empty && k_extent != 0 {
        if force[LHS] || !(collapses(&m, LHS) && collapses(&k, LHS)) {
            pack_lhs = Some(pack(&mut [&mut batch, &mut m, &mut k], LHS, g.lhs_shape.len(), |a| a.lhs_axis));
        }
        if force[RHS] || !(collapses(&k, RHS) && collapses(&n, RHS)) {
            pack_rhs = Some(pack(&mut [&mut batch, &mut k, &mut n], RHS, g.rhs_shape.len(), |a| a.rhs_axis));
        }
    }
    let blocked = if batch.iter().all(|a| a.extent == 1) {
        blocked_pack([pack_lhs.is_some(), pack_rhs.is_some()], [&m_src, &n_src], &k_src, g.elem_bytes)
    } else {
        None
    };

    let batch = collapse(&batch, &[LHS, RHS, OUT]);
    let (m_ext, lhs_m) = single(&m, LHS);
    let (_, out_m) = single(&m, OUT);
    let (n_ext, rhs_n) = single(&n, RHS);
    let (_, out_n) = single(&n, OUT);
    let (_, lhs_k) = single(&k, LHS);
    let (_, rhs_k) = single(&k, RHS);

    let route = if empty {
        Route::Empty
    } else if k_extent == 0 {
        Route::ScaleOnly
    } else if m_ext == 1 && n_ext == 1 {
        Route::Dot
    } else {
        Route::Provider
    };
    ContractionPlan {
        out_shape,
        pack_lhs,
        pack_rhs,
        stage_out,
        batch,
        m: m_ext,
        n: n_ext,
        k: k_extent,
        lhs_mat: [lhs_m, lhs_k],
        rhs_mat: [rhs_k, rhs_n],
        out_mat: [out_m, out_n],
        route,
        tiles: None,
        blocked,
    }
}

/// Bytes of one gathered block: small enough that the block, the other operand's panel
/// and the block's output rows stay in a core's L2 cache while the GEMM reads them.
pub(crate) const BLOCK_BYTES: usize = 128 * 1024;

/// Contraction terms above which an operand is packed whole: a block would hold too few
/// rows for the GEMM to run at speed.
pub(crate) const BLOCK_MAX_TERMS: usize = 1024;

/// Free rows of a block at least (the GEMM's register tiles are up to 48 rows high).
const BLOCK_MIN_ROWS: usize = 64;

/// The operand to gather block by block, if any: the larger packed one (by elements),
/// when its contraction terms fit [`BLOCK_MAX_TERMS`] and it has more than one block's
/// worth of rows. The other packed operand, if any, is copied whole as before.
fn blocked_pack(packed: [bool; 2], free: [&[Axis]; 2], k: &[Axis], elem_bytes: usize) -> Option<BlockedPack> {
    let terms_count: usize = k.iter().map(|a| a.extent).product();
    let size = |t: usize| free[t].iter().map(|a| a.extent).product::<usize>().saturating_mul(terms_count);
    let operand = match packed {
        [true, true] => {
            if size(LHS) >= size(RHS) {
                LHS
            } else {
                RHS
            }
        }
        [true, false] => LHS,
        [false, true] => RHS,
        [false, false] => return None,
    };
    if terms_count == 0 || terms_count > BLOCK_MAX_TERMS {
        return None;
    }
    let rows: Vec<(usize, isize)> = free[operand].iter().map(|a| (a.extent, a.strides[operand])).collect();
    let free_extent: usize = rows.iter().map(|r| r.0).product();
    let block_rows = (BLOCK_BYTES / (terms_count * elem_bytes.max(1))).max(BLOCK_MIN_ROWS) / 16 * 16;
    if free_extent < 2 * block_rows {
        return None;
    }
    let mut terms: Vec<isize> = vec![0];
    for a in k {
        let stride = a.strides[operand];
        terms = terms.iter().flat_map(|&t| (0..a.extent as isize).map(move |i| t + i * stride)).collect();
    }
    Some(BlockedPack { operand, rows, terms, block_rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(cfg: &DotGeneralConfig, lhs: (&[usize], &[isize]), rhs: (&[usize], &[isize])) -> ContractionPlan {
        let out_shape = cfg.output_shape(lhs.0, rhs.0).unwrap();
        let out_strides = row_major_strides(&out_shape);
        plan_into(cfg, lhs, rhs, &out_strides)
    }

    fn plan_into(
        cfg: &DotGeneralConfig,
        lhs: (&[usize], &[isize]),
        rhs: (&[usize], &[isize]),
        out_strides: &[isize],
    ) -> ContractionPlan {
        let out_shape = cfg.output_shape(lhs.0, rhs.0).unwrap();
        let g = Geometry {
            lhs_shape: lhs.0,
            lhs_strides: lhs.1,
            rhs_shape: rhs.0,
            rhs_strides: rhs.1,
            out_strides,
            needs_unit_stride: false,
            elem_bytes: 8,
        };
        analyze_for_provider(cfg, &g, out_shape)
    }

    #[test]
    fn row_major_transposed_and_column_major_matmuls_need_no_copy() {
        let mm = DotGeneralConfig::matmul();
        let p = plan(&mm, (&[64, 32], &[32, 1]), (&[32, 16], &[16, 1]));
        assert_eq!((p.pack_lhs.clone(), p.pack_rhs.clone(), p.stage_out), (None, None, false));
        assert_eq!((p.m, p.n, p.k, p.route), (64, 16, 32, Route::Provider));
        assert_eq!((p.lhs_mat, p.rhs_mat, p.out_mat), ([32, 1], [16, 1], [16, 1]));
        // lhs given as the transpose of a row-major [k, m]; rhs column-major.
        let p = plan(&mm, (&[64, 32], &[1, 64]), (&[32, 16], &[1, 32]));
        assert_eq!((p.pack_lhs.clone(), p.pack_rhs.clone()), (None, None));
        assert_eq!((p.lhs_mat, p.rhs_mat), ([1, 64], [1, 32]));
        // A reversed axis is still one stride.
        let p = plan(&mm, (&[64, 32], &[-32, 1]), (&[32, 16], &[16, -1]));
        assert_eq!((p.pack_lhs.clone(), p.pack_rhs.clone()), (None, None));
        assert_eq!((p.lhs_mat, p.rhs_mat), ([-32, 1], [16, -1]));
    }

    #[test]
    fn tensor_network_shapes_collapse_to_one_gemm() {
        // abcd,cdef->abef: m = (a, b), k = (c, d), n = (e, f).
        let cfg = DotGeneralConfig::new(vec![], vec![], vec![2, 3], vec![0, 1]);
        let s = [8usize, 8, 8, 8];
        let p = plan(&cfg, (&s, &row_major_strides(&s)), (&s, &row_major_strides(&s)));
        assert_eq!((p.pack_lhs.clone(), p.pack_rhs.clone(), p.stage_out), (None, None, false));
        assert_eq!((p.m, p.n, p.k, p.batch_count()), (64, 64, 64, 1));
        // iaj,jbk->iabk
        let cfg = DotGeneralConfig::new(vec![], vec![], vec![2], vec![0]);
        let (l, r) = ([16usize, 2, 16], [16usize, 2, 16]);
        let p = plan(&cfg, (&l, &row_major_strides(&l)), (&r, &row_major_strides(&r)));
        assert_eq!((p.pack_lhs.clone(), p.pack_rhs.clone()), (None, None));
        assert_eq!((p.m, p.n, p.k), (32, 32, 16));
    }

    #[test]
    fn interleaved_axes_are_packed_and_batches_collapse() {
        // lhs [m1, k, m2]: the two m axes are separated by k, so the lhs is packed.
        let cfg = DotGeneralConfig::new(vec![], vec![], vec![1], vec![0]);
        let l = [4usize, 8, 5];
        let p = plan(&cfg, (&l, &row_major_strides(&l)), (&[8, 6], &[6, 1]));
        assert_eq!(p.pack_lhs, Some(vec![0, 2, 1]));
        assert_eq!(p.pack_rhs, None);
        assert_eq!((p.m, p.k, p.lhs_mat), (20, 8, [8, 1]));
        // Batched [b, m, k] x [b, k, n] is one batched GEMM; batch strides per tensor.
        let cfg = DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1]);
        let p = plan(&cfg, (&[3, 4, 5], &[20, 5, 1]), (&[3, 5, 6], &[30, 6, 1]));
        assert_eq!(p.batch.len(), 1);
        assert_eq!((p.batch[0].extent, p.batch[0].strides), (3, [20, 30, 24]));
        assert_eq!(p.route, Route::Provider);
    }

    #[test]
    fn destination_with_interleaved_axes_is_staged() {
        // Outer product [2, 3] x [4] -> [2, 3, 4] written into a view whose m axes are
        // split by n: strides (1, 8, 2) cannot address m with one stride in any order.
        let cfg = DotGeneralConfig::default();
        let p = plan_into(&cfg, (&[2, 3], &[3, 1]), (&[4], &[1]), &[1, 8, 2]);
        assert!(p.stage_out);
        assert_eq!((p.m, p.n, p.k, p.out_mat), (6, 4, 1, [4, 1]));
        // Swapped m axes alone are just another order: the lhs is packed to match instead.
        let p = plan_into(&cfg, (&[2, 3], &[3, 1]), (&[4], &[1]), &[4, 8, 1]);
        assert!(!p.stage_out);
        assert_eq!((p.pack_lhs.clone(), p.out_mat, p.lhs_mat), (Some(vec![1, 0]), [4, 1], [1, 0]));
        // A column-major destination is fine as it is.
        let p = plan_into(&DotGeneralConfig::matmul(), (&[5, 3], &[3, 1]), (&[3, 7], &[7, 1]), &[1, 5]);
        assert!(!p.stage_out);
        assert_eq!(p.out_mat, [1, 5]);
    }

    #[test]
    fn small_products_go_to_the_tiles_and_large_ones_to_the_provider() {
        let analysed = |cfg: &DotGeneralConfig, l: &[usize], r: &[usize]| {
            let out_shape = cfg.output_shape(l, r).unwrap();
            let (ls, rs, os) = (row_major_strides(l), row_major_strides(r), row_major_strides(&out_shape));
            let g = Geometry {
                lhs_shape: l,
                lhs_strides: &ls,
                rhs_shape: r,
                rhs_strides: &rs,
                out_strides: &os,
                needs_unit_stride: false,
                elem_bytes: 8,
            };
            analyze(cfg, &g, out_shape)
        };
        let batched = DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1]);
        let p = analysed(&batched, &[1024, 16, 16], &[1024, 16, 16]);
        assert_eq!((p.route, p.pack_lhs.clone(), p.pack_rhs.clone()), (Route::Tiles, None, None));
        assert_eq!(p.tiles.as_ref().map(|t| (t.items(), t.i, t.j, t.k())), Some((1024, 16, 16, 16)));
        let p = analysed(&DotGeneralConfig::matmul(), &[512, 512], &[512, 512]);
        assert_eq!((p.route, p.tiles.is_none()), (Route::Provider, true));
    }

    #[test]
    fn interleaved_large_operands_are_gathered_in_blocks() {
        // CTMRG X4: [c, u', e, l', d, r, s] x A[u', l', d', r', s] contracting u', l', s.
        let cfg = DotGeneralConfig::new(vec![], vec![], vec![1, 3, 6], vec![0, 1, 4]);
        let (l, r) = ([32usize, 4, 32, 4, 4, 4, 2], [4usize, 4, 4, 4, 2]);
        let p = plan(&cfg, (&l, &row_major_strides(&l)), (&r, &row_major_strides(&r)));
        let b = p.blocked.clone().expect("the lhs is gathered in blocks");
        assert_eq!((b.operand, b.terms.len(), b.free(), p.m, p.k, p.n), (LHS, 32, 16384, 16384, 32, 16));
        // 128 KiB of f64 rows with 32 terms each; terms in the k order (u', l', s).
        assert_eq!(b.block_rows, 512);
        assert_eq!(&b.terms[..3], &[0, 1, 32]);
        assert_eq!(b.rows, vec![(32, 16384), (32, 128), (4, 8), (4, 2)]);
        assert!(p.pack_rhs.is_some(), "the small operand is still packed whole");
        // The large operand on the right: blocks of n.
        let cfg = DotGeneralConfig::new(vec![], vec![], vec![0, 1, 4], vec![1, 3, 6]);
        let p = plan(&cfg, (&r, &row_major_strides(&r)), (&l, &row_major_strides(&l)));
        assert_eq!(p.blocked.map(|b| (b.operand, b.free())), Some((RHS, 16384)));
        // Collapsing operands, few rows, or batch axes: no blocks.
        let mm = DotGeneralConfig::matmul();
        assert_eq!(plan(&mm, (&[4096, 32], &[32, 1]), (&[32, 16], &[16, 1])).blocked, None);
        let few = [4usize, 4, 4, 4, 4, 4, 2];
        let cfg = DotGeneralConfig::new(vec![], vec![], vec![1, 3, 6], vec![0, 1, 4]);
        assert_eq!(plan(&cfg, (&few, &row_major_strides(&few)), (&r, &row_major_strides(&r))).blocked, None);
        let batched = DotGeneralConfig::new(vec![0], vec![0], vec![2, 4], vec![1, 2]);
        let (bl, br) = ([4usize, 64, 4, 64, 4], [4usize, 4, 4, 8]);
        assert_eq!(plan(&batched, (&bl, &row_major_strides(&bl)), (&br, &row_major_strides(&br))).blocked, None);
    }

    #[test]
    fn degenerate_shapes_pick_cheap_routes() {
        let dot = DotGeneralConfig::new(vec![], vec![], vec![0], vec![0]);
        assert_eq!(plan(&dot, (&[100], &[1]), (&[100], &[-1])).route, Route::Dot);
        assert_eq!(plan(&dot, (&[0], &[1]), (&[0], &[1])).route, Route::ScaleOnly);
        let mm = DotGeneralConfig::matmul();
        assert_eq!(plan(&mm, (&[0, 3], &[3, 1]), (&[3, 4], &[4, 1])).route, Route::Empty);
        let p = plan(&DotGeneralConfig::default(), (&[], &[]), (&[], &[]));
        assert_eq!((p.route, p.m, p.n, p.k), (Route::Dot, 1, 1, 1));
    }
}
