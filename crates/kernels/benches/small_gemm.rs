//! Batched small GEMM: strata's `dot_general` (the register tiles) against faer, faer's
//! `nano-gemm` and the `gemm` crate called once per item, all on one thread, into
//! preallocated row-major outputs, interleaved within every repetition.
//!
//! ```sh
//! cargo bench -p strata-kernels --bench small_gemm            # every shape
//! cargo bench -p strata-kernels --bench small_gemm -- --cpu   # thread CPU time, not wall time
//! ```
//!
//! Prints GFLOP/s per party (2 real flops per real multiply-add, 8 per complex one).

use std::time::Instant;

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use strata_kernels::KernelContext;
use strata_kernels::contraction::{ContractionAnalysisCache, PlanCache, dot_general_into};
use strata_provider::FaerGemmProvider;
use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{Scalar, TypedTensor, c32, c64};

/// One timed party: its name and the call it makes.
type Party<'a> = (&'a str, Box<dyn FnMut() + 'a>);

fn clock(cpu: bool) -> f64 {
    if cpu {
        let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `t` is a valid timespec to write into.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
    } else {
        static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_secs_f64()
    }
}

/// The per-item peers for one dtype.
trait Peer: Scalar + faer::traits::ComplexField + Copy {
    const FLOPS_PER_MAC: f64;
    fn value(i: usize) -> Self;
    /// # Safety
    /// Pointers valid for row-major `m × k`, `k × n`, `m × n`.
    unsafe fn nano(m: usize, n: usize, k: usize, c: *mut Self, a: *const Self, b: *const Self);
}

macro_rules! peer {
    ($t:ty, $flops:expr, $nano:ident, $value:expr) => {
        impl Peer for $t {
            const FLOPS_PER_MAC: f64 = $flops;
            fn value(i: usize) -> Self {
                $value(((i * 7919) % 1000) as f64 / 1000.0 - 0.5)
            }
            unsafe fn nano(m: usize, n: usize, k: usize, c: *mut Self, a: *const Self, b: *const Self) {
                // SAFETY: forwarded; nano-gemm's alpha scales the destination (0: replace),
                // beta the product.
                unsafe {
                    nano_gemm::planless::$nano(
                        m,
                        n,
                        k,
                        c,
                        n as isize,
                        1,
                        a,
                        k as isize,
                        1,
                        b,
                        n as isize,
                        1,
                        <$t>::default(),
                        $value(1.0),
                        false,
                        false,
                    )
                }
            }
        }
    };
}
peer!(f64, 2.0, execute_f64, |x: f64| x);
peer!(f32, 2.0, execute_f32, |x: f64| x as f32);
peer!(c64, 8.0, execute_c64, |x: f64| c64::new(x, 0.5 - x));
peer!(c32, 8.0, execute_c32, |x: f64| c32::new(x as f32, 0.25 - x as f32));

fn case<T: Peer>(b: usize, m: usize, k: usize, n: usize, reps: usize, cpu: bool) {
    let a = TypedTensor::from_vec((0..b * m * k).map(T::value).collect(), &[b, m, k]).unwrap();
    let bb = TypedTensor::from_vec((0..b * k * n).map(|i| T::value(i + 3)).collect(), &[b, k, n]).unwrap();
    let mut out = TypedTensor::from_vec(vec![T::zero(); b * m * n], &[b, m, n]).unwrap();
    let mut peer_out = vec![T::zero(); b * m * n];
    let cfg = DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1]);
    let ctx = KernelContext::sequential();
    let domain = ContractionAnalysisCache::default();
    let cache = PlanCache::Domain(&domain);
    let (one, zero) = (c64::new(1.0, 0.0), c64::new(0.0, 0.0));
    let (ad, bd) = (a.data(), bb.data());
    // Repeat each call to about a millisecond of work.
    let flops = (b * m * n * k) as f64 * T::FLOPS_PER_MAC;
    let inner = ((1e-3 * 30e9 / flops) as usize).max(1);
    let mut parties: Vec<Party<'_>> = Vec::new();
    let out_ref = &mut out;
    let (a_ref, b_ref) = (&a, &bb);
    parties.push((
        "strata",
        Box::new(move || {
            dot_general_into(
                &ctx,
                a_ref.into(),
                b_ref.into(),
                &cfg,
                false,
                false,
                one,
                zero,
                (&mut *out_ref).into(),
                &FaerGemmProvider,
                Some(&cache),
            )
            .unwrap()
        }),
    ));
    let po = peer_out.as_mut_ptr() as usize;
    parties.push((
        "faer",
        Box::new(move || {
            for i in 0..b {
                // SAFETY: item i of each row-major batch lies inside its buffer.
                let (am, bm, cm) = unsafe {
                    (
                        MatRef::<T>::from_raw_parts(ad.as_ptr().add(i * m * k), m, k, k as isize, 1),
                        MatRef::<T>::from_raw_parts(bd.as_ptr().add(i * k * n), k, n, n as isize, 1),
                        MatMut::<T>::from_raw_parts_mut((po as *mut T).add(i * m * n), m, n, n as isize, 1),
                    )
                };
                matmul(cm, Accum::Replace, am, bm, T::one(), Par::Seq);
            }
        }),
    ));
    parties.push((
        "nano-gemm",
        Box::new(move || {
            for i in 0..b {
                // SAFETY: as above.
                unsafe {
                    T::nano(
                        m,
                        n,
                        k,
                        (po as *mut T).add(i * m * n),
                        ad.as_ptr().add(i * m * k),
                        bd.as_ptr().add(i * k * n),
                    )
                }
            }
        }),
    ));
    parties.push((
        "gemm",
        Box::new(move || {
            for i in 0..b {
                // SAFETY: as above; the gemm crate takes column then row strides.
                unsafe {
                    gemm::gemm(
                        m,
                        n,
                        k,
                        (po as *mut T).add(i * m * n),
                        1,
                        n as isize,
                        false,
                        ad.as_ptr().add(i * m * k),
                        1,
                        k as isize,
                        bd.as_ptr().add(i * k * n),
                        1,
                        n as isize,
                        T::zero(),
                        T::one(),
                        false,
                        false,
                        false,
                        gemm::Parallelism::None,
                    )
                }
            }
        }),
    ));
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); parties.len()];
    for rep in 0..reps + 1 {
        for (p, (_, run)) in parties.iter_mut().enumerate() {
            let start = clock(cpu);
            for _ in 0..inner {
                run();
            }
            if rep > 0 {
                times[p].push((clock(cpu) - start) / inner as f64);
            }
        }
    }
    let mut line = format!("{:<5} b={b:<5} {m:>3}x{k:>3}x{n:<3}", std::any::type_name::<T>());
    for (p, t) in times.iter_mut().enumerate() {
        t.sort_by(|x, y| x.partial_cmp(y).unwrap());
        line += &format!(" {:>9}={:7.2}", parties[p].0, flops / t[t.len() / 2] / 1e9);
    }
    println!("{line}");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let cpu = args.iter().any(|a| a == "--cpu");
    let reps = 15;
    for &(b, m, k, n) in &[
        (4096, 4, 4, 4),
        (1024, 8, 8, 8),
        (2048, 12, 5, 24),
        (1024, 16, 16, 16),
        (512, 32, 32, 32),
        (256, 64, 64, 64),
        (64, 96, 96, 96),
        (16, 128, 128, 128),
        (4, 256, 256, 256),
        (1, 4096, 16, 32),
        (1, 32, 16, 4096),
        (1, 2048, 64, 64),
    ] {
        case::<f64>(b, m, k, n, reps, cpu);
    }
    for &(b, m, k, n) in &[(1024, 16, 16, 16), (256, 64, 64, 64)] {
        case::<f32>(b, m, k, n, reps, cpu);
        case::<c64>(b, m, k, n, reps, cpu);
        case::<c32>(b, m, k, n, reps, cpu);
    }
}
