//! ndarray interop: zero-copy views both ways under every layout strata can borrow, owned
//! conversions both ways, typed refusals of gapped views.
#![cfg(feature = "ndarray")]

use ndarray::{Array, Array2, Array3, ArrayD, ArrayView, Axis, IxDyn, ShapeBuilder, s};
use proptest::prelude::*;
use strata_tensor::{ErrorKind, Tensor, TensorRead, TypedTensor, TypedView, TypedViewMut};

/// Every element of the strata view equals the ndarray element at the same index.
fn same_elements<T: strata_tensor::Scalar>(v: &TypedView<'_, T>, a: &ArrayView<'_, T, IxDyn>) {
    assert_eq!(v.shape(), a.shape());
    let want: Vec<T> = a.iter().copied().collect();
    assert_eq!(v.to_tensor().data(), &want[..]);
}

fn cube() -> Array3<f64> {
    Array3::from_shape_fn((3, 4, 5), |(i, j, k)| (100 * i + 10 * j + k) as f64)
}

#[test]
fn owned_arrays_lend_views_of_any_layout() {
    let mut layouts: Vec<ArrayD<f64>> = vec![cube().into_dyn(), cube().permuted_axes([2, 0, 1]).into_dyn()];
    let mut f = Array3::from_shape_fn((3, 4, 5).f(), |(i, j, k)| (i * j + k) as f64);
    layouts.push(f.clone().into_dyn());
    f.invert_axis(Axis(1));
    layouts.push(f.into_dyn());
    let mut stepped = cube();
    stepped.slice_collapse(s![..;2, 1..3, ..;-2]);
    layouts.push(stepped.into_dyn());
    for a in &layouts {
        let v = TypedView::from(a);
        same_elements(&v, &a.view());
        // The view borrows the array's memory: no copy.
        assert_eq!(v.get(&vec![0; a.ndim()]).map(|x| x as *const f64), Some(a.as_ptr()));
        let read: TensorRead<'_> = a.into();
        assert_eq!(read.shape(), a.shape());
    }
}

#[test]
fn dense_views_convert_without_copy_and_gapped_ones_are_refused() {
    let a = cube();
    let corner = a.slice(s![0, 0, 0..1]);
    let dense = [
        a.view().into_dyn(),
        a.t().into_dyn(),
        a.slice(s![..;-1, .., ..;-1]).into_dyn(),
        a.slice(s![1..3, .., ..]).into_dyn(),
        a.slice(s![0, .., ..]).into_dyn(),
        corner.broadcast((2, 3)).unwrap().into_dyn(),
    ];
    for view in dense {
        let v = TypedView::try_from(view.clone()).unwrap();
        same_elements(&v, &view);
    }
    for view in [a.slice(s![.., 1..3, ..]).into_dyn(), a.slice(s![.., .., ..;2]).into_dyn()] {
        let e = TypedView::try_from(view).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported);
        assert!(e.message().contains("gaps") && e.message().contains("TypedView::from(&array)"), "{e}");
    }
    // Empty views convert too.
    let empty = a.slice(s![.., 0..0, ..]);
    assert_eq!(TypedView::try_from(empty).unwrap().shape(), &[3, 0, 5]);
}

#[test]
fn mutable_views_write_through() {
    let mut a = Array2::<i32>::zeros((3, 4));
    {
        let mut v = TypedViewMut::try_from(a.slice_mut(s![..;-1, ..])).unwrap();
        *v.get_mut(&[0, 1]).unwrap() = 7; // row 2 of the array
    }
    assert_eq!(a[[2, 1]], 7);
    {
        let mut v = TypedViewMut::from(&mut a);
        *v.get_mut(&[1, 3]).unwrap() = -1;
    }
    assert_eq!(a[[1, 3]], -1);
    let e = TypedViewMut::try_from(a.slice_mut(s![.., 1..3])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
}

#[test]
fn strata_views_become_ndarray_views_under_any_strides() {
    let t = TypedTensor::from_fn(&[3, 4], |i| (10 * i[0] + i[1]) as i64).unwrap();
    let v = t.view().transpose(&[1, 0]).unwrap().reverse(&[0]).unwrap();
    let nd = v.as_ndarray();
    assert_eq!(nd.shape(), &[4, 3]);
    for i in 0..4 {
        for j in 0..3 {
            assert_eq!(nd[[i, j]], *v.get(&[i, j]).unwrap());
        }
    }
    // Broadcast (stride 0) and empty views.
    let row = TypedTensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let b = row.view().broadcast_in_dim(&[3, 2], &[1]).unwrap().as_ndarray();
    assert_eq!(b, ndarray::arr2(&[[1.0f32, 2.0], [1.0, 2.0], [1.0, 2.0]]).into_dyn());
    let e = TypedTensor::<f32>::zeros(&[0, 3]).unwrap();
    assert_eq!(e.as_ndarray().shape(), &[0, 3]);
    // Mutable views too: writes land in the tensor.
    let mut m = TypedTensor::<f64>::zeros(&[2, 3]).unwrap();
    let mut nd = m.view_mut().transpose(&[1, 0]).unwrap().into_ndarray();
    nd[[2, 1]] = 5.0;
    assert_eq!(m.get(&[1, 2]), Some(&5.0));
}

#[test]
fn owned_conversions_move_buffers_when_they_can() {
    let a = cube();
    let moved = TypedTensor::try_from(a.clone()).unwrap();
    let back: ArrayD<f64> = moved.clone().into();
    assert_eq!(back, a.clone().into_dyn());
    // Row-major arrays hand their buffer over: same address.
    let owned = Array::from_shape_vec((2, 3), vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let addr = owned.as_ptr();
    let t = TypedTensor::try_from(owned).unwrap();
    assert_eq!(t.data().as_ptr(), addr);
    let addr = t.data().as_ptr();
    let nd: ArrayD<f32> = t.into();
    assert_eq!(nd.as_ptr(), addr);
    // Other layouts are copied in row-major order.
    for a in [
        cube().permuted_axes([1, 2, 0]).into_dyn(),
        Array3::from_shape_fn((2, 3, 4).f(), |(i, j, k)| (i + 2 * j + 7 * k) as f64).into_dyn(),
        {
            let mut s = cube();
            s.slice_collapse(s![1.., ..;-1, 2..]);
            s.into_dyn()
        },
    ] {
        let t = TypedTensor::try_from(a.clone()).unwrap();
        assert_eq!(t.shape(), a.shape());
        assert_eq!(t.data(), &a.iter().copied().collect::<Vec<_>>()[..]);
    }
    let erased = Tensor::try_from(Array::from_elem((2, 2), true)).unwrap();
    assert_eq!(erased.to_vec::<bool>().unwrap(), vec![true; 4]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn random_layouts_agree_both_ways(
        shape in proptest::collection::vec(0usize..4, 1..5),
        seed in any::<u64>(),
    ) {
        let rank = shape.len();
        let len: usize = shape.iter().product();
        let mut a = ArrayD::from_shape_vec(IxDyn(&shape), (0..len).map(|i| i as f64).collect()).unwrap();
        // A seeded permutation and reversals.
        let mut perm: Vec<usize> = (0..rank).collect();
        let mut s = seed;
        for i in (1..rank).rev() {
            perm.swap(i, (s % (i as u64 + 1)) as usize);
            s /= 7;
        }
        a = a.permuted_axes(IxDyn(&perm));
        for k in 0..rank {
            if (seed >> k) & 1 == 1 {
                a.invert_axis(Axis(k));
            }
        }
        let v = TypedView::try_from(a.view()).unwrap();
        same_elements(&v, &a.view());
        let back = v.as_ndarray();
        prop_assert_eq!(back, a.view());
    }
}
