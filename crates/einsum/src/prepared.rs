//! Prepared expressions: a spec planned once for operand shapes, run many times.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use strata_tensor::{DType, Result, Tensor, TensorRead};

use crate::error::{EinsumError, fail};
use crate::execute::{EinsumOps, run};
use crate::path::EinsumOptions;
use crate::plan::{Program, build};
use crate::report::ContractionPath;
use crate::spec::EinsumSpec;

/// An einsum expression planned for fixed operand shapes: the parsed spec, the path, and
/// every step's presentation and `dot_general` config, ready to run on any backend that
/// implements [`EinsumOps`]. Cheap to clone (one shared allocation) and to share between
/// threads. The plan does not depend on the dtype: one prepared expression runs every
/// dtype einsum supports.
///
/// ```
/// use strata_backend::prelude::*;
/// use strata_einsum::PreparedEinsum;
/// let backend = CpuBackend::with_threads(1)?;
/// let prepared = PreparedEinsum::new("ij,jk->ik", &[&[2, 3], &[3, 2]])?;
/// let a = TypedTensor::from_fn(&[2, 3], |i| (i[0] * 3 + i[1]) as f64)?;
/// let b = TypedTensor::from_fn(&[3, 2], |i| (i[0] + i[1]) as f64)?;
/// let c = prepared.execute(&backend, &[(&a).into(), (&b).into()])?;
/// assert_eq!(c.as_typed::<f64>()?.data(), &[5.0, 8.0, 14.0, 26.0]);
/// // Other shapes are refused: the plan is for these.
/// let wrong = TypedTensor::<f64>::zeros(&[3, 3])?;
/// assert_eq!(prepared.execute(&backend, &[(&a).into(), (&wrong).into()]).unwrap_err().kind(), ErrorKind::ShapeMismatch);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct PreparedEinsum {
    inner: Arc<Prepared>,
}

struct Prepared {
    spec: String,
    shapes: Vec<Vec<usize>>,
    options: EinsumOptions,
    program: Program,
    path: ContractionPath,
}

impl PreparedEinsum {
    /// Plans `spec` for operands of `shapes` with the default options (the exact path
    /// search up to 12 operands, greedy beyond; no memory limit).
    ///
    /// Errors: every rule of [`EinsumSpec::parse`], then shape errors (`ShapeMismatch`):
    /// operand count, ranks, diagonal extents, extents that neither match nor broadcast.
    pub fn new(spec: &str, shapes: &[&[usize]]) -> Result<Self> {
        Self::with_options(spec, shapes, &EinsumOptions::default())
    }

    /// Plans `spec` for `shapes` under `options`.
    ///
    /// Errors: as [`PreparedEinsum::new`], plus `InvalidArgument` for an unreachable
    /// memory limit, an invalid explicit path, or too many operands for the exact search.
    pub fn with_options(spec: &str, shapes: &[&[usize]], options: &EinsumOptions) -> Result<Self> {
        let parsed = EinsumSpec::parse(spec)?;
        let network = parsed.bind(shapes)?;
        let (program, path) = build(&network, shapes, options)?;
        let path = path.with_spec(parsed.to_string());
        Ok(PreparedEinsum {
            inner: Arc::new(Prepared {
                spec: spec.to_string(),
                shapes: shapes.iter().map(|s| s.to_vec()).collect(),
                options: options.clone(),
                program,
                path,
            }),
        })
    }

    /// The spec as given.
    pub fn spec(&self) -> &str {
        &self.inner.spec
    }

    /// The operand shapes it was planned for.
    pub fn shapes(&self) -> &[Vec<usize>] {
        &self.inner.shapes
    }

    /// The options it was planned with.
    pub fn options(&self) -> &EinsumOptions {
        &self.inner.options
    }

    /// The result's shape.
    pub fn output_shape(&self) -> &[usize] {
        &self.inner.program.output_shape
    }

    /// The chosen path, its steps and costs.
    pub fn path(&self) -> &ContractionPath {
        &self.inner.path
    }

    /// Whether this expression was planned for exactly `spec`, `shapes` and `options`.
    pub fn matches(&self, spec: &str, shapes: &[&[usize]], options: &EinsumOptions) -> bool {
        let p = &*self.inner;
        p.spec == spec
            && p.shapes.len() == shapes.len()
            && p.shapes.iter().zip(shapes).all(|(a, b)| a.as_slice() == *b)
            && p.options == *options
    }

    /// A hash of (spec, shapes, options) for caches of prepared expressions: equal inputs
    /// give equal keys in every process; confirm a hit with [`PreparedEinsum::matches`].
    pub fn cache_key(spec: &str, shapes: &[&[usize]], options: &EinsumOptions) -> u64 {
        let mut h = DefaultHasher::new();
        spec.hash(&mut h);
        shapes.len().hash(&mut h);
        for s in shapes {
            s.hash(&mut h);
        }
        options.hash(&mut h);
        h.finish()
    }

    /// Heap bytes held (an estimate, for cache byte limits).
    pub fn footprint_bytes(&self) -> usize {
        let p = &*self.inner;
        size_of::<Prepared>()
            + p.spec.len() * 2
            + p.shapes.iter().map(|s| 24 + s.len() * 8).sum::<usize>()
            + p.program.footprint_bytes()
            + p.path.steps().iter().map(|s| 96 + s.subscripts().len() + s.shape().len() * 8).sum::<usize>()
    }

    /// Runs the expression on `operands` through `ops`.
    ///
    /// Errors, before any op runs: `InvalidArgument` for a wrong operand count,
    /// `ShapeMismatch` for a shape other than the prepared one, `DTypeMismatch` for
    /// operands of different dtypes, `Unsupported` for Bool. An op failing later (an
    /// allocation, re-entry) is reported under `einsum` with the op's error as source.
    pub fn execute(&self, ops: &dyn EinsumOps, operands: &[TensorRead<'_>]) -> Result<Tensor> {
        self.check(operands)?;
        run(&self.inner.program, ops, operands)
    }

    fn check(&self, operands: &[TensorRead<'_>]) -> Result<()> {
        let shapes = &self.inner.shapes;
        if operands.len() != shapes.len() {
            return fail(EinsumError::OperandCount { terms: shapes.len(), operands: operands.len() });
        }
        for (k, (o, s)) in operands.iter().zip(shapes).enumerate() {
            if o.shape() != s.as_slice() {
                return fail(EinsumError::ShapeChanged { operand: k, prepared: s.clone(), given: o.shape().to_vec() });
            }
        }
        let dtype = operands.first().map_or(DType::F64, TensorRead::dtype);
        if let Some((k, o)) = operands.iter().enumerate().find(|(_, o)| o.dtype() != dtype) {
            return fail(EinsumError::DTypeMismatch { operand: k, dtype: o.dtype(), expected: dtype });
        }
        if dtype == DType::Bool {
            return fail(EinsumError::UnsupportedDType { dtype });
        }
        Ok(())
    }
}

impl std::fmt::Debug for PreparedEinsum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedEinsum")
            .field("spec", &self.inner.spec)
            .field("shapes", &self.inner.shapes)
            .field("flops", &self.inner.path.flops())
            .finish_non_exhaustive()
    }
}

/// Plans and runs `spec` on `operands` once (no cache: backends keep one, see
/// `CpuBackend::einsum`).
///
/// ```
/// use strata_backend::prelude::*;
/// let backend = CpuBackend::with_threads(1)?;
/// let m = TypedTensor::from_fn(&[3, 3], |i| (i[0] * 3 + i[1]) as f32)?;
/// let trace = strata_einsum::einsum(&backend, "ii", &[(&m).into()])?;
/// assert_eq!(trace.as_typed::<f32>()?.data(), &[0.0 + 4.0 + 8.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn einsum(ops: &dyn EinsumOps, spec: &str, operands: &[TensorRead<'_>]) -> Result<Tensor> {
    let shapes: Vec<&[usize]> = operands.iter().map(TensorRead::shape).collect();
    PreparedEinsum::new(spec, &shapes)?.execute(ops, operands)
}

/// The path `spec` would take for operands of `shapes` (like `np.einsum_path`).
pub fn einsum_path(spec: &str, shapes: &[&[usize]], options: &EinsumOptions) -> Result<ContractionPath> {
    Ok(PreparedEinsum::with_options(spec, shapes, options)?.path().clone())
}
