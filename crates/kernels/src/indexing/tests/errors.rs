//! Every bad input gives a typed error naming the op and the offending value, and a failed
//! call leaves no plan in the cache.

use strata_tensor::config::{GatherConfig, PadConfig, ScatterCombiner, ScatterConfig, SliceConfig};
use strata_tensor::{Error, ErrorKind, Tensor, TensorRead};

use crate::KernelContext;
use crate::indexing::{
    IndexedPlanCache, StartIndices, concatenate, dynamic_slice, dynamic_update_slice, gather, pad, reverse, scatter,
    slice,
};

fn expect_err(result: Result<Tensor, Error>, kind: ErrorKind, op: &str, needle: &str) {
    let e = result.expect_err("bad input must be refused");
    assert_eq!(e.kind(), kind, "{e}");
    assert_eq!(e.op(), op, "{e}");
    assert!(e.to_string().contains(needle), "`{e}` should mention `{needle}`");
}

fn table() -> Tensor {
    Tensor::from_vec((0..12).map(|x| x as f32).collect(), &[4, 3]).unwrap()
}

#[test]
fn gather_rejects_bad_inputs() {
    let ctx = KernelContext::sequential();
    let cache = IndexedPlanCache::default();
    let t = table();
    let ok_idx = Tensor::from_vec(vec![1i32, 2], &[2, 1]).unwrap();
    let cfg = GatherConfig::rows(2, 3);
    let run = |idx: &Tensor, cfg: &GatherConfig| gather(&ctx, &(&t).into(), &idx.into(), cfg, Some(&cache));
    for bad in [
        Tensor::from_vec(vec![1.0f32, 2.0], &[2, 1]).unwrap(),
        Tensor::from_vec(vec![true, false], &[2, 1]).unwrap(),
        Tensor::from_vec(vec![strata_tensor::c64::new(1.0, 0.0); 2], &[2, 1]).unwrap(),
    ] {
        expect_err(run(&bad, &cfg), ErrorKind::DTypeMismatch, "gather", "indices must be int32 or int64");
    }
    expect_err(
        run(&ok_idx, &GatherConfig { index_vector_dim: 3, ..cfg.clone() }),
        ErrorKind::InvalidArgument,
        "gather",
        "index_vector_dim 3 is out of range",
    );
    expect_err(
        run(&ok_idx, &GatherConfig { slice_sizes: vec![1, 4], ..cfg.clone() }),
        ErrorKind::InvalidArgument,
        "gather",
        "slice_sizes[1] = 4 exceeds operand extent 3",
    );
    // lax: the extent of index_vector_dim must equal len(start_index_map), a shape error.
    expect_err(
        run(&ok_idx, &GatherConfig { start_index_map: vec![0, 1], ..cfg.clone() }),
        ErrorKind::ShapeMismatch,
        "gather",
        "start_index_map [0, 1] has 2 entries",
    );
    assert_eq!(cache.stats().entries, 0, "failed builds are not cached");
    assert!(run(&ok_idx, &cfg).is_ok());
}

#[test]
fn scatter_rejects_bad_inputs() {
    let ctx = KernelContext::sequential();
    let t = table();
    let idx = Tensor::from_vec(vec![1i64, 2], &[2, 1]).unwrap();
    let upd = Tensor::from_vec(vec![1.0f32; 6], &[2, 3]).unwrap();
    let cfg = ScatterConfig::rows(2, ScatterCombiner::Max);
    let run = |idx: &Tensor, upd: &Tensor, cfg: &ScatterConfig| {
        scatter(&ctx, &(&t).into(), &idx.into(), &upd.into(), cfg, None)
    };
    let f_idx = Tensor::from_vec(vec![1.0f64, 2.0], &[2, 1]).unwrap();
    expect_err(run(&f_idx, &upd, &cfg), ErrorKind::DTypeMismatch, "scatter", "scatter_indices has dtype float64");
    let wrong_rows = Tensor::from_vec(vec![1.0f32; 9], &[3, 3]).unwrap();
    expect_err(run(&idx, &wrong_rows, &cfg), ErrorKind::ShapeMismatch, "scatter", "updates have shape [3, 3]");
    let too_wide = Tensor::from_vec(vec![1.0f32; 8], &[2, 4]).unwrap();
    expect_err(run(&idx, &too_wide, &cfg), ErrorKind::ShapeMismatch, "scatter", "updates have shape [2, 4]");
    let wrong_rank = Tensor::from_vec(vec![1.0f32; 6], &[6]).unwrap();
    expect_err(run(&idx, &wrong_rank, &cfg), ErrorKind::ShapeMismatch, "scatter", "updates have shape [6]");
    let f64_upd = Tensor::from_vec(vec![1.0f64; 6], &[2, 3]).unwrap();
    expect_err(run(&idx, &f64_upd, &cfg), ErrorKind::DTypeMismatch, "scatter", "updates have dtype float64");
    expect_err(
        run(&idx, &upd, &ScatterConfig { index_vector_dim: 5, ..cfg.clone() }),
        ErrorKind::InvalidArgument,
        "scatter",
        "index_vector_dim 5 is out of range",
    );
    // lax: the extent of index_vector_dim must equal len(scatter_dims_to_operand_dims).
    let pair_idx = Tensor::from_vec(vec![1i64, 2, 0, 1], &[2, 2]).unwrap();
    expect_err(
        run(&pair_idx, &upd, &cfg),
        ErrorKind::ShapeMismatch,
        "scatter",
        "scatter_dims_to_operand_dims [0] has 1 entries, but index vectors have 2 components",
    );
    assert!(run(&idx, &upd, &cfg).is_ok());
}

#[test]
fn scatter_add_and_multiply_reject_bool() {
    // jax.lax.scatter_add / scatter_mul on bool: "add does not accept dtype bool".
    let ctx = KernelContext::sequential();
    let x = Tensor::from_vec(vec![true, false, false], &[3]).unwrap();
    let idx = Tensor::from_vec(vec![0i32, 2], &[2, 1]).unwrap();
    let upd = Tensor::from_vec(vec![true, true], &[2]).unwrap();
    let cfg = |combiner| ScatterConfig {
        inserted_window_dims: vec![0],
        scatter_dims_to_operand_dims: vec![0],
        index_vector_dim: 1,
        combiner,
        ..ScatterConfig::default()
    };
    for combiner in [ScatterCombiner::Add, ScatterCombiner::Multiply] {
        let r = scatter(&ctx, &(&x).into(), &(&idx).into(), &(&upd).into(), &cfg(combiner), None);
        expect_err(r, ErrorKind::Unsupported, "scatter", "is not defined for dtype bool");
    }
    // max / min are or / and, as lax.scatter_max / scatter_min compute on bool.
    let r = scatter(&ctx, &(&x).into(), &(&idx).into(), &(&upd).into(), &cfg(ScatterCombiner::Max), None).unwrap();
    assert_eq!(r.as_typed::<bool>().unwrap().data(), &[true, false, true]);
    let r = scatter(&ctx, &(&x).into(), &(&idx).into(), &(&upd).into(), &cfg(ScatterCombiner::Min), None).unwrap();
    assert_eq!(r.as_typed::<bool>().unwrap().data(), &[true, false, false]);
}

#[test]
fn concatenate_rejects_mismatches() {
    let ctx = KernelContext::sequential();
    let a = table();
    let b = Tensor::from_vec(vec![0.0f32; 8], &[4, 2]).unwrap();
    let c = Tensor::from_vec(vec![0.0f64; 3], &[1, 3]).unwrap();
    let d = Tensor::from_vec(vec![0.0f32; 3], &[3]).unwrap();
    let run = |ts: &[&Tensor], axis: usize| {
        let reads: Vec<TensorRead<'_>> = ts.iter().map(|&t| TensorRead::from(t)).collect();
        concatenate(&ctx, &reads, axis)
    };
    expect_err(run(&[&a, &b], 0), ErrorKind::ShapeMismatch, "concatenate", "all extents except axis 0 must match");
    assert_eq!(run(&[&a, &b], 1).unwrap().shape(), &[4, 5]);
    expect_err(run(&[&a, &c], 0), ErrorKind::DTypeMismatch, "concatenate", "operand 1 has dtype float64");
    expect_err(run(&[&a, &d], 0), ErrorKind::ShapeMismatch, "concatenate", "operand 1 has shape [3]");
    expect_err(run(&[&a], 2), ErrorKind::InvalidArgument, "concatenate", "axis 2 is out of range for rank 2");
    expect_err(run(&[], 0), ErrorKind::InvalidArgument, "concatenate", "no operands");
    let s = Tensor::scalar(1.0f32);
    expect_err(run(&[&s, &s], 0), ErrorKind::InvalidArgument, "concatenate", "out of range for rank 0");
}

#[test]
fn slice_pad_reverse_reject_bad_configs() {
    let ctx = KernelContext::sequential();
    let t = table();
    let r: TensorRead<'_> = (&t).into();
    expect_err(
        slice(&ctx, &r, &SliceConfig::new(vec![0, 0], vec![4, 3], vec![1, 0])),
        ErrorKind::InvalidArgument,
        "slice",
        "strides[1] is 0",
    );
    expect_err(
        slice(&ctx, &r, &SliceConfig::contiguous(vec![0, 0], vec![5, 3])),
        ErrorKind::InvalidArgument,
        "slice",
        "limit 5, extent 4",
    );
    let zero = Tensor::scalar(0.0f32);
    expect_err(
        pad(&ctx, &r, &(&zero).into(), &PadConfig::new(vec![0, 0], vec![0, 0], vec![0, -2])),
        ErrorKind::InvalidArgument,
        "pad",
        "interior[1] is -2",
    );
    let zero64 = Tensor::scalar(0.0f64);
    expect_err(
        pad(&ctx, &r, &(&zero64).into(), &PadConfig::new(vec![0, 0], vec![0, 0], vec![0, 0])),
        ErrorKind::DTypeMismatch,
        "pad",
        "padding_value has dtype float64",
    );
    let vector = Tensor::from_vec(vec![0.0f32; 2], &[2]).unwrap();
    expect_err(
        pad(&ctx, &r, &(&vector).into(), &PadConfig::new(vec![0, 0], vec![0, 0], vec![0, 0])),
        ErrorKind::InvalidArgument,
        "pad",
        "must be rank 0",
    );
    expect_err(reverse(&ctx, &r, &[1, 1]), ErrorKind::InvalidArgument, "reverse", "appears more than once");
    expect_err(reverse(&ctx, &r, &[2]), ErrorKind::InvalidArgument, "reverse", "axis 2 is out of range");
}

#[test]
fn dynamic_forms_reject_bad_inputs() {
    let ctx = KernelContext::sequential();
    let t = table();
    let r: TensorRead<'_> = (&t).into();
    expect_err(
        dynamic_slice(&ctx, &r, StartIndices::Values(&[0]), &[1, 1], None),
        ErrorKind::InvalidArgument,
        "dynamic_slice",
        "1 start indices were given for an operand of rank 2",
    );
    expect_err(
        dynamic_slice(&ctx, &r, StartIndices::Values(&[0, 0]), &[5, 1], None),
        ErrorKind::InvalidArgument,
        "dynamic_slice",
        "slice_sizes[0] = 5 exceeds operand extent 4",
    );
    let f = Tensor::scalar(1.0f32);
    let i = Tensor::scalar(1i32);
    let v = Tensor::from_vec(vec![1i64], &[1]).unwrap();
    let float_starts = [TensorRead::from(&i), TensorRead::from(&f)];
    expect_err(
        dynamic_slice(&ctx, &r, StartIndices::Tensors(&float_starts), &[1, 1], None),
        ErrorKind::DTypeMismatch,
        "dynamic_slice",
        "start index 1 has dtype float32",
    );
    let vector_starts = [TensorRead::from(&v), TensorRead::from(&i)];
    expect_err(
        dynamic_slice(&ctx, &r, StartIndices::Tensors(&vector_starts), &[1, 1], None),
        ErrorKind::InvalidArgument,
        "dynamic_slice",
        "start index 0 has shape [1]",
    );
    let big = Tensor::from_vec(vec![0.0f32; 10], &[5, 2]).unwrap();
    expect_err(
        dynamic_update_slice(&ctx, &r, &(&big).into(), StartIndices::Values(&[0, 0]), None),
        ErrorKind::ShapeMismatch,
        "dynamic_update_slice",
        "update extent 5 of axis 0 exceeds operand extent 4",
    );
    let other = Tensor::from_vec(vec![0i32; 2], &[1, 2]).unwrap();
    expect_err(
        dynamic_update_slice(&ctx, &r, &(&other).into(), StartIndices::Values(&[0, 0]), None),
        ErrorKind::DTypeMismatch,
        "dynamic_update_slice",
        "update has dtype int32",
    );
    let flat = Tensor::from_vec(vec![0.0f32; 2], &[2]).unwrap();
    expect_err(
        dynamic_update_slice(&ctx, &r, &(&flat).into(), StartIndices::Values(&[0, 0]), None),
        ErrorKind::ShapeMismatch,
        "dynamic_update_slice",
        "update has rank 1",
    );
}
