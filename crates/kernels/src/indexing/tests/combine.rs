//! The scatter combiners' edge cases, each stated as the jax.lax rule it follows and
//! checked through the scatter kernel (the combiners are the elementwise ops of the same
//! name, applied as `combine(operand element, update)` in window order).

use strata_tensor::config::{ScatterCombiner, ScatterConfig};
use strata_tensor::{Scalar, Tensor, c32, c64};

use crate::KernelContext;
use crate::indexing::scatter;

/// Scatters `updates` into `operand` (rank 1) at `at` (one element each), in that order.
fn scatter_1d<T: Scalar>(operand: Vec<T>, at: &[i32], updates: Vec<T>, combiner: ScatterCombiner) -> Vec<T> {
    let n = operand.len();
    let x = Tensor::from_vec(operand, &[n]).unwrap();
    let idx = Tensor::from_vec(at.to_vec(), &[at.len(), 1]).unwrap();
    let u = Tensor::from_vec(updates, &[at.len()]).unwrap();
    let cfg = ScatterConfig {
        inserted_window_dims: vec![0],
        scatter_dims_to_operand_dims: vec![0],
        index_vector_dim: 1,
        combiner,
        ..ScatterConfig::default()
    };
    let out = scatter(&KernelContext::sequential(), &(&x).into(), &(&idx).into(), &(&u).into(), &cfg, None).unwrap();
    out.as_typed::<T>().unwrap().data().to_vec()
}

#[test]
fn float_max_min_propagate_nan_and_order_signed_zeros() {
    // lax.scatter_max([1, 2], [0, 1, 0], [nan, 3, 0.5]) = [nan, 3]: a NaN stays.
    let m = scatter_1d(vec![1.0f64, 2.0], &[0, 1, 0], vec![f64::NAN, 3.0, 0.5], ScatterCombiner::Max);
    assert!(m[0].is_nan() && m[1] == 3.0, "{m:?}");
    let m = scatter_1d(vec![1.0f32, 2.0], &[0, 1, 0], vec![f32::NAN, 3.0, 0.5], ScatterCombiner::Min);
    assert!(m[0].is_nan() && m[1] == 2.0, "{m:?}");
    // -0 orders below +0, whichever side it is on.
    let m = scatter_1d(vec![-0.0f32, 0.0], &[0, 1], vec![0.0, -0.0], ScatterCombiner::Max);
    assert!(m[0].is_sign_positive() && m[1].is_sign_positive(), "{m:?}");
    let m = scatter_1d(vec![-0.0f64, 0.0], &[0, 1], vec![0.0, -0.0], ScatterCombiner::Min);
    assert!(m[0].is_sign_negative() && m[1].is_sign_negative(), "{m:?}");
}

#[test]
fn integers_wrap_and_bools_are_logical() {
    assert_eq!(scatter_1d(vec![i32::MAX], &[0], vec![1], ScatterCombiner::Add), [i32::MIN]);
    assert_eq!(scatter_1d(vec![i64::MAX], &[0], vec![2], ScatterCombiner::Multiply), [-2]);
    assert_eq!(scatter_1d(vec![-5i32, 3], &[0, 1], vec![3, -5], ScatterCombiner::Max), [3, 3]);
    assert_eq!(scatter_1d(vec![-5i64, 3], &[0, 1], vec![3, -5], ScatterCombiner::Min), [-5, -5]);
    for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
        assert_eq!(scatter_1d(vec![a], &[0], vec![b], ScatterCombiner::Max), [a || b]);
        assert_eq!(scatter_1d(vec![a], &[0], vec![b], ScatterCombiner::Min), [a && b]);
    }
}

#[test]
fn complex_max_min_are_xlas_lexicographic_select() {
    let (a, b) = (c64::new(1.0, 5.0), c64::new(2.0, -1.0));
    assert_eq!(scatter_1d(vec![a], &[0], vec![b], ScatterCombiner::Max), [b]);
    assert_eq!(scatter_1d(vec![a], &[0], vec![b], ScatterCombiner::Min), [a]);
    let (c, d) = (c32::new(1.0, 2.0), c32::new(1.0, 3.0));
    assert_eq!(scatter_1d(vec![c], &[0], vec![d], ScatterCombiner::Max), [d]);
    assert_eq!(scatter_1d(vec![d], &[0], vec![c], ScatterCombiner::Min), [c]);
    // XLA keeps the operand element only when it compares strictly greater (smaller), and
    // every comparison with a NaN part is false: jax.lax.scatter_max([1+1j, 2], [0, 1, 0],
    // [nan+0j, 3, 0.5]) = [0.5, 3] (the NaN is selected, then replaced), scatter_min gives
    // [0.5, 2].
    let x = vec![c64::new(1.0, 1.0), c64::new(2.0, 0.0)];
    let u = vec![c64::new(f64::NAN, 0.0), c64::new(3.0, 0.0), c64::new(0.5, 0.0)];
    let m = scatter_1d(x.clone(), &[0, 1, 0], u.clone(), ScatterCombiner::Max);
    assert_eq!(m, [c64::new(0.5, 0.0), c64::new(3.0, 0.0)]);
    let m = scatter_1d(x, &[0, 1, 0], u, ScatterCombiner::Min);
    assert_eq!(m, [c64::new(0.5, 0.0), c64::new(2.0, 0.0)]);
    assert_eq!(
        scatter_1d(vec![c32::new(1.0, 2.0)], &[0], vec![c32::new(3.0, 4.0)], ScatterCombiner::Multiply),
        [c32::new(-5.0, 10.0)]
    );
}
