//! The naive reference of a workload: every step as explicit sums in f64 complex
//! arithmetic over row-major offset tables, written without any code of the parties.

use super::Workload;

/// A dense row-major tensor of (re, im) pairs.
#[derive(Clone, Debug, PartialEq)]
pub struct Dense {
    /// Extents.
    pub shape: Vec<usize>,
    /// Elements, row-major.
    pub data: Vec<(f64, f64)>,
}

/// Row-major offsets of every combination of `axes` (in that order) of `shape`.
fn offsets(shape: &[usize], axes: &[usize]) -> Vec<usize> {
    let mut strides = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    let mut out = vec![0usize];
    for &a in axes {
        let step = strides[a];
        out = out.iter().flat_map(|&o| (0..shape[a]).map(move |i| o + i * step)).collect();
    }
    out
}

/// Runs the workload's steps on `inputs` (in declaration order).
pub fn reference(w: &Workload, inputs: &[Dense]) -> Dense {
    let mut env: Vec<(String, Dense)> = w.inputs.iter().map(|(n, _)| n.clone()).zip(inputs.iter().cloned()).collect();
    let mut last = Dense { shape: Vec::new(), data: Vec::new() };
    for (i, s) in w.steps.iter().enumerate() {
        let get = |name: &str| env.iter().find(|(n, _)| n == name).map(|(_, d)| d);
        let (Some(l), Some(r)) = (get(&s.lhs.name), get(&s.rhs.name)) else {
            // INVARIANT: parse() checked that every operand is defined before its step.
            unreachable!("validated workload");
        };
        let c = &s.config;
        let (lb, rb) = (offsets(&l.shape, &c.lhs_batch), offsets(&r.shape, &c.rhs_batch));
        let (lk, rk) = (offsets(&l.shape, &c.lhs_contracting), offsets(&r.shape, &c.rhs_contracting));
        let lf = offsets(&l.shape, &c.lhs_free(l.shape.len()));
        let rf = offsets(&r.shape, &c.rhs_free(r.shape.len()));
        let conj = |v: (f64, f64), on: bool| if on { (v.0, -v.1) } else { v };
        let mut data = Vec::with_capacity(lb.len() * lf.len() * rf.len());
        for (&bl, &br) in lb.iter().zip(&rb) {
            for &fl in &lf {
                for &fr in &rf {
                    let mut acc = (0.0, 0.0);
                    for (&kl, &kr) in lk.iter().zip(&rk) {
                        let x = conj(l.data[bl + fl + kl], s.lhs.conj);
                        let y = conj(r.data[br + kr + fr], s.rhs.conj);
                        acc = (acc.0 + x.0 * y.0 - x.1 * y.1, acc.1 + x.0 * y.1 + x.1 * y.0);
                    }
                    data.push(acc);
                }
            }
        }
        last = Dense { shape: w.out_shapes[i].clone(), data };
        env.push((s.out.clone(), last.clone()));
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tn::parse;

    #[test]
    fn the_reference_computes_small_products_by_hand() {
        let w = parse("workload m c64 chain\ninput A 2 2\ninput B 2 2\nstep C = A conj(B) contract 1:0\n").unwrap();
        let a = Dense { shape: vec![2, 2], data: vec![(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 1.0)] };
        let b = Dense { shape: vec![2, 2], data: vec![(0.0, 1.0), (1.0, 0.0), (1.0, 0.0), (0.0, 0.0)] };
        let c = reference(&w[0], &[a, b]);
        // [[1, 2], [3, 4+i]] · conj([[i, 1], [1, 0]]) = [[2 - i, 1], [4 - 2i, 3]]
        assert_eq!(c.data, vec![(2.0, -1.0), (1.0, 0.0), (4.0, -2.0), (3.0, 0.0)]);
        // A batched transpose-like contraction: C[b, m, n] = sum_k A[k, b, m] B[b, k, n].
        let w = parse("workload p f64 permuted\ninput A 2 3 1\ninput B 3 2 1\nstep C = A B contract 0:1 batch 1:0\n")
            .unwrap();
        let a = Dense { shape: vec![2, 3, 1], data: (0..6).map(|v| (v as f64, 0.0)).collect() };
        let b = Dense { shape: vec![3, 2, 1], data: (0..6).map(|v| (1.0 + v as f64, 0.0)).collect() };
        let c = reference(&w[0], &[a, b]);
        // b=0: A[0,0]=0, A[1,0]=3 with B[0,0]=1, B[0,1]=2 -> 6; b=1: 1*3 + 4*4 = 19; b=2: 2*5 + 5*6 = 40
        assert_eq!(c.shape, vec![3, 1, 1]);
        assert_eq!(c.data, vec![(6.0, 0.0), (19.0, 0.0), (40.0, 0.0)]);
    }
}
