//! The `einsum` group (issue 17): the tensor-network suite of `benches/tn/workloads.tn`
//! written as einsum strings ([`Workload::einsum`]), strata's cached `CpuBackend::einsum`
//! against `np.einsum(optimize=path)` with the path precomputed, `np.einsum(optimize=
//! 'optimal')` as users call it (its per-call path search included), opt_einsum's
//! `contract_expression` over numpy and `jax.jit(jnp.einsum)` (compile excluded), at one
//! thread and at the run's count. The peers live in `xtask/py/peers.py`.
//!
//! Figures are GFLOP/s of the workload's steps (the `tn` group's flop count, whatever
//! path a party takes), so an einsum row and the `tn` row of the same workload compare.
//! Operands a step conjugates are conjugated inside every timed call, by every party.
//!
//! Checked untimed: strata's result against the naive reference (workloads up to
//! [`REFERENCE_MAX_FLOPS`]); strata's result is written to the results folder, where the
//! Python peers compare theirs with it.

use strata_backend::CpuBackend;
use strata_tensor::{Tensor, TensorRead, TypedTensor, c64};

use super::tn::{REFERENCE_MAX_FLOPS, TnScalar, dense, inputs, rel_err, write_result};
use super::{suffix, thread_counts};
use crate::Party;
use crate::subject::Strata;
use crate::suite::{Case, Suite, Unit, gflops};
use crate::tn::{Dense, TnDType, Workload, reference, workloads};

/// The peers of every einsum case, as `xtask::groups::PARTIES` names them.
pub const PEERS: [&str; 4] = ["numpy-einsum", "numpy-einsum-opt", "opt_einsum", "jax"];

/// One case per workload and thread count.
pub fn cases(tmax: usize) -> Vec<Case> {
    let all = match workloads() {
        Ok(w) => w,
        Err(e) => {
            // A broken workloads file still shows up: as one failing case.
            return vec![
                Case::new("einsum_workloads_file", "einsum", Unit::GflopPerSecond, 1).run(move |_| Err(e.clone())),
            ];
        }
    };
    let mut v = Vec::new();
    for w in all {
        for threads in thread_counts(tmax) {
            let w = w.clone();
            v.push(
                Case::new(format!("einsum_{}_{}", w.name, suffix(threads)), "einsum", Unit::GflopPerSecond, threads)
                    .peers(&PEERS)
                    .target("best:*:1")
                    .run(move |s| match w.dtype {
                        TnDType::F64 => measure::<f64>(s, &w, threads),
                        TnDType::F32 => measure::<f32>(s, &w, threads),
                        TnDType::C64 => measure::<c64>(s, &w, threads),
                    }),
            );
        }
    }
    v
}

/// A workload as one einsum call: the spec, and for each operand of the spec the input
/// it reads (an index into the workload's inputs) and whether it is conjugated first.
#[derive(Clone, Debug, PartialEq)]
pub struct EinsumCall {
    /// numpy notation with an explicit output.
    pub spec: String,
    /// Per operand: input index, conjugated.
    pub operands: Vec<(usize, bool)>,
}

impl EinsumCall {
    /// The call of `w` ([`Workload::einsum`] bound to the workload's inputs); conjugation
    /// only counts for complex workloads, as in the steps.
    pub fn of(w: &Workload) -> Result<Self, String> {
        let (spec, ops) = w.einsum();
        let operands = ops
            .iter()
            .map(|o| match w.inputs.iter().position(|(n, _)| *n == o.name) {
                Some(i) => Ok((i, o.conj && w.dtype.complex())),
                None => Err(format!("{}: einsum operand `{}` is not an input", w.name, o.name)),
            })
            .collect::<Result<_, _>>()?;
        Ok(EinsumCall { spec, operands })
    }

    /// One call through the facade: the conjugated operands first (fresh tensors, as a
    /// user would make them), then `CpuBackend::einsum` (planned once per spec and
    /// shapes, from the backend's cache afterwards).
    pub fn run(&self, backend: &CpuBackend, inputs: &[Tensor]) -> Result<Tensor, strata_tensor::Error> {
        let mut conjugated: Vec<Option<Tensor>> = Vec::with_capacity(self.operands.len());
        for &(i, conj) in &self.operands {
            conjugated.push(if conj { Some(backend.conj(&inputs[i])?) } else { None });
        }
        let ops: Vec<TensorRead<'_>> =
            self.operands.iter().zip(&conjugated).map(|(&(i, _), c)| c.as_ref().unwrap_or(&inputs[i]).into()).collect();
        backend.einsum(&self.spec, &ops)
    }
}

fn measure<T: TnScalar>(suite: &mut Suite, w: &Workload, threads: usize) -> Result<(), String> {
    let strata = Strata::with_threads(threads)?;
    let call = EinsumCall::of(w)?;
    let data = inputs::<T>(w);
    let tensors: Vec<Tensor> = data
        .iter()
        .zip(&w.inputs)
        .map(|(d, (_, shape))| TypedTensor::from_vec(d.clone(), shape).map(Tensor::from).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;

    // Untimed: the first call plans (and fills the cache); its result is checked.
    let got = call.run(strata.backend(), &tensors).map_err(|e| e.to_string())?;
    if got.shape() != w.result_shape() {
        return Err(format!("strata's einsum gave shape {:?}, the steps give {:?}", got.shape(), w.result_shape()));
    }
    let got: Vec<T> = got.as_typed::<T>().map_err(|e| e.to_string())?.data().to_vec();
    if w.flops() <= REFERENCE_MAX_FLOPS {
        let dense_inputs: Vec<Dense> = data.iter().zip(&w.inputs).map(|(d, (_, s))| dense(s, d)).collect();
        let want = reference(w, &dense_inputs);
        let err = rel_err(&got, &want.data);
        suite.check("strata", err, T::TOL);
        if err > T::TOL {
            return Err(format!("strata's einsum is {err:.1e} off the naive reference"));
        }
    }
    write_result(suite, &got)?;

    let mut failure = None;
    let mut parties = vec![Party::new("strata", || match call.run(strata.backend(), &tensors) {
        Ok(t) => drop(std::hint::black_box(t)),
        Err(e) => drop(failure.get_or_insert(e.to_string())),
    })];
    suite.measure(&mut parties, gflops(w.flops()));
    drop(parties);
    failure.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tn::parse;

    #[test]
    fn every_workload_declares_a_case_per_thread_count_with_every_peer() {
        let w = workloads().unwrap();
        for (tmax, per) in [(1, 1), (2, 2)] {
            let c = cases(tmax);
            assert_eq!(c.len(), per * w.len());
            assert!(c.iter().all(|c| c.decl.group == "einsum" && c.decl.peers == PEERS));
        }
        let c = cases(4);
        for name in ["einsum_mps_env_chi64_d2_t1", "einsum_mera_descend_chi10_c64_tmax", "einsum_chain_256x5_t1"] {
            let case = c.iter().find(|c| c.decl.name == name).unwrap();
            assert_eq!(case.decl.threads, if name.ends_with("_t1") { 1 } else { 4 }, "{name}");
        }
        // Every committed workload binds to its inputs.
        for x in &w {
            let call = EinsumCall::of(x).unwrap();
            assert_eq!(call.spec, x.einsum().0);
            assert!(call.operands.iter().all(|&(i, conj)| i < x.inputs.len() && (!conj || x.dtype.complex())));
        }
    }

    /// The einsum call against the naive reference of the steps: an input read twice, a
    /// conjugated one, a batch label, a real workload whose `conj` is a no-op.
    #[test]
    fn the_einsum_call_computes_what_the_steps_compute() {
        let text = "workload env c64 mps\ninput E 3 3\ninput A 3 2 4\n\
                    step T = E A contract 0:0\nstep R = T conj(A) contract 0,1:0,1\n\
                    workload bat f64 batched\ninput A 5 3 4\ninput B 5 4 2\ninput C 2 3\n\
                    step T = A B contract 2:1 batch 0:0\nstep R = T C contract 2:0\n\
                    workload re f64 mps\ninput E 2 2\ninput A 2 3 2\n\
                    step T = E A contract 0:0\nstep R = T conj(A) contract 0,1:0,1\n";
        let ws = parse(text).unwrap();
        let backend = CpuBackend::with_threads(1).unwrap();
        fn check<T: TnScalar>(w: &Workload, backend: &CpuBackend) {
            let call = EinsumCall::of(w).unwrap();
            let data = inputs::<T>(w);
            let tensors: Vec<Tensor> = data
                .iter()
                .zip(&w.inputs)
                .map(|(d, (_, s))| Tensor::from(TypedTensor::from_vec(d.clone(), s).unwrap()))
                .collect();
            let want = reference(w, &data.iter().zip(&w.inputs).map(|(d, (_, s))| dense(s, d)).collect::<Vec<_>>());
            for _ in 0..2 {
                // The second call comes from the backend's cache.
                let got = call.run(backend, &tensors).unwrap();
                assert_eq!(got.shape(), want.shape.as_slice(), "{}", w.name);
                let got: Vec<T> = got.as_typed::<T>().unwrap().data().to_vec();
                assert!(rel_err(&got, &want.data) < 1e-12, "{}: {}", w.name, rel_err(&got, &want.data));
            }
        }
        assert_eq!(EinsumCall::of(&ws[0]).unwrap().operands, vec![(0, false), (1, false), (1, true)]);
        check::<c64>(&ws[0], &backend);
        check::<f64>(&ws[1], &backend);
        assert_eq!(EinsumCall::of(&ws[2]).unwrap().operands, vec![(0, false), (1, false), (1, false)]);
        check::<f64>(&ws[2], &backend);
        assert!(backend.einsum_cache_stats().hits >= 3);
    }
}
