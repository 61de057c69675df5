//! Every way an einsum call can be refused, through the backend: the kind, the op name,
//! the typed rule, and that nothing ran (the backend's caches saw no plan).

mod common;

use common::rule;
use strata_backend::CpuBackend;
use strata_einsum::{EinsumError, EinsumOptions, PathStrategy, PreparedEinsum};
use strata_tensor::{DType, ErrorKind, Tensor, TensorRead, TypedTensor};

fn tensor(shape: &[usize]) -> Tensor {
    TypedTensor::<f64>::zeros(shape).unwrap().into()
}

fn refuse(spec: &str, shapes: &[&[usize]]) -> (ErrorKind, EinsumError, String) {
    let backend = CpuBackend::with_threads(1).unwrap();
    let tensors: Vec<Tensor> = shapes.iter().map(|s| tensor(s)).collect();
    let operands: Vec<TensorRead<'_>> = tensors.iter().map(Into::into).collect();
    let e = backend.einsum(spec, &operands).unwrap_err();
    assert_eq!(e.op(), "einsum");
    assert_eq!(backend.contraction_cache_stats().lookups(), 0, "{spec}: an op ran before the error");
    (e.kind(), rule(&e), e.message().to_string())
}

#[test]
fn syntax_errors() {
    use EinsumError::*;
    let bad = |spec: &str| refuse(spec, &[&[2]]);
    assert_eq!(bad("i1").1, InvalidCharacter { position: 1, character: '1' });
    assert_eq!(bad("i.").1, StrayDot { position: 1 });
    assert_eq!(bad("......").1, SecondEllipsis { term: "operand 0".into() });
    assert_eq!(bad("i-").1, BrokenArrow { position: 1, character: '-' });
    assert_eq!(bad("i>").1, BrokenArrow { position: 1, character: '>' });
    assert_eq!(bad("i->i->").1, SecondArrow { position: 4 });
    assert_eq!(bad("i->i,").1, CommaInOutput { position: 4 });
    assert_eq!(bad("i->ii").1, OutputLabelRepeated { label: 'i' });
    let (kind, typed, message) = bad("i->j");
    assert_eq!((kind, typed), (ErrorKind::InvalidArgument, OutputLabelUnknown { label: 'j' }));
    assert_eq!(message, "output subscript 'j' appears in no operand");
}

#[test]
fn shape_errors_name_the_subscript_and_extents() {
    use EinsumError::*;
    assert_eq!(refuse("i,i", &[&[2]]).1, OperandCount { terms: 2, operands: 1 });
    let (kind, typed, _) = refuse("ij,jk", &[&[2, 3, 1], &[3, 4]]);
    assert_eq!(kind, ErrorKind::ShapeMismatch);
    assert!(matches!(typed, RankMismatch { operand: 0, rank: 3, .. }));
    let (kind, typed, message) = refuse("ij,jk->ik", &[&[2, 3], &[4, 5]]);
    assert_eq!(kind, ErrorKind::ShapeMismatch);
    assert!(matches!(typed, ExtentMismatch { .. }));
    assert_eq!(
        message,
        "subscript 'j' has extent 3 in operand 0 and extent 4 in operand 1; extents must be equal or 1"
    );
    assert_eq!(refuse("ii", &[&[2, 3]]).1, DiagonalExtents { operand: 0, label: 'i', first: 2, second: 3 });
    assert_eq!(refuse("...i->i", &[&[4, 2]]).1, OutputEllipsisMissing { axes: 1 });
    let long = vec![1usize; 77];
    assert_eq!(refuse("...", &[&long]).1, TooManyAxes { axes: 77, max: 76 });
}

#[test]
fn operand_errors_come_before_any_op() {
    let backend = CpuBackend::with_threads(1).unwrap();
    let a = tensor(&[2, 3]);
    let b: Tensor = TypedTensor::<f32>::zeros(&[3, 2]).unwrap().into();
    let e = backend.einsum("ij,jk", &[(&a).into(), (&b).into()]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
    assert_eq!(rule(&e), EinsumError::DTypeMismatch { operand: 1, dtype: DType::F32, expected: DType::F64 });
    let t: Tensor = TypedTensor::from_vec(vec![true, false], &[2]).unwrap().into();
    let e = backend.einsum("i,i", &[(&t).into(), (&t).into()]).unwrap_err();
    assert_eq!((e.kind(), rule(&e)), (ErrorKind::Unsupported, EinsumError::UnsupportedDType { dtype: DType::Bool }));

    // A prepared expression refuses other shapes and counts.
    let prepared = PreparedEinsum::new("ij,jk", &[&[2, 3], &[3, 2]]).unwrap();
    let c = tensor(&[3, 4]);
    let e = prepared.execute(&backend, &[(&a).into(), (&c).into()]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    assert_eq!(rule(&e), EinsumError::ShapeChanged { operand: 1, prepared: vec![3, 2], given: vec![3, 4] });
    assert_eq!(e.message(), "operand 1 has shape [3, 4], the prepared expression was built for [3, 2]");
    let e = prepared.execute(&backend, &[(&a).into()]).unwrap_err();
    assert_eq!(rule(&e), EinsumError::OperandCount { terms: 2, operands: 1 });
    assert_eq!(backend.contraction_cache_stats().lookups(), 0);
}

#[test]
fn path_errors() {
    let backend = CpuBackend::with_threads(1).unwrap();
    let shapes: [&[usize]; 3] = [&[4, 4], &[4, 4], &[4, 4]];
    let bad_path = EinsumOptions::new().strategy(PathStrategy::Explicit(vec![(0, 5)]));
    let e = backend.einsum_prepare_with("ij,jk,kl", &shapes, &bad_path).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(matches!(rule(&e), EinsumError::InvalidPath { .. }), "{e}");
    let limit = EinsumOptions::new().memory_limit(3);
    let e = backend.einsum_prepare_with("ij,jk,kl", &shapes, &limit).unwrap_err();
    assert_eq!(rule(&e), EinsumError::MemoryLimit { limit: 3, needed: 16 });
    // 17 operands: too many for the exact search when asked for it; Auto goes greedy.
    let spec = vec!["i"; 17].join(",");
    let shapes17: Vec<&[usize]> = vec![&[2usize][..]; 17];
    let exact = EinsumOptions::new().strategy(PathStrategy::Optimal);
    let e = backend.einsum_prepare_with(&spec, &shapes17, &exact).unwrap_err();
    assert_eq!(rule(&e), EinsumError::TooManyOperands { operands: 17, max: 16 });
    assert!(backend.einsum_prepare(&spec, &shapes17).is_ok());
}
