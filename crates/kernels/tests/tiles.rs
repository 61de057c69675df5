//! The register-tile engine (small and batched products, thin contractions) against a
//! naive reference summed in c64: random batch / free / contracted axes with short
//! extents (the bond dimensions of tensor networks), every operand stored with its own
//! random axis order, gaps, reversed (negative-stride) axes and broadcast (zero-stride)
//! axes, fresh outputs and strided destinations with alpha and beta (beta = 0 over NaN
//! never reads the destination), all four dtypes, conjugation flags, and budgets 1, 2 and
//! 3 — whose results must be bit-identical.

mod contraction_support;

use contraction_support::{Rng, ThreadExecutor};
use strata_kernels::contraction::{ContractionAnalysisCache, PlanCache, dot_general, dot_general_into};
use strata_kernels::{KernelContext, Parallelism, ScheduleAudit};
use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{Scalar, Tensor, TensorRead, TypedTensor, TypedView, TypedViewMut, c32, c64};

static FAER: strata_provider::FaerGemmProvider = strata_provider::FaerGemmProvider;

/// Test values of each float dtype, built from a wide complex number.
trait Value: Scalar {
    const EPS: f64;
    fn make(z: c64) -> Self;
    fn wide(self) -> c64;
}
impl Value for f32 {
    const EPS: f64 = f32::EPSILON as f64;
    fn make(z: c64) -> Self {
        z.re as f32
    }
    fn wide(self) -> c64 {
        c64::new(self as f64, 0.0)
    }
}
impl Value for f64 {
    const EPS: f64 = f64::EPSILON;
    fn make(z: c64) -> Self {
        z.re
    }
    fn wide(self) -> c64 {
        c64::new(self, 0.0)
    }
}
impl Value for c32 {
    const EPS: f64 = f32::EPSILON as f64;
    fn make(z: c64) -> Self {
        c32::new(z.re as f32, z.im as f32)
    }
    fn wide(self) -> c64 {
        c64::new(self.re as f64, self.im as f64)
    }
}
impl Value for c64 {
    const EPS: f64 = f64::EPSILON;
    fn make(z: c64) -> Self {
        z
    }
    fn wide(self) -> c64 {
        self
    }
}

/// A buffer and a strided view of logical `shape` into it.
struct Stored<T> {
    data: Vec<T>,
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
}

impl<T: Value> Stored<T> {
    /// Random physical order, gaps and reversed axes; `broadcast` allows zero strides.
    fn random(rng: &mut Rng, shape: &[usize], broadcast: bool, plain: bool) -> Stored<T> {
        let rank = shape.len();
        let mut order: Vec<usize> = (0..rank).collect();
        if !plain {
            rng.shuffle(&mut order);
        }
        let mut strides = vec![0isize; rank];
        let mut running = 1isize;
        // Innermost physical axis last in `order`.
        for &a in order.iter().rev() {
            if broadcast && !plain && shape[a] > 1 && rng.chance(0.12) {
                continue; // stride 0: every index reads the same elements
            }
            let step = if !plain && rng.chance(0.2) { 2 } else { 1 };
            strides[a] = running * step;
            running *= step * shape[a].max(1) as isize;
        }
        let mut offset = 0usize;
        if !plain {
            for a in 0..rank {
                if shape[a] > 1 && rng.chance(0.25) {
                    offset += (shape[a] - 1) * strides[a] as usize;
                    strides[a] = -strides[a];
                }
            }
            offset += rng.range(0, 2);
        }
        let len = offset + running as usize + 2;
        let data = (0..len).map(|_| T::make(c64::new(rng.unit(), rng.unit()))).collect();
        Stored { data, shape: shape.to_vec(), strides, offset }
    }

    fn view(&self) -> TypedView<'_, T> {
        TypedView::new(&self.data, &self.shape, &self.strides, self.offset).unwrap()
    }

    fn at(&self, index: &[usize]) -> c64 {
        let o = self.offset as isize + index.iter().zip(&self.strides).map(|(&i, &s)| i as isize * s).sum::<isize>();
        self.data[o as usize].wide()
    }
}

/// Every multi-index of `shape`, row-major.
fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for &e in shape {
        out = out.into_iter().flat_map(|p: Vec<usize>| (0..e).map(move |i| [p.clone(), vec![i]].concat())).collect();
    }
    out
}

struct Case {
    config: DotGeneralConfig,
    lhs_shape: Vec<usize>,
    rhs_shape: Vec<usize>,
    conj: [bool; 2],
}

/// Roles (batch, lhs free, rhs free, contracted) with tensor-network-like extents, placed
/// at random positions of each operand.
fn draw(rng: &mut Rng) -> Case {
    loop {
        let case = draw_any(rng);
        let out: usize = case.config.output_shape(&case.lhs_shape, &case.rhs_shape).unwrap().iter().product();
        let terms: usize = case.config.lhs_contracting.iter().map(|&d| case.lhs_shape[d]).product();
        // Keep the naive reference quick.
        if out * terms <= 40_000 {
            return case;
        }
    }
}

fn draw_any(rng: &mut Rng) -> Case {
    let short = |rng: &mut Rng| if rng.chance(0.6) { rng.range(2, 8) } else { rng.range(1, 20) };
    let (nb, nm, nn, nk) = (rng.range(0, 2), rng.range(1, 2), rng.range(0, 2), rng.range(1, 3));
    let batch: Vec<usize> = (0..nb).map(|_| short(rng)).collect();
    let m: Vec<usize> = (0..nm).map(|_| short(rng)).collect();
    let n: Vec<usize> = (0..nn).map(|_| short(rng)).collect();
    let k: Vec<usize> = (0..nk).map(|_| short(rng)).collect();
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
    let config =
        DotGeneralConfig::new(lp[..nb].to_vec(), rp[..nb].to_vec(), lp[nb..nb + nk].to_vec(), rp[nb..nb + nk].to_vec());
    Case { config, lhs_shape, rhs_shape, conj: [rng.chance(0.5), rng.chance(0.5)] }
}

/// The reference value and the magnitude sum of every output element.
fn reference<T: Value>(case: &Case, lhs: &Stored<T>, rhs: &Stored<T>) -> (Vec<usize>, Vec<(c64, f64)>) {
    let c = &case.config;
    let (lfree, rfree) = (c.lhs_free(lhs.shape.len()), c.rhs_free(rhs.shape.len()));
    let out_shape = c.output_shape(&lhs.shape, &rhs.shape).unwrap();
    let kshape: Vec<usize> = c.lhs_contracting.iter().map(|&d| lhs.shape[d]).collect();
    let (nb, nm) = (c.lhs_batch.len(), lfree.len());
    let terms = indices(&kshape);
    let values = indices(&out_shape)
        .into_iter()
        .map(|o| {
            let (mut li, mut ri) = (vec![0; lhs.shape.len()], vec![0; rhs.shape.len()]);
            for (j, (&l, &r)) in c.lhs_batch.iter().zip(&c.rhs_batch).enumerate() {
                (li[l], ri[r]) = (o[j], o[j]);
            }
            for (j, &l) in lfree.iter().enumerate() {
                li[l] = o[nb + j];
            }
            for (j, &r) in rfree.iter().enumerate() {
                ri[r] = o[nb + nm + j];
            }
            let (mut acc, mut mag) = (c64::new(0.0, 0.0), 0.0);
            for kk in &terms {
                for (j, (&l, &r)) in c.lhs_contracting.iter().zip(&c.rhs_contracting).enumerate() {
                    (li[l], ri[r]) = (kk[j], kk[j]);
                }
                let (mut a, mut b) = (lhs.at(&li), rhs.at(&ri));
                if case.conj[0] {
                    a = a.conj();
                }
                if case.conj[1] {
                    b = b.conj();
                }
                acc += a * b;
                mag += a.norm() * b.norm();
            }
            (acc, mag)
        })
        .collect();
    (out_shape, values)
}

fn close<T: Value>(what: &str, got: c64, want: c64, scale: f64, terms: usize) {
    let tol = T::EPS * (terms as f64 + 4.0) * 4.0 * scale.max(1e-30);
    assert!((got - want).norm() <= tol, "{what}: got {got}, want {want} (tol {tol:e})");
}

/// The bits of a tensor's elements, to compare results across budgets exactly.
fn bits<T: Value>(t: &[T]) -> Vec<(u64, u64)> {
    t.iter().map(|x| (x.wide().re.to_bits(), x.wide().im.to_bits())).collect()
}

fn check_dtype<T: Value>(seed: u64) {
    let mut rng = Rng::new(seed);
    let executors = [ThreadExecutor::new(2), ThreadExecutor::new(3)];
    let audit = ScheduleAudit::new();
    let contexts = [
        KernelContext::sequential(),
        KernelContext::new(Parallelism::new(&executors[0], 2, &audit)),
        KernelContext::new(Parallelism::new(&executors[1], 3, &audit)),
    ];
    let domain = ContractionAnalysisCache::default();
    let cache = PlanCache::Domain(&domain);
    for case_no in 0..150 {
        let case = draw(&mut rng);
        let plain = rng.chance(0.15);
        let lhs = Stored::<T>::random(&mut rng, &case.lhs_shape, true, plain);
        let rhs = Stored::<T>::random(&mut rng, &case.rhs_shape, true, plain);
        let (out_shape, want) = reference(&case, &lhs, &rhs);
        let terms: usize = case.config.lhs_contracting.iter().map(|&d| case.lhs_shape[d]).product();
        let what = |i: usize| {
            format!(
                "seed {seed} case {case_no} {} {:?}x{:?} {:?} conj {:?}, element {i}",
                std::any::type_name::<T>(),
                case.lhs_shape,
                case.rhs_shape,
                case.config,
                case.conj
            )
        };
        let mut results: Vec<Vec<(u64, u64)>> = Vec::new();
        if rng.chance(0.5) {
            for ctx in &contexts {
                let got = dot_general(
                    ctx,
                    lhs.view().into(),
                    rhs.view().into(),
                    &case.config,
                    case.conj[0],
                    case.conj[1],
                    &FAER,
                    Some(&cache),
                )
                .unwrap_or_else(|e| panic!("{}: {e}", what(0)));
                let got = got.as_typed::<T>().unwrap();
                assert_eq!(got.shape(), &out_shape[..]);
                for (i, (&g, &(w, mag))) in got.data().iter().zip(&want).enumerate() {
                    close::<T>(&what(i), g.wide(), w, mag, terms);
                }
                results.push(bits(got.data()));
            }
        } else {
            let alpha = T::make(c64::new(rng.unit() * 2.0, rng.unit())).wide();
            let beta_zero = rng.chance(0.35);
            let beta = if beta_zero { c64::new(0.0, 0.0) } else { T::make(c64::new(rng.unit(), rng.unit())).wide() };
            let plain_out = rng.chance(0.3);
            let template = Stored::<T>::random(&mut rng, &out_shape, false, plain_out);
            let old: Vec<c64> = indices(&out_shape).iter().map(|o| template.at(o)).collect();
            for ctx in &contexts {
                let mut dest = Stored {
                    data: template.data.clone(),
                    shape: template.shape.clone(),
                    strides: template.strides.clone(),
                    offset: template.offset,
                };
                if beta_zero {
                    // beta = 0 must not read the destination: NaN there stays out.
                    dest.data.iter_mut().for_each(|x| *x = T::make(c64::new(f64::NAN, f64::NAN)));
                }
                let before = dest.data.clone();
                let view =
                    TypedViewMut::new(&mut dest.data, &template.shape, &template.strides, template.offset).unwrap();
                dot_general_into(
                    ctx,
                    lhs.view().into(),
                    rhs.view().into(),
                    &case.config,
                    case.conj[0],
                    case.conj[1],
                    alpha,
                    beta,
                    view.into(),
                    &FAER,
                    Some(&cache),
                )
                .unwrap_or_else(|e| panic!("{}: {e}", what(0)));
                let mut touched = vec![false; dest.data.len()];
                for (i, o) in indices(&out_shape).iter().enumerate() {
                    let expect = alpha * want[i].0 + if beta_zero { c64::new(0.0, 0.0) } else { beta * old[i] };
                    let scale = alpha.norm() * want[i].1 + beta.norm() * old[i].norm();
                    close::<T>(&what(i), dest.at(o), expect, scale, terms);
                    let flat = dest.offset as isize
                        + o.iter().zip(&dest.strides).map(|(&i, &s)| i as isize * s).sum::<isize>();
                    touched[flat as usize] = true;
                }
                for (flat, (a, b)) in before.iter().zip(&dest.data).enumerate() {
                    if !touched[flat] {
                        assert_eq!(bits(&[*a]), bits(&[*b]), "{}: element {flat} outside the view written", what(0));
                    }
                }
                results.push(bits(&dest.data));
            }
        }
        assert!(results.windows(2).all(|w| w[0] == w[1]), "{}: results depend on the budget", what(0));
    }
    assert!(audit.is_clean(), "every fork-join ran each index once");
}

#[test]
fn tiles_match_the_reference_f32() {
    check_dtype::<f32>(11);
}

#[test]
fn tiles_match_the_reference_f64() {
    check_dtype::<f64>(12);
}

#[test]
fn tiles_match_the_reference_c32() {
    check_dtype::<c32>(13);
}

#[test]
fn tiles_match_the_reference_c64() {
    check_dtype::<c64>(14);
}

/// Many small items split over the workers, in the layouts numpy's batched matmul and
/// tensor-network codes produce: row-major, transposed operands, the batch axis in the
/// middle. Larger than the random cases so every register shape is used.
#[test]
fn batched_blocks_in_common_layouts() {
    let exec = ThreadExecutor::new(2);
    let audit = ScheduleAudit::new();
    let two = KernelContext::new(Parallelism::new(&exec, 2, &audit));
    let one = KernelContext::sequential();
    let mut rng = Rng::new(99);
    for &(b, m, k, n) in &[(300usize, 4usize, 4usize, 4usize), (64, 16, 16, 16), (33, 12, 5, 24), (9, 40, 33, 17)] {
        for (lhs_order, rhs_order) in [([0, 1, 2], [0, 1, 2]), ([0, 2, 1], [0, 2, 1]), ([1, 0, 2], [1, 0, 2])] {
            // Stored in the given axis order, viewed as [b, m, k] and [b, k, n].
            let stored = |rng: &mut Rng, logical: [usize; 3], order: [usize; 3]| {
                let phys: Vec<usize> = order.iter().map(|&a| logical[a]).collect();
                let len: usize = phys.iter().product();
                let data: Vec<f64> = (0..len).map(|_| rng.unit()).collect();
                let t = TypedTensor::from_vec(data, &phys).unwrap();
                let inverse: Vec<usize> = (0..3).map(|a| order.iter().position(|&o| o == a).unwrap()).collect();
                (t, inverse)
            };
            let (l, lp) = stored(&mut rng, [b, m, k], lhs_order);
            let (r, rp) = stored(&mut rng, [b, k, n], rhs_order);
            let (lv, rv) = (l.view().permute(&lp).unwrap(), r.view().permute(&rp).unwrap());
            let cfg = DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1]);
            let run = |ctx: &KernelContext<'_>| -> Tensor {
                dot_general(ctx, TensorRead::from(lv.clone()), rv.clone().into(), &cfg, false, false, &FAER, None)
                    .unwrap()
            };
            let (a, c) = (run(&one), run(&two));
            let (a, c) = (a.as_typed::<f64>().unwrap(), c.as_typed::<f64>().unwrap());
            assert_eq!(bits(a.data()), bits(c.data()), "{b}x{m}x{k}x{n} {lhs_order:?}");
            for bi in [0, b / 2, b - 1] {
                for i in 0..m {
                    for j in 0..n {
                        let want: f64 =
                            (0..k).map(|p| lv.get(&[bi, i, p]).unwrap() * rv.get(&[bi, p, j]).unwrap()).sum();
                        let got = a.data()[(bi * m + i) * n + j];
                        assert!((got - want).abs() <= 1e-13 * (k as f64 + 1.0), "{b}x{m}x{k}x{n}: {got} vs {want}");
                    }
                }
            }
        }
    }
    assert!(exec.forks.load(std::sync::atomic::Ordering::Relaxed) > 0, "the batch was split over workers");
    assert!(audit.is_clean());
}

/// Row extents that fill whole registers of every dtype (8, 16, 32, 64 reals) and ones
/// that cut the last register, each with alpha and beta (and beta = 0 over NaN), both
/// conjugation flags and budgets 1 and 2: the tiles' full-register and cut paths, in the
/// plain and the general epilogue, against the wide reference and bit-identical.
fn full_and_cut_registers<T: Value>(seed: u64) {
    let mut rng = Rng::new(seed);
    let exec = ThreadExecutor::new(2);
    let audit = ScheduleAudit::new();
    let contexts = [KernelContext::sequential(), KernelContext::new(Parallelism::new(&exec, 2, &audit))];
    for &n in &[4usize, 8, 16, 32, 64, 7, 17, 40] {
        for &(b, m, k) in &[(3usize, 9usize, 5usize), (70, 4, 16)] {
            let case = Case {
                config: DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1]),
                lhs_shape: vec![b, m, k],
                rhs_shape: vec![b, k, n],
                conj: [rng.chance(0.5), rng.chance(0.5)],
            };
            let lhs = Stored::<T>::random(&mut rng, &case.lhs_shape, false, true);
            let rhs = Stored::<T>::random(&mut rng, &case.rhs_shape, false, true);
            let (out_shape, want) = reference(&case, &lhs, &rhs);
            for (alpha, beta) in [(c64::new(1.0, 0.0), None), (c64::new(-0.75, 0.5), Some(c64::new(0.5, -0.25)))] {
                let alpha = T::make(alpha).wide();
                let beta = beta.map(|z| T::make(z).wide());
                let old = Stored::<T>::random(&mut rng, &out_shape, false, true);
                let mut results = Vec::new();
                for ctx in &contexts {
                    let mut dest =
                        Stored { data: old.data.clone(), ..Stored::random(&mut rng, &out_shape, false, true) };
                    if beta.is_none() {
                        dest.data.iter_mut().for_each(|x| *x = T::make(c64::new(f64::NAN, f64::NAN)));
                    }
                    let view = TypedViewMut::new(&mut dest.data, &dest.shape, &dest.strides, dest.offset).unwrap();
                    dot_general_into(
                        ctx,
                        lhs.view().into(),
                        rhs.view().into(),
                        &case.config,
                        case.conj[0],
                        case.conj[1],
                        alpha,
                        beta.unwrap_or(c64::new(0.0, 0.0)),
                        view.into(),
                        &FAER,
                        None,
                    )
                    .unwrap();
                    for (i, o) in indices(&out_shape).iter().enumerate() {
                        let prior = beta.map_or(c64::new(0.0, 0.0), |z| z * old.at(o));
                        let scale = alpha.norm() * want[i].1 + beta.map_or(0.0, |z| z.norm() * old.at(o).norm());
                        let what = format!("{} n={n} b={b} m={m} k={k} conj {:?} element {i}", T::DTYPE, case.conj);
                        close::<T>(&what, dest.at(o), alpha * want[i].0 + prior, scale, k);
                    }
                    results.push(bits(&dest.data));
                }
                assert_eq!(results[0], results[1], "{} n={n}: results depend on the budget", T::DTYPE);
            }
        }
    }
    assert!(audit.is_clean());
}

#[test]
fn full_and_cut_registers_match_the_reference() {
    full_and_cut_registers::<f32>(21);
    full_and_cut_registers::<f64>(22);
    full_and_cut_registers::<c32>(23);
    full_and_cut_registers::<c64>(24);
}
