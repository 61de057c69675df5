//! The tensor-network suite (group `tn`): every workload of `benches/tn/workloads.tn` as a
//! sequence of strata `dot_general` calls with fresh outputs, at one thread and at the
//! run's count, in GFLOP/s of the workload's steps. Peers: faer when every step is a
//! plain GEMM (both operands matrices with one unit stride, as a BLAS user would call
//! it; batch items in a loop), numpy (transpose + matmul per step, and `np.einsum` with
//! a precomputed optimal path) and JAX (`jit` of the `lax.dot_general` steps) in
//! `xtask/py/peers.py`.
//!
//! Checked untimed: strata's result against the naive reference (workloads up to
//! [`REFERENCE_MAX_FLOPS`]) and against faer's; strata's result is written to the results
//! folder, where the Python peers compare theirs with it.

use std::io::Write as _;

use faer::linalg::matmul::matmul;
use faer::traits::ComplexField;
use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;
use strata_backend::ContractionOps;
use strata_provider::GemmScalar;
use strata_tensor::{Tensor, TypedTensor, c32, c64};

use super::{suffix, thread_counts};
use crate::Party;
use crate::check::Parts;
use crate::subject::Strata;
use crate::suite::{Case, Suite, Unit, gflops};
use crate::tn::{Dense, TnDType, Workload, input_values, reference, workloads};

/// The naive reference runs for workloads up to this many flops (about a second).
pub const REFERENCE_MAX_FLOPS: f64 = 6e8;

/// One case per workload and thread count.
pub fn cases(tmax: usize) -> Vec<Case> {
    let all = match workloads() {
        Ok(w) => w,
        Err(e) => {
            // A broken workloads file still shows up: as one failing case.
            return vec![Case::new("tn_workloads_file", "tn", Unit::GflopPerSecond, 1).run(move |_| Err(e.clone()))];
        }
    };
    let mut v = Vec::new();
    for w in all {
        let plain = (0..w.steps.len()).all(|i| gemm_plan(&w, i).is_some());
        for threads in thread_counts(tmax) {
            let mut peers = vec!["numpy", "numpy-einsum", "jax"];
            if plain {
                peers.insert(0, "faer");
            }
            let w = w.clone();
            v.push(
                Case::new(format!("{}_{}", w.name, suffix(threads)), "tn", Unit::GflopPerSecond, threads)
                    .peers(&peers)
                    .target("best:*:1")
                    .run(move |s| match w.dtype {
                        TnDType::F64 => measure::<f64>(s, &w, threads, plain),
                        TnDType::F32 => measure::<f32>(s, &w, threads, plain),
                        TnDType::C64 => measure::<c64>(s, &w, threads, plain),
                    }),
            );
        }
    }
    v
}

/// An element type of the suite.
pub trait TnScalar: GemmScalar + ComplexField + Parts + Copy + Send + Sync + 'static {
    /// Result check tolerance relative to the largest magnitude.
    const TOL: f64;
    /// From (re, im); the imaginary part is dropped for reals.
    fn from_parts(re: f64, im: f64) -> Self;
    /// Little-endian bytes of one element, as numpy reads them.
    fn write_le(self, out: &mut Vec<u8>);
}

impl TnScalar for f64 {
    const TOL: f64 = 1e-10;
    fn from_parts(re: f64, _: f64) -> Self {
        re
    }
    fn write_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}
impl TnScalar for f32 {
    const TOL: f64 = 2e-4;
    fn from_parts(re: f64, _: f64) -> Self {
        re as f32
    }
    fn write_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}
impl TnScalar for c64 {
    const TOL: f64 = 1e-10;
    fn from_parts(re: f64, im: f64) -> Self {
        c64::new(re, im)
    }
    fn write_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.re.to_le_bytes());
        out.extend_from_slice(&self.im.to_le_bytes());
    }
}
// c32 is not a dtype of the suite; the impl keeps the trait's dispatch complete.
impl TnScalar for c32 {
    const TOL: f64 = 2e-4;
    fn from_parts(re: f64, im: f64) -> Self {
        c32::new(re as f32, im as f32)
    }
    fn write_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.re.to_le_bytes());
        out.extend_from_slice(&self.im.to_le_bytes());
    }
}

/// The inputs of a workload in declaration order.
pub fn inputs<T: TnScalar>(w: &Workload) -> Vec<Vec<T>> {
    w.inputs
        .iter()
        .map(|(name, shape)| {
            let len: usize = shape.iter().product();
            let v = input_values(&w.name, name, len, w.dtype.complex());
            if w.dtype.complex() {
                v.chunks_exact(2).map(|p| T::from_parts(p[0], p[1])).collect()
            } else {
                v.into_iter().map(|x| T::from_parts(x, 0.0)).collect()
            }
        })
        .collect()
}

/// Where a step reads an operand from: an input or an earlier step's output.
#[derive(Clone, Copy)]
enum Source {
    Input(usize),
    Step(usize),
}

fn source(w: &Workload, name: &str) -> Source {
    match w.inputs.iter().position(|(n, _)| n == name) {
        Some(i) => Source::Input(i),
        // INVARIANT: parse() checked that every operand is an input or an earlier output.
        None => Source::Step(w.steps.iter().position(|s| s.out == name).unwrap_or(0)),
    }
}

/// A merged group of axes: extent and stride (row-major), or `None` when the axes do
/// not merge into one strided axis. Extent-1 axes are ignored.
fn merged(shape: &[usize], axes: &[usize]) -> Option<(usize, usize)> {
    let mut strides = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    let axes: Vec<usize> = axes.iter().copied().filter(|&a| shape[a] > 1).collect();
    for pair in axes.windows(2) {
        if strides[pair[0]] != strides[pair[1]] * shape[pair[1]] {
            return None;
        }
    }
    let extent = axes.iter().map(|&a| shape[a]).product();
    Some((extent, axes.last().map_or(1, |&a| strides[a])))
}

/// A matrix view with one unit stride.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Layout {
    /// Column stride 1, this row stride.
    Rows(usize),
    /// Row stride 1, this column stride.
    Cols(usize),
}

fn layout(shape: &[usize], rows: &[usize], cols: &[usize]) -> Option<(usize, usize, Layout)> {
    let ((m, rs), (k, cs)) = (merged(shape, rows)?, merged(shape, cols)?);
    if cs == 1 || k == 1 {
        Some((m, k, Layout::Rows(if m == 1 { k } else { rs })))
    } else if rs == 1 || m == 1 {
        Some((m, k, Layout::Cols(if k == 1 { m } else { cs })))
    } else {
        None
    }
}

/// A step as batched plain GEMMs.
#[derive(Clone, Copy, Debug)]
struct GemmPlan {
    batch: usize,
    lhs_batch_stride: usize,
    rhs_batch_stride: usize,
    m: usize,
    n: usize,
    k: usize,
    lhs: Layout,
    rhs: Layout,
}

fn gemm_plan(w: &Workload, i: usize) -> Option<GemmPlan> {
    let s = &w.steps[i];
    let (l, r) = (w.shape(&s.lhs.name)?, w.shape(&s.rhs.name)?);
    let c = &s.config;
    let (batch, lbs) = merged(l, &c.lhs_batch)?;
    let (_, rbs) = merged(r, &c.rhs_batch)?;
    let (m, k, lhs) = layout(l, &c.lhs_free(l.len()), &c.lhs_contracting)?;
    let (_, n, rhs) = layout(r, &c.rhs_contracting, &c.rhs_free(r.len()))?;
    Some(GemmPlan { batch, lhs_batch_stride: lbs, rhs_batch_stride: rbs, m, n, k, lhs, rhs })
}

fn view<T: TnScalar>(data: &[T], rows: usize, cols: usize, l: Layout) -> MatRef<'_, T> {
    match l {
        Layout::Rows(rs) => MatRef::from_row_major_slice_with_stride(data, rows, cols, rs),
        Layout::Cols(cs) => MatRef::from_column_major_slice_with_stride(data, rows, cols, cs),
    }
}

/// One batch item of a planned step with faer.
fn faer_item<T: TnScalar>(p: &GemmPlan, a: &[T], b: &[T], c: &mut [T], conj: (bool, bool), par: Par) {
    let (am, bm) = (view(a, p.m, p.k, p.lhs), view(b, p.k, p.n, p.rhs));
    let cm = MatMut::from_row_major_slice_mut(c, p.m, p.n);
    let one = T::from_c64(c64::new(1.0, 0.0));
    match conj {
        (false, false) => matmul(cm, Accum::Replace, am, bm, one, par),
        (true, false) => matmul(cm, Accum::Replace, am.conjugate(), bm, one, par),
        (false, true) => matmul(cm, Accum::Replace, am, bm.conjugate(), one, par),
        (true, true) => matmul(cm, Accum::Replace, am.conjugate(), bm.conjugate(), one, par),
    }
}

/// The workload with faer: each step's batch items as GEMMs on strided views, one item
/// using every thread, or items spread over the pool when there are several.
fn faer_run<T: TnScalar>(w: &Workload, plans: &[GemmPlan], inputs: &[Vec<T>], pool: &rayon::ThreadPool) -> Vec<T> {
    let threads = pool.current_num_threads();
    let mut outs: Vec<Vec<T>> = Vec::with_capacity(w.steps.len());
    for (s, p) in w.steps.iter().zip(plans) {
        let get = |name: &str| -> &[T] {
            match source(w, name) {
                Source::Input(i) => &inputs[i],
                Source::Step(j) => &outs[j],
            }
        };
        let (a, b) = (get(&s.lhs.name), get(&s.rhs.name));
        let conj = (s.lhs.conj, s.rhs.conj);
        let mut c = vec![T::from_c64(c64::new(0.0, 0.0)); p.batch * p.m * p.n];
        let item = |(bi, c): (usize, &mut [T]), par: Par| {
            faer_item(p, &a[bi * p.lhs_batch_stride..], &b[bi * p.rhs_batch_stride..], c, conj, par)
        };
        if threads == 1 {
            c.chunks_mut(p.m * p.n).enumerate().for_each(|x| item(x, Par::Seq));
        } else if p.batch == 1 {
            pool.install(|| item((0, &mut c), Par::rayon(threads)));
        } else {
            pool.install(|| c.par_chunks_mut(p.m * p.n).enumerate().for_each(|x| item(x, Par::Seq)));
        }
        outs.push(c);
    }
    outs.pop().unwrap_or_default()
}

/// Writes strata's result of the current case to the results folder (when the run has
/// one) as little-endian elements, where the Python peers compare theirs with it.
pub(crate) fn write_result<T: TnScalar>(suite: &Suite, got: &[T]) -> Result<(), String> {
    let Some(dir) = &suite.results else { return Ok(()) };
    let mut bytes = Vec::with_capacity(size_of_val(got));
    for x in got {
        x.write_le(&mut bytes);
    }
    let path = dir.join(format!("{}.bin", suite.case()));
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(&bytes))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// A row-major tensor of the reference's form.
pub(crate) fn dense<T: TnScalar>(shape: &[usize], data: &[T]) -> Dense {
    Dense { shape: shape.to_vec(), data: data.iter().map(|x| x.parts()).collect() }
}

/// Largest difference relative to the reference's largest magnitude (NaN: infinite).
pub(crate) fn rel_err<T: TnScalar>(got: &[T], want: &[(f64, f64)]) -> f64 {
    if got.len() != want.len() {
        return f64::INFINITY;
    }
    let scale = want.iter().map(|w| w.0.hypot(w.1)).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let err = got.iter().zip(want).map(|(g, w)| (g.parts().0 - w.0).hypot(g.parts().1 - w.1)).fold(0.0, f64::max);
    if err.is_nan() { f64::INFINITY } else { err / scale }
}

fn measure<T: TnScalar>(suite: &mut Suite, w: &Workload, threads: usize, plain: bool) -> Result<(), String> {
    let strata = Strata::with_threads(threads)?;
    let data = inputs::<T>(w);
    let tensors: Vec<Tensor> = data
        .iter()
        .zip(&w.inputs)
        .map(|(d, (_, shape))| TypedTensor::from_vec(d.clone(), shape).map(Tensor::from).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let sources: Vec<(Source, Source)> =
        w.steps.iter().map(|s| (source(w, &s.lhs.name), source(w, &s.rhs.name))).collect();
    let strata_run = || -> Result<Tensor, strata_tensor::Error> {
        let mut outs: Vec<Tensor> = Vec::with_capacity(w.steps.len());
        for (s, (l, r)) in w.steps.iter().zip(&sources) {
            let lhs = match *l {
                Source::Input(i) => &tensors[i],
                Source::Step(j) => &outs[j],
            };
            let rhs = match *r {
                Source::Input(i) => &tensors[i],
                Source::Step(j) => &outs[j],
            };
            let out = ContractionOps::dot_general(
                strata.backend(),
                lhs.into(),
                rhs.into(),
                &s.config,
                s.lhs.conj,
                s.rhs.conj,
            )?;
            outs.push(out);
        }
        // INVARIANT: a validated workload has at least one step.
        Ok(outs.pop().unwrap_or_else(|| unreachable!("validated workload")))
    };

    // Untimed checks: the naive reference (when affordable) and faer.
    let got = strata_run().map_err(|e| e.to_string())?;
    let got: Vec<T> = got.as_typed::<T>().map_err(|e| e.to_string())?.data().to_vec();
    if w.flops() <= REFERENCE_MAX_FLOPS {
        let dense_inputs: Vec<Dense> = data.iter().zip(&w.inputs).map(|(d, (_, s))| dense(s, d)).collect();
        let want = reference(w, &dense_inputs);
        let err = rel_err(&got, &want.data);
        suite.check("strata", err, T::TOL);
        if err > T::TOL {
            return Err(format!("strata's result is {err:.1e} off the naive reference"));
        }
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| format!("rayon pool: {e}"))?;
    let plans: Vec<GemmPlan> =
        if plain { (0..w.steps.len()).filter_map(|i| gemm_plan(w, i)).collect() } else { vec![] };
    if plain {
        let f = faer_run(w, &plans, &data, &pool);
        let err = rel_err(&got, &dense(w.result_shape(), &f).data);
        suite.check("faer", err, T::TOL);
    }
    write_result(suite, &got)?;

    let mut failure = None;
    let mut parties = vec![Party::new("strata", || match strata_run() {
        Ok(t) => drop(std::hint::black_box(t)),
        Err(e) => drop(failure.get_or_insert(e.to_string())),
    })];
    if plain {
        parties.push(Party::new("faer", || drop(std::hint::black_box(faer_run(w, &plans, &data, &pool)))));
    }
    suite.measure(&mut parties, gflops(w.flops()));
    drop(parties);
    failure.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tn::parse;

    #[test]
    fn plain_gemm_steps_are_recognised_and_computed_by_faer() {
        let text = "workload w c64 mps\ninput E 3 3\ninput A 3 2 4\nstep T = E A contract 0:0\nstep R = T conj(A) contract 0,1:0,1\n\
                    workload b f64 permuted\ninput A 4 5 3\ninput B 3 5 2\nstep C = A B contract 2:0 batch 1:1\n\
                    workload x f64 dmrg\ninput T 2 3 4 5\ninput W 3 5\nstep C = T W contract 1,3:0,1\n";
        let ws = parse(text).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        for w in &ws[..2] {
            let plans: Vec<GemmPlan> = (0..w.steps.len()).map(|i| gemm_plan(w, i).unwrap()).collect();
            let check = |got: Vec<f64>, want: &Dense| {
                let want: Vec<f64> = want.data.iter().map(|p| p.0).collect();
                assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-12), "{}", w.name);
            };
            if w.dtype == TnDType::C64 {
                let data = inputs::<c64>(w);
                let want = reference(w, &data.iter().zip(&w.inputs).map(|(d, (_, s))| dense(s, d)).collect::<Vec<_>>());
                let got = faer_run(w, &plans, &data, &pool);
                assert!(rel_err(&got, &want.data) < 1e-12, "{}", w.name);
            } else {
                let data = inputs::<f64>(w);
                let want = reference(w, &data.iter().zip(&w.inputs).map(|(d, (_, s))| dense(s, d)).collect::<Vec<_>>());
                check(faer_run(w, &plans, &data, &pool), &want);
            }
        }
        // Free axes 0 and 2 of T do not merge: not a plain GEMM.
        assert!(gemm_plan(&ws[2], 0).is_none());
        assert_eq!(merged(&[4, 5, 3], &[1]), Some((5, 3)));
        assert_eq!(merged(&[2, 3, 4], &[0, 1]), Some((6, 4)));
        assert_eq!(merged(&[2, 3, 4], &[0, 2]), None);
        assert_eq!(merged(&[2, 1, 4], &[0, 1]), Some((2, 4)));
    }

    #[test]
    fn every_workload_declares_a_case_per_thread_count() {
        let w = workloads().unwrap();
        let c = cases(2);
        assert_eq!(c.len(), 2 * w.len());
        assert!(c.iter().all(|c| c.decl.peers.contains(&"jax".to_string())));
        // The chains and the MPS environments are plain GEMMs: faer is a peer there.
        let faer = |name: &str| c.iter().find(|c| c.decl.name == name).unwrap().decl.peers.contains(&"faer".into());
        assert!(faer("chain_256x5_t1") && faer("mps_env_chi64_d2_tmax") && faer("batched_b1024_n16_t1"));
    }
}
