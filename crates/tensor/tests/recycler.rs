//! A tensor carrying a `BufferRecycler` hands its buffer over exactly once when it drops
//! (whatever happened to it before: clones, reshapes, erasure, moves), never when the
//! buffer was taken away with `into_vec`/`into_parts`, and compares and prints as a plain
//! tensor.

use std::sync::{Arc, Mutex};

use strata_tensor::{BufferRecycler, DType, Tensor, TypedTensor};

/// Keeps what it is handed, with the address of each buffer.
#[derive(Default)]
struct Collect(Mutex<Vec<(usize, Tensor)>>);

impl BufferRecycler for Collect {
    fn recycle(&self, buffer: Tensor) {
        let addr = match &buffer {
            Tensor::F64(t) => t.data().as_ptr() as usize,
            Tensor::C32(t) => t.data().as_ptr() as usize,
            Tensor::Bool(t) => t.data().as_ptr() as usize,
            other => other.len(),
        };
        self.0.lock().unwrap().push((addr, buffer));
    }
}

impl Collect {
    fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

fn tracked(sink: &Arc<Collect>, shape: &[usize]) -> TypedTensor<f64> {
    let t = TypedTensor::from_fn(shape, |i| i.iter().sum::<usize>() as f64).unwrap();
    t.with_recycler(sink.clone())
}

#[test]
fn drop_hands_the_whole_buffer_over_once() {
    let sink = Arc::new(Collect::default());
    let t = tracked(&sink, &[3, 5]);
    let addr = t.data().as_ptr() as usize;
    let want = t.data().to_vec();
    drop(t);
    let back = sink.0.lock().unwrap();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].0, addr, "the very same allocation");
    assert_eq!(back[0].1.shape(), &[15]);
    assert_eq!(back[0].1.as_typed::<f64>().unwrap().data(), &want[..]);
    assert!(!back[0].1.as_typed::<f64>().unwrap().has_recycler(), "no loop back into the sink");
}

#[test]
fn every_dtype_comes_back_under_its_own_dtype() {
    let sink = Arc::new(Collect::default());
    drop(
        TypedTensor::from_vec(vec![strata_tensor::c32::new(1.0, 2.0); 4], &[2, 2]).unwrap().with_recycler(sink.clone()),
    );
    drop(TypedTensor::from_vec(vec![true, false], &[2]).unwrap().with_recycler(sink.clone()));
    drop(TypedTensor::scalar(7i64).with_recycler(sink.clone()));
    let back = sink.0.lock().unwrap();
    let dtypes: Vec<DType> = back.iter().map(|(_, t)| t.dtype()).collect();
    assert_eq!(dtypes, vec![DType::C32, DType::Bool, DType::I64]);
    assert_eq!(back[2].1.shape(), &[1], "a rank-0 tensor's one element");
}

#[test]
fn clones_reshapes_erasure_and_moves_keep_it() {
    let sink = Arc::new(Collect::default());
    let t = tracked(&sink, &[4, 6]);
    let copy = t.clone();
    assert!(copy.has_recycler());
    let erased: Tensor = t.reshape(&[2, 12]).unwrap().into();
    assert_eq!(sink.count(), 0, "reshape and erasure drop nothing");
    let back = erased.clone().into_typed::<f64>().unwrap();
    assert!(back.has_recycler());
    std::thread::spawn(move || drop(back)).join().unwrap();
    assert_eq!(sink.count(), 1);
    drop(erased);
    drop(copy);
    assert_eq!(sink.count(), 3, "the tensor, its clone and the erased clone");
}

#[test]
fn a_failed_reshape_hands_the_buffer_over() {
    let sink = Arc::new(Collect::default());
    let t = tracked(&sink, &[4, 6]);
    let err = t.reshape(&[5, 5]).unwrap_err();
    assert_eq!(err.kind(), strata_tensor::ErrorKind::ShapeMismatch);
    // The tensor was consumed by the failed reshape and handed its buffer over.
    assert_eq!(sink.count(), 1);
}

#[test]
fn into_vec_into_parts_and_without_recycler_take_the_buffer_away() {
    let sink = Arc::new(Collect::default());
    let v = tracked(&sink, &[8]).into_vec();
    assert_eq!(v, (0..8).map(f64::from).collect::<Vec<_>>());
    let (data, shape) = tracked(&sink, &[2, 3]).into_parts();
    assert_eq!((data.len(), shape), (6, vec![2, 3]));
    drop(tracked(&sink, &[4]).without_recycler());
    let erased: Tensor = tracked(&sink, &[3]).into();
    let back = erased.into_typed::<f64>().unwrap().into_vec();
    assert_eq!(back.len(), 3);
    assert_eq!(sink.count(), 0);
}

#[test]
fn empty_tensors_hand_nothing_over() {
    let sink = Arc::new(Collect::default());
    drop(tracked(&sink, &[0, 5]));
    assert_eq!(sink.count(), 0, "no allocation, nothing to give back");
}

#[test]
fn the_recycler_is_invisible_to_equality_and_debug() {
    let sink = Arc::new(Collect::default());
    let plain = TypedTensor::from_fn(&[2, 2], |i| i.iter().sum::<usize>() as f64).unwrap();
    let with = tracked(&sink, &[2, 2]);
    assert_eq!(plain, with);
    assert_eq!(format!("{plain:?}"), format!("{with:?}"));
    assert_eq!(Tensor::from(plain), Tensor::from(with));
}
