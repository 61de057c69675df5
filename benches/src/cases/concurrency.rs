//! Independent callers: two threads, each with its own budget-1 strata handle, running
//! small operations. The figure is the throughput of the two together over one alone
//! (2.0 is perfect scaling); the same ratio for plain loops and for ndarray shows what
//! the machine allows at that moment.
//!
//! Each thread builds its own handle and operands, as independent callers do. Built
//! side by side on the main thread, two workers' small buffers shared cache lines at
//! their edges (malloc places them back to back), and the line one worker wrote every
//! step was read by the other: that false sharing in the harness cost every party here,
//! the plain loop included, 25-45 % of its scaling.

use std::sync::Barrier;
use std::time::Instant;

use ndarray::Array1;
use strata_tensor::TypedTensor;
use strata_tensor::config::BinaryOp;

use crate::check::close;
use crate::random_f64;
use crate::subject::Strata;
use crate::suite::{Suite, Unit};

const CASE: &str = "concurrent_budget1_scaling";
/// Elements of each small op (fits in L1 with its operands).
const SMALL: usize = 512;

/// One worker's state: its own operands and the op it repeats.
trait Worker: Send {
    fn step(&mut self);
    /// The first error a step met, if any.
    fn failure(&self) -> Option<String> {
        None
    }
}

struct StrataWorker {
    strata: Strata,
    a: TypedTensor<f64>,
    b: TypedTensor<f64>,
    out: TypedTensor<f64>,
    failure: Option<String>,
}

impl Worker for StrataWorker {
    fn step(&mut self) {
        let Self { strata, a, b, out, failure } = self;
        let r = strata.backend().binary_into(BinaryOp::Add, &*a, &*b, out);
        if let Err(e) = r {
            failure.get_or_insert(e.to_string());
        }
    }
    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }
}

struct NdWorker(Array1<f64>, Array1<f64>, Array1<f64>);
impl Worker for NdWorker {
    fn step(&mut self) {
        ndarray::Zip::from(&mut self.2).and(&self.0).and(&self.1).for_each(|c, &a, &b| *c = a + b);
    }
}

struct LoopWorker(Vec<f64>, Vec<f64>, Vec<f64>);
impl Worker for LoopWorker {
    fn step(&mut self) {
        for ((c, a), b) in self.2.iter_mut().zip(&self.0).zip(&self.1) {
            *c = a + b;
        }
        std::hint::black_box(&self.2);
    }
}

/// Seconds until the last of `threads` workers finished `iters` steps, all started
/// together; each worker is built by `make` on the thread that runs it.
fn timed(make: MakeWorker, threads: usize, iters: usize) -> Result<f64, String> {
    let start = Barrier::new(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let start = &start;
                s.spawn(move || {
                    // Build first, then meet the others whatever happened, so a failed
                    // build cannot leave them waiting at the barrier.
                    let worker = make();
                    start.wait();
                    let mut worker = worker?;
                    let t0 = Instant::now();
                    for _ in 0..iters {
                        worker.step();
                    }
                    let elapsed = t0.elapsed().as_secs_f64();
                    worker.failure().map_or(Ok(elapsed), Err)
                })
            })
            .collect();
        handles.into_iter().try_fold(0.0f64, |slowest, h| {
            let t = h.join().map_err(|_| "a worker panicked".to_string())??;
            Ok(slowest.max(t))
        })
    })
}

fn strata_worker() -> Result<Box<dyn Worker>, String> {
    let zeros = TypedTensor::<f64>::zeros(&[SMALL]).map_err(|e| e.to_string())?;
    Ok(Box::new(StrataWorker {
        strata: Strata::with_threads(1)?,
        a: TypedTensor::from_vec(random_f64(SMALL, 51), &[SMALL]).map_err(|e| e.to_string())?,
        b: TypedTensor::from_vec(random_f64(SMALL, 52), &[SMALL]).map_err(|e| e.to_string())?,
        out: zeros,
        failure: None,
    }))
}

fn nd_worker() -> Result<Box<dyn Worker>, String> {
    Ok(Box::new(NdWorker(
        Array1::from_vec(random_f64(SMALL, 51)),
        Array1::from_vec(random_f64(SMALL, 52)),
        Array1::zeros(SMALL),
    )))
}

fn loop_worker() -> Result<Box<dyn Worker>, String> {
    Ok(Box::new(LoopWorker(random_f64(SMALL, 51), random_f64(SMALL, 52), vec![0.0; SMALL])))
}

/// Builds one worker of a party.
type MakeWorker = fn() -> Result<Box<dyn Worker>, String>;

/// Runs the scaling case if it passes the filter.
pub fn run(suite: &mut Suite) {
    if suite.wants(CASE)
        && let Err(e) = measure(suite)
    {
        suite.fail(CASE, e);
    }
}

fn measure(suite: &mut Suite) -> Result<(), String> {
    // Check: a budget-1 handle computes the add.
    {
        let s = Strata::with_threads(1)?;
        let (a, b) = (random_f64(SMALL, 51), random_f64(SMALL, 52));
        let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        let (ta, tb) = (
            TypedTensor::from_vec(a, &[SMALL]).map_err(|e| e.to_string())?,
            TypedTensor::from_vec(b, &[SMALL]).map_err(|e| e.to_string())?,
        );
        let mut out = TypedTensor::<f64>::zeros(&[SMALL]).map_err(|e| e.to_string())?;
        s.backend().binary_into(BinaryOp::Add, &ta, &tb, &mut out).map_err(|e| e.to_string())?;
        close("strata", out.data(), &want, 0.0)?;
    }
    eprintln!("  {CASE}");
    let makers: [(&str, MakeWorker); 3] =
        [("strata", strata_worker), ("ndarray", nd_worker), ("rust_loop", loop_worker)];
    let mut sets = Vec::new();
    for (who, make) in makers {
        // Size the batch so that one thread runs for about the batch target.
        let probe = 1000;
        let t = timed(make, 1, probe)?.max(1e-9);
        let iters = ((suite.config.batch_target.as_secs_f64() / t) * probe as f64).clamp(1000.0, 1e8) as usize;
        sets.push((who, make, iters, Vec::new()));
    }
    // Alternate between parties, repetition by repetition.
    for _ in 0..suite.config.reps {
        for (_, make, iters, ratios) in sets.iter_mut() {
            let t1 = timed(*make, 1, *iters)?;
            let t2 = timed(*make, 2, *iters)?;
            ratios.push(2.0 * t1 / t2);
        }
    }
    for (who, _, _, mut ratios) in sets {
        ratios.sort_by(f64::total_cmp);
        let (median, best) = (ratios[ratios.len() / 2], ratios[ratios.len() - 1]);
        suite.record_value(CASE, Unit::Times, who, median, best);
    }
    Ok(())
}
