//! scatter against a reference written from the StableHLO definition plus XLA's rule of
//! skipping out-of-bounds windows, on random configs, dtypes, strides, index values and
//! combiners; hand-computed duplicate and skip cases; thread-count independence.

use proptest::prelude::*;
use strata_tensor::config::{ScatterCombiner, ScatterConfig};
use strata_tensor::{DType, Tensor, TypedView, dispatch_dtype};

use super::gather::value_at;
use super::support::{Rng, Strided, TestScalar, data, indices_of, threaded};
use crate::KernelContext;
use crate::indexing::{IndexedPlanCache, scatter};

const COMBINERS: [ScatterCombiner; 5] = [
    ScatterCombiner::Replace,
    ScatterCombiner::Add,
    ScatterCombiner::Multiply,
    ScatterCombiner::Max,
    ScatterCombiner::Min,
];

/// A random valid scatter: operand, indices and updates shapes, config.
fn random_case(rng: &mut Rng) -> (Vec<usize>, Vec<usize>, Vec<usize>, ScatterConfig) {
    let rank = rng.below(4);
    let operand: Vec<usize> = (0..rank).map(|_| rng.range(0, 4) as usize).collect();
    let nonzero: Vec<usize> = (0..rank).filter(|&d| operand[d] > 0).collect();
    let batching: Vec<usize> =
        if rng.below(3) == 0 { nonzero.iter().copied().filter(|_| rng.coin()).collect() } else { vec![] };
    let inserted: Vec<usize> = nonzero.iter().copied().filter(|d| !batching.contains(d) && rng.below(3) == 0).collect();
    let window_axes: Vec<usize> = (0..rank).filter(|d| !inserted.contains(d) && !batching.contains(d)).collect();
    let window_extents: Vec<usize> = window_axes.iter().map(|&a| rng.range(0, operand[a] as i64) as usize).collect();
    let mut map: Vec<usize> = (0..rank).filter(|d| !batching.contains(d) && rng.coin()).collect();
    rng.shuffle(&mut map);
    let k = map.len();
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
    let scatter_indices_batching_dims: Vec<usize> = batching
        .iter()
        .map(|&d| axis_of(batch.iter().position(|x| x.1 == Some(d)).expect("batching axis placed")))
        .collect();
    let updates_rank = nb + window_axes.len();
    let mut positions: Vec<usize> = (0..updates_rank).collect();
    rng.shuffle(&mut positions);
    let mut update_window_dims = positions[..window_axes.len()].to_vec();
    update_window_dims.sort_unstable();
    let (mut scatter_extents, mut windows) = (batch.iter().map(|b| b.0), window_extents.iter());
    let updates_shape: Vec<usize> =
        (0..updates_rank)
            .map(|d| {
                if update_window_dims.contains(&d) { *windows.next().unwrap() } else { scatter_extents.next().unwrap() }
            })
            .collect();
    let config = ScatterConfig {
        update_window_dims,
        inserted_window_dims: inserted,
        input_batching_dims: batching,
        scatter_indices_batching_dims,
        scatter_dims_to_operand_dims: map,
        index_vector_dim: ivd,
        combiner: COMBINERS[rng.below(5)],
    };
    (operand, indices_shape, updates_shape, config)
}

/// The reference combiner on exact (re, im) pairs.
fn combine_pairs(c: ScatterCombiner, a: (f64, f64), u: (f64, f64)) -> (f64, f64) {
    match c {
        ScatterCombiner::Replace => u,
        ScatterCombiner::Add => (a.0 + u.0, a.1 + u.1),
        ScatterCombiner::Multiply => (a.0 * u.0 - a.1 * u.1, a.0 * u.1 + a.1 * u.0),
        ScatterCombiner::Max => {
            if u > a {
                u
            } else {
                a
            }
        }
        ScatterCombiner::Min => {
            if u < a {
                u
            } else {
                a
            }
        }
    }
}

/// StableHLO scatter, window by window in row-major order of the scatter positions,
/// skipping any window with an element outside the operand (XLA's rule).
fn reference<T: TestScalar>(
    operand: &TypedView<'_, T>,
    indices: &TypedView<'_, i64>,
    updates: &TypedView<'_, T>,
    config: &ScatterConfig,
) -> Vec<T> {
    let shape = operand.shape().to_vec();
    let rank = shape.len();
    let mut result: Vec<Vec<usize>> = indices_of(&shape);
    let mut values: Vec<(f64, f64)> = result.iter().map(|i| operand.get(i).unwrap().to_pair()).collect();
    let flat = |i: &[usize]| i.iter().zip(&shape).fold(0, |acc, (&x, &d)| acc * d + x);
    let ivd = config.index_vector_dim;
    let scatter_dims: Vec<usize> = (0..updates.rank()).filter(|d| !config.update_window_dims.contains(d)).collect();
    let window_axes = config.window_axes(rank);
    let scatter_shape: Vec<usize> = scatter_dims.iter().map(|&d| updates.shape()[d]).collect();
    let window_shape: Vec<usize> = config.update_window_dims.iter().map(|&d| updates.shape()[d]).collect();
    for s in indices_of(&scatter_shape) {
        let mut start = vec![0i64; rank];
        for (k, &d) in config.scatter_dims_to_operand_dims.iter().enumerate() {
            let mut at = s.clone();
            if ivd < indices.rank() {
                at.insert(ivd, k);
            }
            start[d] += *indices.get(&at).unwrap();
        }
        for (&od, &id) in config.input_batching_dims.iter().zip(&config.scatter_indices_batching_dims) {
            start[od] += s[if id > ivd { id - 1 } else { id }] as i64;
        }
        let targets: Vec<(Vec<i64>, Vec<usize>)> = indices_of(&window_shape)
            .into_iter()
            .map(|w| {
                let mut target = start.clone();
                for (&a, &x) in window_axes.iter().zip(&w) {
                    target[a] += x as i64;
                }
                let mut update_index = vec![0; updates.rank()];
                for (&d, &x) in scatter_dims.iter().zip(&s) {
                    update_index[d] = x;
                }
                for (&d, &x) in config.update_window_dims.iter().zip(&w) {
                    update_index[d] = x;
                }
                (target, update_index)
            })
            .collect();
        let inside = targets.iter().all(|(t, _)| t.iter().zip(&shape).all(|(&x, &d)| x >= 0 && x < d as i64));
        if !inside {
            continue;
        }
        for (target, update_index) in targets {
            let at: Vec<usize> = target.iter().map(|&x| x as usize).collect();
            let f = flat(&at);
            values[f] = combine_pairs(config.combiner, values[f], updates.get(&update_index).unwrap().to_pair());
        }
    }
    result.clear();
    values.into_iter().map(|(re, im)| T::from_pair(re, im)).collect()
}

/// Small values keep products exact (see `combine_pairs`).
fn small(seed: u64, index: &[usize]) -> i64 {
    value_at(seed, index).rem_euclid(5) - 2
}

fn check_case<T: TestScalar>(seed: u64, ctx: &KernelContext<'_>, cache: Option<&IndexedPlanCache>) {
    let mut rng = Rng::new(seed);
    let (operand_shape, indices_shape, updates_shape, config) = random_case(&mut rng);
    let operand = Strided::<T>::new(&mut rng, &operand_shape, |i| T::from_i64(small(seed, i)));
    let updates = Strided::<T>::new(&mut rng, &updates_shape, |i| T::from_i64(small(seed + 1, i)));
    let window_axes = config.window_axes(operand_shape.len());
    let mut window_extent = vec![1usize; operand_shape.len()];
    for (&a, &d) in window_axes.iter().zip(&config.update_window_dims) {
        window_extent[a] = updates_shape[d];
    }
    // Starts mostly valid, some out of range on either side (those windows are skipped).
    let mut idx_rng = Rng::new(seed ^ 0x5EED);
    let indices64 = Strided::<i64>::new(&mut rng, &indices_shape, |at| {
        let k = at.get(config.index_vector_dim).copied().unwrap_or(0);
        let hi = config
            .scatter_dims_to_operand_dims
            .get(k)
            .map_or(1, |&d| operand_shape[d] as i64 - window_extent[d] as i64 + 1);
        idx_rng.range(-1, hi.max(0))
    });
    if !config.combiner.supports(T::DTYPE) {
        // lax rejects add/multiply on bool: a typed error, not or/and.
        let e = scatter(ctx, &operand.read(), &indices64.read(), &updates.read(), &config, cache).unwrap_err();
        assert_eq!(e.kind(), strata_tensor::ErrorKind::Unsupported, "{e}");
        return;
    }
    let expected = reference(&operand.view(), &indices64.view(), &updates.view(), &config);
    let index_view = indices64.view();
    let indices32 = Strided::<i32>::new(&mut rng, &indices_shape, |at| *index_view.get(at).unwrap() as i32);
    for indices in [indices64.read(), indices32.read()] {
        let out = scatter(ctx, &operand.read(), &indices, &updates.read(), &config, cache).expect("valid scatter");
        assert_eq!(out.shape(), &operand_shape[..]);
        assert_eq!(
            data::<T>(&out),
            expected,
            "seed {seed}: {config:?} operand {operand_shape:?} indices {indices_shape:?} updates {updates_shape:?}"
        );
    }
}

fn dtype_of(seed: u64) -> DType {
    DType::ALL[(seed % 7) as usize]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Random configs (batching dims, implicit index vectors, narrow and empty windows),
    /// all combiners, every dtype, random strides, int32 and int64 indices.
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
        // Refused inputs (add/multiply on bool) build no plan at all.
        let stats = cache.stats();
        prop_assert!(stats.hits == 2 || (stats.entries == 0 && stats.hits == 0), "{stats:?}");
    }
}

fn rows_scatter(combiner: ScatterCombiner, operand: &[f64], rows: &[i64], updates: &[f64]) -> Vec<f64> {
    let n = rows.len();
    let width = updates.len() / n.max(1);
    let operand = Tensor::from_vec(operand.to_vec(), &[operand.len() / width, width]).unwrap();
    let rows = Tensor::from_vec(rows.to_vec(), &[n, 1]).unwrap();
    let updates = Tensor::from_vec(updates.to_vec(), &[n, width]).unwrap();
    let config = ScatterConfig::rows(2, combiner);
    let out =
        scatter(&KernelContext::sequential(), &(&operand).into(), &(&rows).into(), &(&updates).into(), &config, None)
            .unwrap();
    data::<f64>(&out)
}

#[test]
fn duplicate_indices_with_every_combiner() {
    let operand = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let rows = [1, 1, 0];
    let updates = [10.0, -1.0, 20.0, -3.0, 0.5, 7.0];
    use ScatterCombiner::*;
    // Row 1 receives (10, -1) then (20, -3); row 0 receives (0.5, 7).
    assert_eq!(rows_scatter(Add, &operand, &rows, &updates), [1.5, 9.0, 33.0, 0.0, 5.0, 6.0]);
    assert_eq!(rows_scatter(Multiply, &operand, &rows, &updates), [0.5, 14.0, 600.0, 12.0, 5.0, 6.0]);
    assert_eq!(rows_scatter(Max, &operand, &rows, &updates), [1.0, 7.0, 20.0, 4.0, 5.0, 6.0]);
    assert_eq!(rows_scatter(Min, &operand, &rows, &updates), [0.5, 2.0, 3.0, -3.0, 5.0, 6.0]);
    // Replace: the later window in row-major order of scatter positions wins.
    assert_eq!(rows_scatter(Replace, &operand, &rows, &updates), [0.5, 7.0, 20.0, -3.0, 5.0, 6.0]);
}

#[test]
fn out_of_bounds_windows_are_skipped_whole() {
    // operand [5]; windows of 2 at starts -1, 4, 3, 5: only start 3 fits.
    let operand = Tensor::from_vec(vec![0i32; 5], &[5]).unwrap();
    let starts = Tensor::from_vec(vec![-1i32, 4, 3, 5], &[4, 1]).unwrap();
    let updates = Tensor::from_vec(vec![1i32, 2, 3, 4, 5, 6, 7, 8], &[4, 2]).unwrap();
    let config = ScatterConfig {
        update_window_dims: vec![1],
        scatter_dims_to_operand_dims: vec![0],
        index_vector_dim: 1,
        combiner: ScatterCombiner::Add,
        ..ScatterConfig::default()
    };
    let out =
        scatter(&KernelContext::sequential(), &(&operand).into(), &(&starts).into(), &(&updates).into(), &config, None)
            .unwrap();
    assert_eq!(data::<i32>(&out), vec![0, 0, 0, 5, 6]);
}

#[test]
fn large_scatter_is_identical_on_four_threads() {
    // Many 128-element windows over 64 rows, with duplicates, for every combiner; the split over rows
    // must give bit-identical results to the sequential run (floats with fractions).
    let (rows, width, n) = (64usize, 128usize, 2_000usize);
    let mut rng = Rng::new(99);
    let operand: Vec<f32> = (0..rows * width).map(|_| rng.range(-50, 50) as f32 / 7.0).collect();
    let idx: Vec<i64> = (0..n).map(|_| rng.range(-1, rows as i64)).collect();
    let upd: Vec<f32> = (0..n * width).map(|_| rng.range(-50, 50) as f32 / 3.0).collect();
    let operand = Tensor::from_vec(operand, &[rows, width]).unwrap();
    let indices = Tensor::from_vec(idx, &[n, 1]).unwrap();
    let updates = Tensor::from_vec(upd, &[n, width]).unwrap();
    for combiner in COMBINERS {
        let config = ScatterConfig::rows(2, combiner);
        let run = |ctx: &KernelContext<'_>| {
            scatter(ctx, &(&operand).into(), &(&indices).into(), &(&updates).into(), &config, None).unwrap()
        };
        let seq = data::<f32>(&run(&KernelContext::sequential()));
        let par = data::<f32>(&run(&threaded()));
        assert!(seq.iter().zip(&par).all(|(a, b)| a.to_bits() == b.to_bits()), "{combiner}");
        if combiner == ScatterCombiner::Replace {
            // Each row holds the last in-range update aimed at it (or its original value).
            let idx = indices.as_typed::<i64>().unwrap().data();
            let u = updates.as_typed::<f32>().unwrap().data();
            let o = operand.as_typed::<f32>().unwrap().data();
            for r in 0..rows {
                let last = idx.iter().rposition(|&x| x == r as i64);
                let expect = match last {
                    Some(j) => &u[j * width..(j + 1) * width],
                    None => &o[r * width..(r + 1) * width],
                };
                assert_eq!(&seq[r * width..(r + 1) * width], expect, "row {r}");
            }
        }
    }
}

#[test]
fn windows_spanning_split_rows_are_applied_in_parts() {
    // Windows of 5 rows scattered at starts that straddle the worker boundaries.
    let (rows, width, n) = (40usize, 1024usize, 60usize);
    let operand = Tensor::from_vec(vec![0i64; rows * width], &[rows, width]).unwrap();
    let mut rng = Rng::new(3);
    let idx: Vec<i32> = (0..n).map(|_| rng.range(-1, 36) as i32).collect();
    let updates = Tensor::from_vec((0..n * 5 * width).map(|x| (x % 13) as i64).collect(), &[n, 5, width]).unwrap();
    let indices = Tensor::from_vec(idx.clone(), &[n, 1]).unwrap();
    let config = ScatterConfig {
        update_window_dims: vec![1, 2],
        scatter_dims_to_operand_dims: vec![0],
        index_vector_dim: 1,
        combiner: ScatterCombiner::Add,
        ..ScatterConfig::default()
    };
    let par = scatter(&threaded(), &(&operand).into(), &(&indices).into(), &(&updates).into(), &config, None).unwrap();
    let mut expected = vec![0i64; rows * width];
    let u = updates.as_typed::<i64>().unwrap().data();
    for (j, &s) in idx.iter().enumerate() {
        if s < 0 || s as usize + 5 > rows {
            continue;
        }
        for r in 0..5 {
            for c in 0..width {
                expected[(s as usize + r) * width + c] += u[(j * 5 + r) * width + c];
            }
        }
    }
    assert_eq!(data::<i64>(&par), expected);
}
