//! Memory-bound ops beside their plain loops and a STREAM-like bandwidth reference,
//! measured by interleaved repetitions in one process (every party runs once per
//! repetition, in turn, so load from elsewhere hits all of them alike); medians shown.
//!
//! `cargo bench -p strata-backend --bench memory_bound -- [GROUP ...]` with groups
//! `stream`, `sum`, `add`, `unary`, `permute`, `gather` (all when none is given). The
//! environment variable `REPS` sets the repetitions (default 15). Each party prints its
//! median GB/s, its ratio to the first party's median, and its best repetition (on a
//! loaded machine the best is the least disturbed one).
//!
//! This is the engineers' probe for decisions (thresholds, SIMD paths, huge pages); the
//! official side-by-side figures with numpy and JAX come from `cargo xtask bench`.

use std::hint::black_box;
use std::time::Instant;

use rayon::prelude::*;
use strata_backend::prelude::*;

/// One party of a comparison: a name and one call of the measured work.
struct Party<'a> {
    name: String,
    call: Box<dyn FnMut() + 'a>,
}

fn party<'a>(name: impl Into<String>, call: impl FnMut() + 'a) -> Party<'a> {
    Party { name: name.into(), call: Box::new(call) }
}

thread_local! {
    static START: Instant = Instant::now();
}

fn reps() -> usize {
    std::env::var("REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(15)
}

/// The calling thread's CPU time in seconds: unlike the wall clock it does not run while
/// the thread waits for a core, so single-thread figures survive a loaded machine.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Runs every party `reps()` times in turn (each timing a batch long enough to measure)
/// and prints median GB/s for `bytes` per call, with each party's ratio to the first.
/// With `CLOCK=cpu` in the environment the calling thread's CPU time is measured instead
/// of the wall clock: right for parties that run on the calling thread only (numpy's
/// side does the same with `time.thread_time`).
fn compare(case: &str, bytes: f64, parties: &mut [Party<'_>]) {
    let cpu = std::env::var("CLOCK").is_ok_and(|c| c == "cpu");
    let now = || if cpu { thread_cpu_seconds() } else { START.with(|s| s.elapsed().as_secs_f64()) };
    // Calibrate a batch of at least ~3 ms per party.
    let mut batch = vec![1usize; parties.len()];
    for (p, b) in parties.iter_mut().zip(&mut batch) {
        (p.call)();
        let t = now();
        (p.call)();
        let once = (now() - t).max(1e-9);
        *b = ((3e-3 / once).ceil() as usize).clamp(1, 100_000);
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); parties.len()];
    for _ in 0..reps() {
        for ((p, &b), ts) in parties.iter_mut().zip(&batch).zip(&mut times) {
            let t = now();
            for _ in 0..b {
                (p.call)();
            }
            ts.push((now() - t) / b as f64);
        }
    }
    for ts in &mut times {
        ts.sort_by(f64::total_cmp);
    }
    let medians: Vec<f64> = times.iter().map(|ts| ts[ts.len() / 2]).collect();
    let line: Vec<String> = parties
        .iter()
        .zip(&medians)
        .zip(&times)
        .map(|((p, &m), ts)| {
            format!("{} {:.2} GB/s ({:.2}x, best {:.2})", p.name, bytes / m / 1e9, medians[0] / m, bytes / ts[0] / 1e9)
        })
        .collect();
    println!("{case:<28} {}", line.join("  |  "));
}

fn f64_tensor(len: usize, seed: u64) -> Tensor {
    let data: Vec<f64> =
        (0..len as u64).map(|i| ((i.wrapping_mul(2654435761) ^ seed) % 1000) as f64 * 1e-3 - 0.5).collect();
    Tensor::from(TypedTensor::from_vec(data, &[len]).unwrap())
}

fn f64s(t: &Tensor) -> &[f64] {
    t.as_typed::<f64>().unwrap().data()
}

/// The plain read loop: eight accumulators (what `cargo xtask bench` calls rust_loop),
/// split over `pool` in chunks of 64 Ki elements.
fn loop_sum(pool: &rayon::ThreadPool, a: &[f64]) -> f64 {
    let chunk = |c: &[f64]| {
        let mut acc = [0.0f64; 8];
        let mut lanes = c.chunks_exact(8);
        for l in &mut lanes {
            for (s, x) in acc.iter_mut().zip(l) {
                *s += x;
            }
        }
        acc.iter().sum::<f64>() + lanes.remainder().iter().sum::<f64>()
    };
    if pool.current_num_threads() == 1 { chunk(a) } else { pool.install(|| a.par_chunks(1 << 16).map(chunk).sum()) }
}

fn pools() -> [(usize, rayon::ThreadPool); 2] {
    [1, 2].map(|t| (t, rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap()))
}

const SIZES: [usize; 9] = [1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26];

fn sum() {
    let backends = [1, 2].map(|t| CpuBackend::with_threads(t).unwrap());
    for len in SIZES {
        let a = f64_tensor(len, 1);
        for (t, pool) in pools() {
            let b = &backends[t - 1];
            let other = &backends[2 - t];
            let mut parties = vec![
                party(format!("strata {t}T"), || {
                    black_box(b.reduce(ReduceOp::Sum, &a, &[0]).unwrap());
                }),
                party(format!("loop {t}T"), || {
                    black_box(loop_sum(&pool, f64s(&a)));
                }),
                party(format!("strata {}T", 3 - t), || {
                    black_box(other.reduce(ReduceOp::Sum, &a, &[0]).unwrap());
                }),
            ];
            compare(&format!("sum f64 {len} at {t}T"), 8.0 * len as f64, &mut parties);
        }
    }
}

/// One STREAM kernel over a chunk: `c` from `a` and `b`.
type StreamKernel = dyn Fn(&mut [f64], &[f64], &[f64]) + Sync;

/// STREAM-like bandwidth reference at `t` threads over 64 MiB arrays: copy (16 B per
/// element moved), scale (16), add (24), triad (24), and a read-only sum (8).
fn stream() {
    let len = 8 << 20;
    let a = vec![1.0f64; len];
    let b = vec![2.0f64; len];
    let mut c = vec![0.0f64; len];
    const CHUNK: usize = 1 << 16;
    for (t, pool) in pools() {
        let run = |f: &StreamKernel, c: &mut [f64]| {
            pool.install(|| {
                c.par_chunks_mut(CHUNK)
                    .zip(a.par_chunks(CHUNK))
                    .zip(b.par_chunks(CHUNK))
                    .for_each(|((c, a), b)| f(c, a, b))
            })
        };
        let mut cases: Vec<(&str, f64, Box<StreamKernel>)> = vec![
            ("copy", 16.0, Box::new(|c, a, _| c.copy_from_slice(a))),
            ("scale", 16.0, Box::new(|c, a, _| c.iter_mut().zip(a).for_each(|(c, a)| *c = 3.0 * a))),
            ("add", 24.0, Box::new(|c, a, b| c.iter_mut().zip(a).zip(b).for_each(|((c, a), b)| *c = a + b))),
            ("triad", 24.0, Box::new(|c, a, b| c.iter_mut().zip(a).zip(b).for_each(|((c, a), b)| *c = a + 3.0 * b))),
        ];
        for (name, bytes, f) in cases.drain(..) {
            let mut parties = vec![party(format!("{name} {t}T"), || run(&*f, &mut c))];
            compare(&format!("stream {name} {t}T"), bytes * len as f64, &mut parties);
        }
        let mut parties = vec![party(format!("read {t}T"), || {
            black_box(loop_sum(&pool, &a));
        })];
        compare(&format!("stream read {t}T"), 8.0 * len as f64, &mut parties);
    }
}

/// The add into a destination and the allocating add (its result dropped each call, as
/// a user's loop does), beside the plain loop, at sizes from in-cache to DRAM.
fn add() {
    let backends = [1, 2].map(|t| CpuBackend::with_threads(t).unwrap());
    for len in SIZES {
        let (a, b) = (f64_tensor(len, 1), f64_tensor(len, 2));
        let mut out = TypedTensor::<f64>::zeros(&[len]).unwrap();
        let mut plain = vec![0.0f64; len];
        for (t, pool) in pools() {
            let be = &backends[t - 1];
            let plain_add = |c: &mut [f64]| {
                let (x, y) = (f64s(&a), f64s(&b));
                let f =
                    |c: &mut [f64], x: &[f64], y: &[f64]| c.iter_mut().zip(x).zip(y).for_each(|((c, x), y)| *c = x + y);
                if t == 1 {
                    f(c, x, y)
                } else {
                    pool.install(|| {
                        c.par_chunks_mut(1 << 16)
                            .zip(x.par_chunks(1 << 16))
                            .zip(y.par_chunks(1 << 16))
                            .for_each(|((c, x), y)| f(c, x, y))
                    })
                }
            };
            let mut parties = vec![
                party(format!("into {t}T"), || be.binary_into(BinaryOp::Add, &a, &b, &mut out).unwrap()),
                party(format!("loop {t}T"), || plain_add(&mut plain)),
                party(format!("alloc {t}T"), || drop(black_box(be.add(&a, &b).unwrap()))),
                party("vec alloc 1T", || {
                    let (x, y) = (f64s(&a), f64s(&b));
                    black_box(x.iter().zip(y).map(|(x, y)| x + y).collect::<Vec<f64>>());
                }),
            ];
            compare(&format!("add f64 {len} at {t}T"), 24.0 * len as f64, &mut parties);
        }
    }
}

/// Real analytic functions over 8 Mi elements into a destination, at 1 and 2 threads,
/// beside a libm loop on one thread.
fn unary() {
    let len = 8 << 20;
    let backends = [1, 2].map(|t| CpuBackend::with_threads(t).unwrap());
    let x64 = Tensor::from(
        TypedTensor::from_vec((0..len).map(|i| (i % 2000) as f64 * 5e-3 - 5.0).collect::<Vec<f64>>(), &[len]).unwrap(),
    );
    let pos64 = Tensor::from(
        TypedTensor::from_vec((0..len).map(|i| (i % 2000) as f64 * 5e-3 + 1e-3).collect::<Vec<f64>>(), &[len]).unwrap(),
    );
    let x32 = strata_backend::StructuralOps::cast(&backends[0], (&x64).into(), DType::F32).unwrap();
    let pos32 = strata_backend::StructuralOps::cast(&backends[0], (&pos64).into(), DType::F32).unwrap();
    for (op, name) in [(UnaryOp::Exp, "exp"), (UnaryOp::Log, "log"), (UnaryOp::Sin, "sin"), (UnaryOp::Tanh, "tanh")] {
        for (dtype, x) in [
            (DType::F64, if op == UnaryOp::Log { &pos64 } else { &x64 }),
            (DType::F32, if op == UnaryOp::Log { &pos32 } else { &x32 }),
        ] {
            let mut outs = [Tensor::zeros(dtype, &[len]).unwrap(), Tensor::zeros(dtype, &[len]).unwrap()];
            let mut libm64 = vec![0.0f64; len];
            let mut libm32 = vec![0.0f32; len];
            let mut parties: Vec<Party<'_>> = Vec::new();
            for (be, out) in backends.iter().zip(&mut outs) {
                let t = be.num_threads();
                parties.push(party(format!("{t}T"), move || be.unary_into(op, x, &mut *out).unwrap()));
            }
            if dtype == DType::F64 {
                let f: fn(f64) -> f64 = match op {
                    UnaryOp::Exp => f64::exp,
                    UnaryOp::Log => f64::ln,
                    UnaryOp::Sin => f64::sin,
                    _ => f64::tanh,
                };
                let xs = f64s(x);
                let libm = &mut libm64;
                parties.push(party("libm 1T", move || libm.iter_mut().zip(xs).for_each(|(o, &v)| *o = f(v))));
            } else {
                let f: fn(f32) -> f32 = match op {
                    UnaryOp::Exp => f32::exp,
                    UnaryOp::Log => f32::ln,
                    UnaryOp::Sin => f32::sin,
                    _ => f32::tanh,
                };
                let xs = x.as_typed::<f32>().unwrap().data();
                let libm = &mut libm32;
                parties.push(party("libm 1T", move || libm.iter_mut().zip(xs).for_each(|(o, &v)| *o = f(v))));
            }
            let bytes = 2.0 * dtype.size_bytes() as f64 * len as f64;
            compare(&format!("{name} {dtype} 8M"), bytes, &mut parties);
        }
    }
}

/// The 64 MiB [3,2,1,0] permutation into a destination beside memcpy, and allocating.
fn permute() {
    let shape = [64usize, 64, 64, 32];
    let len: usize = shape.iter().product();
    let x = f64_tensor(len, 3).reshape(&shape).unwrap();
    let src = f64s(&x).to_vec();
    let mut dst = vec![0.0f64; len];
    for t in [1, 2] {
        let be = CpuBackend::with_threads(t).unwrap();
        let mut out = Tensor::zeros(DType::F64, &[32, 64, 64, 64]).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap();
        let mut parties = vec![
            party(format!("into {t}T"), || {
                let v = x.view().permute(&[3, 2, 1, 0]).unwrap();
                strata_backend::StructuralOps::copy_into(&be, v.into(), (&mut out).into()).unwrap()
            }),
            party(format!("memcpy {t}T"), || {
                pool.install(|| {
                    dst.par_chunks_mut(1 << 18).zip(src.par_chunks(1 << 18)).for_each(|(d, s)| d.copy_from_slice(s))
                })
            }),
            party(format!("alloc {t}T"), || drop(black_box(be.transpose(&x, &[3, 2, 1, 0]).unwrap()))),
        ];
        compare(&format!("permute 64MiB 3210 {t}T"), 16.0 * len as f64, &mut parties);
    }
}

/// 1 Mi rows of 8 f64 gathered from a 4 MiB table, beside the plain copy loop.
fn gather() {
    let (rows, row_len, gathered) = (1usize << 16, 8usize, 1usize << 20);
    let table_data: Vec<f64> = (0..rows * row_len).map(|i| i as f64).collect();
    let idx: Vec<i64> = (0..gathered as u64).map(|i| (i.wrapping_mul(2654435761) % rows as u64) as i64).collect();
    let table = Tensor::from(TypedTensor::from_vec(table_data.clone(), &[rows, row_len]).unwrap());
    let indices = Tensor::from(TypedTensor::from_vec(idx.clone(), &[gathered, 1]).unwrap());
    let config = GatherConfig::rows(2, row_len);
    let mut want = vec![0.0f64; gathered * row_len];
    for t in [1, 2] {
        let be = CpuBackend::with_threads(t).unwrap();
        let mut parties = vec![
            party(format!("strata {t}T"), || drop(black_box(be.gather(&table, &indices, &config).unwrap()))),
            party("loop 1T", || {
                for (o, &r) in want.chunks_exact_mut(row_len).zip(&idx) {
                    o.copy_from_slice(&table_data[r as usize * row_len..(r as usize + 1) * row_len]);
                }
            }),
        ];
        compare(&format!("gather 1M rows {t}T"), (gathered * row_len * 16 + gathered * 8) as f64, &mut parties);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let wants = |g: &str| args.is_empty() || args.iter().any(|a| a == g);
    if wants("stream") {
        stream();
    }
    if wants("sum") {
        sum();
    }
    if wants("add") {
        add();
    }
    if wants("unary") {
        unary();
    }
    if wants("permute") {
        permute();
    }
    if wants("gather") {
        gather();
    }
}
