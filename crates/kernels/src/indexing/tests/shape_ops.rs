//! slice, reverse, pad, concatenate, dynamic_slice and dynamic_update_slice against
//! reference loops on random shapes, strides, dtypes and parameters; hand-computed cases.

use proptest::prelude::*;
use strata_tensor::config::{PadConfig, SliceConfig};
use strata_tensor::{DType, Tensor, TensorRead, dispatch_dtype};

use super::gather::value_at;
use super::support::{Rng, Strided, TestScalar, data, indices_of, threaded};
use crate::KernelContext;
use crate::indexing::{
    IndexedPlanCache, StartIndices, concatenate, dynamic_slice, dynamic_update_slice, pad, reverse, slice,
};

fn random_shape(rng: &mut Rng, max_rank: usize) -> Vec<usize> {
    let rank = rng.below(max_rank + 1);
    (0..rank).map(|_| rng.range(0, 5) as usize).collect()
}

fn operand<T: TestScalar>(rng: &mut Rng, seed: u64, shape: &[usize]) -> Strided<T> {
    Strided::new(rng, shape, |i| T::from_i64(value_at(seed, i)))
}

fn context(rng: &mut Rng) -> KernelContext<'static> {
    if rng.coin() { threaded() } else { KernelContext::sequential() }
}

fn check_slice<T: TestScalar>(seed: u64) {
    let mut rng = Rng::new(seed);
    let shape = random_shape(&mut rng, 4);
    let x = operand::<T>(&mut rng, seed, &shape);
    let mut config = SliceConfig::default();
    for &d in &shape {
        let start = rng.range(0, d as i64) as usize;
        config.start.push(start);
        config.limit.push(rng.range(start as i64, d as i64) as usize);
        config.strides.push(rng.range(1, 3) as usize);
    }
    let out = slice(&context(&mut rng), &x.read(), &config).unwrap();
    let out_shape: Vec<usize> =
        (0..shape.len()).map(|a| (config.limit[a] - config.start[a]).div_ceil(config.strides[a])).collect();
    assert_eq!(out.shape(), &out_shape[..]);
    let view = x.view();
    let expected: Vec<T> = indices_of(&out_shape)
        .iter()
        .map(|o| {
            let at: Vec<usize> = (0..o.len()).map(|a| config.start[a] + o[a] * config.strides[a]).collect();
            *view.get(&at).unwrap()
        })
        .collect();
    assert_eq!(data::<T>(&out), expected, "seed {seed} {shape:?} {config:?}");
}

fn check_reverse<T: TestScalar>(seed: u64) {
    let mut rng = Rng::new(seed);
    let shape = random_shape(&mut rng, 4);
    let x = operand::<T>(&mut rng, seed, &shape);
    let mut axes = rng.subset(shape.len());
    rng.shuffle(&mut axes);
    let out = reverse(&context(&mut rng), &x.read(), &axes).unwrap();
    let view = x.view();
    let expected: Vec<T> = indices_of(&shape)
        .iter()
        .map(|o| {
            let at: Vec<usize> =
                (0..o.len()).map(|a| if axes.contains(&a) { shape[a] - 1 - o[a] } else { o[a] }).collect();
            *view.get(&at).unwrap()
        })
        .collect();
    assert_eq!(data::<T>(&out), expected, "seed {seed} {shape:?} {axes:?}");
}

fn check_pad<T: TestScalar>(seed: u64) {
    let mut rng = Rng::new(seed);
    let shape = random_shape(&mut rng, 3);
    let x = operand::<T>(&mut rng, seed, &shape);
    let mut config = PadConfig::default();
    for &d in &shape {
        let interior = rng.range(0, 2);
        let padded = d as i64 + (d as i64 - 1).max(0) * interior;
        // low and high may crop, but never below an empty extent.
        let low = rng.range(-padded.min(3), 3);
        let high = rng.range(-(padded + low).clamp(0, 3), 3);
        config.low.push(low);
        config.high.push(high);
        config.interior.push(interior);
    }
    let value = T::from_i64(99);
    let value_tensor = Tensor::scalar(value);
    let out = pad(&context(&mut rng), &x.read(), &(&value_tensor).into(), &config).unwrap();
    let out_shape = out.shape().to_vec();
    for a in 0..shape.len() {
        let d = shape[a] as i64;
        let expect = config.low[a] + config.high[a] + d + (d - 1).max(0) * config.interior[a];
        assert_eq!(out_shape[a] as i64, expect);
    }
    let view = x.view();
    let expected: Vec<T> = indices_of(&out_shape)
        .iter()
        .map(|o| {
            let mut at = Vec::new();
            for a in 0..o.len() {
                let t = o[a] as i64 - config.low[a];
                let step = config.interior[a] + 1;
                if t < 0 || t % step != 0 || t / step >= shape[a] as i64 {
                    return value;
                }
                at.push((t / step) as usize);
            }
            *view.get(&at).unwrap()
        })
        .collect();
    assert_eq!(data::<T>(&out), expected, "seed {seed} {shape:?} {config:?}");
}

fn check_concatenate<T: TestScalar>(seed: u64) {
    let mut rng = Rng::new(seed);
    let mut shape = random_shape(&mut rng, 3);
    if shape.is_empty() {
        shape.push(2);
    }
    let axis = rng.below(shape.len());
    let count = rng.range(1, 4) as usize;
    let parts: Vec<Strided<T>> = (0..count)
        .map(|p| {
            let mut s = shape.clone();
            s[axis] = rng.range(0, 3) as usize;
            operand::<T>(&mut rng, seed + p as u64, &s)
        })
        .collect();
    let reads: Vec<TensorRead<'_>> = parts.iter().map(|p| p.read()).collect();
    let out = concatenate(&context(&mut rng), &reads, axis).unwrap();
    let mut out_shape = shape.clone();
    out_shape[axis] = parts.iter().map(|p| p.view().shape()[axis]).sum();
    assert_eq!(out.shape(), &out_shape[..]);
    let expected: Vec<T> = indices_of(&out_shape)
        .iter()
        .map(|o| {
            let mut at = o.clone();
            for p in &parts {
                let view = p.view();
                if at[axis] < view.shape()[axis] {
                    return *view.get(&at).unwrap();
                }
                at[axis] -= view.shape()[axis];
            }
            unreachable!("every output index falls in one operand")
        })
        .collect();
    assert_eq!(data::<T>(&out), expected, "seed {seed}");
}

fn check_dynamic<T: TestScalar>(seed: u64, cache: &IndexedPlanCache) {
    let mut rng = Rng::new(seed);
    let shape = random_shape(&mut rng, 3);
    let x = operand::<T>(&mut rng, seed, &shape);
    let sizes: Vec<usize> = shape.iter().map(|&d| rng.range(0, d as i64) as usize).collect();
    let starts: Vec<i64> = shape.iter().map(|&d| rng.range(-3, d as i64 + 3)).collect();
    let clamped: Vec<usize> =
        starts.iter().zip(&shape).zip(&sizes).map(|((&s, &d), &n)| s.clamp(0, (d - n) as i64) as usize).collect();
    let ctx = context(&mut rng);
    let view = x.view();
    // dynamic_slice, starts given as values and as rank-0 int32/int64 tensors.
    let expected: Vec<T> = indices_of(&sizes)
        .iter()
        .map(|o| *view.get(&o.iter().zip(&clamped).map(|(a, b)| a + b).collect::<Vec<_>>()).unwrap())
        .collect();
    let scalars32: Vec<Tensor> = starts.iter().map(|&s| Tensor::scalar(s as i32)).collect();
    let scalars64: Vec<Tensor> = starts.iter().map(|&s| Tensor::scalar(s)).collect();
    let reads32: Vec<TensorRead<'_>> = scalars32.iter().map(TensorRead::from).collect();
    let reads64: Vec<TensorRead<'_>> = scalars64.iter().map(TensorRead::from).collect();
    for s in [StartIndices::Values(&starts), StartIndices::Tensors(&reads32), StartIndices::Tensors(&reads64)] {
        let out = dynamic_slice(&ctx, &x.read(), s, &sizes, Some(cache)).unwrap();
        assert_eq!(out.shape(), &sizes[..]);
        assert_eq!(data::<T>(&out), expected, "seed {seed} {shape:?} {sizes:?} {starts:?}");
    }
    // dynamic_update_slice with an update of extents `sizes`.
    let update = operand::<T>(&mut rng, seed + 5, &sizes);
    let uview = update.view();
    let expected: Vec<T> = indices_of(&shape)
        .iter()
        .map(|o| {
            let inside: Option<Vec<usize>> =
                (0..o.len()).map(|a| o[a].checked_sub(clamped[a]).filter(|&r| r < sizes[a])).collect();
            match inside {
                Some(r) => *uview.get(&r).unwrap(),
                None => *view.get(o).unwrap(),
            }
        })
        .collect();
    let out =
        dynamic_update_slice(&ctx, &x.read(), &update.read(), StartIndices::Values(&starts), Some(cache)).unwrap();
    assert_eq!(data::<T>(&out), expected, "seed {seed} {shape:?} {sizes:?} {starts:?}");
}

fn dtype_of(seed: u64) -> DType {
    DType::ALL[(seed % 7) as usize]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn slice_matches_reference(seed in any::<u64>()) {
        dispatch_dtype!(dtype_of(seed), T => check_slice::<T>(seed));
    }

    #[test]
    fn reverse_matches_reference(seed in any::<u64>()) {
        dispatch_dtype!(dtype_of(seed), T => check_reverse::<T>(seed));
    }

    #[test]
    fn pad_matches_reference(seed in any::<u64>()) {
        dispatch_dtype!(dtype_of(seed), T => check_pad::<T>(seed));
    }

    #[test]
    fn concatenate_matches_reference(seed in any::<u64>()) {
        dispatch_dtype!(dtype_of(seed), T => check_concatenate::<T>(seed));
    }

    #[test]
    fn dynamic_forms_match_reference(seed in any::<u64>()) {
        let cache = IndexedPlanCache::default();
        dispatch_dtype!(dtype_of(seed), T => check_dynamic::<T>(seed, &cache));
        // One miss then two hits for the slice, one miss for the update.
        let s = cache.stats();
        prop_assert_eq!((s.hits, s.misses, s.entries), (2, 2, 2));
    }
}

#[test]
fn pad_negative_edges_and_interior_by_hand() {
    let ctx = KernelContext::sequential();
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let zero = Tensor::scalar(0.0f32);
    // Axis 0: interior 1 -> rows [r0, pad, r1], low 1 -> 4 rows. Axis 1: crop 1 left, 1 right.
    let cfg = PadConfig::new(vec![1, -1], vec![0, -1], vec![1, 0]);
    let out = pad(&ctx, &(&x).into(), &(&zero).into(), &cfg).unwrap();
    assert_eq!(out.shape(), &[4, 1]);
    assert_eq!(data::<f32>(&out), vec![0.0, 2.0, 0.0, 5.0]);
    // Interior padding on axis 1 then cropping into the padding: [1,p,2,p,3] -> drop 3 left.
    let cfg = PadConfig::new(vec![0, -3], vec![0, 1], vec![0, 1]);
    let out = pad(&ctx, &(&x).into(), &(&zero).into(), &cfg).unwrap();
    assert_eq!(out.shape(), &[2, 3]);
    assert_eq!(data::<f32>(&out), vec![0.0, 3.0, 0.0, 0.0, 6.0, 0.0]);
}

#[test]
fn large_copies_split_over_threads() {
    let n = 300_000;
    let x = Tensor::from_vec((0..n as i64).collect::<Vec<_>>(), &[n / 3, 3]).unwrap();
    let out = reverse(&threaded(), &(&x).into(), &[0, 1]).unwrap();
    let expected: Vec<i64> = (0..n as i64).rev().collect();
    assert_eq!(data::<i64>(&out), expected);
    let zero = Tensor::scalar(-1i64);
    let out =
        pad(&threaded(), &(&x).into(), &(&zero).into(), &PadConfig::new(vec![1, 0], vec![0, 0], vec![0, 0])).unwrap();
    let got = data::<i64>(&out);
    assert_eq!(&got[..3], &[-1, -1, -1]);
    assert_eq!(&got[3..], x.as_typed::<i64>().unwrap().data());
}

#[test]
fn zero_stride_broadcast_views_are_read_correctly() {
    use crate::indexing::{gather, scatter};
    use strata_tensor::TypedView;
    use strata_tensor::config::{GatherConfig, ScatterCombiner, ScatterConfig};
    let ctx = KernelContext::sequential();
    let row = [1i64, 2, 3];
    // A [4, 3] view whose rows all alias `row` (stride 0 along axis 0).
    let b = || TypedView::row_major(&row, &[3]).unwrap().broadcast_in_dim(&[4, 3], &[1]).unwrap();
    let idx = Tensor::from_vec(vec![3i32, 0], &[2, 1]).unwrap();
    let out = gather(&ctx, &b().into(), &(&idx).into(), &GatherConfig::rows(2, 3), None).unwrap();
    assert_eq!(data::<i64>(&out), vec![1, 2, 3, 1, 2, 3]);
    let base = Tensor::from_vec(vec![0i64; 12], &[4, 3]).unwrap();
    let cfg = ScatterConfig::rows(2, ScatterCombiner::Add);
    let upd = TypedView::row_major(&row, &[3]).unwrap().broadcast_in_dim(&[2, 3], &[1]).unwrap();
    let out = scatter(&ctx, &(&base).into(), &(&idx).into(), &upd.into(), &cfg, None).unwrap();
    assert_eq!(data::<i64>(&out), vec![1, 2, 3, 0, 0, 0, 0, 0, 0, 1, 2, 3]);
    let out = reverse(&ctx, &b().into(), &[1]).unwrap();
    assert_eq!(data::<i64>(&out), [3, 2, 1].repeat(4));
    let out = slice(&ctx, &b().into(), &SliceConfig::new(vec![1, 1], vec![3, 3], vec![1, 1])).unwrap();
    assert_eq!(data::<i64>(&out), vec![2, 3, 2, 3]);
    let zero = Tensor::scalar(0i64);
    let out = pad(&ctx, &b().into(), &(&zero).into(), &PadConfig::new(vec![0, 1], vec![-3, 0], vec![0, 0])).unwrap();
    assert_eq!(data::<i64>(&out), vec![0, 1, 2, 3]);
    let out = concatenate(&ctx, &[b().into(), b().into()], 0).unwrap();
    assert_eq!(data::<i64>(&out), [1, 2, 3].repeat(8));
}

#[test]
fn large_concatenations_split_over_threads() {
    let mut rng = Rng::new(11);
    for axis in 0..2 {
        let a = Strided::<i32>::new(&mut rng, &[600, 100], |i| (i[0] * 1000 + i[1]) as i32);
        let b = Strided::<i32>::new(&mut rng, &[600, 100], |i| -((i[0] * 1000 + i[1]) as i32));
        let out = concatenate(&threaded(), &[a.read(), b.read()], axis).unwrap();
        let seq = concatenate(&KernelContext::sequential(), &[a.read(), b.read()], axis).unwrap();
        let (av, bv) = (a.view(), b.view());
        let expected: Vec<i32> = indices_of(out.shape())
            .iter()
            .map(|o| {
                let (i, j) = (o[0], o[1]);
                match axis {
                    0 if i < 600 => *av.get(&[i, j]).unwrap(),
                    0 => *bv.get(&[i - 600, j]).unwrap(),
                    _ if j < 100 => *av.get(&[i, j]).unwrap(),
                    _ => *bv.get(&[i, j - 100]).unwrap(),
                }
            })
            .collect();
        assert_eq!(data::<i32>(&out), expected, "axis {axis}");
        assert_eq!(data::<i32>(&seq), expected, "axis {axis}");
    }
}
