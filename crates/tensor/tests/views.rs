//! Views and their metadata operations, checked against independent index arithmetic:
//! each test tracks, next to the view, a closure mapping an output index to the flat
//! row-major index of the source tensor, and compares every element.

use proptest::prelude::*;
use strata_tensor::{ErrorKind, Layout, Tensor, TypedTensor, TypedView, TypedViewMut};

type IndexMap = Box<dyn Fn(&[usize]) -> Vec<usize>>;

fn flat(shape: &[usize], index: &[usize]) -> usize {
    index.iter().zip(shape).fold(0, |acc, (&i, &d)| acc * d + i)
}

fn all_indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for &d in shape {
        out = out.into_iter().flat_map(|p| (0..d).map(move |i| [p.clone(), vec![i]].concat())).collect();
    }
    out
}

#[derive(Clone, Debug)]
enum Step {
    Permute(Vec<usize>),
    Slice { axis: usize, start: usize, limit: usize, step: usize },
    Reverse(usize),
    Insert(usize),
}

fn arb_shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..5, 0..5)
}

fn arb_steps() -> impl Strategy<Value = Vec<(u8, usize, usize, usize, usize)>> {
    prop::collection::vec((0u8..4, 0usize..8, 0usize..8, 0usize..8, 1usize..4), 0..6)
}

/// Turns random numbers into a valid step for the current shape.
fn make_step(shape: &[usize], raw: (u8, usize, usize, usize, usize)) -> Option<Step> {
    let rank = shape.len();
    let (kind, a, b, c, step) = raw;
    match kind {
        0 if rank > 0 => {
            let mut perm: Vec<usize> = (0..rank).collect();
            perm.rotate_left(a % rank);
            if rank > 1 && b % 2 == 0 {
                perm.swap(0, rank - 1);
            }
            Some(Step::Permute(perm))
        }
        1 if rank > 0 => {
            let axis = a % rank;
            let d = shape[axis];
            let start = if d == 0 { 0 } else { b % (d + 1) };
            let limit = start + if d - start == 0 { 0 } else { c % (d - start + 1) };
            Some(Step::Slice { axis, start, limit, step })
        }
        2 if rank > 0 => Some(Step::Reverse(a % rank)),
        3 if rank < 6 => Some(Step::Insert(a % (rank + 1))),
        _ => None,
    }
}

proptest! {
    #[test]
    fn metadata_ops_match_index_arithmetic(shape in arb_shape(), raw in arb_steps()) {
        let source = TypedTensor::from_fn(&shape, |i| flat(&shape, i) as i64).unwrap();
        let mut view = source.view();
        let mut map: IndexMap = Box::new(|i: &[usize]| i.to_vec());
        for r in raw {
            let Some(step) = make_step(view.shape(), r) else { continue };
            let cur_shape = view.shape().to_vec();
            match step.clone() {
                Step::Permute(perm) => {
                    view = view.permute(&perm).unwrap();
                    let inv = {
                        let mut inv = vec![0; perm.len()];
                        for (k, &p) in perm.iter().enumerate() { inv[p] = k; }
                        inv
                    };
                    map = Box::new(move |i: &[usize]| { let j: Vec<usize> = inv.iter().map(|&k| i[k]).collect(); map(&j) });
                }
                Step::Slice { axis, start, limit, step } => {
                    view = view.slice_axis(axis, start, limit, step).unwrap();
                    prop_assert_eq!(view.shape()[axis], (limit - start).div_ceil(step));
                    map = Box::new(move |i: &[usize]| { let mut j = i.to_vec(); j[axis] = start + i[axis] * step; map(&j) });
                }
                Step::Reverse(axis) => {
                    view = view.reverse_axis(axis).unwrap();
                    let d = cur_shape[axis];
                    map = Box::new(move |i: &[usize]| { let mut j = i.to_vec(); j[axis] = d - 1 - i[axis]; map(&j) });
                }
                Step::Insert(axis) => {
                    view = view.insert_axis(axis).unwrap();
                    map = Box::new(move |i: &[usize]| { let mut j = i.to_vec(); j.remove(axis); map(&j) });
                }
            }
        }
        for idx in all_indices(view.shape()) {
            let expected = flat(&shape, &map(&idx)) as i64;
            prop_assert_eq!(view.get(&idx).copied(), Some(expected));
        }
        // The copy agrees with element access, and contiguity is reported truthfully.
        let copy = view.to_tensor();
        for (k, idx) in all_indices(view.shape()).iter().enumerate() {
            prop_assert_eq!(copy.data()[k], *view.get(idx).unwrap());
        }
        if let Some(slice) = view.as_contiguous() {
            prop_assert_eq!(slice, copy.data());
        }
    }

    #[test]
    fn broadcast_in_dim_repeats_along_new_axes(shape in prop::collection::vec(1usize..4, 0..3), extra in 1usize..4) {
        let source = TypedTensor::from_fn(&shape, |i| flat(&shape, i) as i32).unwrap();
        // Put the operand's axes at odd positions of a rank 2r+1 result, filling even ones.
        let out_rank = 2 * shape.len() + 1;
        let dims: Vec<usize> = (0..shape.len()).map(|k| 2 * k + 1).collect();
        let mut out_shape = vec![extra; out_rank];
        for (k, &d) in dims.iter().enumerate() { out_shape[d] = shape[k]; }
        let b = source.view().broadcast_in_dim(&out_shape, &dims).unwrap();
        for idx in all_indices(&out_shape) {
            let src: Vec<usize> = dims.iter().map(|&d| idx[d]).collect();
            prop_assert_eq!(b.get(&idx).copied(), Some(flat(&shape, &src) as i32));
        }
    }

    #[test]
    fn views_in_bounds_are_accepted_and_out_of_bounds_refused(
        shape in prop::collection::vec(1usize..4, 1..4),
        strides in prop::collection::vec(-6isize..7, 3),
        offset in 0usize..40,
        len in 0usize..60,
    ) {
        let strides = &strides[..shape.len()];
        let data = vec![0u8; len].iter().map(|_| 0.0f32).collect::<Vec<_>>();
        // Independent reference: enumerate every addressed element.
        let mut ok = true;
        for idx in all_indices(&shape) {
            let at = offset as i64 + idx.iter().zip(strides).map(|(&i, &s)| i as i64 * s as i64).sum::<i64>();
            if at < 0 || at >= len as i64 { ok = false; }
        }
        let made = TypedView::new(&data, &shape, strides, offset);
        prop_assert_eq!(made.is_ok(), ok);
        if let Err(e) = made { prop_assert_eq!(e.kind(), ErrorKind::InvalidArgument); }
    }

    #[test]
    fn mutable_views_never_alias(
        shape in prop::collection::vec(1usize..4, 1..4),
        strides in prop::collection::vec(-6isize..7, 3),
    ) {
        let strides = &strides[..shape.len()];
        // Place the offset so that every element is in bounds, then check aliasing only.
        let lo: isize = shape.iter().zip(strides).map(|(&d, &s)| ((d as isize - 1) * s).min(0)).sum();
        let hi: isize = shape.iter().zip(strides).map(|(&d, &s)| ((d as isize - 1) * s).max(0)).sum();
        let offset = (-lo) as usize;
        let mut data = vec![0i32; (hi - lo + 1) as usize];
        let mut seen = std::collections::HashSet::new();
        let mut distinct = true;
        for idx in all_indices(&shape) {
            let at = offset as isize + idx.iter().zip(strides).map(|(&i, &s)| i as isize * s).sum::<isize>();
            distinct &= seen.insert(at);
        }
        let made = TypedViewMut::new(&mut data, &shape, strides, offset);
        // The check is sufficient: whatever it accepts is alias-free.
        if made.is_ok() { prop_assert!(distinct); }
        if !distinct { prop_assert!(made.is_err()); }
    }
}

#[test]
fn mutable_view_writes_land_where_the_layout_says() {
    let mut data = vec![0i64; 12];
    {
        let mut v = TypedViewMut::new(&mut data, &[3, 4], &[1, 3], 0).unwrap().reverse_axis(1).unwrap();
        for i in 0..3 {
            for j in 0..4 {
                *v.get_mut(&[i, j]).unwrap() = (10 * i + j) as i64;
            }
        }
    }
    // Column-major storage, second axis reversed: element (i, j) lives at i + 3 * (3 - j).
    for i in 0..3 {
        for j in 0..4 {
            assert_eq!(data[i + 3 * (3 - j)], (10 * i + j) as i64);
        }
    }
}

#[test]
fn column_major_view_reads_fortran_data() {
    let data = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2x3 column-major
    let v = TypedView::column_major(&data, &[2, 3]).unwrap();
    assert_eq!(v.to_tensor().data(), &[1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
    assert!(TypedView::column_major(&data, &[4, 2]).is_err());
}

#[test]
fn rank_zero_and_empty_tensors_work() {
    let s = TypedTensor::scalar(2.5f64);
    assert_eq!(s.len(), 1);
    assert_eq!(s.view().get(&[]), Some(&2.5));
    let e = TypedTensor::<f32>::zeros(&[3, 0, 2]).unwrap();
    assert!(e.is_empty());
    assert_eq!(e.view().to_tensor().shape(), &[3, 0, 2]);
    let sliced = e.view().permute(&[2, 1, 0]).unwrap();
    assert_eq!(sliced.shape(), &[2, 0, 3]);
    // A zero-size view addresses nothing, so any stride is in bounds.
    let data: [f32; 0] = [];
    assert!(TypedView::new(&data, &[0, 5], &[100, -7], 0).is_ok());
}

#[test]
fn bad_inputs_are_typed_errors() {
    let e = TypedTensor::from_vec(vec![1.0f32; 5], &[2, 3]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    assert_eq!(e.op(), "TypedTensor::from_vec");
    assert!(e.message().contains("[2, 3]"));

    let e = TypedTensor::<f64>::zeros(&[usize::MAX, 3]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(TypedTensor::<f64>::zeros(&[0, usize::MAX, 3]).unwrap_err().kind(), ErrorKind::InvalidArgument);

    let t = TypedTensor::from_vec(vec![0i32; 6], &[2, 3]).unwrap();
    assert_eq!(t.view().permute(&[0, 0]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(t.view().permute(&[0]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(t.view().permute(&[0, 2]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(t.view().reverse_axis(2).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(t.view().slice_axis(1, 0, 3, 0).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(t.view().slice_axis(1, 2, 1, 1).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(t.view().slice_axis(1, 0, 4, 1).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(t.view().remove_axis(0).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(t.view().insert_axis(3).unwrap_err().kind(), ErrorKind::InvalidArgument);
    // Broadcast: wrong count, repeated dims, extent clash, out of range. Dims in any
    // order are fine (lax's rule): [2, 3] -> [3, 2] with dims [1, 0] is a transpose.
    assert!(t.view().broadcast_in_dim(&[2, 3, 4], &[0]).is_err());
    assert_eq!(t.view().broadcast_in_dim(&[3, 2, 3], &[1, 1]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(t.view().broadcast_in_dim(&[3, 2], &[1, 0]).unwrap().strides(), &[1, 3]);
    assert_eq!(t.view().broadcast_in_dim(&[2, 4], &[0, 1]).unwrap_err().kind(), ErrorKind::ShapeMismatch);
    assert!(t.view().broadcast_in_dim(&[2, 3], &[0, 2]).is_err());

    let data = [0u8; 4].map(|_| 0.0f64);
    let e = TypedView::new(&data, &[2, 2], &[2, 1], 1).unwrap_err();
    assert!(e.message().contains("outside the buffer"));
    assert!(TypedView::new(&data, &[2, 2], &[isize::MAX, 1], 0).is_err());
    assert!(TypedView::new(&data, &[2], &[1, 1], 0).is_err());
    let e = TypedView::new(&data, &[2, 2], &[-1, 1], 0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);

    let mut buf = [0.0f64; 4];
    let e = TypedViewMut::new(&mut buf, &[2, 2], &[1, 1], 0).unwrap_err();
    assert!(e.message().contains("share one memory location"));
    assert!(TypedViewMut::new(&mut buf, &[3], &[0], 0).is_err());

    let tensor: Tensor = t.clone().into();
    let e = tensor.as_typed::<f32>().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
    assert!(e.message().contains("float32") && e.message().contains("int32"));
    assert!(tensor.clone().into_typed::<i64>().is_err());
    assert!(tensor.view().into_typed::<bool>().is_err());
    assert_eq!(tensor.clone().reshape(&[4]).unwrap_err().kind(), ErrorKind::ShapeMismatch);
    assert_eq!(tensor.reshape(&[3, 2]).unwrap().shape(), &[3, 2]);
}

#[test]
fn layout_contiguity_and_span() {
    let l = Layout::row_major(&[2, 3, 4]);
    assert!(l.is_row_major_contiguous());
    assert_eq!(l.span(), Some((0, 23)));
    let p = l.permute(&[1, 0, 2]).unwrap();
    assert!(!p.is_row_major_contiguous());
    let r = l.reverse_axis(0).unwrap();
    assert_eq!(r.offset(), 12);
    assert_eq!(r.span(), Some((0, 23)));
    // Unit axes never break contiguity, whatever their stride.
    let u = Layout::new("test", 24, vec![2, 1, 12], vec![12, 99, 1], 0).unwrap();
    assert!(u.is_row_major_contiguous());
}
