//! grouped_gemm: mixed sizes, batched jobs, strided operands and conjugation, against an
//! independent reference loop and against calling dot_general job by job, on one thread
//! and on real worker threads; and its bad inputs.

mod contraction_support;

use contraction_support::{Kind, Rng, Strided, ThreadExecutor, get_c64, indices};
use strata_kernels::contraction::{dot_general, grouped_gemm};
use strata_kernels::{KernelContext, Parallelism};
use strata_tensor::config::{DotGeneralConfig, GroupedGemmConfig};
use strata_tensor::{ErrorKind, Tensor, TensorRead, c64};

/// Records fork-join violations of the executors used here (none are expected).
static AUDIT: strata_kernels::ScheduleAudit = strata_kernels::ScheduleAudit::new();

static FAER: strata_provider::FaerGemmProvider = strata_provider::FaerGemmProvider;

struct Jobs {
    kind: Kind,
    lhs: Vec<Strided>,
    rhs: Vec<Strided>,
    config: GroupedGemmConfig,
}

fn draw(rng: &mut Rng) -> Jobs {
    let kind = Kind::ALL[rng.range(0, 3)];
    let count = rng.range(0, 12);
    let (mut lhs, mut rhs) = (Vec::new(), Vec::new());
    for j in 0..count {
        // Job 0 is sometimes large, the rest tiny: the shape the scheduler cares about.
        let big = j == 0 && rng.chance(0.5);
        let dim = |rng: &mut Rng| if big { rng.range(40, 72) } else { rng.range(0, 5) };
        let (m, k, n) = (dim(rng), dim(rng), dim(rng));
        let batched = rng.chance(0.3);
        let b = rng.range(1, 3);
        let (ls, rs) = if batched { (vec![b, m, k], vec![b, k, n]) } else { (vec![m, k], vec![k, n]) };
        let plain = rng.chance(0.3);
        lhs.push(Strided::random(rng, kind, &ls, plain));
        rhs.push(Strided::random(rng, kind, &rs, plain));
    }
    let config = GroupedGemmConfig { conj_lhs: rng.chance(0.5), conj_rhs: rng.chance(0.5) };
    Jobs { kind, lhs, rhs, config }
}

fn reference(
    l: &strata_tensor::TensorView<'_>,
    r: &strata_tensor::TensorView<'_>,
    cfg: &GroupedGemmConfig,
) -> (Vec<usize>, Vec<c64>) {
    let (ls, rs) = (l.shape(), r.shape());
    let batched = ls.len() == 3;
    let (b, m, k, n) = if batched { (ls[0], ls[1], ls[2], rs[2]) } else { (1, ls[0], ls[1], rs[1]) };
    let shape = if batched { vec![b, m, n] } else { vec![m, n] };
    let mut out = Vec::new();
    for bb in 0..b {
        for i in 0..m {
            for j in 0..n {
                let mut acc = c64::new(0.0, 0.0);
                for p in 0..k {
                    let (li, ri) = if batched { (vec![bb, i, p], vec![bb, p, j]) } else { (vec![i, p], vec![p, j]) };
                    let (mut x, mut y) = (get_c64(l, &li), get_c64(r, &ri));
                    if cfg.conj_lhs {
                        x = x.conj();
                    }
                    if cfg.conj_rhs {
                        y = y.conj();
                    }
                    acc += x * y;
                }
                out.push(acc);
            }
        }
    }
    (shape, out)
}

fn check_all(ctx: &KernelContext<'_>, seeds: std::ops::Range<u64>) {
    for seed in seeds {
        let mut rng = Rng::new(seed);
        let jobs = draw(&mut rng);
        let lv: Vec<_> = jobs.lhs.iter().map(|s| s.view()).collect();
        let rv: Vec<_> = jobs.rhs.iter().map(|s| s.view()).collect();
        let lr: Vec<TensorRead<'_>> = lv.iter().cloned().map(Into::into).collect();
        let rr: Vec<TensorRead<'_>> = rv.iter().cloned().map(Into::into).collect();
        let outs = grouped_gemm(ctx, &lr, &rr, &jobs.config, &FAER).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(outs.len(), lv.len());
        for (j, out) in outs.iter().enumerate() {
            let (shape, want) = reference(&lv[j], &rv[j], &jobs.config);
            assert_eq!(out.shape(), &shape[..], "seed {seed} job {j}");
            let k = lv[j].shape()[lv[j].rank() - 1];
            // One by one through dot_general gives the same numbers.
            let cfg = if shape.len() == 3 {
                DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1])
            } else {
                DotGeneralConfig::matmul()
            };
            let single = dot_general(
                ctx,
                lr[j].clone(),
                rr[j].clone(),
                &cfg,
                jobs.config.conj_lhs,
                jobs.config.conj_rhs,
                &FAER,
                None,
            )
            .unwrap();
            let (ov, sv) = (out.view(), single.view());
            for (i, idx) in indices(&shape).iter().enumerate() {
                let got = get_c64(&ov, idx);
                let tol = jobs.kind.eps() * (k as f64 + 4.0) * 8.0 * (k as f64 + 1.0);
                assert!((got - want[i]).norm() <= tol, "seed {seed} job {j} {idx:?}: {got} vs {}", want[i]);
                assert!((got - get_c64(&sv, idx)).norm() <= tol, "seed {seed} job {j}: grouped and single differ");
            }
        }
    }
}

#[test]
fn grouped_matches_reference_and_single_calls_inline() {
    check_all(&KernelContext::sequential(), 0..80);
}

#[test]
fn grouped_matches_reference_on_worker_threads() {
    let exec = ThreadExecutor::new(4);
    let ctx = KernelContext::new(Parallelism::new(&exec, 4, &AUDIT));
    check_all(&ctx, 100..140);
    assert!(exec.forks.load(std::sync::atomic::Ordering::Relaxed) > 0, "the packed jobs ran on the workers");
}

#[test]
fn bad_grouped_inputs_are_typed_errors() {
    let ctx = KernelContext::sequential();
    let a = Tensor::from_vec(vec![1.0f64; 6], &[2, 3]).unwrap();
    let b = Tensor::from_vec(vec![1.0f64; 12], &[3, 4]).unwrap();
    let bf = Tensor::from_vec(vec![1.0f32; 12], &[3, 4]).unwrap();
    let ai = Tensor::from_vec(vec![1i32; 6], &[2, 3]).unwrap();
    let bi = Tensor::from_vec(vec![1i32; 12], &[3, 4]).unwrap();
    let cfg = GroupedGemmConfig::default();
    let e = grouped_gemm(&ctx, &[(&a).into(), (&a).into()], &[(&b).into()], &cfg, &FAER).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::InvalidArgument, "grouped_gemm"));
    let e = grouped_gemm(&ctx, &[(&a).into()], &[(&a).into()], &cfg, &FAER).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    let e = grouped_gemm(&ctx, &[(&a).into(), (&a).into()], &[(&b).into(), (&bf).into()], &cfg, &FAER).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
    assert!(e.message().starts_with("job 1: rhs has dtype float32"), "{e}");
    let e = grouped_gemm(&ctx, &[(&ai).into()], &[(&bi).into()], &cfg, &FAER).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(grouped_gemm(&ctx, &[], &[], &cfg, &FAER).unwrap().is_empty());
}
