//! The tensor-network workloads of `benches/tn/workloads.txt`, each a sequence of pairwise
//! `dot_general` steps with fresh outputs, run the way the facade runs them: the kernel on
//! the calling thread, forks on a domain executor of 1 or 2 workers, outputs from the
//! domain's buffer pool, analyses from the domain's cache.
//!
//! ```sh
//! cargo bench -p strata-kernels --bench tn_workloads                 # every workload, 1 and 2 workers
//! cargo bench -p strata-kernels --bench tn_workloads -- ctmrg --steps # one class, per-step times
//! ```
//!
//! Prints the median time of each workload (and with `--steps` of each step) and GFLOP/s
//! (2 real flops per real multiply-add, 8 per complex one), the thread counts alternated
//! within every repetition. `benches/tn/peers.py` runs the same steps on numpy and JAX.
//!
//! `--cpu` times the one-worker runs by the calling thread's CPU time instead of the wall
//! clock: on a machine shared with other work, time slices taken by other processes then
//! do not count (caches shared with them still do). Pair it with `peers.py --cpu`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use strata_engine::{CpuDomainExecutor, RayonCpuDomainExecutor};
use strata_kernels::contraction::{ContractionAnalysisCache, PlanCache, dot_general};
use strata_kernels::{KernelContext, Parallelism, ScheduleAudit};
use strata_pool::BufferPool;
use strata_provider::FaerGemmProvider;
use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{DType, Tensor, TensorRead, c32, c64};

struct Step {
    out: String,
    lhs: String,
    rhs: String,
    conj: bool,
    config: DotGeneralConfig,
    macs: f64,
}

struct Workload {
    name: String,
    dtype: DType,
    /// (name, logical labels, stored labels) per input.
    tensors: Vec<(String, String, String)>,
    dims: HashMap<char, usize>,
    steps: Vec<Step>,
}

impl Workload {
    fn flops(&self) -> f64 {
        let per_mac = if self.dtype.is_complex() { 8.0 } else { 2.0 };
        self.steps.iter().map(|s| s.macs * per_mac).sum()
    }
}

fn parse(text: &str) -> Vec<Workload> {
    let mut out: Vec<Workload> = Vec::new();
    let mut labels: HashMap<String, String> = HashMap::new();
    for raw in text.lines() {
        let line = raw.split('#').next().unwrap_or("").trim();
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(&head) = words.first() else { continue };
        if head == "workload" {
            let dtype = match words[2] {
                "f32" => DType::F32,
                "f64" => DType::F64,
                "c32" => DType::C32,
                "c64" => DType::C64,
                other => panic!("unknown dtype {other}"),
            };
            labels.clear();
            out.push(Workload {
                name: words[1].to_string(),
                dtype,
                tensors: Vec::new(),
                dims: HashMap::new(),
                steps: Vec::new(),
            });
            continue;
        }
        let w = out.last_mut().expect("a workload line comes first");
        match head {
            "dims" => {
                for d in &words[1..] {
                    let (k, v) = d.split_once('=').expect("label=extent");
                    w.dims.insert(k.chars().next().unwrap(), v.parse().unwrap());
                }
            }
            "tensor" => {
                let stored = words.get(3).map_or(words[2], |s| s.trim_start_matches("stored="));
                labels.insert(words[1].to_string(), words[2].to_string());
                w.tensors.push((words[1].to_string(), words[2].to_string(), stored.to_string()));
            }
            "step" => {
                let (out_name, lhs, rhs) = (words[1], words[3], words[4]);
                let conj = rhs.ends_with('*');
                let rhs = rhs.trim_end_matches('*');
                let batch = words.get(5).map_or("", |s| s.trim_start_matches("batch="));
                let (ll, rl) = (labels[lhs].clone(), labels[rhs].clone());
                let pos = |s: &str, c: char| s.chars().position(|x| x == c).unwrap();
                let bat: Vec<char> = ll.chars().filter(|c| batch.contains(*c)).collect();
                let con: Vec<char> = ll.chars().filter(|&c| rl.contains(c) && !batch.contains(c)).collect();
                let lfree: String = ll.chars().filter(|&c| !rl.contains(c)).collect();
                let rfree: String = rl.chars().filter(|&c| !ll.contains(c)).collect();
                let config = DotGeneralConfig::new(
                    bat.iter().map(|&c| pos(&ll, c)).collect(),
                    bat.iter().map(|&c| pos(&rl, c)).collect(),
                    con.iter().map(|&c| pos(&ll, c)).collect(),
                    con.iter().map(|&c| pos(&rl, c)).collect(),
                );
                let all: String = bat.iter().chain(&con).collect::<String>() + &lfree + &rfree;
                let macs = all.chars().map(|c| w.dims[&c] as f64).product();
                labels.insert(out_name.to_string(), bat.iter().collect::<String>() + &lfree + &rfree);
                w.steps.push(Step {
                    out: out_name.to_string(),
                    lhs: lhs.to_string(),
                    rhs: rhs.to_string(),
                    conj,
                    config,
                    macs,
                });
            }
            other => panic!("unknown line {other}"),
        }
    }
    out
}

/// A stored buffer of the workload's dtype, with values in [-0.5, 0.5).
fn random(dtype: DType, shape: &[usize], seed: usize) -> Tensor {
    let len: usize = shape.iter().product();
    let v = |i: usize| (((i + seed * 7) * 7919 + seed) % 1000) as f64 / 1000.0 - 0.5;
    match dtype {
        DType::F32 => Tensor::from_vec((0..len).map(|i| v(i) as f32).collect(), shape),
        DType::F64 => Tensor::from_vec((0..len).map(v).collect(), shape),
        DType::C32 => Tensor::from_vec((0..len).map(|i| c32::new(v(i) as f32, v(i + 1) as f32)).collect(), shape),
        DType::C64 => Tensor::from_vec((0..len).map(|i| c64::new(v(i), v(i + 3))).collect(), shape),
        _ => unreachable!(),
    }
    .unwrap()
}

struct Domain {
    exec: Box<dyn CpuDomainExecutor>,
    audit: ScheduleAudit,
    budget: usize,
    pool: BufferPool,
    cache: ContractionAnalysisCache,
}

impl Domain {
    fn new(budget: usize) -> Domain {
        let exec: Box<dyn CpuDomainExecutor> = if budget == 1 {
            Box::new(strata_engine::InlineExecutor)
        } else {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(budget).build().unwrap();
            Box::new(RayonCpuDomainExecutor::new(Arc::new(pool)))
        };
        Domain {
            exec,
            audit: ScheduleAudit::new(),
            budget,
            pool: BufferPool::new(1 << 30),
            cache: ContractionAnalysisCache::default(),
        }
    }
}

/// Seconds on the wall clock, or of the calling thread's CPU time.
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

/// Runs every step once; returns the per-step seconds and the last output.
fn run(w: &Workload, inputs: &[(String, Tensor, Vec<usize>)], d: &Domain, cpu: bool) -> (Vec<f64>, Tensor) {
    let ctx = KernelContext::new(Parallelism::new(d.exec.as_ref(), d.budget, &d.audit)).with_pool(&d.pool);
    let cache = PlanCache::Domain(&d.cache);
    let mut made: HashMap<&str, Tensor> = HashMap::new();
    let mut times = Vec::with_capacity(w.steps.len());
    for s in &w.steps {
        let read = |name: &str| -> TensorRead<'_> {
            if let Some(t) = made.get(name) {
                return t.into();
            }
            let (_, t, perm) = inputs.iter().find(|(n, _, _)| n == name).unwrap();
            t.view().permute(perm).unwrap().into()
        };
        let start = clock(cpu);
        let out =
            dot_general(&ctx, read(&s.lhs), read(&s.rhs), &s.config, false, s.conj, &FaerGemmProvider, Some(&cache))
                .unwrap();
        times.push(clock(cpu) - start);
        made.insert(&s.out, out);
    }
    d.audit.check("tn_workloads").unwrap();
    let last = made.remove(w.steps.last().unwrap().out.as_str()).unwrap();
    // Intermediates go back to the pool, as a tensor-network code would recycle them.
    for (_, t) in made {
        d.pool.recycle_tensor(t);
    }
    (times, last)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let steps = args.iter().any(|a| a == "--steps");
    let cpu = args.iter().any(|a| a == "--cpu");
    let reps: usize = args.iter().find_map(|a| a.strip_prefix("--reps=")).map_or(15, |r| r.parse().unwrap());
    let filter = args.iter().find(|a| !a.starts_with("--")).cloned().unwrap_or_default();
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/benches/tn/workloads.txt")).unwrap();
    let domains = [Domain::new(1), Domain::new(2)];
    println!("{:<32} {:>5} {:>8} {:>9} {:>9}   (GFLOP/s, median of {reps})", "workload", "dtype", "GFLOP", "1T", "2T");
    for w in parse(&text).iter().filter(|w| w.name.contains(&filter)) {
        let inputs: Vec<(String, Tensor, Vec<usize>)> = w
            .tensors
            .iter()
            .enumerate()
            .map(|(i, (name, logical, stored))| {
                let shape: Vec<usize> = stored.chars().map(|c| w.dims[&c]).collect();
                let perm: Vec<usize> = logical.chars().map(|c| stored.chars().position(|x| x == c).unwrap()).collect();
                (name.clone(), random(w.dtype, &shape, i), perm)
            })
            .collect();
        // Untimed: warm caches and pools, and check both thread counts agree.
        let (_, a) = run(w, &inputs, &domains[0], false);
        let (_, b) = run(w, &inputs, &domains[1], false);
        assert_eq!(a.shape(), b.shape(), "{}", w.name);
        let mut totals = [Vec::new(), Vec::new()];
        let mut per_step = [vec![Vec::new(); w.steps.len()], vec![Vec::new(); w.steps.len()]];
        for _ in 0..reps {
            for (t, d) in domains.iter().enumerate() {
                let (times, out) = run(w, &inputs, d, cpu && t == 0);
                totals[t].push(times.iter().sum::<f64>());
                for (i, s) in times.into_iter().enumerate() {
                    per_step[t][i].push(s);
                }
                d.pool.recycle_tensor(out);
            }
        }
        let flops = w.flops();
        let g = |t: usize, v: &mut Vec<f64>| flops / median(v) / 1e9 + 0.0 * t as f64;
        let (g1, g2) = (g(0, &mut totals[0]), g(1, &mut totals[1]));
        let dtype = match w.dtype {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::C32 => "c32",
            _ => "c64",
        };
        println!("{:<32} {:>5} {:>8.3} {:>9.2} {:>9.2}", w.name, dtype, flops / 1e9, g1, g2);
        if steps {
            for (i, s) in w.steps.iter().enumerate() {
                let f = s.macs * if w.dtype.is_complex() { 8.0 } else { 2.0 };
                let (m1, m2) = (median(&mut per_step[0][i]), median(&mut per_step[1][i]));
                println!(
                    "    {:<8} {:>10.1} us {:>8.2} GF/s | {:>10.1} us {:>8.2} GF/s",
                    s.out,
                    m1 * 1e6,
                    f / m1 / 1e9,
                    m2 * 1e6,
                    f / m2 / 1e9
                );
            }
        }
    }
}
