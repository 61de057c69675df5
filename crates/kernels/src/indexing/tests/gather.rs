//! gather against a reference written from the StableHLO definition, on random configs,
//! dtypes, strides and index values (clamping included), plus hand-computed cases.

use proptest::prelude::*;
use strata_tensor::config::GatherConfig;
use strata_tensor::{DType, Tensor, TensorRead, TypedView, dispatch_dtype};

use super::support::{Rng, Strided, TestScalar, data, indices_of, threaded};
use crate::KernelContext;
use crate::indexing::{IndexedPlanCache, gather};

/// A random valid gather: operand shape, indices shape, config.
pub(super) fn random_case(rng: &mut Rng) -> (Vec<usize>, Vec<usize>, GatherConfig) {
    let rank = rng.below(4);
    let operand: Vec<usize> = (0..rank).map(|_| rng.range(0, 4) as usize).collect();
    let mut slice_sizes: Vec<usize> = operand.iter().map(|&d| rng.range(0, d as i64) as usize).collect();
    let nonzero: Vec<usize> = (0..rank).filter(|&d| operand[d] > 0).collect();
    let batching: Vec<usize> =
        if rng.below(3) == 0 { nonzero.iter().copied().filter(|_| rng.coin()).collect() } else { vec![] };
    let collapsed: Vec<usize> =
        nonzero.iter().copied().filter(|d| !batching.contains(d) && rng.below(3) == 0).collect();
    for &d in batching.iter().chain(&collapsed) {
        slice_sizes[d] = 1;
    }
    let mut start_index_map: Vec<usize> = (0..rank).filter(|d| !batching.contains(d) && rng.coin()).collect();
    rng.shuffle(&mut start_index_map);
    let k = start_index_map.len();
    // Batch axes of the indices: free ones, then the batching ones, shuffled together.
    let free = rng.below(3);
    let mut batch: Vec<(usize, Option<usize>)> = (0..free).map(|_| (rng.range(0, 3) as usize, None)).collect();
    batch.extend(batching.iter().map(|&d| (operand[d], Some(d))));
    rng.shuffle(&mut batch);
    let nb = batch.len();
    let implicit = k == 1 && rng.coin();
    let ivd = if implicit { nb } else { rng.below(nb + 1) };
    let mut indices_shape: Vec<usize> = batch.iter().map(|b| b.0).collect();
    if !implicit {
        indices_shape.insert(ivd, k);
    }
    let axis_of = |b: usize| if !implicit && b >= ivd { b + 1 } else { b };
    // operand_batching_dims ascending, each paired with the indices axis holding it.
    let start_indices_batching_dims: Vec<usize> = batching
        .iter()
        .map(|&d| axis_of(batch.iter().position(|x| x.1 == Some(d)).expect("batching axis placed")))
        .collect();
    let window = (0..rank).filter(|d| !collapsed.contains(d) && !batching.contains(d)).count();
    let out_rank = nb + window;
    let mut positions: Vec<usize> = (0..out_rank).collect();
    rng.shuffle(&mut positions);
    let mut offset_dims = positions[..window].to_vec();
    offset_dims.sort_unstable();
    let config = GatherConfig {
        offset_dims,
        collapsed_slice_dims: collapsed,
        operand_batching_dims: batching,
        start_indices_batching_dims,
        start_index_map,
        index_vector_dim: ivd,
        slice_sizes,
    };
    (operand, indices_shape, config)
}

/// The StableHLO definition, element by element, on logical multi-indices.
pub(super) fn reference<T: TestScalar>(
    operand: &TypedView<'_, T>,
    indices: &TypedView<'_, i64>,
    config: &GatherConfig,
    out_shape: &[usize],
) -> Vec<T> {
    let rank = operand.rank();
    let ivd = config.index_vector_dim;
    let batch_dims: Vec<usize> = (0..out_shape.len()).filter(|d| !config.offset_dims.contains(d)).collect();
    let window_axes: Vec<usize> = (0..rank)
        .filter(|d| !config.collapsed_slice_dims.contains(d) && !config.operand_batching_dims.contains(d))
        .collect();
    indices_of(out_shape)
        .into_iter()
        .map(|out| {
            let batch_index: Vec<usize> = batch_dims.iter().map(|&d| out[d]).collect();
            let mut full = vec![0i64; rank];
            for (k, &d) in config.start_index_map.iter().enumerate() {
                let mut at = batch_index.clone();
                if ivd < indices.rank() {
                    at.insert(ivd, k);
                }
                let start = *indices.get(&at).expect("index in range");
                full[d] += start.clamp(0, (operand.shape()[d] - config.slice_sizes[d]) as i64);
            }
            for (&od, &id) in config.operand_batching_dims.iter().zip(&config.start_indices_batching_dims) {
                full[od] += batch_index[if id > ivd { id - 1 } else { id }] as i64;
            }
            for (&a, &d) in window_axes.iter().zip(&config.offset_dims) {
                full[a] += out[d] as i64;
            }
            let at: Vec<usize> = full.iter().map(|&x| x as usize).collect();
            *operand.get(&at).expect("reference index in range")
        })
        .collect()
}

/// Logical test values: small integers that differ between neighbours.
pub(super) fn value_at(seed: u64, index: &[usize]) -> i64 {
    index.iter().fold((seed % 11) as i64, |acc, &x| acc * 5 + x as i64 + 1) % 97 - 40
}

fn check_case<T: TestScalar>(seed: u64, ctx: &KernelContext<'_>, cache: Option<&IndexedPlanCache>) {
    let mut rng = Rng::new(seed);
    let (operand_shape, indices_shape, config) = random_case(&mut rng);
    let operand = Strided::<T>::new(&mut rng, &operand_shape, |i| T::from_i64(value_at(seed, i)));
    // Start indices range over [-2, extent + 2] so that clamping is exercised.
    let mut idx_rng = Rng::new(seed ^ 0xABCD);
    let indices64 = Strided::<i64>::new(&mut rng, &indices_shape, |at| {
        let k = at.get(config.index_vector_dim).copied().unwrap_or(0);
        let hi = config.start_index_map.get(k).map_or(2, |&d| operand_shape[d] as i64 + 2);
        idx_rng.range(-2, hi)
    });
    let out_shape = config.output_shape(&operand_shape, &indices_shape).expect("random case is valid");
    let expected = reference(&operand.view(), &indices64.view(), &config, &out_shape);
    // The same indices as int32, in another random layout.
    let index_view = indices64.view();
    let indices32 = Strided::<i32>::new(&mut rng, &indices_shape, |at| *index_view.get(at).unwrap() as i32);
    for indices in [indices64.read(), indices32.read()] {
        let out = gather(ctx, &operand.read(), &indices, &config, cache).expect("valid gather");
        assert_eq!(out.shape(), &out_shape[..], "seed {seed}: {config:?}");
        assert_eq!(
            data::<T>(&out),
            expected,
            "seed {seed}: {config:?} operand {operand_shape:?} indices {indices_shape:?}"
        );
    }
}

fn dtype_of(seed: u64) -> DType {
    DType::ALL[(seed % 7) as usize]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Random configs (batching dims, implicit index vectors, collapsed and zero-size
    /// axes included), every dtype, random strides, int32 and int64 indices.
    #[test]
    fn matches_reference(seed in any::<u64>()) {
        dispatch_dtype!(dtype_of(seed), T => check_case::<T>(seed, &KernelContext::sequential(), None));
    }

    /// The same through a plan cache and on four threads.
    #[test]
    fn matches_reference_threaded_and_cached(seed in any::<u64>()) {
        let cache = IndexedPlanCache::default();
        dispatch_dtype!(dtype_of(seed), T => check_case::<T>(seed, &threaded(), Some(&cache)));
        dispatch_dtype!(dtype_of(seed), T => check_case::<T>(seed, &threaded(), Some(&cache)));
        prop_assert_eq!(cache.stats().hits, 2);
    }
}

#[test]
fn clamps_start_indices_like_xla() {
    // operand [4, 3]; 2x2 windows at start vectors (row, col).
    let operand = Tensor::from_vec((0..12).map(|x| x as f64).collect(), &[4, 3]).unwrap();
    let starts = Tensor::from_vec(vec![-5i64, 1, 3, 2, 1, 100], &[3, 2]).unwrap();
    let config = GatherConfig {
        offset_dims: vec![1, 2],
        start_index_map: vec![0, 1],
        index_vector_dim: 1,
        slice_sizes: vec![2, 2],
        ..GatherConfig::default()
    };
    let out = gather(&KernelContext::sequential(), &(&operand).into(), &(&starts).into(), &config, None).unwrap();
    assert_eq!(out.shape(), &[3, 2, 2]);
    // (-5, 1) -> (0, 1); (3, 2) -> (2, 1); (1, 100) -> (1, 1).
    assert_eq!(data::<f64>(&out), vec![1.0, 2.0, 4.0, 5.0, 7.0, 8.0, 10.0, 11.0, 4.0, 5.0, 7.0, 8.0]);
}

#[test]
fn large_row_gather_is_split_and_identical() {
    let rows = 300;
    let operand =
        TypedView::row_major(&(0..rows * 16).map(|x| x as f32).collect::<Vec<_>>(), &[rows, 16]).unwrap().to_tensor();
    let mut rng = Rng::new(7);
    let idx: Vec<i32> = (0..20_000).map(|_| rng.range(-3, rows as i64 + 3) as i32).collect();
    let indices = Tensor::from_vec(idx.clone(), &[20_000, 1]).unwrap();
    let operand: Tensor = operand.into();
    let config = GatherConfig::rows(2, 16);
    let (o, i): (TensorRead<'_>, TensorRead<'_>) = ((&operand).into(), (&indices).into());
    let seq = gather(&KernelContext::sequential(), &o, &i, &config, None).unwrap();
    let par = gather(&threaded(), &o, &i, &config, None).unwrap();
    let expected: Vec<f32> = idx
        .iter()
        .flat_map(|&r| {
            let r = r.clamp(0, rows as i32 - 1) as usize;
            (0..16).map(move |c| (r * 16 + c) as f32)
        })
        .collect();
    assert_eq!(data::<f32>(&seq), expected);
    assert_eq!(data::<f32>(&par), expected);
}

#[test]
fn rank_zero_and_empty_outputs() {
    let ctx = KernelContext::sequential();
    // Rank-0 output: one element of a vector picked by a rank-1 index vector.
    let v = Tensor::from_vec(vec![5i32, 6, 7], &[3]).unwrap();
    let i = Tensor::from_vec(vec![2i64], &[1]).unwrap();
    let config = GatherConfig {
        collapsed_slice_dims: vec![0],
        start_index_map: vec![0],
        index_vector_dim: 0,
        slice_sizes: vec![1],
        ..GatherConfig::default()
    };
    let out = gather(&ctx, &(&v).into(), &(&i).into(), &config, None).unwrap();
    assert_eq!(out.shape(), &[] as &[usize]);
    assert_eq!(data::<i32>(&out), vec![7]);
    // No start vectors at all: an empty output of the right shape.
    let none = Tensor::from_vec(Vec::<i32>::new(), &[0, 1]).unwrap();
    let out =
        gather(&ctx, &(&v).into(), &(&none).into(), &GatherConfig { index_vector_dim: 1, ..config }, None).unwrap();
    assert_eq!(out.shape(), &[0]);
}

#[test]
fn row_gathers_with_two_batch_axes_match_a_hand_loop() {
    // Windows of 3 (element loop) and of 20 (slice copy), batch shape [7, 9] with starts
    // read through a transposed int32 view and an int64 tensor; split over four threads
    // so that pieces start inside the batch odometer.
    for row_len in [3usize, 20] {
        let rows = 50;
        let table: Tensor =
            Tensor::from_vec((0..rows * row_len).map(|x| x as f64).collect(), &[rows, row_len]).unwrap();
        let mut rng = Rng::new(row_len as u64);
        let starts: Vec<i64> = (0..63).map(|_| rng.range(-4, rows as i64 + 4)).collect();
        let as_i64 = Tensor::from_vec(starts.clone(), &[7, 9, 1]).unwrap();
        // The same starts stored as [9, 7, 1] int32 and read through a permuted view.
        let swapped: Vec<i32> = (0..63).map(|k| starts[(k % 7) * 9 + k / 7] as i32).collect();
        let as_i32 = Tensor::from_vec(swapped, &[9, 7, 1]).unwrap();
        let as_i32_view = as_i32.view().permute(&[1, 0, 2]).unwrap();
        let config = GatherConfig {
            offset_dims: vec![2],
            collapsed_slice_dims: vec![0],
            start_index_map: vec![0],
            index_vector_dim: 2,
            slice_sizes: vec![1, row_len],
            ..GatherConfig::default()
        };
        let expected: Vec<f64> = starts
            .iter()
            .flat_map(|&r| {
                let r = r.clamp(0, rows as i64 - 1) as usize;
                (0..row_len).map(move |c| (r * row_len + c) as f64)
            })
            .collect();
        for indices in [TensorRead::from(&as_i64), TensorRead::from(as_i32_view.clone())] {
            for ctx in [KernelContext::sequential(), threaded()] {
                let out = gather(&ctx, &(&table).into(), &indices, &config, None).unwrap();
                assert_eq!(out.shape(), &[7, 9, row_len]);
                assert_eq!(data::<f64>(&out), expected, "row_len {row_len}");
            }
        }
    }
}
