//! faer interop: strata views as `MatRef`/`MatMut` under any strides, faer matrices as
//! strata views when their elements fill their span, typed refusals otherwise.
#![cfg(feature = "faer")]

use faer::{Mat, MatMut, MatRef};
use strata_tensor::{ErrorKind, TypedTensor, TypedView, TypedViewMut, c64};

#[test]
fn strata_views_are_matrices_under_any_strides() {
    let t = TypedTensor::from_fn(&[3, 4], |i| (10 * i[0] + i[1]) as f64).unwrap();
    let views = [
        t.view(),
        t.view().transpose(&[1, 0]).unwrap(),
        t.view().reverse(&[0, 1]).unwrap(),
        t.view().slice(&strata_tensor::config::SliceConfig::ranges([0..3, 1..4]).step(1, 2)).unwrap(),
    ];
    for v in &views {
        let m = v.as_faer().unwrap();
        assert_eq!((m.nrows(), m.ncols()), (v.shape()[0], v.shape()[1]));
        for i in 0..m.nrows() {
            for j in 0..m.ncols() {
                assert_eq!(m[(i, j)], *v.get(&[i, j]).unwrap());
            }
        }
    }
    // A broadcast view (stride 0) is a valid faer view too.
    let row = TypedTensor::from_vec(vec![1.0, 2.0, 3.0], &[3]).unwrap();
    let b = row.view().broadcast_in_dim(&[2, 3], &[1]).unwrap();
    assert_eq!(b.as_faer().unwrap()[(1, 2)], 3.0);
    // Only rank 2.
    let e = row.view().as_faer().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // Empty matrices.
    let empty = TypedTensor::<f32>::zeros(&[0, 3]).unwrap();
    assert_eq!(empty.as_faer().unwrap().ncols(), 3);
}

#[test]
fn mutable_views_are_matmuts() {
    let mut t = TypedTensor::<c64>::zeros(&[2, 3]).unwrap();
    let mut m: MatMut<'_, c64> = t.view_mut().transpose(&[1, 0]).unwrap().into_faer().unwrap();
    m[(2, 1)] = c64::new(1.0, -1.0);
    assert_eq!(t.get(&[1, 2]), Some(&c64::new(1.0, -1.0)));
}

#[test]
fn dense_faer_matrices_become_views_and_padded_ones_are_copied() {
    let data: Vec<f64> = (0..12).map(f64::from).collect();
    let row_major = MatRef::from_row_major_slice(&data, 3, 4);
    for m in [row_major, row_major.transpose(), row_major.reverse_rows(), row_major.reverse_rows_and_cols()] {
        let v = TypedView::try_from(m).unwrap();
        for i in 0..m.nrows() {
            for j in 0..m.ncols() {
                assert_eq!(v.get(&[i, j]), Some(&m[(i, j)]));
            }
        }
    }
    // A submatrix leaves gaps: refused with the copying route named.
    let e = TypedView::try_from(row_major.submatrix(0, 1, 3, 2)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(e.message().contains("TypedTensor::try_from"), "{e}");
    // Any matrix copies, a padded Mat included.
    let mat = Mat::from_fn(3, 3, |i, j| (i * 3 + j) as f64);
    let copied = TypedTensor::try_from(mat.as_ref()).unwrap();
    assert_eq!(copied.data(), &(0..9).map(f64::from).collect::<Vec<_>>()[..]);
    // A mutable dense matrix is a mutable view.
    let mut buf = vec![0i32; 6];
    let mm = MatMut::from_column_major_slice_mut(&mut buf, 2, 3);
    let mut v = TypedViewMut::try_from(mm).unwrap();
    *v.get_mut(&[1, 2]).unwrap() = 9;
    assert_eq!(buf[5], 9);
}
