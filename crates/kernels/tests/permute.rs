//! The permutation / to_contiguous kernel against a naive index loop, on random shapes
//! up to rank 6 with random permutations, negative and zero strides, for 1..=7 workers.

mod common;

use common::{at, ctx, indices};
use proptest::prelude::*;
use strata_kernels::structural;
use strata_tensor::{ErrorKind, Scalar, Tensor, TypedTensor, TypedView, c32, c64};

fn naive_permute<T: Scalar>(v: &TypedView<'_, T>, perm: &[usize]) -> Vec<T> {
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

/// Shapes large enough for whole tiles of every tile side (4, 8 and 16 elements), some
/// axes reversed and one axis taken with step 2 (so that no source axis need have unit
/// stride), in each dtype width.
fn tiled_case() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, Vec<bool>, usize, usize)> {
    (2usize..=4).prop_flat_map(|rank| {
        (
            proptest::collection::vec(1usize..=(if rank > 3 { 12 } else { 40 }), rank),
            Just((0..rank).collect::<Vec<_>>()).prop_shuffle(),
            proptest::collection::vec(any::<bool>(), rank),
            0..=rank,
            1usize..=3,
        )
    })
}

fn check_tiled<T: Scalar>(
    shape: &[usize],
    perm: &[usize],
    reversed: &[bool],
    stepped: usize,
    budget: usize,
    value: impl Fn(usize) -> T,
) -> Result<(), TestCaseError> {
    let mut full = shape.to_vec();
    if let Some(d) = full.get_mut(stepped) {
        *d *= 2;
    }
    let len: usize = full.iter().product();
    let base = TypedTensor::from_vec((0..len).map(&value).collect(), &full).unwrap();
    let mut v = base.view();
    if stepped < shape.len() {
        v = v.slice_axis(stepped, 0, full[stepped], 2).unwrap();
    }
    for (axis, &r) in reversed.iter().enumerate() {
        if r {
            v = v.reverse_axis(axis).unwrap();
        }
    }
    let got = structural::permute_to_vec(&ctx(budget), &v, perm).unwrap();
    prop_assert_eq!(got.data(), &naive_permute(&v, perm)[..], "shape {:?} perm {:?}", shape, perm);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]
    #[test]
    fn tiled_permutations_match_naive_in_every_width((shape, perm, reversed, stepped, budget) in tiled_case()) {
        check_tiled(&shape, &perm, &reversed, stepped, budget, |i| i as f64)?;
        check_tiled(&shape, &perm, &reversed, stepped, budget, |i| i as f32)?;
        check_tiled(&shape, &perm, &reversed, stepped, budget, |i| i as i64)?;
        check_tiled(&shape, &perm, &reversed, stepped, budget, |i| i % 3 == 0)?;
        check_tiled(&shape, &perm, &reversed, stepped, budget, |i| c32::new(i as f32, -(i as f32)))?;
        check_tiled(&shape, &perm, &reversed, stepped, budget, |i| c64::new(i as f64, 0.5 - i as f64))?;
    }
}

#[test]
fn large_permutations_in_parallel_match_naive() {
    for (shape, perm) in [
        (vec![64usize, 48, 40], vec![2usize, 1, 0]),
        (vec![7, 9, 11, 13, 5], vec![3, 0, 4, 2, 1]),
        (vec![300, 257], vec![1, 0]),
        (vec![3, 2, 40000], vec![2, 0, 1]),
        // The leading output axis is the source's contiguous one: the split goes along
        // an axis the tiles do not span (ranges of 16 for 2 workers, uneven for 7).
        (vec![32, 16, 16, 24], vec![3, 2, 1, 0]),
        (vec![16, 3, 40, 32], vec![3, 2, 1, 0]),
        (vec![96, 72], vec![1, 0]),
        // Short source axes: tiles span several of them, and a leading output axis
        // shorter than a tile per worker splits into interleaved pieces.
        (vec![256, 64, 4, 4], vec![3, 2, 1, 0]),
        (vec![512, 8, 64, 2], vec![3, 2, 1, 0]),
        (vec![40, 30, 3, 24], vec![2, 3, 0, 1]),
        (vec![2, 150, 2, 120], vec![2, 0, 3, 1]),
    ] {
        let base = TypedTensor::from_fn(&shape, |i| i.iter().fold(0.0, |a, &x| a * 1000.0 + x as f64)).unwrap();
        // The view as stored, and with its first and last axes reversed (negative
        // strides on both sides of every tile, the whole-tile path included).
        let reversed = base.view().reverse_axis(0).unwrap().reverse_axis(shape.len() - 1).unwrap();
        for view in [base.view(), reversed] {
            let expect = naive_permute(&view, &perm);
            for budget in [1, 2, 7] {
                let got = structural::permute_to_vec(&ctx(budget), &view, &perm).unwrap();
                assert_eq!(got.data(), &expect[..], "shape {shape:?} perm {perm:?} budget {budget}");
            }
        }
    }
}

/// Destinations starting at every element phase of a cache line: the kernel starts its
/// tiles at the first line boundary of the output rows (a cut first tile before it), so
/// every phase takes a different tile grid. Shapes with whole-line output rows (where the
/// boundary is common to all rows) and without, small ones and one past the prefetch size.
fn check_line_phases<T: Scalar>(value: impl Fn(usize) -> T, fill: T) {
    for (shape, perm) in [
        (vec![40usize, 16, 24], vec![2usize, 1, 0]),
        (vec![9, 32, 17], vec![1, 2, 0]),
        (vec![33, 31], vec![1, 0]),
        (vec![64, 32, 48], vec![2, 0, 1]),
        (vec![24, 40, 8, 16], vec![3, 2, 1, 0]),
        (vec![64, 48, 4, 2], vec![3, 2, 1, 0]),
    ] {
        let len: usize = shape.iter().product();
        let base = TypedTensor::from_vec((0..len).map(&value).collect(), &shape).unwrap();
        let view = base.view().permute(&perm).unwrap();
        let expect = naive_permute(&base.view(), &perm);
        for phase in 0..8 {
            for budget in [1, 3] {
                let mut dest = vec![fill; len + 16];
                structural::copy_into_slice(&ctx(budget), &view, &mut dest[phase..phase + len]).unwrap();
                assert!(dest[..phase].iter().chain(&dest[phase + len..]).all(|d| *d == fill), "{shape:?} {phase}");
                assert!(
                    dest[phase..phase + len] == expect[..],
                    "shape {shape:?} perm {perm:?} phase {phase} budget {budget}"
                );
            }
        }
    }
}

#[test]
fn permutations_into_destinations_at_every_line_phase_match_naive() {
    check_line_phases(|i| i as f64, -1.0);
    check_line_phases(|i| i as f32, -1.0);
    check_line_phases(|i| i as i64, -1);
    check_line_phases(|i| i % 5 == 1, true);
    check_line_phases(|i| c64::new(i as f64, -(i as f64)), c64::new(0.5, 0.5));
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

/// The permutation of `v` by `perm` from its strides and offset, with an odometer over the
/// output (the index-vector reference above is too slow for outputs of many MiB).
fn odometer_permute<T: Scalar>(v: &TypedView<'_, T>, perm: &[usize]) -> Vec<T> {
    let dims: Vec<usize> = perm.iter().map(|&p| v.shape()[p]).collect();
    let strides: Vec<isize> = perm.iter().map(|&p| v.strides()[p]).collect();
    let len: usize = dims.iter().product();
    let mut idx = vec![0usize; dims.len()];
    let mut off = v.offset() as isize;
    let mut out = Vec::with_capacity(len);
    for _ in 0..len {
        out.push(v.buffer()[off as usize]);
        for k in (0..dims.len()).rev() {
            idx[k] += 1;
            off += strides[k];
            if idx[k] < dims[k] {
                break;
            }
            off -= dims[k] as isize * strides[k];
            idx[k] = 0;
        }
    }
    out
}

/// Outputs of at least 16 MiB, whose whole tiles stream their line-aligned rows past the
/// caches: every dtype width whose tile rows are one line (4-, 8- and 16-byte elements),
/// destinations at several line phases (so that some rows are not line-aligned and are
/// stored plainly), reversed axes and a stepped one (non-contiguous source runs take the
/// element tiles), at 1, 2 and 3 workers; the bytes around the destination untouched.
fn check_streamed<T: Scalar>(shape: &[usize], perm: &[usize], value: impl Fn(usize) -> T, fill: T) {
    let len: usize = shape.iter().product();
    let last = shape.len() - 1;
    let base = TypedTensor::from_vec((0..len).map(&value).collect(), shape).unwrap();
    // Twice as long along the last axis, taken with step 2: the same logical shape.
    let mut wide = shape.to_vec();
    wide[last] *= 2;
    let wide = TypedTensor::from_vec((0..2 * len).map(&value).collect(), &wide).unwrap();
    let views = [
        base.view(),
        base.view().reverse_axis(0).unwrap().reverse_axis(last).unwrap(),
        wide.view().slice_axis(last, 1, 2 * shape[last], 2).unwrap(),
    ];
    for view in views {
        let expect = odometer_permute(&view, perm);
        let permuted = view.clone().permute(perm).unwrap();
        for (phase, budget) in [(0, 2), (3, 1), (1, 3)] {
            let mut dest = vec![fill; len + 16];
            structural::copy_into_slice(&ctx(budget), &permuted, &mut dest[phase..phase + len]).unwrap();
            assert!(dest[..phase].iter().chain(&dest[phase + len..]).all(|d| *d == fill), "{shape:?} {phase}");
            assert!(
                dest[phase..phase + len] == expect[..],
                "shape {shape:?} perm {perm:?} strides {:?} phase {phase} budget {budget}",
                view.strides()
            );
        }
    }
}

#[test]
fn permutations_past_the_streaming_size_match_the_reference() {
    check_streamed(&[64, 64, 32, 16], &[3, 2, 1, 0], |i| i as f64, -1.0);
    check_streamed(&[16, 96, 48, 64], &[2, 3, 0, 1], |i| i as f32, -1.0);
    check_streamed(&[48, 40, 560], &[2, 1, 0], |i| c64::new(i as f64, -(i as f64)), c64::new(0.5, 0.5));
    check_streamed(&[2048, 1040], &[1, 0], |i| i as i64, -1);
}
