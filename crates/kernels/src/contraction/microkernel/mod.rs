//! The register-tile engine: small, batched and thin contractions computed straight from
//! the operands as they lie, with no per-item dispatch, planning, allocation or copy.
//!
//! **Mapping** (`layout.rs`, part of the cached analysis). Every item computes
//! `C[i, j] = Σ_p X[i, p] · Y[p, j]`: i is one free axis with unit stride in C (the
//! vectorised rows), j one free axis of the other operand (the tile columns, any stride),
//! p every contracted axis at once through a table of offsets, and every other axis a
//! loop axis enumerating the items. X is whichever operand carries i, so row-major,
//! column-major, transposed and permuted operands are all read in place; contracted axes
//! that interleave with others (short bond axes of tensor networks) cost one table read
//! per term instead of a copy of the operand. Only when X has no unit stride along i is
//! each item's X copied into a compact block (reused by consecutive items that share
//! it), and only when C has none is each item computed into a compact block and then
//! written through C's strides; the blocks live in the caller's per-worker scratch.
//!
//! **Tiles** (`tile.rs`). An item's rows are cut into tiles of up to four registers by
//! up to eight columns, the widest that keep every accumulator in a register for the
//! whole contraction; the last register of a row uses masked loads and stores, and
//! column tails take narrower tiles (8, 4, 2, 1). The tile code is generic over the
//! instruction set (`lanes.rs`: AVX-512F, AVX2 + FMA, portable), chosen once per call at
//! run time. Complex elements are interleaved pairs of reals with two accumulators per
//! register (the conjugation flags are signs in the final combination).
//!
//! **Parallel units.** The work is cut into units of one item and a range of its columns
//! ([`Units`]); workers take disjoint ranges of units, so a single large item is split too.
//!
//! **Numbers.** Each output element is one chain of fused multiply-adds in term order,
//! computed by one worker, so results are independent of the thread count and of how the
//! work is split (they do depend on the instruction set: the portable path has no fused
//! multiply-add).

mod lanes;
mod layout;
mod tile;

use std::ops::Range;

use strata_tensor::{Error, Result, c32, c64};

use super::disjoint::DisjointOut;
use super::plan::{Axis, LHS, OUT, RHS};
use super::scalar::ContractScalar;
use lanes::{Lanes, Real};
pub(crate) use layout::{TileLayout, tile_layout};
use tile::{Epilogue, TileStrides, tile};

/// Element types of the tiles: the four contraction dtypes, as reals (`COMPLEX`: pairs).
/// A public trait in a private module, so `ContractScalar` can require it without making
/// it part of the crate's interface.
pub trait MicroScalar: Copy {
    /// The real type the tiles compute in.
    type Part: Real + LanesFor;
    /// Whether an element is an interleaved (re, im) pair of `Part`.
    const COMPLEX: bool;
    /// The element as (re, im).
    fn parts(self) -> (Self::Part, Self::Part);
}

impl MicroScalar for f32 {
    type Part = f32;
    const COMPLEX: bool = false;
    #[inline(always)]
    fn parts(self) -> (f32, f32) {
        (self, 0.0)
    }
}

impl MicroScalar for f64 {
    type Part = f64;
    const COMPLEX: bool = false;
    #[inline(always)]
    fn parts(self) -> (f64, f64) {
        (self, 0.0)
    }
}

impl MicroScalar for c32 {
    type Part = f32;
    const COMPLEX: bool = true;
    #[inline(always)]
    fn parts(self) -> (f32, f32) {
        (self.re, self.im)
    }
}

impl MicroScalar for c64 {
    type Part = f64;
    const COMPLEX: bool = true;
    #[inline(always)]
    fn parts(self) -> (f64, f64) {
        (self.re, self.im)
    }
}

/// Work to run with the best [`Lanes`] of real type `R`.
pub trait LanesWork<R> {
    /// Runs with lanes `s`; called from code compiled for `s`'s instruction set.
    fn run<S: Lanes<R = R>>(self, s: S);
}

/// The run-time choice of instruction set, once per real type.
pub trait LanesFor: Sized {
    /// Runs `work` with the widest lanes the CPU has, in code compiled for them.
    fn with_lanes<W: LanesWork<Self>>(work: W);
}

macro_rules! lanes_for {
    ($r:ty, $avx512:ident, $avx2:ident) => {
        impl LanesFor for $r {
            #[inline]
            fn with_lanes<W: LanesWork<$r>>(work: W) {
                #[cfg(target_arch = "x86_64")]
                {
                    if let Some(s) = lanes::detect_avx512::<$r>() {
                        // SAFETY: `s` proves the CPU has AVX-512F and FMA, the features
                        // the function enables.
                        return unsafe { $avx512(s, work) };
                    }
                    if let Some(s) = lanes::detect_avx2::<$r>() {
                        // SAFETY: `s` proves the CPU has AVX2 and FMA.
                        return unsafe { $avx2(s, work) };
                    }
                }
                work.run(lanes::Portable::<$r>::new())
            }
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f,fma")]
        fn $avx512<W: LanesWork<$r>>(s: lanes::Avx512<$r>, work: W) {
            work.run(s)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn $avx2<W: LanesWork<$r>>(s: lanes::Avx2<$r>, work: W) {
            work.run(s)
        }
    };
}

lanes_for!(f64, run_avx512_f64, run_avx2_f64);
lanes_for!(f32, run_avx512_f32, run_avx2_f32);

/// One tile-mapped contraction on typed data: `C = alpha · Σ op(X) · op(Y) + beta · C` per
/// item, as [`TileLayout`] describes.
pub(crate) struct TileJob<'a, T> {
    pub lhs: &'a [T],
    pub rhs: &'a [T],
    /// Element offsets of item 0 in lhs, rhs and the destination.
    pub base: [isize; 3],
    pub layout: &'a TileLayout,
    pub conj: [bool; 2],
    pub alpha: T,
    pub beta: T,
}

/// Lowest and highest element index reached from `base` along `(extent, stride)` axes,
/// plus `extra` (the range of an offset table).
fn reach(base: isize, axes: impl Iterator<Item = (usize, isize)>, extra: [isize; 2]) -> (i128, i128) {
    let start = (base as i128 + extra[0] as i128, base as i128 + extra[1] as i128);
    axes.fold(start, |(lo, hi), (e, s)| {
        let r = (e.max(1) as i128 - 1) * s as i128;
        (lo + r.min(0), hi + r.max(0))
    })
}

impl<T: ContractScalar> TileJob<'_, T> {
    /// Checks that every element every item addresses lies inside its buffer (the tiles
    /// read and write through raw pointers). A violation is a bug of the plan, reported
    /// as an `Internal` error before anything is written.
    fn check_bounds(&self, out_len: usize) -> Result<()> {
        let l = self.layout;
        if l.i == 0 || l.j == 0 || l.k() == 0 || l.items() == 0 {
            return Err(Error::internal("dot_general", "an empty product reached the small-GEMM tiles"));
        }
        let (x, y) = (l.x_is, l.y_is());
        let loops = |t: usize| l.loops.iter().map(move |a| (a.extent, a.strides[t]));
        let (x_buf, y_buf) = if x == LHS { (self.lhs, self.rhs) } else { (self.rhs, self.lhs) };
        let spans = [
            ("X", x_buf.len(), reach(self.base[x], loops(x).chain([(l.i, l.x_i)]), l.x_range)),
            ("Y", y_buf.len(), reach(self.base[y], loops(y).chain([(l.j, l.y_j)]), l.y_range)),
            ("destination", out_len, reach(self.base[OUT], loops(OUT).chain([(l.i, l.c_i), (l.j, l.c_j)]), [0, 0])),
        ];
        for (what, len, (lo, hi)) in spans {
            if lo < 0 || hi >= len as i128 {
                return Err(Error::internal(
                    "dot_general",
                    format!("tile plan addresses {what} elements {lo}..={hi} of a buffer of {len}"),
                ));
            }
        }
        Ok(())
    }

    /// Scratch elements one worker needs: a packed X and a staged C block.
    fn scratch_len(&self) -> usize {
        let l = self.layout;
        let x = if l.pack_x { l.i * l.k() } else { 0 };
        let c = if l.stage_c { l.i * l.j } else { 0 };
        x + c
    }
}

/// How the work of one job is cut into units for the workers: every item, and each
/// item's columns j in `parts` pieces (whole tiles of eight columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Units {
    pub items: usize,
    pub parts: usize,
    /// Columns per piece (a multiple of 8, except when one piece holds all of j).
    pub piece: usize,
}

impl Units {
    /// Cuts `layout` into at least `want` units where its items are fewer: each item's
    /// columns are then split too, never below one tile of eight columns.
    pub(crate) fn new(layout: &TileLayout, want: usize) -> Units {
        let items = layout.items();
        let tiles = layout.j.div_ceil(8);
        let parts = want.div_ceil(items.max(1)).clamp(1, tiles.max(1));
        let piece = if parts == 1 { layout.j } else { tiles.div_ceil(parts) * 8 };
        Units { items, parts: layout.j.div_ceil(piece.max(1)).max(1), piece: piece.max(1) }
    }

    /// Number of units.
    pub(crate) fn count(&self) -> usize {
        self.items * self.parts
    }
}

/// Computes units `range` of `job` (see [`Units`]) into `out`, with `scratch` for packed
/// blocks.
///
/// The destination elements of distinct units must be distinct (a non-aliasing
/// destination, and loop axes that all index it), so that workers running disjoint unit
/// ranges never touch one element: that is the contract every user of [`DisjointOut`]
/// keeps.
pub(crate) fn run_units<T: ContractScalar>(
    job: &TileJob<'_, T>,
    out: &DisjointOut<'_, T>,
    units: Units,
    range: Range<usize>,
    scratch: &mut Vec<T>,
) -> Result<()> {
    if range.is_empty() {
        return Ok(());
    }
    job.check_bounds(out.len())?;
    let need = job.scratch_len();
    if scratch.len() < need {
        scratch.resize(need, T::zero());
    }
    T::Part::with_lanes(ItemsWork { job, out, units, range, scratch });
    Ok(())
}

struct ItemsWork<'j, 'a, 'o, 's, T> {
    job: &'j TileJob<'a, T>,
    out: &'j DisjointOut<'o, T>,
    units: Units,
    range: Range<usize>,
    scratch: &'s mut Vec<T>,
}

impl<T: ContractScalar> LanesWork<T::Part> for ItemsWork<'_, '_, '_, '_, T> {
    #[inline(always)]
    fn run<S: Lanes<R = T::Part>>(self, s: S) {
        let ItemsWork { job, out, units, range, scratch } = self;
        let l = job.layout;
        let (x_is, y_is) = (l.x_is, l.y_is());
        let (conj_x, conj_y) = (job.conj[usize::from(x_is != LHS)], job.conj[usize::from(x_is == LHS)]);
        let (sign_a, sign_b) = Epilogue::<T::Part>::signs(conj_x, conj_y);
        let one = T::one();
        let direct = Epilogue {
            sign_a,
            sign_b,
            alpha: job.alpha.parts(),
            alpha_is_one: job.alpha == one,
            beta: job.beta.parts(),
            beta_is_zero: job.beta == T::zero(),
        };
        let staged = Epilogue { alpha: one.parts(), alpha_is_one: true, beta_is_zero: true, ..direct };
        let (x_buf, y_buf) = if x_is == LHS { (job.lhs, job.rhs) } else { (job.rhs, job.lhs) };
        let (pack, stage) = scratch.split_at_mut(if l.pack_x { l.i * l.k() } else { 0 });
        let w: isize = if T::COMPLEX { 2 } else { 1 };
        let strides = TileStrides {
            terms: if l.pack_x { &l.packed_terms } else { &l.terms },
            y_j: l.y_j * w,
            c_j: if l.stage_c { l.i as isize * w } else { l.c_j * w },
        };
        let out_ptr = out.as_mut_ptr();
        let mut packed_from = None;
        let mut part = range.start % units.parts;
        let mut at = Odometer::new(&l.loops, job.base, range.start / units.parts);
        for _ in range {
            if part == units.parts {
                part = 0;
                at.advance(&l.loops);
            }
            let offsets = at.offsets;
            let cols = part * units.piece..((part + 1) * units.piece).min(l.j);
            part += 1;
            let x: *const S::R = if l.pack_x {
                // Consecutive items that differ only along Y's axes share X.
                if packed_from != Some(offsets[x_is]) {
                    for (p, &[xo, _]) in l.terms.iter().enumerate() {
                        for (i, slot) in pack[p * l.i..(p + 1) * l.i].iter_mut().enumerate() {
                            *slot = x_buf[(offsets[x_is] + xo + i as isize * l.x_i) as usize];
                        }
                    }
                    packed_from = Some(offsets[x_is]);
                }
                pack.as_ptr().cast()
            } else {
                x_buf.as_ptr().wrapping_offset(offsets[x_is]).cast()
            };
            let y: *const S::R = y_buf.as_ptr().wrapping_offset(offsets[y_is]).cast();
            if l.stage_c {
                let c: *mut S::R = stage.as_mut_ptr().cast();
                // SAFETY: `check_bounds` proved every X and Y element of the item in
                // bounds (a packed X is `i · k` elements of `pack`); the staging block
                // holds `i · j` elements, written only here.
                unsafe { tiles::<S, T>(s, l, &strides, &staged, x, y, c, cols.clone()) };
                for j in cols {
                    for i in 0..l.i {
                        let v = stage[j * l.i + i];
                        // (The staged block is indexed by the item's own column j.)
                        let to = (offsets[OUT] + i as isize * l.c_i + j as isize * l.c_j) as usize;
                        // SAFETY: `to` is this item's element (i, j), in bounds by
                        // `check_bounds`; distinct items own distinct elements (caller).
                        unsafe { super::small::update(out, to, v, job.alpha, job.beta) };
                    }
                }
            } else {
                let c: *mut S::R = out_ptr.wrapping_offset(offsets[OUT]).cast();
                // SAFETY: `check_bounds` proved every element of the item in bounds; its
                // destination elements belong to this item alone (the caller's contract).
                unsafe { tiles::<S, T>(s, l, &strides, &direct, x, y, c, cols) };
            }
        }
    }
}

/// The offsets of consecutive items: the loop axes as a mixed-radix counter.
struct Odometer {
    index: Vec<usize>,
    offsets: [isize; 3],
}

impl Odometer {
    fn new(loops: &[Axis], base: [isize; 3], start: usize) -> Odometer {
        let mut index = vec![0; loops.len()];
        let mut offsets = base;
        let mut rest = start;
        for (d, axis) in loops.iter().enumerate().rev() {
            let i = rest % axis.extent;
            rest /= axis.extent;
            index[d] = i;
            for t in [LHS, RHS, OUT] {
                offsets[t] += i as isize * axis.strides[t];
            }
        }
        Odometer { index, offsets }
    }

    #[inline(always)]
    fn advance(&mut self, loops: &[Axis]) {
        for (d, axis) in loops.iter().enumerate().rev() {
            self.index[d] += 1;
            for t in [LHS, RHS, OUT] {
                self.offsets[t] += axis.strides[t];
            }
            if self.index[d] < axis.extent {
                return;
            }
            for t in [LHS, RHS, OUT] {
                self.offsets[t] -= axis.extent as isize * axis.strides[t];
            }
            self.index[d] = 0;
        }
    }
}

/// Column counts a tile may have.
const COLUMNS: [usize; 4] = [8, 4, 2, 1];
/// Registers along i a tile may have.
const MAX_REGISTERS: usize = 4;

/// Whether a tile of `nv` registers by `nb` columns keeps its accumulators in registers.
#[inline(always)]
const fn fits(nv: usize, nb: usize, complex: bool, accumulators: usize) -> bool {
    nv * nb * if complex { 2 } else { 1 } <= accumulators
}

/// Computes columns `cols` of one item: tiles of up to [`MAX_REGISTERS`] registers along
/// i, columns in tiles of 8, 4, 2 and 1 (the widest that fits and is not longer than what
/// is left).
///
/// # Safety
/// `x`, `y` and `c` point at the item's X, Y and C (C with unit stride along i), every
/// element of which is in bounds with the offsets and strides in `l` and `g`, and C's
/// elements are this call's alone.
// The item's operands, layout and epilogue are separate borrows on purpose: bundling them
// into a struct measured no different but hid which pointer each stride belongs to.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn tiles<S: Lanes, T: MicroScalar<Part = S::R>>(
    s: S,
    l: &TileLayout,
    g: &TileStrides<'_>,
    e: &Epilogue<S::R>,
    x: *const S::R,
    y: *const S::R,
    c: *mut S::R,
    cols: Range<usize>,
) {
    let w = if T::COMPLEX { 2 } else { 1 };
    let rows_per_tile = MAX_REGISTERS * S::L / w;
    let mut i0 = 0;
    while i0 < l.i {
        let rows = rows_per_tile.min(l.i - i0);
        let reals = rows * w;
        let nv = reals.div_ceil(S::L);
        let tail = reals - (nv - 1) * S::L;
        let (last, cut) = (s.first(tail), tail < S::L);
        let (xi, ci) = (x.wrapping_add(i0 * w), c.wrapping_add(i0 * w));
        let mut j0 = cols.start;
        while j0 < cols.end {
            let left = cols.end - j0;
            let nb =
                COLUMNS.into_iter().find(|&nb| nb <= left && fits(nv, nb, T::COMPLEX, S::ACCUMULATORS)).unwrap_or(1);
            let yj = y.wrapping_offset(j0 as isize * g.y_j);
            let cj = ci.wrapping_offset(j0 as isize * g.c_j);
            // SAFETY: the tile covers rows i0..i0 + rows and columns j0..j0 + nb of the
            // item, all in bounds by this function's contract.
            unsafe { dispatch::<S, T>(s, (nv, nb, cut), g, e, xi, yj, cj, last) };
            j0 += nb;
        }
        i0 += rows;
    }
}

/// Calls the tile of `nv` registers by `nb` columns, the last register cut to the lanes
/// of `last` when `cut`.
///
/// # Safety
/// That of [`tile`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn dispatch<S: Lanes, T: MicroScalar<Part = S::R>>(
    s: S,
    (nv, nb, cut): (usize, usize, bool),
    g: &TileStrides<'_>,
    e: &Epilogue<S::R>,
    x: *const S::R,
    y: *const S::R,
    c: *mut S::R,
    last: S::M,
) {
    macro_rules! arms {
        ($($nv:literal, $nb:literal);*) => {
            match (nv, nb, cut) {
                $(
                    // SAFETY (both arms): forwarded contract.
                    ($nv, $nb, false) if fits($nv, $nb, T::COMPLEX, S::ACCUMULATORS) => unsafe {
                        tile::<S, T, $nv, $nb, false>(s, g, e, x, y, c, last)
                    },
                    ($nv, $nb, true) if fits($nv, $nb, T::COMPLEX, S::ACCUMULATORS) => unsafe {
                        tile::<S, T, $nv, $nb, true>(s, g, e, x, y, c, last)
                    },
                )*
                // INVARIANT: `tiles` only asks for shapes that fit, and one column of at
                // most four registers always fits (every instruction set has at least
                // eight accumulators).
                _ => unreachable!("no {nv}x{nb} tile"),
            }
        };
    }
    arms!(1, 1; 1, 2; 1, 4; 1, 8; 2, 1; 2, 2; 2, 4; 2, 8; 3, 1; 3, 2; 3, 4; 3, 8; 4, 1; 4, 2; 4, 4; 4, 8)
}
