//! Batched small GEMM: many products of at most a few dozen rows, columns and contraction
//! terms each, computed by register tiles over the whole batch with no per-item dispatch,
//! planning or allocation.
//!
//! **Orientation.** Each product is computed as `C[i, j] = Σ_p X[i, p] · Y[p, j]` with `i`
//! the vectorised axis: either `i` = rows of C (X = lhs, Y = rhs) or, for the transposed
//! problem `Cᵀ = Bᵀ · Aᵀ`, `i` = columns of C (X = rhs, Y = lhs). The job picks the
//! orientation in which C, and if possible X, have unit stride along `i`, so row-major,
//! column-major and transposed operands are read as they lie. Y is read element by
//! element through any strides (one broadcast per column and `p`). When X has no unit
//! stride along `i` each item's X is first copied into a compact scratch block; when C
//! has none, each item is computed into a compact scratch block and then written through
//! C's strides. Scratch belongs to the caller (one buffer per worker, reused for every
//! item of its range).
//!
//! **Tiles.** An item is cut into tiles of up to four registers along `i` by up to eight
//! columns (`tile.rs`), the widest that keep every accumulator in a register; the last
//! register of a row uses masked loads and stores, and column tails take narrower tiles
//! (8, 4, 2, 1). The tile code is generic over the instruction set (`lanes.rs`: AVX-512F,
//! AVX2 + FMA, portable), chosen once per call at run time.
//!
//! **Numbers.** Each output element is one chain of fused multiply-adds in `p` order,
//! computed by one worker, so results are independent of the thread count and of how the
//! batch is split (they do depend on the instruction set: the portable path has no fused
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

/// Computes items `items` of `job` into `out`, with `scratch` for packed blocks.
///
/// The destination elements of distinct items must be distinct (a non-aliasing
/// destination, and loop axes that all index it), so that workers running disjoint item
/// ranges never touch one element: that is the contract every user of [`DisjointOut`]
/// keeps.
pub(crate) fn run_items<T: ContractScalar>(
    job: &TileJob<'_, T>,
    out: &DisjointOut<'_, T>,
    items: Range<usize>,
    scratch: &mut Vec<T>,
) -> Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    job.check_bounds(out.len())?;
    let need = job.scratch_len();
    if scratch.len() < need {
        scratch.resize(need, T::zero());
    }
    T::Part::with_lanes(ItemsWork { job, out, items, scratch });
    Ok(())
}

struct ItemsWork<'j, 'a, 'o, 's, T> {
    job: &'j TileJob<'a, T>,
    out: &'j DisjointOut<'o, T>,
    items: Range<usize>,
    scratch: &'s mut Vec<T>,
}

impl<T: ContractScalar> LanesWork<T::Part> for ItemsWork<'_, '_, '_, '_, T> {
    #[inline(always)]
    fn run<S: Lanes<R = T::Part>>(self, s: S) {
        let ItemsWork { job, out, items, scratch } = self;
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
        let mut at = Odometer::new(&l.loops, job.base, items.start);
        for _ in items {
            let offsets = at.offsets;
            at.advance(&l.loops);
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
                unsafe { tiles::<S, T>(s, l, &strides, &staged, x, y, c) };
                for j in 0..l.j {
                    for i in 0..l.i {
                        let v = stage[j * l.i + i];
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
                unsafe { tiles::<S, T>(s, l, &strides, &direct, x, y, c) };
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

/// Computes one item: tiles of up to [`MAX_REGISTERS`] registers along i, columns in
/// tiles of 8, 4, 2 and 1 (the widest that fits and is not longer than what is left).
///
/// # Safety
/// `x`, `y` and `c` point at the item's X, Y and C (C with unit stride along i), every
/// element of which is in bounds with the offsets and strides in `l` and `g`, and C's
/// elements are this call's alone.
#[inline(always)]
unsafe fn tiles<S: Lanes, T: MicroScalar<Part = S::R>>(
    s: S,
    l: &TileLayout,
    g: &TileStrides<'_>,
    e: &Epilogue<S::R>,
    x: *const S::R,
    y: *const S::R,
    c: *mut S::R,
) {
    let w = if T::COMPLEX { 2 } else { 1 };
    let rows_per_tile = MAX_REGISTERS * S::L / w;
    let mut i0 = 0;
    while i0 < l.i {
        let rows = rows_per_tile.min(l.i - i0);
        let reals = rows * w;
        let nv = reals.div_ceil(S::L);
        let last = s.first(reals - (nv - 1) * S::L);
        let (xi, ci) = (x.wrapping_add(i0 * w), c.wrapping_add(i0 * w));
        let mut j0 = 0;
        while j0 < l.j {
            let left = l.j - j0;
            let nb =
                COLUMNS.into_iter().find(|&nb| nb <= left && fits(nv, nb, T::COMPLEX, S::ACCUMULATORS)).unwrap_or(1);
            let yj = y.wrapping_offset(j0 as isize * g.y_j);
            let cj = ci.wrapping_offset(j0 as isize * g.c_j);
            // SAFETY: the tile covers rows i0..i0 + rows and columns j0..j0 + nb of the
            // item, all in bounds by this function's contract.
            unsafe { dispatch::<S, T>(s, nv, nb, g, e, xi, yj, cj, last) };
            j0 += nb;
        }
        i0 += rows;
    }
}

/// Calls the tile of `nv` registers by `nb` columns.
///
/// # Safety
/// That of [`tile`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn dispatch<S: Lanes, T: MicroScalar<Part = S::R>>(
    s: S,
    nv: usize,
    nb: usize,
    g: &TileStrides<'_>,
    e: &Epilogue<S::R>,
    x: *const S::R,
    y: *const S::R,
    c: *mut S::R,
    last: S::M,
) {
    macro_rules! arms {
        ($($nv:literal, $nb:literal);*) => {
            match (nv, nb) {
                $(
                    // SAFETY: forwarded contract.
                    ($nv, $nb) if fits($nv, $nb, T::COMPLEX, S::ACCUMULATORS) => unsafe {
                        tile::<S, T, $nv, $nb>(s, g, e, x, y, c, last)
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
