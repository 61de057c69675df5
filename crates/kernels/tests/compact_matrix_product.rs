//! The direct path for small products of two compact rank-2 operands, against a naive
//! reference in c64: every float dtype, all four choices of contracted axes, conjugation,
//! empty extents. The same operands as strided views (which take the general tiny loop)
//! must give bit-identical results, and bad inputs keep their typed errors.

use strata_kernels::KernelContext;
use strata_kernels::contraction::dot_general;
use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{ErrorKind, Scalar, Tensor, TensorRead, TypedTensor, TypedView, c32, c64};

static FAER: strata_provider::FaerGemmProvider = strata_provider::FaerGemmProvider;

/// Test values of each float dtype, built from a wide complex number.
trait Value: Scalar {
    fn make(z: c64) -> Self;
    fn wide(self) -> c64;
    fn tol() -> f64;
}
impl Value for f32 {
    fn make(z: c64) -> Self {
        z.re as f32
    }
    fn wide(self) -> c64 {
        c64::new(self as f64, 0.0)
    }
    fn tol() -> f64 {
        1e-5
    }
}
impl Value for f64 {
    fn make(z: c64) -> Self {
        z.re
    }
    fn wide(self) -> c64 {
        c64::new(self, 0.0)
    }
    fn tol() -> f64 {
        1e-12
    }
}
impl Value for c32 {
    fn make(z: c64) -> Self {
        c32::new(z.re as f32, z.im as f32)
    }
    fn wide(self) -> c64 {
        c64::new(self.re as f64, self.im as f64)
    }
    fn tol() -> f64 {
        1e-5
    }
}
impl Value for c64 {
    fn make(z: c64) -> Self {
        z
    }
    fn wide(self) -> c64 {
        self
    }
    fn tol() -> f64 {
        1e-12
    }
}

fn value<T: Value>(seed: usize) -> T {
    T::make(c64::new(((seed * 7919) % 23) as f64 * 0.25 - 2.5, ((seed * 104729) % 17) as f64 * 0.5 - 4.0))
}

/// `out[i][j] = Σ_p op(lhs(i, p)) · op(rhs(p, j))`, reading each operand by its own
/// contracted axis, in c64.
fn reference<T: Value>(
    lhs: &TypedTensor<T>,
    rhs: &TypedTensor<T>,
    [cl, cr]: [usize; 2],
    [ca, cb]: [bool; 2],
) -> (Vec<usize>, Vec<c64>) {
    let get = |t: &TypedTensor<T>, r: usize, c: usize| t.get(&[r, c]).copied().unwrap().wide();
    let (m, k) = if cl == 1 { (lhs.shape()[0], lhs.shape()[1]) } else { (lhs.shape()[1], lhs.shape()[0]) };
    let n = if cr == 0 { rhs.shape()[1] } else { rhs.shape()[0] };
    let mut out = Vec::new();
    for i in 0..m {
        for j in 0..n {
            let mut acc = c64::new(0.0, 0.0);
            for p in 0..k {
                let a = if cl == 1 { get(lhs, i, p) } else { get(lhs, p, i) };
                let b = if cr == 0 { get(rhs, p, j) } else { get(rhs, j, p) };
                acc += if ca { a.conj() } else { a } * if cb { b.conj() } else { b };
            }
            out.push(acc);
        }
    }
    (vec![m, n], out)
}

/// The elements of `t` in column-major order: a buffer whose column-major view is `t`.
fn column_major_copy<T: Value>(t: &TypedTensor<T>) -> Vec<T> {
    let [r, c] = [t.shape()[0], t.shape()[1]];
    (0..c).flat_map(|j| (0..r).map(move |i| (i, j))).map(|(i, j)| *t.get(&[i, j]).unwrap()).collect()
}

fn check<T: Value>() {
    let ctx = KernelContext::sequential();
    for (m, k, n) in [(2, 2, 2), (1, 1, 1), (3, 4, 2), (1, 5, 3), (4, 1, 4), (0, 3, 2), (2, 0, 3), (3, 2, 0), (8, 8, 8)]
    {
        for cl in [0, 1] {
            for cr in [0, 1] {
                let lshape = if cl == 1 { [m, k] } else { [k, m] };
                let rshape = if cr == 0 { [k, n] } else { [n, k] };
                let lhs = TypedTensor::from_fn(&lshape, |i| value::<T>(i[0] * 31 + i[1] + 1)).unwrap();
                let rhs = TypedTensor::from_fn(&rshape, |i| value::<T>(i[0] * 17 + i[1] + 500)).unwrap();
                let config = DotGeneralConfig::new(vec![], vec![], vec![cl], vec![cr]);
                for conj in [[false, false], [true, false], [false, true], [true, true]] {
                    let got = dot_general(&ctx, (&lhs).into(), (&rhs).into(), &config, conj[0], conj[1], &FAER, None)
                        .unwrap();
                    let (shape, want) = reference(&lhs, &rhs, [cl, cr], conj);
                    assert_eq!(got.shape(), &shape[..]);
                    let got = got.as_typed::<T>().unwrap();
                    for (g, w) in got.data().iter().zip(&want) {
                        let tol = T::tol() * (1.0 + w.norm());
                        assert!(
                            (g.wide() - w).norm() <= tol,
                            "{:?} {m}x{k}x{n} [{cl},{cr}] {conj:?}: {g:?} vs {w}",
                            T::DTYPE
                        );
                    }
                    // The general tiny loop over strided views sums in the same order.
                    let (lb, rb) = (column_major_copy(&lhs), column_major_copy(&rhs));
                    let lv = TypedView::column_major(&lb, &lshape).unwrap();
                    let rv = TypedView::column_major(&rb, &rshape).unwrap();
                    let (lr, rr): (TensorRead<'_>, TensorRead<'_>) = (lv.into(), rv.into());
                    if lshape.iter().all(|&d| d > 1) {
                        assert!(lr.contiguous::<T>().is_none(), "the strided lhs must miss the compact path");
                    }
                    let slow = dot_general(&ctx, lr, rr, &config, conj[0], conj[1], &FAER, None).unwrap();
                    assert_eq!(slow.as_typed::<T>().unwrap().data(), got.data(), "{:?} strided vs compact", T::DTYPE);
                }
            }
        }
    }
}

#[test]
fn compact_products_match_the_reference_for_every_float_dtype_and_axis_choice() {
    check::<f32>();
    check::<f64>();
    check::<c32>();
    check::<c64>();
}

#[test]
fn bad_inputs_keep_their_typed_errors() {
    let ctx = KernelContext::sequential();
    let m = |r: usize, c: usize| Tensor::from_vec(vec![1.0f64; r * c], &[r, c]).unwrap();
    let run = |a: &Tensor, b: &Tensor, cfg: DotGeneralConfig| {
        dot_general(&ctx, a.into(), b.into(), &cfg, false, false, &FAER, None).unwrap_err()
    };
    let mm = DotGeneralConfig::matmul();
    let e = run(&m(2, 3), &m(2, 2), mm.clone());
    assert_eq!((e.kind(), e.op()), (ErrorKind::ShapeMismatch, "dot_general"));
    assert_eq!(e.message(), "contracting dim 1 of lhs has extent 3, rhs dim 0 has extent 2");
    let e = run(&m(2, 2), &m(2, 2), DotGeneralConfig::new(vec![], vec![], vec![2], vec![0]));
    assert_eq!(e.message(), "contracting dim 2 of lhs is out of range for rank 2");
    let f32s = Tensor::from_vec(vec![1.0f32; 4], &[2, 2]).unwrap();
    assert_eq!(run(&m(2, 2), &f32s, mm.clone()).kind(), ErrorKind::DTypeMismatch);
    let ints = Tensor::from_vec(vec![1i32; 4], &[2, 2]).unwrap();
    assert_eq!(run(&ints, &ints, mm).kind(), ErrorKind::Unsupported);
}
