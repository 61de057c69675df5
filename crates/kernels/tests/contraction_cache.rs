//! The contraction-analysis caches: hits and misses by shapes, strides and config (not
//! offsets), entry and byte limits, eviction, clear, and caller-held numbered slots.

use strata_kernels::KernelContext;
use strata_kernels::contraction::{ContractionAnalysisCache, ContractionCache, PlanCache, dot_general};
use strata_kernels::lru::CacheLimits;
use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{CacheStats, Tensor};

static FAER: strata_provider::FaerGemmProvider = strata_provider::FaerGemmProvider;

fn mat(rows: usize, cols: usize) -> Tensor {
    Tensor::from_vec((0..rows * cols).map(|i| (i % 7) as f64 - 3.0).collect(), &[rows, cols]).unwrap()
}

fn run(cache: &PlanCache<'_>, a: &Tensor, b: &Tensor) -> Tensor {
    let ctx = KernelContext::sequential();
    dot_general(&ctx, a.into(), b.into(), &DotGeneralConfig::matmul(), false, false, &FAER, Some(cache)).unwrap()
}

fn counts(s: CacheStats) -> (usize, u64, u64, u64, u64) {
    (s.entries, s.hits, s.misses, s.evictions, s.clears)
}

// Every contraction below has more than 512 multiply-adds: smaller ones are computed
// directly without an analysis, so they never reach a cache (tested last).

#[test]
fn domain_cache_keys_on_geometry_not_offsets() {
    let domain = ContractionAnalysisCache::new(CacheLimits::new(8, 1 << 20));
    let cache = PlanCache::Domain(&domain);
    let (a, b) = (mat(8, 12), mat(12, 10));
    let first = run(&cache, &a, &b);
    let again = run(&cache, &a, &b);
    assert_eq!(format!("{first:?}"), format!("{again:?}"));
    assert_eq!(counts(domain.stats()), (1, 1, 1, 0, 0));
    // Another window of the same strides (offset differs): same analysis.
    let big = mat(9, 12);
    let window = big.view().slice_axis(0, 1, 9, 1).unwrap();
    let ctx = KernelContext::sequential();
    dot_general(&ctx, window.into(), (&b).into(), &DotGeneralConfig::matmul(), false, false, &FAER, Some(&cache))
        .unwrap();
    assert_eq!(counts(domain.stats()), (1, 2, 1, 0, 0));
    // Transposed strides or another config: new analyses.
    let at = mat(12, 8);
    let at_t = at.view().permute(&[1, 0]).unwrap();
    dot_general(&ctx, at_t.into(), (&b).into(), &DotGeneralConfig::matmul(), false, false, &FAER, Some(&cache))
        .unwrap();
    let outer = DotGeneralConfig::default();
    dot_general(&ctx, (&a).into(), (&b).into(), &outer, false, false, &FAER, Some(&cache)).unwrap();
    assert_eq!(counts(domain.stats()), (3, 2, 3, 0, 0));
    assert!(domain.stats().bytes > 0);
    domain.clear();
    assert_eq!(counts(domain.stats()), (0, 2, 3, 0, 1));
    assert_eq!(domain.stats().bytes, 0);
}

#[test]
fn domain_cache_respects_entry_and_byte_limits() {
    let domain = ContractionAnalysisCache::new(CacheLimits::new(2, 1 << 20));
    let cache = PlanCache::Domain(&domain);
    for n in 1..=5 {
        run(&cache, &mat(24, 16), &mat(16, 8 * n));
    }
    let s = domain.stats();
    assert_eq!((s.entries, s.misses, s.evictions), (2, 5, 3));
    // The two most recent shapes are still there.
    run(&cache, &mat(24, 16), &mat(16, 40));
    run(&cache, &mat(24, 16), &mat(16, 32));
    assert_eq!(domain.stats().hits, 2);
    // A byte limit below one entry's size keeps nothing; raising it keeps entries again.
    let per_entry = domain.stats().bytes / 2;
    domain.set_limits(CacheLimits::new(100, per_entry - 1));
    assert_eq!(domain.stats().entries, 0);
    domain.set_limits(CacheLimits::new(100, per_entry * 3));
    for n in 1..=5 {
        run(&cache, &mat(24, 16), &mat(16, 8 * n));
    }
    let s = domain.stats();
    assert!(s.entries <= 3 && s.bytes <= per_entry * 3 && s.entries >= 2, "{s:?}");
}

#[test]
fn caller_slots_remember_one_contraction_each() {
    let slots = ContractionCache::new(2);
    let (a, b, c) = (mat(8, 12), mat(12, 10), mat(12, 6));
    let s0 = PlanCache::Slot { cache: &slots, slot: 0 };
    let s1 = PlanCache::Slot { cache: &slots, slot: 1 };
    for _ in 0..3 {
        run(&s0, &a, &b);
        run(&s1, &a, &c);
    }
    assert_eq!(counts(slots.stats()), (2, 4, 2, 0, 0));
    // Another contraction in slot 0 replaces what it held.
    run(&s0, &a, &c);
    assert_eq!(counts(slots.stats()), (2, 4, 3, 1, 0));
    run(&s0, &a, &c);
    assert_eq!(slots.stats().hits, 5);
    slots.clear();
    assert_eq!(counts(slots.stats()), (0, 5, 3, 1, 1));
    assert_eq!(slots.stats().bytes, 0);
}

#[test]
fn tiny_contractions_bypass_the_caches_and_stay_exact() {
    let domain = ContractionAnalysisCache::new(CacheLimits::new(8, 1 << 20));
    let cache = PlanCache::Domain(&domain);
    let (a, b) = (mat(3, 4), mat(4, 5));
    let c = run(&cache, &a, &b);
    assert_eq!(counts(domain.stats()), (0, 0, 0, 0, 0));
    let (av, bv) = (a.as_typed::<f64>().unwrap().data(), b.as_typed::<f64>().unwrap().data());
    let got = c.as_typed::<f64>().unwrap();
    assert_eq!(got.shape(), &[3, 5]);
    for i in 0..3 {
        for j in 0..5 {
            let expected: f64 = (0..4).map(|p| av[i * 4 + p] * bv[p * 5 + j]).sum();
            assert_eq!(got.data()[i * 5 + j], expected);
        }
    }
}
