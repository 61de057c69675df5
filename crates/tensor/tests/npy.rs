//! `.npy`/`.npz` against files numpy wrote (`data/npy`, made by `data/make_fixtures.py`)
//! and round trips of every dtype through strata's writer.
#![cfg(feature = "npy")]

mod fixtures;

use std::io::Cursor;
use std::path::PathBuf;

use strata_tensor::{DType, ErrorKind, Tensor, TensorRead, TypedTensor, c32, c64, npy};

fn data(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/npy").join(file)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-npy-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn reads_every_file_numpy_wrote() {
    let records = fixtures::records(include_str!("data/npy/manifest.txt"));
    assert!(records.len() >= 30, "the manifest lost its entries");
    for r in &records {
        let (file, key) = (r.get("file"), r.get("key"));
        let got = if key.is_empty() {
            npy::load(data(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
        } else {
            let arrays = npy::load_npz(data(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
            arrays.into_iter().find(|(k, _)| k == key).unwrap_or_else(|| panic!("{file} has no {key}")).1
        };
        // Bit-exact: numpy's values, in numpy's (row-major) order, whatever the file's
        // byte order or memory order.
        assert_eq!(got, r.tensor(), "{file} {key}");
    }
}

fn every_dtype() -> Vec<Tensor> {
    let shape = [3, 4];
    let n = 12;
    vec![
        Tensor::from_vec((0..n).map(|i| i as f32 * 0.37 - 1.0).collect::<Vec<_>>(), &shape).unwrap(),
        Tensor::from_vec((0..n).map(|i| (i as f64).sin() * 1e300).collect::<Vec<_>>(), &shape).unwrap(),
        Tensor::from_vec((0..n).map(|i| if i == 0 { i32::MIN } else { i - 6 }).collect::<Vec<_>>(), &shape).unwrap(),
        Tensor::from_vec(
            (0..n).map(|i| if i == 3 { i64::MAX } else { i as i64 * 1_000_000_007 }).collect::<Vec<_>>(),
            &shape,
        )
        .unwrap(),
        Tensor::from_vec((0..n).map(|i| i % 3 == 1).collect::<Vec<_>>(), &shape).unwrap(),
        Tensor::from_vec((0..n).map(|i| c32::new(i as f32, -(i as f32) / 3.0)).collect::<Vec<_>>(), &shape).unwrap(),
        Tensor::from_vec((0..n).map(|i| c64::new(f64::from(i as u8).sqrt(), f64::NAN)).collect::<Vec<_>>(), &shape)
            .unwrap(),
    ]
}

fn same(a: &Tensor, b: &Tensor) -> bool {
    // NaN-aware bit comparison through the Debug text of the elements.
    a.dtype() == b.dtype() && a.shape() == b.shape() && format!("{a:?}") == format!("{b:?}")
}

#[test]
fn every_dtype_round_trips_through_files_and_streams() {
    for t in every_dtype() {
        let path = scratch(&format!("{}.npy", t.dtype()));
        npy::save(&path, &t).unwrap();
        assert!(same(&npy::load(&path).unwrap(), &t), "{}", t.dtype());
        // A strided view (transposed, reversed) is written in its own row-major order.
        let view = t.view().transpose(&[1, 0]).unwrap().reverse(&[1]).unwrap();
        let mut bytes = Vec::new();
        npy::write(&mut bytes, view.clone()).unwrap();
        assert!(same(&npy::read(Cursor::new(&bytes)).unwrap(), &view.to_tensor()), "{}", t.dtype());
    }
    // Rank 0 and empty tensors too.
    for t in [Tensor::scalar(2.5f64), Tensor::zeros(DType::C32, &[0, 3]).unwrap(), Tensor::scalar(true)] {
        let mut bytes = Vec::new();
        npy::write(&mut bytes, &t).unwrap();
        assert_eq!(npy::read(Cursor::new(&bytes)).unwrap(), t);
    }
}

#[test]
fn archives_round_trip_in_order() {
    let ts = every_dtype();
    let named: Vec<(String, TensorRead<'_>)> = ts.iter().map(|t| (format!("a_{}", t.dtype()), t.into())).collect();
    let arrays: Vec<(&str, TensorRead<'_>)> = named.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    let path = scratch("all.npz");
    npy::save_npz(&path, &arrays).unwrap();
    let back = npy::load_npz(&path).unwrap();
    assert_eq!(back.len(), ts.len());
    for ((name, got), want) in back.iter().zip(&ts) {
        assert_eq!(name, &format!("a_{}", want.dtype()));
        assert!(same(got, want), "{name}");
    }
}

#[test]
fn unsupported_files_are_typed_errors() {
    for (file, what) in [
        ("unsupported_u16.npy", "unsigned 16-bit integers"),
        ("unsupported_f16.npy", "16-bit floats"),
        ("unsupported_record.npy", "a structured array"),
    ] {
        let e = npy::load(data(file)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{file}: {e}");
        assert_eq!(e.op(), "npy::load");
        assert!(e.message().contains(what), "{file}: {e}");
    }
}

#[test]
fn broken_files_are_typed_errors_never_panics() {
    let whole = std::fs::read(data("f64.npy")).unwrap();
    // Truncated data.
    let e = npy::read(Cursor::new(&whole[..whole.len() - 5])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    // Truncated header, garbage, nothing.
    for bytes in [&whole[..20], &b"not an npy file at all"[..], &[][..]] {
        let e = npy::read(Cursor::new(bytes)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    }
    // A header announcing 2^60 elements: a typed error, not an abort.
    let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1152921504606846976,), }";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let padded = format!("{header:<118}\n");
    bytes.extend((padded.len() as u16).to_le_bytes());
    bytes.extend(padded.as_bytes());
    bytes.extend([0u8; 64]);
    let e = npy::read(Cursor::new(&bytes)).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::BackendFailure | ErrorKind::InvalidArgument), "{e}");
    // Missing files name the path.
    let e = npy::load(data("no_such_file.npy")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BackendFailure);
    assert!(e.message().contains("no_such_file.npy"), "{e}");
    // A broken archive.
    let e = npy::read_npz(Cursor::new(&whole)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

#[test]
fn typed_reads_and_fortran_order() {
    // numpy's asfortranarray of a [2, 3, 4] array: the same values as the C-order file.
    let c = npy::load(data("i64.npy")).unwrap();
    let f = npy::load(data("i64_fortran.npy")).unwrap();
    assert_eq!(c, f);
    let typed: TypedTensor<i64> = f.try_into().unwrap();
    assert_eq!(typed.shape(), &[2, 3, 4]);
}
