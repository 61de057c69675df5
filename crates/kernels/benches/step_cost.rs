//! The fixed cost of one cached-plan `dot_general` step on small tensor-network operands
//! (outputs of a few KiB to a few hundred KiB): time per call beside the same product
//! through faer directly, for fresh outputs (from the domain's pool) and `_into` a
//! preallocated destination.
//!
//! ```sh
//! cargo bench -p strata-kernels --bench step_cost
//! # where the instructions of a step go (validation, analysis lookup, output, compute):
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/step.cg \
//!     target/release/deps/step_cost-* --calls=20000 --case=1 && callgrind_annotate --inclusive=yes /tmp/step.cg
//! ```

use std::hint::black_box;
use std::time::Instant;

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use strata_kernels::KernelContext;
use strata_kernels::contraction::{ContractionAnalysisCache, PlanCache, dot_general, dot_general_into};
use strata_pool::BufferPool;
use strata_provider::FaerGemmProvider;
use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{Tensor, c64};

/// (name, lhs shape, rhs shape, config): steps whose operands are already GEMM-shaped
/// (m, k and n each collapse), so faer on the same buffers does the same work.
fn cases() -> Vec<(&'static str, Vec<usize>, Vec<usize>, DotGeneralConfig)> {
    let c = |l: Vec<usize>, r: Vec<usize>| DotGeneralConfig::new(vec![], vec![], l, r);
    vec![
        // E[x y] · A[x s z] (chi 16, 32, 64, d = 2): output [y, s, z].
        ("env_chi16", vec![16, 16], vec![16, 2, 16], c(vec![0], vec![0])),
        ("env_chi32", vec![32, 32], vec![32, 2, 32], c(vec![0], vec![0])),
        ("env_chi64", vec![64, 64], vec![64, 2, 64], c(vec![0], vec![0])),
        // T[y s z] · B[y s w]: contract (y, s), output [z, w].
        ("close_chi64", vec![64, 2, 64], vec![64, 2, 64], c(vec![0, 1], vec![0, 1])),
        // A 48 x 48 x 48 matmul.
        ("matmul_48", vec![48, 48], vec![48, 48], DotGeneralConfig::matmul()),
    ]
}

fn filled(shape: &[usize]) -> Tensor {
    let len: usize = shape.iter().product();
    Tensor::from_vec((0..len).map(|i| ((i * 7919) % 1000) as f64 / 1000.0 - 0.5).collect(), shape).unwrap()
}

/// The (m, k, n) of a case and whether lhs is given as [k, m] (contracting its axis 0).
fn gemm_dims(l: &[usize], r: &[usize], cfg: &DotGeneralConfig) -> (usize, usize, usize, bool) {
    let k: usize = cfg.lhs_contracting.iter().map(|&d| l[d]).product();
    let m = l.iter().product::<usize>() / k;
    let n = r.iter().product::<usize>() / k;
    (m, k, n, cfg.lhs_contracting.first() == Some(&0))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let calls: usize = args.iter().find_map(|a| a.strip_prefix("--calls=")).map_or(0, |v| v.parse().unwrap());
    let only: Option<usize> = args.iter().find_map(|a| a.strip_prefix("--case=")).map(|v| v.parse().unwrap());
    let pool = BufferPool::new(1 << 28);
    let ctx = KernelContext::sequential().with_pool(&pool);
    let domain = ContractionAnalysisCache::default();
    let cache = PlanCache::Domain(&domain);
    let (one, zero) = (c64::new(1.0, 0.0), c64::new(0.0, 0.0));
    for (i, (name, ls, rs, cfg)) in cases().into_iter().enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        let (a, b) = (filled(&ls), filled(&rs));
        let out_shape = cfg.output_shape(&ls, &rs).unwrap();
        let mut out = Tensor::zeros(strata_tensor::DType::F64, &out_shape).unwrap();
        let fresh = || {
            let t = dot_general(
                &ctx,
                black_box(&a).into(),
                (&b).into(),
                &cfg,
                false,
                false,
                &FaerGemmProvider,
                Some(&cache),
            )
            .unwrap();
            pool.recycle_tensor(t);
        };
        let mut into = || {
            dot_general_into(
                &ctx,
                black_box(&a).into(),
                (&b).into(),
                &cfg,
                false,
                false,
                one,
                zero,
                (&mut out).into(),
                &FaerGemmProvider,
                Some(&cache),
            )
            .unwrap()
        };
        if calls > 0 {
            // Under callgrind: only the fresh-output step, `calls` times.
            for _ in 0..calls {
                fresh();
            }
            continue;
        }
        let (m, k, n, lhs_t) = gemm_dims(&ls, &rs, &cfg);
        let mut c = vec![0.0f64; m * n];
        let (ad, bd) = (a.as_typed::<f64>().unwrap().data(), b.as_typed::<f64>().unwrap().data());
        let mut faer_step = || {
            // SAFETY: row-major buffers of the stated sizes.
            let (am, bm) = unsafe {
                let am = if lhs_t {
                    MatRef::<f64>::from_raw_parts(ad.as_ptr(), m, k, 1, m as isize)
                } else {
                    MatRef::<f64>::from_raw_parts(ad.as_ptr(), m, k, k as isize, 1)
                };
                (am, MatRef::<f64>::from_raw_parts(bd.as_ptr(), k, n, n as isize, 1))
            };
            // SAFETY: as above.
            let cm = unsafe { MatMut::<f64>::from_raw_parts_mut(c.as_mut_ptr(), m, n, n as isize, 1) };
            matmul(cm, Accum::Replace, am, bm, 1.0, Par::Seq);
        };
        let reps = 2000;
        let mut t = [Vec::new(), Vec::new(), Vec::new()];
        for _ in 0..15 {
            let s = Instant::now();
            (0..reps).for_each(|_| fresh());
            t[0].push(s.elapsed().as_secs_f64() / reps as f64);
            let s = Instant::now();
            (0..reps).for_each(|_| into());
            t[1].push(s.elapsed().as_secs_f64() / reps as f64);
            let s = Instant::now();
            (0..reps).for_each(|_| faer_step());
            t[2].push(s.elapsed().as_secs_f64() / reps as f64);
        }
        let med = |v: &mut Vec<f64>| {
            v.sort_by(|x, y| x.partial_cmp(y).unwrap());
            v[v.len() / 2] * 1e6
        };
        let (f, i, g) = (med(&mut t[0]), med(&mut t[1]), med(&mut t[2]));
        println!(
            "{name:<12} out {:>7} B  fresh {f:8.2} us  into {i:8.2} us  faer {g:8.2} us  (m k n = {m} {k} {n})",
            m * n * 8
        );
    }
}
