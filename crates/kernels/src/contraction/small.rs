//! Our own loops for the contractions too small (or too thin) for a GEMM provider: dot
//! products, tiny matrix products, and the `beta * out` of an empty contraction. They read
//! straight through the operands' strides, so they never copy.

use super::disjoint::DisjointOut;
use super::scalar::{ContractScalar, maybe_conj};

/// Number of partial sums of a contiguous dot product: enough independent chains for the
/// compiler to vectorise, summed in a fixed order so results never depend on threads.
const LANES: usize = 8;

/// A strided vector: element `i` at `buf[offset + i * stride]`.
#[derive(Clone, Copy)]
pub(crate) struct StridedVec<'a, T> {
    pub buf: &'a [T],
    pub offset: isize,
    pub stride: isize,
}

impl<T: Copy> StridedVec<'_, T> {
    #[inline(always)]
    fn at(&self, i: usize) -> T {
        self.buf[(self.offset + i as isize * self.stride) as usize]
    }
}

fn dot_lanes<T: ContractScalar, const CL: bool, const CR: bool>(l: &[T], r: &[T]) -> T {
    let mut acc = [T::zero(); LANES];
    let mut lc = l.chunks_exact(LANES);
    let mut rc = r.chunks_exact(LANES);
    for (a, b) in (&mut lc).zip(&mut rc) {
        for i in 0..LANES {
            acc[i] = acc[i] + maybe_conj(a[i], CL) * maybe_conj(b[i], CR);
        }
    }
    let mut tail = T::zero();
    for (&a, &b) in lc.remainder().iter().zip(rc.remainder()) {
        tail = tail + maybe_conj(a, CL) * maybe_conj(b, CR);
    }
    let half = LANES / 2;
    for w in [half, half / 2, half / 4] {
        for i in 0..w {
            acc[i] = acc[i] + acc[i + w];
        }
    }
    acc[0] + tail
}

/// `Σ_p op(l[p]) · op(r[p])` over `k` terms, `op` conjugating where asked.
pub(crate) fn dot<T: ContractScalar>(l: StridedVec<'_, T>, r: StridedVec<'_, T>, k: usize, conj: [bool; 2]) -> T {
    if k == 0 {
        return T::zero();
    }
    if l.stride == 1 && r.stride == 1 {
        let (lo, ro) = (l.offset as usize, r.offset as usize);
        let (ls, rs) = (&l.buf[lo..lo + k], &r.buf[ro..ro + k]);
        return match conj {
            [false, false] => dot_lanes::<T, false, false>(ls, rs),
            [true, false] => dot_lanes::<T, true, false>(ls, rs),
            [false, true] => dot_lanes::<T, false, true>(ls, rs),
            [true, true] => dot_lanes::<T, true, true>(ls, rs),
        };
    }
    let mut acc = T::zero();
    for p in 0..k {
        acc = acc + maybe_conj(l.at(p), conj[0]) * maybe_conj(r.at(p), conj[1]);
    }
    acc
}

/// `out = alpha · acc + beta · out`, not reading `out` when `beta` is zero (so a
/// destination holding NaN is overwritten, as BLAS does).
///
/// # Safety
/// No other thread may access element `i` of `out` during the call.
#[inline(always)]
pub(crate) unsafe fn update<T: ContractScalar>(out: &DisjointOut<'_, T>, i: usize, acc: T, alpha: T, beta: T) {
    let v = if beta == T::zero() {
        alpha * acc
    } else {
        // SAFETY: the caller owns element `i` for this call.
        alpha * acc + beta * unsafe { out.read(i) }
    };
    // SAFETY: as above.
    unsafe { out.write(i, v) }
}

/// One `[m, k] x [k, n]` product through strides, accumulated into `out`.
pub(crate) struct SmallGemm<'a, T> {
    pub lhs: &'a [T],
    pub rhs: &'a [T],
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub lhs_mat: [isize; 2],
    pub rhs_mat: [isize; 2],
    pub out_mat: [isize; 2],
    pub conj: [bool; 2],
    pub alpha: T,
    pub beta: T,
}

impl<T: ContractScalar> SmallGemm<'_, T> {
    /// Computes the product whose matrices start at `offsets` (lhs, rhs, out).
    ///
    /// # Safety
    /// No other thread may access the output elements of this product during the call.
    pub(crate) unsafe fn run(&self, out: &DisjointOut<'_, T>, offsets: [isize; 3]) {
        for i in 0..self.m {
            for j in 0..self.n {
                let l = StridedVec {
                    buf: self.lhs,
                    offset: offsets[0] + i as isize * self.lhs_mat[0],
                    stride: self.lhs_mat[1],
                };
                let r = StridedVec {
                    buf: self.rhs,
                    offset: offsets[1] + j as isize * self.rhs_mat[1],
                    stride: self.rhs_mat[0],
                };
                let acc = dot(l, r, self.k, self.conj);
                let at = offsets[2] + i as isize * self.out_mat[0] + j as isize * self.out_mat[1];
                // SAFETY: the caller owns this product's output elements.
                unsafe { update(out, at as usize, acc, self.alpha, self.beta) };
            }
        }
    }
}
