//! The blocked route (an operand whose short free and contracted axes interleave,
//! gathered block by block and multiplied as each block is gathered) against a naive
//! reference summed in c64: tensor-network shaped steps (CTMRG, MPO and DMRG contractions
//! with extents 2-8), operands stored in random axis orders with steps, margins and
//! reversed (negative) axes, a zero-stride (broadcast) operand, all four dtypes,
//! conjugation flags, alpha and beta into strided destinations; and the result at one
//! thread bit for bit the result at several.

mod contraction_support;

use contraction_support::{Kind, Rng, Strided, ThreadExecutor, UnitStrideProvider, get_c64, indices};
use strata_kernels::contraction::{dot_general, dot_general_into};
use strata_kernels::{KernelContext, Parallelism, ScheduleAudit};
use strata_provider::{FaerGemmProvider, GemmProvider};
use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{Tensor, TensorView, c64};

static AUDIT: ScheduleAudit = ScheduleAudit::new();
static FAER: FaerGemmProvider = FaerGemmProvider;

/// A step: operand shapes and the contracted axis pairs (no batch axes: the route is for
/// single products).
struct Step {
    lhs: &'static [usize],
    rhs: &'static [usize],
    lhs_k: &'static [usize],
    rhs_k: &'static [usize],
}

/// Steps whose large operand interleaves free and contracted axes of extent 2-8, with
/// enough free rows for several blocks at every dtype.
const STEPS: &[Step] = &[
    // CTMRG X3 (chi 16, D 4): lhs [c, u, u', e, l, l'] contracts u, l with A[u, l, d, r, s].
    Step { lhs: &[16, 4, 4, 16, 4, 4], rhs: &[4, 4, 4, 4, 2], lhs_k: &[1, 4], rhs_k: &[0, 1] },
    // CTMRG X4: lhs [c, u', e, l', d, r, s] contracts u', l', s with A[u', l', d', r', s].
    Step { lhs: &[8, 4, 8, 4, 4, 4, 2], rhs: &[4, 4, 4, 4, 2], lhs_k: &[1, 3, 6], rhs_k: &[0, 1, 4] },
    // The same with the large tensor on the right: the blocks are columns (n) of the GEMM.
    Step { lhs: &[4, 4, 4, 4, 2], rhs: &[8, 4, 8, 4, 4, 4, 2], lhs_k: &[0, 1, 4], rhs_k: &[1, 3, 6] },
    // MPO environment T2: T1[w, a', s, b] contracts w, s with W[w, x, s, t].
    Step { lhs: &[6, 48, 4, 48], rhs: &[6, 6, 4, 4], lhs_k: &[0, 2], rhs_k: &[0, 2] },
    // DMRG T3: T2[a, t', b', x, s] contracts t', x with W2[x, y, t, t'].
    Step { lhs: &[32, 2, 40, 5, 2], rhs: &[5, 5, 2, 2], lhs_k: &[1, 3], rhs_k: &[3, 0] },
];

/// Naive reference: every output element summed over every contraction term, in c64.
fn reference(
    config: &DotGeneralConfig,
    lhs: &TensorView<'_>,
    rhs: &TensorView<'_>,
    conj: [bool; 2],
) -> (Vec<usize>, Vec<c64>, Vec<f64>) {
    let (ls, rs) = (lhs.shape().to_vec(), rhs.shape().to_vec());
    let (lfree, rfree) = (config.lhs_free(ls.len()), config.rhs_free(rs.len()));
    let out_shape = config.output_shape(&ls, &rs).unwrap();
    let kshape: Vec<usize> = config.lhs_contracting.iter().map(|&d| ls[d]).collect();
    let (mut vals, mut mags) = (Vec::new(), Vec::new());
    for o in indices(&out_shape) {
        let (mut li, mut ri) = (vec![0; ls.len()], vec![0; rs.len()]);
        for (j, &l) in lfree.iter().enumerate() {
            li[l] = o[j];
        }
        for (j, &r) in rfree.iter().enumerate() {
            ri[r] = o[lfree.len() + j];
        }
        let (mut acc, mut mag) = (c64::new(0.0, 0.0), 0.0);
        for kk in indices(&kshape) {
            for (j, (&l, &r)) in config.lhs_contracting.iter().zip(&config.rhs_contracting).enumerate() {
                li[l] = kk[j];
                ri[r] = kk[j];
            }
            let (mut a, mut b) = (get_c64(lhs, &li), get_c64(rhs, &ri));
            if conj[0] {
                a = a.conj();
            }
            if conj[1] {
                b = b.conj();
            }
            acc += a * b;
            mag += a.norm() * b.norm();
        }
        vals.push(acc);
        mags.push(mag);
    }
    (out_shape, vals, mags)
}

fn close(kind: Kind, what: &str, got: c64, want: c64, scale: f64, terms: usize) {
    let tol = kind.eps() * (terms as f64 + 4.0) * 4.0 * scale.max(1e-30);
    assert!((got - want).norm() <= tol, "{what}: got {got}, want {want} (tol {tol})");
}

#[test]
fn blocked_steps_match_the_reference_in_every_layout_and_dtype() {
    let ctx = KernelContext::sequential();
    let unit = UnitStrideProvider::default();
    let mut rng = Rng::new(19);
    for (s, step) in STEPS.iter().enumerate() {
        let config = DotGeneralConfig::new(vec![], vec![], step.lhs_k.to_vec(), step.rhs_k.to_vec());
        for (t, kind) in Kind::ALL.into_iter().enumerate() {
            let plain = t == 0;
            let lhs = Strided::random(&mut rng, kind, step.lhs, plain);
            let rhs = Strided::random(&mut rng, kind, step.rhs, plain);
            let conj = [rng.chance(0.5), rng.chance(0.5)];
            let (lv, rv) = (lhs.view(), rhs.view());
            let (out_shape, want, mags) = reference(&config, &lv, &rv, conj);
            let terms: usize = step.lhs_k.iter().map(|&d| step.lhs[d]).product();
            let what = |i: usize| format!("step {s}, {kind:?}, conj {conj:?}, element {i}");
            // faer, and the BLAS-like double that refuses matrices without a unit stride.
            let providers: [&dyn GemmProvider; 2] = [&FAER, &unit];
            for provider in providers {
                let got =
                    dot_general(&ctx, lv.clone().into(), rv.clone().into(), &config, conj[0], conj[1], provider, None)
                        .unwrap();
                assert_eq!(got.shape(), &out_shape[..]);
                for (i, o) in indices(&out_shape).iter().enumerate() {
                    close(kind, &what(i), get_c64(&got.view(), o), want[i], mags[i], terms);
                }
            }
            // alpha, beta into a strided destination; elements outside it stay untouched.
            let alpha = kind.random_scalar(&mut rng);
            let beta = kind.random_scalar(&mut rng);
            let mut out = Strided::random(&mut rng, kind, &out_shape, false);
            let before = out.base.clone();
            let old: Vec<c64> = indices(&out_shape).iter().map(|o| get_c64(&out.view(), o)).collect();
            dot_general_into(
                &ctx,
                lv.clone().into(),
                rv.clone().into(),
                &config,
                conj[0],
                conj[1],
                alpha,
                beta,
                out.view_mut().into(),
                &FAER,
                None,
            )
            .unwrap();
            let ov = out.view();
            for (i, o) in indices(&out_shape).iter().enumerate() {
                let scale = alpha.norm() * mags[i] + beta.norm() * old[i].norm();
                close(kind, &what(i), get_c64(&ov, o), alpha * want[i] + beta * old[i], scale, terms);
            }
            let addressed: std::collections::HashSet<usize> =
                indices(&out_shape).iter().map(|o| ov.layout().offset_of(o)).collect();
            for (flat, o) in indices(before.shape()).iter().enumerate() {
                if !addressed.contains(&flat) {
                    assert_eq!(get_c64(&before.view(), o), get_c64(&out.base.view(), o), "element {flat} written");
                }
            }
        }
    }
    // Blocks are separate GEMM calls: many more calls than (step, dtype) pairs.
    assert!(
        unit.calls() > 2 * STEPS.len() * Kind::ALL.len(),
        "{} GEMM calls: the blocked route did not run",
        unit.calls()
    );
}

#[test]
fn a_broadcast_operand_is_gathered_like_any_other() {
    // The large operand repeats one slice along axis 0 (stride 0): a user's broadcast view.
    let ctx = KernelContext::sequential();
    let mut rng = Rng::new(5);
    let slice = Kind::F64.random(&mut rng, &[1, 4, 4, 16, 4, 4]);
    let view = slice.view().broadcast_in_dim(&[16, 4, 4, 16, 4, 4], &[0, 1, 2, 3, 4, 5]).unwrap();
    let rhs = Kind::F64.random(&mut rng, &[4, 4, 4, 4, 2]);
    let config = DotGeneralConfig::new(vec![], vec![], vec![1, 4], vec![0, 1]);
    let (out_shape, want, mags) = reference(&config, &view, &rhs.view(), [false; 2]);
    let got = dot_general(&ctx, view.clone().into(), (&rhs).into(), &config, false, false, &FAER, None).unwrap();
    for (i, o) in indices(&out_shape).iter().enumerate() {
        close(Kind::F64, &format!("element {i}"), get_c64(&got.view(), o), want[i], mags[i], 16);
    }
}

#[test]
fn blocked_results_do_not_depend_on_the_thread_count() {
    let exec = ThreadExecutor::new(2);
    let threaded = KernelContext::new(Parallelism::new(&exec, 2, &AUDIT));
    let inline = KernelContext::sequential();
    let mut rng = Rng::new(23);
    for step in STEPS {
        let config = DotGeneralConfig::new(vec![], vec![], step.lhs_k.to_vec(), step.rhs_k.to_vec());
        for kind in Kind::ALL {
            let lhs = Strided::random(&mut rng, kind, step.lhs, false);
            let rhs = Strided::random(&mut rng, kind, step.rhs, false);
            let run = |ctx: &KernelContext<'_>| -> Tensor {
                dot_general(ctx, lhs.view().into(), rhs.view().into(), &config, true, false, &FAER, None).unwrap()
            };
            assert_eq!(format!("{:?}", run(&inline)), format!("{:?}", run(&threaded)), "{kind:?} {:?}", step.lhs);
        }
    }
    assert!(exec.forks.load(std::sync::atomic::Ordering::Relaxed) > 0, "the blocks were forked");
}
