//! Allocation failure on every op family is a typed error naming the op and the bytes it
//! asked for — never an abort — for results of 2^31 to 2^40 elements requested by small
//! inputs (broadcast views, zero-size operands, paddings, output shapes).
//!
//! The capped test allocator refuses every request above 64 MiB at once, as a real
//! allocator refuses one it cannot serve (no memory is touched, no OOM killer involved).
//! A path that allocated infallibly would abort this test binary.

mod capped_alloc;

use std::sync::atomic::Ordering;

use capped_alloc::{CappedAllocator, REFUSED};
use strata_backend::prelude::*;
use strata_tensor::config::{
    ElementwiseFusionPlan, FusionInstr, GatherConfig, GroupedGemmConfig, PadConfig, ScatterCombiner, ScatterConfig,
    SliceConfig,
};
use strata_tensor::{Result, TypedView};

#[global_allocator]
static ALLOCATOR: CappedAllocator = CappedAllocator;

/// Element counts of the requested results.
const POWERS: [u32; 4] = [31, 33, 36, 40];

static ONE: [f64; 1] = [1.0];
static NONE: [f64; 0] = [];
static ZERO_INDEX: [i64; 1] = [0];

/// `n` elements that all read `ONE[0]` (stride 0), shaped `shape`.
fn broadcast(shape: &[usize]) -> TypedView<'static, f64> {
    TypedView::new(&ONE[..], shape, &vec![0; shape.len()], 0).unwrap()
}

/// A zero-size operand of `shape` (one extent 0, the others as large as asked).
fn empty(shape: &[usize]) -> TypedView<'static, f64> {
    TypedView::new(&NONE[..], shape, &vec![1; shape.len()], 0).unwrap()
}

fn scalar() -> TypedView<'static, f64> {
    TypedView::new(&ONE[..], &[], &[], 0).unwrap()
}

/// One op asked for a result of `2^k` elements.
struct Case {
    op: &'static str,
    /// Bytes of the allocation that must fail, given the power.
    bytes: fn(u32) -> usize,
    run: fn(&CpuBackend, u32) -> Result<()>,
}

fn n(k: u32) -> usize {
    1usize << k
}

/// Two factors of 2^k, as even as possible.
fn halves(k: u32) -> (usize, usize) {
    (1 << (k / 2), 1 << (k - k / 2))
}

fn cases() -> Vec<Case> {
    let whole: fn(u32) -> usize = |k| n(k) * 8;
    vec![
        Case { op: "broadcast_in_dim", bytes: whole, run: |b, k| b.broadcast_in_dim(scalar(), &[n(k)], &[]).map(drop) },
        Case {
            op: "broadcast_multiply",
            bytes: whole,
            run: |b, k| {
                let (r, c) = halves(k);
                b.broadcast_multiply(broadcast(&[r]), &[0], broadcast(&[c]), &[1], &[r, c]).map(drop)
            },
        },
        Case {
            op: "pad",
            bytes: whole,
            run: |b, k| {
                b.pad(
                    scalar().broadcast_in_dim(&[1], &[]).unwrap(),
                    PadValue::Tensor(scalar().into()),
                    &PadConfig::new(vec![n(k) as i64 - 1], vec![0], vec![0]),
                )
                .map(drop)
            },
        },
        Case {
            op: "embed_diagonal",
            bytes: whole,
            run: |b, k| {
                // [2^(k%2), L] -> [2^(k%2), L, L] with L = 2^(k/2).
                let l = 1usize << (k / 2);
                let lead = 1usize << (k % 2);
                let data = vec![1.0f64; lead * l];
                let t = TypedTensor::from_vec(data, &[lead, l]).unwrap();
                b.embed_diagonal(&t, 1, 2).map(drop)
            },
        },
        Case {
            op: "dot_general",
            bytes: whole,
            run: |b, k| {
                let (m, c) = halves(k);
                b.dot_general(empty(&[m, 0]), empty(&[0, c]), &DotGeneral::matmul()).map(drop)
            },
        },
        Case {
            op: "grouped_gemm",
            bytes: whole,
            run: |b, k| {
                let (m, c) = halves(k);
                let lhs: Vec<TensorRead<'_>> = vec![empty(&[2, 0]).into(), empty(&[m, 0]).into()];
                let rhs: Vec<TensorRead<'_>> = vec![empty(&[0, 2]).into(), empty(&[0, c]).into()];
                b.grouped_gemm(&lhs, &rhs, &GroupedGemmConfig::default()).map(drop)
            },
        },
        Case {
            op: "transpose",
            bytes: whole,
            run: |b, k| {
                let (r, c) = halves(k);
                b.transpose(broadcast(&[r, c]), &[1, 0]).map(drop)
            },
        },
        Case { op: "to_contiguous", bytes: whole, run: |b, k| b.to_contiguous(broadcast(&[n(k)])).map(drop) },
        Case {
            op: "reshape",
            bytes: whole,
            run: |b, k| {
                let (r, c) = halves(k);
                b.reshape(broadcast(&[r, c]), &[n(k)]).map(drop)
            },
        },
        Case { op: "cast", bytes: |k| n(k) * 4, run: |b, k| b.cast(broadcast(&[n(k)]), DType::F32).map(drop) },
        Case { op: "add", bytes: whole, run: |b, k| b.add(broadcast(&[n(k)]), broadcast(&[n(k)])).map(drop) },
        Case { op: "exp", bytes: whole, run: |b, k| b.exp(broadcast(&[n(k)])).map(drop) },
        Case {
            op: "compare",
            bytes: n,
            run: |b, k| b.compare(CompareDir::Lt, broadcast(&[n(k)]), broadcast(&[n(k)])).map(drop),
        },
        Case {
            op: "select",
            bytes: whole,
            run: |b, k| {
                let pred = TypedTensor::from_vec(vec![true], &[1]).unwrap();
                let p = TypedView::new(pred.data(), &[n(k)], &[0], 0).unwrap();
                // The predicate view borrows a local: run the op here.
                b.select(p, broadcast(&[n(k)]), broadcast(&[n(k)])).map(drop)
            },
        },
        Case { op: "clamp", bytes: whole, run: |b, k| b.clamp(scalar(), broadcast(&[n(k)]), scalar()).map(drop) },
        Case {
            op: "reduce_sum",
            bytes: whole,
            run: |b, k| b.reduce(ReduceOp::Sum, broadcast(&[n(k), 2]), &[1]).map(drop),
        },
        Case { op: "reduce_max", bytes: whole, run: |b, k| b.reduce(ReduceOp::Max, empty(&[n(k), 0]), &[1]).map(drop) },
        Case {
            op: "gather",
            bytes: whole,
            run: |b, k| {
                let idx = TypedView::new(&ZERO_INDEX[..], &[n(k), 1], &[0, 0], 0).unwrap();
                b.gather(broadcast(&[4, 1]), idx, &GatherConfig::rows(2, 1)).map(drop)
            },
        },
        Case {
            op: "scatter",
            bytes: whole,
            run: |b, k| {
                let idx = TypedView::new(&ZERO_INDEX[..], &[1, 1], &[0, 0], 0).unwrap();
                let cfg = ScatterConfig::rows(2, ScatterCombiner::Add);
                b.scatter(broadcast(&[n(k), 1]), idx, broadcast(&[1, 1]), &cfg).map(drop)
            },
        },
        Case {
            op: "slice",
            bytes: whole,
            run: |b, k| b.slice(broadcast(&[n(k) + 3]), &SliceConfig::new(vec![1], vec![n(k) + 1], vec![1])).map(drop),
        },
        Case {
            op: "dynamic_slice",
            bytes: whole,
            run: |b, k| b.dynamic_slice(broadcast(&[n(k) + 3]), &[2], &[n(k)]).map(drop),
        },
        Case {
            op: "dynamic_update_slice",
            bytes: whole,
            run: |b, k| b.dynamic_update_slice(broadcast(&[n(k)]), broadcast(&[1]), &[0]).map(drop),
        },
        Case {
            op: "concatenate",
            bytes: whole,
            run: |b, k| b.concatenate(&[broadcast(&[n(k) / 2]), broadcast(&[n(k) / 2])], 0).map(drop),
        },
        Case { op: "reverse", bytes: whole, run: |b, k| b.reverse(broadcast(&[n(k)]), &[0]).map(drop) },
        Case {
            op: "extract_diagonal",
            bytes: whole,
            run: |b, k| {
                // [R, L, L] -> [R, L] with R * L = 2^k.
                let (l, r) = halves(k);
                b.extract_diagonal(broadcast(&[r, l, l]), 1, 2).map(drop)
            },
        },
        Case {
            op: "tril",
            bytes: whole,
            run: |b, k| {
                let (r, c) = halves(k);
                b.tril(broadcast(&[r, c]), 0).map(drop)
            },
        },
        Case {
            op: "execute_fusion",
            bytes: whole,
            run: |b, k| {
                let mut plan = ElementwiseFusionPlan::default();
                let x = plan.push(FusionInstr::Input(0));
                let y = plan.push(FusionInstr::Binary(BinaryOp::Mul, x, x));
                plan.add_output(y);
                b.execute_fusion(&plan, &[broadcast(&[n(k)])]).map(drop)
            },
        },
    ]
}

#[test]
fn every_op_reports_a_failed_allocation_with_its_name_and_the_bytes() {
    let threads = strata_topology::discover().unwrap().allowed_cpus().len().min(2);
    let backend = CpuBackend::with_threads(threads).unwrap();
    let placed = backend.for_placement(CpuPlacement::AllAllowed).unwrap();
    for case in cases() {
        for k in POWERS {
            for b in [&backend, &placed] {
                let refused_before = REFUSED.load(Ordering::Relaxed);
                let err = (case.run)(b, k).expect_err(case.op);
                let what = format!("{} with 2^{k} elements: {err}", case.op);
                assert_eq!(err.op(), case.op, "{what}");
                let bytes = (case.bytes)(k);
                assert_eq!(err.kind(), ErrorKind::BackendFailure, "{what}");
                assert!(err.message().contains(&format!("{bytes} bytes")), "{what}: expected {bytes} bytes");
                assert!(REFUSED.load(Ordering::Relaxed) > refused_before, "{what}: the allocator was never asked");
            }
        }
    }
    // After all that the backend still works.
    let t = TypedTensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
    let sum = backend.add(&t, &t).unwrap();
    assert_eq!(sum.as_typed::<f64>().unwrap().data(), &[2.0, 4.0]);
}
