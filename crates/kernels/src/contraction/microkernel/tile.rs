//! One register tile: `C[i, j] = alpha · Σ_p X[i, p] · Y[p, j] + beta · C[i, j]` for
//! `NV` registers of rows `i` (unit stride in X and C) and `NB` columns `j` (any strides),
//! with the accumulators held in registers for the whole `k` loop.
//!
//! Complex elements are interleaved pairs of reals, so a register of `L` reals holds
//! `L / 2` complex elements. Each column keeps two accumulators, `X · re(y)` and
//! `X · im(y)`; the complex product (with either conjugation) is their signed
//! combination after the loop: with `a = Σ x·re(y)` and `b = Σ x·im(y)` (pairs of reals),
//! `x·y = (a.re − b.im, a.im + b.re)`, `conj(x)·y = (a.re + b.im, b.re − a.im)`,
//! `x·conj(y) = (a.re + b.im, a.im − b.re)` and `conj(x)·conj(y) = (a.re − b.im,
//! −a.im − b.re)`. The loop itself is the real one: one fused multiply-add per register.

use super::MicroScalar;
use super::lanes::{Lanes, Real};

/// Where one tile's operands are: the contraction terms and the column strides.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TileStrides<'a> {
    /// Per term p, the element offsets of X[0, p] and Y[p, 0] (elements, not reals).
    pub terms: &'a [[isize; 2]],
    /// Y and C: distance between consecutive columns, in reals.
    pub y_j: isize,
    pub c_j: isize,
}

/// What happens after the loop: the complex combination and `alpha`, `beta`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Epilogue<R> {
    /// Complex only: the product is `a · sign_a + swap_pairs(b) · sign_b`, each sign a
    /// pair (even lane, odd lane) chosen by the conjugation flags.
    pub sign_a: (R, R),
    pub sign_b: (R, R),
    /// `alpha` as (re, im) (im zero for real dtypes); skipped when it is one.
    pub alpha: (R, R),
    pub alpha_is_one: bool,
    /// `beta` as (re, im); zero means C is not read.
    pub beta: (R, R),
    pub beta_is_zero: bool,
}

impl<R: Real> Epilogue<R> {
    /// The combination signs for conjugation flags of X and Y.
    pub(crate) fn signs(conj_x: bool, conj_y: bool) -> ((R, R), (R, R)) {
        let (one, minus) = (R::ONE, R::ONE.neg());
        match (conj_x, conj_y) {
            (false, false) => ((one, one), (minus, one)),
            (true, false) => ((one, minus), (one, one)),
            (false, true) => ((one, one), (one, minus)),
            (true, true) => ((one, minus), (minus, minus)),
        }
    }
}

/// `z · (re, im)` on interleaved complex lanes, or `z · re` on real ones.
#[inline(always)]
fn scale<S: Lanes>(s: S, z: S::V, (re, im): (S::R, S::R), complex: bool) -> S::V {
    if complex {
        // (zr·re − zi·im, zi·re + zr·im) = z·re + swap(z)·(−im, im).
        s.mul_add(s.swap_pairs(z), s.pair(im.neg(), im), s.mul(z, s.splat(re)))
    } else {
        s.mul(z, s.splat(re))
    }
}

/// `unroll!(N, i => { body })` runs `body` with `i` = 0, 1, … N - 1 (`N <= 8`) as separate
/// statements, so that every index is a constant: the compiler's own unrolling gives up on
/// loop bodies as large as an epilogue's, and then keeps the accumulators on the stack.
macro_rules! unroll {
    ($n:expr, $i:ident => $body:block) => {
        unroll!(@steps $n, $i, $body, 0 1 2 3 4 5 6 7)
    };
    (@steps $n:expr, $i:ident, $body:block, $($k:literal)*) => {{
        const { assert!($n <= 8, "unroll! takes at most eight steps") };
        $( if $k < $n { let $i: usize = $k; $body } )*
    }};
}

/// Computes one tile. `x` points at X[i0, ·] (rows contiguous, `NV` registers of which the
/// last is limited to the lanes of `last` when `CUT`), `y` at Y[·, j0] and `c` at
/// C[i0, j0]; term p is at offset `terms[p]` from `x` and `y`.
///
/// A full last register (`CUT` false) takes plain loads and stores, masked ones only where
/// the row extent cuts it. The epilogue is unrolled by hand (`unroll!`) so the
/// accumulators stay in registers instead of going through the stack: that round trip and
/// the zeroing before it were a quarter of a 16 × 16 × 16 item's time in the profile.
///
/// # Safety
/// Every X element `x + terms[p][0]·w + v·L` (lanes of `last` in the last register when
/// `CUT`), every Y element `y + terms[p][1]·w + j·y_j (+1 for complex)` and every C
/// element `c + v·L + j·c_j` for every term p, `j < NB`, `v < NV` must be in bounds (`w` =
/// 2 for complex elements, else 1); the C elements must be written by no
/// other thread during the call; the CPU must support `S` (guaranteed by its token) and
/// the caller must be compiled with its features for this to be fast (not for safety).
#[inline(always)]
pub(crate) unsafe fn tile<S: Lanes, T: MicroScalar<Part = S::R>, const NV: usize, const NB: usize, const CUT: bool>(
    s: S,
    g: &TileStrides,
    e: &Epilogue<S::R>,
    x: *const S::R,
    y: *const S::R,
    c: *mut S::R,
    last: S::M,
) {
    let w: isize = if T::COMPLEX { 2 } else { 1 };
    let mut acc = [[s.zero(); NB]; NV];
    let mut acc_im = [[s.zero(); NB]; NV];
    for &[xo, yo] in g.terms {
        let (xp, yp) = (x.wrapping_offset(xo * w), y.wrapping_offset(yo * w));
        let mut xv = [s.zero(); NV];
        for (v, r) in xv.iter_mut().enumerate() {
            // SAFETY: in bounds by the caller's contract; a cut last register reads only
            // the lanes of `last`.
            *r = unsafe {
                if CUT && v + 1 == NV { s.load_part(xp.add(v * S::L), last) } else { s.load(xp.add(v * S::L)) }
            };
        }
        for j in 0..NB {
            // SAFETY: Y[p, j] (and its imaginary part) is in bounds by the contract.
            let yj = unsafe { yp.offset(j as isize * g.y_j) };
            let re = s.splat(unsafe { *yj });
            for v in 0..NV {
                acc[v][j] = s.mul_add(xv[v], re, acc[v][j]);
            }
            if T::COMPLEX {
                // SAFETY: as above, the imaginary part follows the real one.
                let im = s.splat(unsafe { *yj.add(1) });
                for v in 0..NV {
                    acc_im[v][j] = s.mul_add(xv[v], im, acc_im[v][j]);
                }
            }
        }
    }
    let (sign_a, sign_b) = (s.pair(e.sign_a.0, e.sign_a.1), s.pair(e.sign_b.0, e.sign_b.1));
    // Every (v, j) below is a constant after `unroll!`, so the accumulators are never
    // indexed at run time and never leave their registers. (A macro, not a closure:
    // closures do not inherit the caller's target features, so the intrinsics in one
    // would be calls.)
    let plain = e.alpha_is_one && e.beta_is_zero;
    unroll!(NB, j => {
        let cj = c.wrapping_offset(j as isize * g.c_j);
        unroll!(NV, v => {
            let mut r = acc[v][j];
            if T::COMPLEX {
                r = s.mul_add(s.swap_pairs(acc_im[v][j]), sign_b, s.mul(r, sign_a));
            }
            let at = cj.wrapping_add(v * S::L);
            let cut = CUT && v + 1 == NV;
            if !plain {
                if !e.alpha_is_one {
                    r = scale::<S>(s, r, e.alpha, T::COMPLEX);
                }
                if !e.beta_is_zero {
                    // SAFETY: C[i, j] is in bounds and ours by the contract.
                    let old = unsafe { if cut { s.load_part(at, last) } else { s.load(at) } };
                    r = s.add(r, scale::<S>(s, old, e.beta, T::COMPLEX));
                }
            }
            // SAFETY: as above.
            unsafe { if cut { s.store_part(at, r, last) } else { s.store(at, r) } }
        })
    });
}
