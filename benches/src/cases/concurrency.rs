//! Independent callers: two threads, each with its own budget-1 strata handle, running
//! small operations. The figure is the throughput of the two together over one alone
//! (2.0 is perfect scaling); the same ratio for plain loops and for ndarray shows what
//! the machine allows at that moment.

use std::sync::Barrier;
use std::time::Instant;

use ndarray::Array1;
use strata_backend::ElementwiseOps;
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
        let r = strata.backend().binary_into(BinaryOp::Add, (&*a).into(), (&*b).into(), out.into());
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

/// Seconds until the last of `workers` finished `iters` steps, all started together.
fn timed(workers: &mut [Box<dyn Worker>], iters: usize) -> f64 {
    let start = Barrier::new(workers.len());
    std::thread::scope(|s| {
        let handles: Vec<_> = workers
            .iter_mut()
            .map(|w| {
                let start = &start;
                s.spawn(move || {
                    start.wait();
                    let t0 = Instant::now();
                    for _ in 0..iters {
                        w.step();
                    }
                    t0.elapsed().as_secs_f64()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(f64::INFINITY)).fold(0.0, f64::max)
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
        s.backend()
            .binary_into(BinaryOp::Add, (&ta).into(), (&tb).into(), (&mut out).into())
            .map_err(|e| e.to_string())?;
        close("strata", out.data(), &want, 0.0)?;
    }
    eprintln!("  {CASE}");
    let makers: [(&str, MakeWorker); 3] =
        [("strata", strata_worker), ("ndarray", nd_worker), ("rust_loop", loop_worker)];
    let mut sets = Vec::new();
    for (who, make) in makers {
        let mut one = vec![make()?];
        let two = vec![make()?, make()?];
        // Size the batch so that one thread runs for about the batch target.
        let probe = 1000;
        let t = timed(&mut one, probe).max(1e-9);
        let iters = ((suite.config.batch_target.as_secs_f64() / t) * probe as f64).clamp(1000.0, 1e8) as usize;
        sets.push((who, one, two, iters, Vec::new()));
    }
    // Alternate between parties, repetition by repetition.
    for _ in 0..suite.config.reps {
        for (_, one, two, iters, ratios) in sets.iter_mut() {
            let t1 = timed(one, *iters);
            let t2 = timed(two, *iters);
            ratios.push(2.0 * t1 / t2);
        }
    }
    for (_, one, two, _, _) in &sets {
        if let Some(e) = one.iter().chain(two).find_map(|w| w.failure()) {
            return Err(e);
        }
    }
    for (who, _, _, _, mut ratios) in sets {
        ratios.sort_by(f64::total_cmp);
        let (median, best) = (ratios[ratios.len() / 2], ratios[ratios.len() - 1]);
        suite.record_value(CASE, Unit::Times, who, median, best);
    }
    Ok(())
}
