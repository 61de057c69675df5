//! How a contraction maps onto register tiles, decided from shapes and strides alone (so
//! it is part of the cached analysis).
//!
//! The tiles compute `C[i, j] = Σ_p X[i, p] · Y[p, j]` over three kinds of axes:
//! - **i**, one free axis with unit stride in C (and, unless X is packed, in X): the
//!   vectorised rows. X is the operand that carries it.
//! - **j**, one free axis of the other operand (Y): the tile columns, read through any
//!   stride.
//! - **p**, every contracted axis at once, through a table of (X, Y) offsets per term, so
//!   contracted axes that do not collapse into one stride (short bond axes interleaved
//!   with others) cost one table read per term instead of a copy of the operand.
//!
//! Every other axis (batch axes and the free axes not chosen as i or j) is a *loop* axis:
//! the items of the batch. The axes are chosen for locality: i is the output's unit-stride
//! axis, j the other operand's free axis with the smallest stride, the contracted axes
//! ordered so the innermost term has the smallest stride in Y.

use super::super::plan::{Axis, LHS, OUT, RHS};

/// Contraction terms above which the tiles are not considered: the offset table would
/// outgrow the cached analysis, and long contractions are what the provider's blocking
/// is for.
pub(crate) const MAX_TERMS: usize = 1 << 13;

/// The tile mapping of one contraction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TileLayout {
    /// The operand whose axis is i ([`LHS`] or [`RHS`]).
    pub x_is: usize,
    /// Extent of i and its element strides in X and C.
    pub i: usize,
    pub x_i: isize,
    pub c_i: isize,
    /// Extent of j and its element strides in Y and C.
    pub j: usize,
    pub y_j: isize,
    pub c_j: isize,
    /// Per contraction term p: the element offsets of X[0, p] and Y[p, 0] (for a packed X,
    /// the X offset is that of the unpacked operand).
    pub terms: Vec<[isize; 2]>,
    /// For a packed X: `terms` with X offsets into the compact block (`p · i`).
    pub packed_terms: Vec<[isize; 2]>,
    /// Lowest and highest X and Y offset in `terms`.
    pub x_range: [isize; 2],
    pub y_range: [isize; 2],
    /// Loop axes, outermost first, with their strides in lhs, rhs and the destination.
    pub loops: Vec<Axis>,
    /// X has no unit stride along i: each item's X is copied into a compact block first.
    pub pack_x: bool,
    /// C has no unit stride along i: each item is computed into a compact block and
    /// written through C's strides.
    pub stage_c: bool,
}

impl TileLayout {
    /// Number of items (products of the loop extents).
    pub(crate) fn items(&self) -> usize {
        self.loops.iter().map(|a| a.extent).product()
    }

    /// Contraction terms per output element.
    pub(crate) fn k(&self) -> usize {
        self.terms.len()
    }

    /// Bytes of the analysis (for the cache's byte limit).
    pub(crate) fn footprint_bytes(&self) -> usize {
        size_of::<Self>()
            + (self.terms.len() + self.packed_terms.len()) * size_of::<[isize; 2]>()
            + self.loops.len() * size_of::<Axis>()
    }

    /// The slot (in [`Axis::strides`]) of the operand that is Y.
    pub(crate) fn y_is(&self) -> usize {
        if self.x_is == LHS { RHS } else { LHS }
    }
}

/// Merges neighbours (in this order) that collapse in every slot of `slots`.
fn collapse(mut axes: Vec<Axis>, slots: &[usize]) -> Vec<Axis> {
    let mut out: Vec<Axis> = Vec::with_capacity(axes.len());
    for a in axes.drain(..) {
        if let Some(last) = out.last_mut()
            && slots.iter().all(|&s| last.strides[s] == a.strides[s].wrapping_mul(a.extent as isize))
        {
            last.extent *= a.extent;
            last.strides = a.strides;
            continue;
        }
        out.push(a);
    }
    out
}

/// Sorted outermost-first by the magnitude of `slot`'s stride, extent-1 axes dropped.
fn by_stride(axes: &[Axis], slot: usize) -> Vec<Axis> {
    let mut v: Vec<Axis> = axes.iter().filter(|a| a.extent != 1).cloned().collect();
    v.sort_by_key(|a| std::cmp::Reverse(a.strides[slot].unsigned_abs()));
    v
}

/// The tile mapping for axes classified as batch, m (lhs free), n (rhs free) and k
/// (contracted), or `None` when the contraction has more than [`MAX_TERMS`] terms or an
/// empty axis (the other routes handle those).
pub(crate) fn tile_layout(batch: &[Axis], m: &[Axis], n: &[Axis], k: &[Axis]) -> Option<TileLayout> {
    let all = || batch.iter().chain(m).chain(n).chain(k);
    if all().any(|a| a.extent == 0) {
        return None;
    }
    let terms: usize = k.iter().try_fold(1usize, |acc, a| acc.checked_mul(a.extent))?;
    if terms > MAX_TERMS {
        return None;
    }
    let m = collapse(by_stride(m, OUT), &[LHS, OUT]);
    let n = collapse(by_stride(n, OUT), &[RHS, OUT]);
    // i: the free axis with unit stride in C; failing that (C is staged), one with unit
    // stride in its operand; failing that, the longest free axis (X is packed).
    let free = m.iter().map(|a| (a, LHS)).chain(n.iter().map(|a| (a, RHS)));
    let pick = free
        .clone()
        .find(|(a, _)| a.strides[OUT] == 1)
        .or_else(|| free.clone().find(|(a, x)| a.strides[*x] == 1))
        .or_else(|| free.clone().max_by_key(|(a, _)| a.extent))
        .map(|(a, x)| (a.clone(), x));
    let (i_axis, x_is) = match pick {
        Some(p) => p,
        // No free axis at all (a batched dot product): a single row.
        None => (Axis { extent: 1, strides: [0; 3], lhs_axis: None, rhs_axis: None }, LHS),
    };
    let y_is = if x_is == LHS { RHS } else { LHS };
    let (x_group, y_group) = if x_is == LHS { (&m, &n) } else { (&n, &m) };
    // j: the other operand's free axis it reads most densely.
    let j_axis = y_group.iter().min_by_key(|a| a.strides[y_is].unsigned_abs()).cloned();
    let j_axis = j_axis.unwrap_or(Axis { extent: 1, strides: [0; 3], lhs_axis: None, rhs_axis: None });
    // Loop axes: batch and the free axes that are neither i nor j; those that do not move
    // X innermost, so consecutive items share a packed X.
    let mut outer: Vec<Axis> = batch.iter().filter(|a| a.extent != 1).cloned().collect();
    outer.extend(x_group.iter().filter(|a| **a != i_axis).cloned());
    let mut inner: Vec<Axis> = y_group.iter().filter(|a| **a != j_axis).cloned().collect();
    outer.sort_by_key(|a| std::cmp::Reverse(a.strides[OUT].unsigned_abs()));
    inner.sort_by_key(|a| std::cmp::Reverse(a.strides[OUT].unsigned_abs()));
    outer.extend(inner);
    let loops = collapse(outer, &[LHS, RHS, OUT]);
    // Terms in row-major order of the contracted axes sorted by Y stride (the innermost
    // term steps through Y most densely).
    let k = by_stride(k, y_is);
    let mut offsets: Vec<[isize; 2]> = Vec::with_capacity(terms);
    offsets.push([0, 0]);
    for a in &k {
        let prev = std::mem::take(&mut offsets);
        offsets.reserve(prev.len() * a.extent);
        for [x, y] in prev {
            for t in 0..a.extent as isize {
                offsets.push([x + t * a.strides[x_is], y + t * a.strides[y_is]]);
            }
        }
    }
    let range = |s: usize| {
        let v = offsets.iter().map(|o| o[s]);
        [v.clone().min().unwrap_or(0), v.max().unwrap_or(0)]
    };
    let (x_range, y_range) = (range(0), range(1));
    let pack_x = i_axis.extent > 1 && i_axis.strides[x_is] != 1;
    let packed_terms = if pack_x {
        offsets.iter().enumerate().map(|(p, &[_, y])| [(p * i_axis.extent) as isize, y]).collect()
    } else {
        Vec::new()
    };
    Some(TileLayout {
        x_is,
        i: i_axis.extent,
        x_i: i_axis.strides[x_is],
        c_i: i_axis.strides[OUT],
        j: j_axis.extent,
        y_j: j_axis.strides[y_is],
        c_j: j_axis.strides[OUT],
        pack_x,
        packed_terms,
        stage_c: i_axis.extent > 1 && i_axis.strides[OUT] != 1,
        terms: offsets,
        x_range,
        y_range,
        loops,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(extent: usize, strides: [isize; 3]) -> Axis {
        Axis { extent, strides, lhs_axis: None, rhs_axis: None }
    }

    #[test]
    fn row_major_batched_products_vectorise_the_output_rows() {
        // [b, m, k] x [b, k, n] -> [b, m, n], all row-major: i = n (unit in rhs and out).
        let (b, m, k, n) = (7, 3, 5, 4);
        let l =
            tile_layout(&[axis(b, [15, 20, 12])], &[axis(m, [5, 0, 4])], &[axis(n, [0, 1, 1])], &[axis(k, [1, 4, 0])])
                .unwrap();
        assert_eq!((l.x_is, l.i, l.x_i, l.c_i), (RHS, n, 1, 1));
        assert_eq!((l.j, l.y_j, l.c_j), (m, 5, 4));
        assert_eq!((l.pack_x, l.stage_c, l.items(), l.k()), (false, false, b, k));
        assert_eq!(l.terms[3], [12, 3]);
    }

    #[test]
    fn interleaved_short_contracted_axes_become_a_table() {
        // lhs [a, m, c] contracted over a and c (strides 40 and 1) against rhs [a, c, n].
        let l = tile_layout(
            &[],
            &[axis(10, [4, 0, 6])],
            &[axis(6, [0, 1, 1])],
            &[axis(4, [40, 24, 0]), axis(4, [1, 6, 0])],
        )
        .unwrap();
        assert_eq!((l.x_is, l.i, l.j, l.k()), (RHS, 6, 10, 16));
        // Terms ordered by the Y (lhs) stride, innermost the densest.
        assert_eq!(&l.terms[..3], &[[0, 0], [6, 1], [12, 2]]);
        assert_eq!(l.terms[4], [24, 40]);
        assert_eq!((l.x_range, l.y_range), ([0, 90], [0, 123]));
    }

    #[test]
    fn a_destination_without_unit_stride_is_staged() {
        let l = tile_layout(&[], &[axis(3, [1, 0, 8])], &[axis(4, [0, 1, 2])], &[axis(2, [3, 4, 0])]).unwrap();
        assert!(l.stage_c && !l.pack_x);
        assert_eq!((l.x_is, l.i), (LHS, 3));
        assert!(tile_layout(&[], &[axis(3, [1, 0, 1])], &[], &[axis(MAX_TERMS + 1, [3, 1, 0])]).is_none());
    }
}
