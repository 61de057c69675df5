//! This core's arithmetic peak: an in-register fused multiply-add loop per dtype (no
//! memory traffic), on 1 and on 2 threads, in GFLOP/s (one FMA = 2 flops per lane).
//!
//! `cargo run --release -p strata-benches --example fma_peak`
//!
//! The figure is the ceiling every GEMM and batched-GEMM ratio in docs/PERFORMANCE.md is
//! judged against. Complex products cost four real multiply-adds per complex one, so the
//! c64 peak in "complex GFLOP/s" (8 flops per complex multiply-add) equals the f64 peak.

use std::time::Instant;

/// Independent accumulators: enough to hide the FMA latency on any x86 core.
const CHAINS: usize = 16;
const ITERS: u64 = 50_000_000;

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn fma_loop_f64(iters: u64) -> f64 {
    use std::arch::x86_64::*;
    let a = _mm512_set1_pd(1.000_000_1);
    let b = _mm512_set1_pd(0.999_999_9);
    let mut acc = [_mm512_set1_pd(0.5); CHAINS];
    for _ in 0..iters {
        for x in acc.iter_mut() {
            *x = _mm512_fmadd_pd(*x, a, b);
        }
    }
    let mut s = _mm512_setzero_pd();
    for x in acc {
        s = _mm512_add_pd(s, x);
    }
    _mm512_reduce_add_pd(s)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn fma_loop_f32(iters: u64) -> f64 {
    use std::arch::x86_64::*;
    let a = _mm512_set1_ps(1.000_01);
    let b = _mm512_set1_ps(0.999_99);
    let mut acc = [_mm512_set1_ps(0.5); CHAINS];
    for _ in 0..iters {
        for x in acc.iter_mut() {
            *x = _mm512_fmadd_ps(*x, a, b);
        }
    }
    let mut s = _mm512_setzero_ps();
    for x in acc {
        s = _mm512_add_ps(s, x);
    }
    f64::from(_mm512_reduce_add_ps(s))
}

/// The 2 x 8 tile's inner step without memory traffic of X: per step, 8 broadcasts of
/// values from a small in-L1 array, each feeding 2 FMAs (16 FMAs per step), as the
/// register tiles of `contraction/microkernel` do for 16-row items.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn broadcast_2x8_f64(iters: u64) -> f64 {
    use std::arch::x86_64::*;
    let ys: [f64; 64] = std::array::from_fn(|i| 1.0 + i as f64 * 1e-9);
    let x0 = _mm512_set1_pd(1.000_000_1);
    let x1 = _mm512_set1_pd(0.999_999_9);
    let mut acc = [_mm512_set1_pd(0.5); CHAINS];
    let base = std::hint::black_box(ys.as_ptr());
    for it in 0..iters {
        let p = base.wrapping_add((it as usize & 7) * 8);
        for j in 0..8 {
            // SAFETY: `p + j` lies inside `ys` (offsets 0..64).
            let y = _mm512_set1_pd(unsafe { *p.add(j) });
            acc[2 * j] = _mm512_fmadd_pd(x0, y, acc[2 * j]);
            acc[2 * j + 1] = _mm512_fmadd_pd(x1, y, acc[2 * j + 1]);
        }
    }
    let mut s = _mm512_setzero_pd();
    for x in acc {
        s = _mm512_add_pd(s, x);
    }
    _mm512_reduce_add_pd(s)
}

/// As [`broadcast_2x8_f64`] but with 16 single-use broadcasts per step (each folds into its
/// FMA as an embedded-broadcast memory operand).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn broadcast_1x16_f64(iters: u64) -> f64 {
    use std::arch::x86_64::*;
    let ys: [f64; 128] = std::array::from_fn(|i| 1.0 + i as f64 * 1e-9);
    let x0 = _mm512_set1_pd(1.000_000_1);
    let mut acc = [_mm512_set1_pd(0.5); CHAINS];
    let base = std::hint::black_box(ys.as_ptr());
    for it in 0..iters {
        let p = base.wrapping_add((it as usize & 7) * 16);
        for (j, a) in acc.iter_mut().enumerate() {
            // SAFETY: `p + j` lies inside `ys` (offsets 0..128).
            *a = _mm512_fmadd_pd(x0, _mm512_set1_pd(unsafe { *p.add(j) }), *a);
        }
    }
    let mut s = _mm512_setzero_pd();
    for x in acc {
        s = _mm512_add_pd(s, x);
    }
    _mm512_reduce_add_pd(s)
}

/// This thread's CPU time in seconds (Linux: `/proc/thread-self/schedstat`), or `None`.
fn thread_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(s.split_whitespace().next()?.parse::<f64>().ok()? / 1e9)
}

/// GFLOP/s of `threads` copies of `body` (each `ITERS · CHAINS` FMAs of `lanes` lanes):
/// by the wall clock, and per CPU-second of the threads (immune to other processes
/// sharing the cores, so the per-core peak even on a loaded machine).
fn run(threads: usize, lanes: usize, body: fn(u64) -> f64) -> (f64, f64) {
    let start = Instant::now();
    let (sink, cpu): (f64, f64) = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let c0 = thread_cpu_seconds().unwrap_or(0.0);
                    let r = body(ITERS);
                    (r, thread_cpu_seconds().unwrap_or(0.0) - c0)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap_or((0.0, 0.0))).fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1))
    });
    let secs = start.elapsed().as_secs_f64();
    std::hint::black_box(sink);
    let flops = (threads as u64 * ITERS * CHAINS as u64 * lanes as u64 * 2) as f64;
    (flops / secs / 1e9, flops / cpu.max(1e-9) / 1e9 * threads as f64)
}

fn main() {
    #[cfg(target_arch = "x86_64")]
    {
        if !(is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("fma")) {
            println!("no AVX-512F: this probe measures the AVX-512 peak only");
            return;
        }
        // SAFETY (both closures): the CPU has AVX-512F and FMA, checked above.
        let f64_loop: fn(u64) -> f64 = |n| unsafe { fma_loop_f64(n) };
        let f32_loop: fn(u64) -> f64 = |n| unsafe { fma_loop_f32(n) };
        for rep in 0..5 {
            let r = [run(1, 8, f64_loop), run(2, 8, f64_loop), run(1, 16, f32_loop), run(2, 16, f32_loop)];
            println!(
                "rep {rep}: wall f64 1T {:6.1}  2T {:6.1}  f32 1T {:6.1}  2T {:6.1} | per CPU-second \
                 f64 1T {:6.1}  2T {:6.1}  f32 1T {:6.1}  2T {:6.1}  GFLOP/s",
                r[0].0, r[1].0, r[2].0, r[3].0, r[0].1, r[1].1, r[2].1, r[3].1
            );
            // SAFETY (both): AVX-512F and FMA are present, checked above.
            let b2x8: fn(u64) -> f64 = |n| unsafe { broadcast_2x8_f64(n) };
            let b1x16: fn(u64) -> f64 = |n| unsafe { broadcast_1x16_f64(n) };
            let (t2x8, t1x16) = (run(1, 8, b2x8), run(1, 8, b1x16));
            println!(
                "        f64 with broadcasts, per CPU-second: 2x8 tile step {:6.1}, 1x16 embedded {:6.1} GFLOP/s",
                t2x8.1, t1x16.1
            );
        }
    }
}
