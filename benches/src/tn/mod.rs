//! The tensor-network workloads of `benches/tn/workloads.tn` (the format is described at
//! the top of that file): parsed and validated once, with their inputs from the generator
//! both the Rust runner and the Python peers implement, their flop counts, their einsum
//! form, and a naive reference that shares no code with any party.

mod format;
mod generate;
mod reference;

pub use format::parse;
pub use generate::{fnv1a, input_values, splitmix_unit};
pub use reference::{Dense, reference};

use strata_tensor::config::DotGeneralConfig;

/// The workloads file, compiled in (cargo rebuilds the runner when it changes).
pub const WORKLOADS: &str = include_str!("../../tn/workloads.tn");

/// The committed workloads. The file is checked by the tests, so this cannot fail on a
/// committed tree; a broken edit gives the parse error.
pub fn workloads() -> Result<Vec<Workload>, String> {
    parse(WORKLOADS)
}

/// Element type of a workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TnDType {
    /// f32.
    F32,
    /// f64.
    F64,
    /// complex f64 (numpy's complex128).
    C64,
}

impl TnDType {
    /// Real flops per multiply-add.
    pub fn flops_per_mac(self) -> f64 {
        if self == TnDType::C64 { 8.0 } else { 2.0 }
    }

    /// Whether elements are complex.
    pub fn complex(self) -> bool {
        self == TnDType::C64
    }
}

/// An operand of a step: a tensor's name, conjugated or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operand {
    /// An input or an earlier step's output.
    pub name: String,
    /// Whether the step conjugates it.
    pub conj: bool,
}

/// One dot_general step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// Name of the output.
    pub out: String,
    /// Left operand.
    pub lhs: Operand,
    /// Right operand.
    pub rhs: Operand,
    /// The dot_general's axes.
    pub config: DotGeneralConfig,
}

/// One workload: inputs and steps, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// Unique name, e.g. `mps_env_chi64_d2`.
    pub name: String,
    /// Element type.
    pub dtype: TnDType,
    /// The class of tensor-network computation (`mps`, `dmrg`, ...).
    pub class: String,
    /// Inputs, name and shape, in declaration order.
    pub inputs: Vec<(String, Vec<usize>)>,
    /// Steps in order; the last one's output is the result.
    pub steps: Vec<Step>,
    /// Shapes of every step's output, in step order.
    pub out_shapes: Vec<Vec<usize>>,
}

impl Workload {
    /// The shape of an input or a step output.
    pub fn shape(&self, name: &str) -> Option<&[usize]> {
        self.inputs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s.as_slice())
            .or_else(|| self.steps.iter().position(|s| s.out == name).map(|i| self.out_shapes[i].as_slice()))
    }

    /// Multiply-adds of each step.
    pub fn step_macs(&self) -> Vec<f64> {
        self.steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let out: f64 = self.out_shapes[i].iter().map(|&d| d as f64).product();
                let lhs = self.shape(&s.lhs.name).unwrap_or(&[]);
                let k: f64 = s.config.lhs_contracting.iter().map(|&a| lhs[a] as f64).product();
                out * k
            })
            .collect()
    }

    /// Real floating-point operations of the whole workload.
    pub fn flops(&self) -> f64 {
        self.step_macs().iter().sum::<f64>() * self.dtype.flops_per_mac()
    }

    /// The result's shape.
    pub fn result_shape(&self) -> &[usize] {
        self.out_shapes.last().map_or(&[], Vec::as_slice)
    }

    /// The whole workload as one einsum: operands are the inputs in the order the steps
    /// first read each occurrence (an input read twice appears twice), with `conj`
    /// flags; the output subscripts are the result's axes.
    pub fn einsum(&self) -> (String, Vec<Operand>) {
        // Union-find over axis labels: a contracted or batch pair is one label.
        let mut parent: Vec<usize> = Vec::new();
        fn find(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        let fresh = |parent: &mut Vec<usize>, n: usize| -> Vec<usize> {
            let start = parent.len();
            parent.extend(start..start + n);
            (start..start + n).collect()
        };
        let mut labels_of: std::collections::HashMap<String, Vec<usize>> = Default::default();
        let mut occurrences: Vec<(Operand, Vec<usize>)> = Vec::new();
        for s in &self.steps {
            let mut side = |op: &Operand, parent: &mut Vec<usize>| -> Vec<usize> {
                match labels_of.remove(&op.name) {
                    Some(l) => l,
                    None => {
                        let rank = self.shape(&op.name).map_or(0, <[usize]>::len);
                        let l = fresh(parent, rank);
                        occurrences.push((op.clone(), l.clone()));
                        l
                    }
                }
            };
            let l = side(&s.lhs, &mut parent);
            let r = side(&s.rhs, &mut parent);
            let c = &s.config;
            for (&a, &b) in c.lhs_contracting.iter().zip(&c.rhs_contracting).chain(c.lhs_batch.iter().zip(&c.rhs_batch))
            {
                let (x, y) = (find(&mut parent, l[a]), find(&mut parent, r[b]));
                parent[y] = x;
            }
            let mut out: Vec<usize> = c.lhs_batch.iter().map(|&a| l[a]).collect();
            out.extend(c.lhs_free(l.len()).iter().map(|&a| l[a]));
            out.extend(c.rhs_free(r.len()).iter().map(|&a| r[a]));
            // Inputs are never step outputs, so every output name is new.
            labels_of.insert(s.out.clone(), out);
        }
        let result = self.steps.last().and_then(|s| labels_of.get(&s.out)).cloned().unwrap_or_default();
        let mut letters: std::collections::HashMap<usize, char> = Default::default();
        const ALPHABET: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
        let mut letter = |parent: &mut Vec<usize>, x: usize| -> char {
            let root = find(parent, x);
            let next = letters.len();
            *letters.entry(root).or_insert_with(|| ALPHABET.chars().nth(next).unwrap_or('?'))
        };
        let mut terms = Vec::new();
        for (_, l) in &occurrences {
            terms.push(l.iter().map(|&x| letter(&mut parent, x)).collect::<String>());
        }
        let out: String = result.iter().map(|&x| letter(&mut parent, x)).collect();
        (format!("{}->{out}", terms.join(",")), occurrences.into_iter().map(|(o, _)| o).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_workloads_cover_every_class_of_the_issue() {
        let w = workloads().unwrap();
        assert!(w.len() >= 12, "{}", w.len());
        for class in ["mps", "mpo", "dmrg", "tebd", "ctmrg", "mera", "batched", "chain", "permuted"] {
            assert!(w.iter().any(|x| x.class == class), "no {class} workload");
        }
        assert!(w.iter().any(|x| x.class == "dmrg" && x.dtype == TnDType::C64));
        assert!(w.iter().any(|x| x.class == "dmrg" && x.dtype == TnDType::F64));
        // MERA intermediates of rank 6, batched blocks of batch 256-4096.
        assert!(w.iter().any(|x| x.class == "mera" && x.out_shapes.iter().any(|s| s.len() == 6)));
        let batches: Vec<usize> = w.iter().filter(|x| x.class == "batched").map(|x| x.result_shape()[0]).collect();
        assert!(batches.iter().all(|b| (256..=4096).contains(b)), "{batches:?}");
        let mut names: Vec<&str> = w.iter().map(|x| x.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), w.len(), "names are unique");
    }

    #[test]
    fn flops_and_einsum_follow_the_steps() {
        let w = workloads().unwrap();
        let mps = w.iter().find(|x| x.name == "mps_env_chi64_d2").unwrap();
        // T = E A: 64·2·64 outputs × 64; R = T A: 64·64 outputs × 128.
        assert_eq!(mps.step_macs(), vec![(64 * 2 * 64 * 64) as f64, (64 * 64 * 128) as f64]);
        assert_eq!(mps.einsum().0, "ab,acd,bce->de");
        let b = w.iter().find(|x| x.name == "batched_b1024_n16").unwrap();
        assert_eq!(b.einsum().0, "abc,acd->abd");
        assert_eq!(b.flops(), 2.0 * 1024.0 * 16.0 * 16.0 * 16.0);
        let p = w.iter().find(|x| x.name == "permuted_kmb_bnk_c64").unwrap();
        assert_eq!(p.einsum().0, "abc,cda->cbd");
        let mera = w.iter().find(|x| x.name == "mera_descend_chi10_c64").unwrap();
        let (spec, ops) = mera.einsum();
        assert_eq!(ops.len(), 7);
        assert_eq!(ops.iter().filter(|o| o.conj).count(), 3);
        assert_eq!(spec.split("->").nth(1).map(str::len), Some(4));
    }
}
