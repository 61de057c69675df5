//! dot_general against an independent einsum-style reference (summation in c64) on
//! hundreds of random configurations: ranks up to 5, random batch / contracting / free
//! axes, operands stored in random axis orders with steps, margins and reversed axes,
//! all four dtypes, conjugation flags, alpha and beta, fresh and strided destinations.

mod contraction_support;

use contraction_support::{Kind, Rng, Strided, get_c64, indices};
use strata_kernels::KernelContext;
use strata_kernels::contraction::{ContractionAnalysisCache, PlanCache, dot_general, dot_general_into};
use strata_provider::GemmProvider;
use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{TensorView, c64};

/// Records fork-join violations of the executors used here (none are expected).
static AUDIT: strata_kernels::ScheduleAudit = strata_kernels::ScheduleAudit::new();

static FAER: strata_provider::FaerGemmProvider = strata_provider::FaerGemmProvider;

/// One random contraction: logical roles, then each operand's axes shuffled.
struct Case {
    kind: Kind,
    config: DotGeneralConfig,
    lhs_shape: Vec<usize>,
    rhs_shape: Vec<usize>,
    conj: [bool; 2],
}

fn draw_case(rng: &mut Rng) -> Case {
    let kind = Kind::ALL[rng.range(0, 3)];
    let (mut nb, mut nk, mut nm, mut nn);
    loop {
        nb = rng.range(0, 2);
        nk = rng.range(0, 2);
        nm = rng.range(0, 2);
        nn = rng.range(0, 2);
        if nb + nk + nm <= 5 && nb + nk + nn <= 5 {
            break;
        }
    }
    if rng.chance(0.1) {
        // Occasionally the full rank 5 on one side.
        nm = 5 - nb - nk;
    }
    let large = rng.chance(0.25);
    let extent = |rng: &mut Rng, big: bool| {
        if rng.chance(0.04) {
            0
        } else if big {
            rng.range(12, 24)
        } else {
            rng.range(1, 4)
        }
    };
    let batch: Vec<usize> = (0..nb).map(|_| extent(rng, false)).collect();
    let k: Vec<usize> = (0..nk).map(|i| extent(rng, large && i == 0)).collect();
    let m: Vec<usize> = (0..nm).map(|i| extent(rng, large && i == 0)).collect();
    let n: Vec<usize> = (0..nn).map(|i| extent(rng, large && i == 0)).collect();
    // Logical roles in order [batch.., k.., free..]; place them at random positions.
    let place = |rng: &mut Rng, free: &[usize]| {
        let rank = nb + nk + free.len();
        let mut pos: Vec<usize> = (0..rank).collect();
        rng.shuffle(&mut pos);
        let mut shape = vec![0; rank];
        for (i, &e) in batch.iter().chain(&k).chain(free).enumerate() {
            shape[pos[i]] = e;
        }
        (shape, pos)
    };
    let (lhs_shape, lp) = place(rng, &m);
    let (rhs_shape, rp) = place(rng, &n);
    // Free axes keep ascending order in the output, so free roles need no bookkeeping.
    let config =
        DotGeneralConfig::new(lp[..nb].to_vec(), rp[..nb].to_vec(), lp[nb..nb + nk].to_vec(), rp[nb..nb + nk].to_vec());
    let conj = [rng.chance(0.5), rng.chance(0.5)];
    Case { kind, config, lhs_shape, rhs_shape, conj }
}

/// The naive reference: for each output index, the sum over all contracted indices.
fn reference(case: &Case, lhs: &TensorView<'_>, rhs: &TensorView<'_>) -> (Vec<usize>, Vec<c64>, Vec<f64>) {
    let c = &case.config;
    let lfree = c.lhs_free(case.lhs_shape.len());
    let rfree = c.rhs_free(case.rhs_shape.len());
    let out_shape = c.output_shape(&case.lhs_shape, &case.rhs_shape).unwrap();
    let kshape: Vec<usize> = c.lhs_contracting.iter().map(|&d| case.lhs_shape[d]).collect();
    let (nb, nm) = (c.lhs_batch.len(), lfree.len());
    let mut vals = Vec::new();
    let mut mags = Vec::new();
    for o in indices(&out_shape) {
        let mut li = vec![0; case.lhs_shape.len()];
        let mut ri = vec![0; case.rhs_shape.len()];
        for (j, (&l, &r)) in c.lhs_batch.iter().zip(&c.rhs_batch).enumerate() {
            li[l] = o[j];
            ri[r] = o[j];
        }
        for (j, &l) in lfree.iter().enumerate() {
            li[l] = o[nb + j];
        }
        for (j, &r) in rfree.iter().enumerate() {
            ri[r] = o[nb + nm + j];
        }
        let (mut acc, mut mag) = (c64::new(0.0, 0.0), 0.0);
        for kk in indices(&kshape) {
            for (j, (&l, &r)) in c.lhs_contracting.iter().zip(&c.rhs_contracting).enumerate() {
                li[l] = kk[j];
                ri[r] = kk[j];
            }
            let mut a = get_c64(lhs, &li);
            let mut b = get_c64(rhs, &ri);
            if case.conj[0] {
                a = a.conj();
            }
            if case.conj[1] {
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

fn check_close(kind: Kind, what: &str, got: c64, want: c64, scale: f64, terms: usize) {
    let tol = kind.eps() * (terms as f64 + 4.0) * 4.0 * scale.max(1e-30);
    assert!((got - want).norm() <= tol, "{what}: got {got}, want {want} (tol {tol})");
}

#[test]
fn dot_general_matches_reference_on_random_configs() {
    let ctx = KernelContext::sequential();
    let domain = ContractionAnalysisCache::default();
    let naive = strata_provider::NaiveGemmProvider::new();
    let unit = contraction_support::UnitStrideProvider::default();
    for seed in 0..400u64 {
        let mut rng = Rng::new(seed);
        let case = draw_case(&mut rng);
        let plain = rng.chance(0.2);
        let lhs = Strided::random(&mut rng, case.kind, &case.lhs_shape, plain);
        let rhs = Strided::random(&mut rng, case.kind, &case.rhs_shape, plain);
        let (lv, rv) = (lhs.view(), rhs.view());
        let (out_shape, want, mags) = reference(&case, &lv, &rv);
        let terms: usize = case.config.lhs_contracting.iter().map(|&d| case.lhs_shape[d]).product();
        let cache = PlanCache::Domain(&domain);
        // faer (the real path), the provider crate's naive reference GEMM (checks our
        // strides independently of faer), and a BLAS-like double that refuses matrices
        // without a unit stride (checks the forced packing).
        let providers: [&dyn GemmProvider; 3] = [&FAER, &naive, &unit];
        let provider = providers[seed as usize % 3];
        let ctx_msg = |i: usize| {
            format!(
                "seed {seed}, case {:?} {:?} {:?} conj {:?}, element {i}",
                case.kind, case.lhs_shape, case.rhs_shape, case.conj
            )
        };

        if rng.chance(0.5) {
            let got = dot_general(
                &ctx,
                lv.clone().into(),
                rv.clone().into(),
                &case.config,
                case.conj[0],
                case.conj[1],
                provider,
                Some(&cache),
            )
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            assert_eq!(got.shape(), &out_shape[..], "seed {seed}");
            let gv = got.view();
            for (i, o) in indices(&out_shape).iter().enumerate() {
                check_close(case.kind, &ctx_msg(i), get_c64(&gv, o), want[i], mags[i], terms);
            }
        } else {
            let alpha = case.kind.random_scalar(&mut rng);
            let beta = if rng.chance(0.3) { c64::new(0.0, 0.0) } else { case.kind.random_scalar(&mut rng) };
            let plain_out = rng.chance(0.3);
            let mut out = Strided::random(&mut rng, case.kind, &out_shape, plain_out);
            let before = out.base.clone();
            let old: Vec<c64> = indices(&out_shape).iter().map(|o| get_c64(&out.view(), o)).collect();
            dot_general_into(
                &ctx,
                lv.clone().into(),
                rv.clone().into(),
                &case.config,
                case.conj[0],
                case.conj[1],
                alpha,
                beta,
                out.view_mut().into(),
                provider,
                Some(&cache),
            )
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let ov = out.view();
            for (i, o) in indices(&out_shape).iter().enumerate() {
                let expect =
                    alpha * want[i] + if beta == c64::new(0.0, 0.0) { c64::new(0.0, 0.0) } else { beta * old[i] };
                let scale = alpha.norm() * mags[i] + beta.norm() * old[i].norm();
                check_close(case.kind, &ctx_msg(i), get_c64(&ov, o), expect, scale, terms);
            }
            // Elements of the backing buffer outside the destination view are untouched.
            let addressed: std::collections::HashSet<usize> = {
                let l = ov.layout();
                indices(&out_shape).iter().map(|o| l.offset_of(o)).collect()
            };
            let (bv, nv) = (before.view(), out.base.view());
            for (flat, o) in indices(before.shape()).iter().enumerate() {
                if !addressed.contains(&flat) {
                    assert_eq!(
                        get_c64(&bv, o),
                        get_c64(&nv, o),
                        "seed {seed}: element {flat} outside the view was written"
                    );
                }
            }
        }
    }
    let s = domain.stats();
    assert!(s.misses > 0 && s.entries > 0);
    assert!(naive.calls() > 0 && unit.calls() > 0, "the provider route was exercised");
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let exec = contraction_support::ThreadExecutor::new(4);
    let threaded = KernelContext::new(strata_kernels::Parallelism::new(&exec, 4, &AUDIT));
    let inline = KernelContext::sequential();
    let mut rng = Rng::new(77);
    // Many small batched products (our fork over batch items) and a few large ones.
    for (b, m, k, n) in [(256, 8, 8, 8), (3, 70, 90, 50), (1, 130, 64, 120)] {
        for kind in Kind::ALL {
            let lhs = Strided::random(&mut rng, kind, &[b, m, k], false);
            let rhs = Strided::random(&mut rng, kind, &[b, k, n], false);
            let cfg = DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1]);
            let one =
                dot_general(&inline, lhs.view().into(), rhs.view().into(), &cfg, true, false, &FAER, None).unwrap();
            let many =
                dot_general(&threaded, lhs.view().into(), rhs.view().into(), &cfg, true, false, &FAER, None).unwrap();
            assert_eq!(format!("{one:?}"), format!("{many:?}"), "{kind:?} {b}x{m}x{k}x{n}");
        }
    }
    assert!(exec.forks.load(std::sync::atomic::Ordering::Relaxed) > 0, "the batched case forked");
}
