//! The permutation / to_contiguous kernel against a naive index loop, on random shapes
//! up to rank 6 with random permutations, negative and zero strides, for 1..=7 workers.

mod common;

use common::{at, ctx, indices};
use proptest::prelude::*;
use strata_kernels::structural;
use strata_tensor::{ErrorKind, Tensor, TypedTensor, TypedView};

fn naive_permute(v: &TypedView<'_, f64>, perm: &[usize]) -> Vec<f64> {
    let out_shape: Vec<usize> = perm.iter().map(|&p| v.shape()[p]).collect();
    indices(&out_shape)
        .iter()
        .map(|oi| {
            let mut src = vec![0; perm.len()];
            for (k, &p) in perm.iter().enumerate() {
                src[p] = oi[k];
            }
            at(v, &src)
        })
        .collect()
}

fn strided_case() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, Vec<bool>, Vec<bool>, usize)> {
    (0usize..=6).prop_flat_map(|rank| {
        (
            proptest::collection::vec(0usize..5, rank),
            Just((0..rank).collect::<Vec<_>>()).prop_shuffle(),
            proptest::collection::vec(any::<bool>(), rank),
            proptest::collection::vec(prop::bool::weighted(0.15), rank),
            1usize..=7,
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn permute_matches_naive((shape, perm, reversed, broadcast, budget) in strided_case()) {
        let base = TypedTensor::from_fn(&shape, |i| i.iter().fold(0.0, |a, &x| a * 7.0 + x as f64 + 1.0)).unwrap();
        let mut v = base.view();
        for (axis, &r) in reversed.iter().enumerate() {
            if r { v = v.reverse_axis(axis).unwrap(); }
        }
        // Broadcast some axes: take index 0 and repeat it (stride 0).
        let mut bshape = shape.clone();
        let mut keep = Vec::new();
        for (axis, &b) in broadcast.iter().enumerate() {
            if b && shape[axis] > 0 { v = v.slice_axis(axis, 0, 1, 1).unwrap(); bshape[axis] = shape[axis]; }
            keep.push(axis);
        }
        let v = v.broadcast_in_dim(&bshape, &keep).unwrap();
        let got = structural::permute_to_vec(&ctx(budget), &v, &perm).unwrap();
        let expect_shape: Vec<usize> = perm.iter().map(|&p| bshape[p]).collect();
        prop_assert_eq!(got.shape(), &expect_shape[..]);
        prop_assert_eq!(got.data(), &naive_permute(&v, &perm)[..]);
    }
}

#[test]
fn large_permutations_in_parallel_match_naive() {
    for (shape, perm) in [
        (vec![64usize, 48, 40], vec![2usize, 1, 0]),
        (vec![7, 9, 11, 13, 5], vec![3, 0, 4, 2, 1]),
        (vec![300, 257], vec![1, 0]),
        (vec![3, 2, 40000], vec![2, 0, 1]),
    ] {
        let base = TypedTensor::from_fn(&shape, |i| i.iter().fold(0.0, |a, &x| a * 1000.0 + x as f64)).unwrap();
        let expect = naive_permute(&base.view(), &perm);
        for budget in [1, 2, 7] {
            let got = structural::permute_to_vec(&ctx(budget), &base.view(), &perm).unwrap();
            assert_eq!(got.data(), &expect[..], "shape {shape:?} perm {perm:?} budget {budget}");
        }
    }
}

#[test]
fn every_dtype_transposes_through_the_erased_entry() {
    let t = Tensor::from(TypedTensor::from_fn(&[2, 3], |i| (i[0] * 3 + i[1]) as i64).unwrap());
    let tr = structural::transpose(&ctx(2), (&t).into(), &[1, 0]).unwrap();
    assert_eq!(tr.as_typed::<i64>().unwrap().data(), &[0, 3, 1, 4, 2, 5]);
    let c = Tensor::from(TypedTensor::from_fn(&[2, 2], |i| strata_tensor::c32::new(i[0] as f32, i[1] as f32)).unwrap());
    let ct = structural::to_contiguous(&ctx(1), c.view().permute(&[1, 0]).unwrap().into()).unwrap();
    assert_eq!(ct.as_typed::<strata_tensor::c32>().unwrap().get(&[1, 0]), Some(&strata_tensor::c32::new(0.0, 1.0)));
}

#[test]
fn bad_permutations_are_invalid_arguments() {
    let t = Tensor::zeros(strata_tensor::DType::F32, &[2, 3]).unwrap();
    for perm in [&[0usize][..], &[0, 0], &[0, 2], &[1, 0, 2]] {
        let e = structural::transpose(&ctx(1), (&t).into(), perm).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{perm:?}");
        assert_eq!(e.op(), "transpose");
    }
}

#[test]
fn copy_into_slice_checks_length_and_writes_nothing_on_error() {
    let t = TypedTensor::from_fn(&[2, 3], |i| (i[0] * 3 + i[1]) as f32).unwrap();
    let mut out = [9.0f32; 5];
    let e = structural::copy_into_slice(&ctx(1), &t.view(), &mut out).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    assert_eq!(out, [9.0; 5]);
}
