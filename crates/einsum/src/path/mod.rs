//! Contraction paths: the order in which pairs of tensors are contracted, how it is
//! searched ([`PathStrategy`], [`EinsumOptions`]), and its cost model.
//!
//! **Cost model.** opt_einsum's, so figures compare one to one: a step over the labels
//! `L` of both its operands costs `size(L)` flops, twice that when it sums a label the two
//! operands share (a multiply and an add per term); a single-operand reduction costs
//! twice the operand's size. The size of a step is its result's element count.

mod greedy;
mod optimal;

use strata_tensor::Result;

use crate::error::{EinsumError, fail};
use crate::label::LabelSet;

/// Networks with at most this many operands take the exact search under
/// [`PathStrategy::Auto`] (its `3^n` steps cost a few milliseconds at 12).
pub const AUTO_OPTIMAL_MAX_OPERANDS: usize = 12;

/// The exact search refuses more operands than this (`3^16` split visits take about a
/// second; beyond that, use [`PathStrategy::Greedy`]).
pub const OPTIMAL_MAX_OPERANDS: usize = 16;

/// How the contraction order is chosen.
///
/// ```
/// use strata_einsum::{EinsumOptions, PathStrategy, einsum_path};
/// let shapes: [&[usize]; 3] = [&[8, 64], &[64, 64], &[64, 2]];
/// let optimal = einsum_path("ij,jk,kl->il", &shapes, &EinsumOptions::new())?;
/// // Given by hand, numpy style: contract operands 1 and 2 first, then the rest.
/// let by_hand = EinsumOptions::new().strategy(PathStrategy::Explicit(vec![(1, 2), (0, 1)]));
/// let given = einsum_path("ij,jk,kl->il", &shapes, &by_hand)?;
/// assert!(optimal.flops() <= given.flops());
/// # Ok::<(), strata_tensor::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PathStrategy {
    /// [`PathStrategy::Optimal`] up to [`AUTO_OPTIMAL_MAX_OPERANDS`] operands, else
    /// [`PathStrategy::Greedy`].
    #[default]
    Auto,
    /// The cheapest order over all contraction trees (outer products included), by
    /// dynamic programming over subsets of operands; exact, for up to
    /// [`OPTIMAL_MAX_OPERANDS`] operands.
    Optimal,
    /// Contract the pair that shrinks memory most, repeatedly; for large networks.
    Greedy,
    /// The caller's order in numpy's linear form: each pair names two positions in the
    /// current list of operands, which are removed, their result appended at the end.
    Explicit(Vec<(usize, usize)>),
}

impl PathStrategy {
    /// The strategy's name as printed in a path.
    pub fn name(&self) -> &'static str {
        match self {
            PathStrategy::Auto => "auto",
            PathStrategy::Optimal => "optimal",
            PathStrategy::Greedy => "greedy",
            PathStrategy::Explicit(_) => "explicit",
        }
    }
}

/// Options of an einsum: the path strategy and an optional memory limit.
///
/// ```
/// use strata_einsum::{EinsumOptions, PathStrategy};
/// let opts = EinsumOptions::new().strategy(PathStrategy::Greedy).memory_limit(1 << 20);
/// assert_eq!(opts.memory_limit, Some(1 << 20));
/// assert_eq!(EinsumOptions::default().strategy, PathStrategy::Auto);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct EinsumOptions {
    /// How the order is searched (default [`PathStrategy::Auto`]).
    pub strategy: PathStrategy,
    /// The most elements any intermediate may hold (the inputs and the final result are
    /// exempt). `None` (the default) means no limit: unlike numpy's default, a limit never
    /// forces a slower order silently; an unreachable one is an error.
    pub memory_limit: Option<usize>,
}

impl EinsumOptions {
    /// The defaults: [`PathStrategy::Auto`], no memory limit.
    pub fn new() -> Self {
        Self::default()
    }

    /// With path strategy `strategy`.
    pub fn strategy(mut self, strategy: PathStrategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// With a memory limit of `elements` per intermediate.
    pub fn memory_limit(mut self, elements: usize) -> Self {
        self.memory_limit = Some(elements);
        self
    }
}

/// A contraction order in SSA form: operands are `0..n`, step `s` produces `n + s`.
pub(crate) type SsaPath = Vec<(usize, usize)>;

/// What the search sees: each operand's labels (after single-operand reductions), the
/// output's labels and every label's extent.
pub(crate) struct Problem<'a> {
    pub sets: &'a [LabelSet],
    pub output: LabelSet,
    pub extents: &'a [usize],
}

/// Flops of one pairwise step (opt_einsum's count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StepCost {
    pub flops: u128,
}

impl StepCost {
    /// The step joining legs `a` and `b` into `result` (of `result_size` elements).
    #[inline]
    pub(crate) fn of(a: LabelSet, b: LabelSet, result: LabelSet, result_size: u128, extents: &[usize]) -> StepCost {
        let either = a.union(b);
        // `result` is a subset of `either`, so its size factors out.
        let size = result_size.saturating_mul(either.minus(result).size(extents));
        let sums_shared = !a.intersect(b).minus(result).is_empty();
        StepCost { flops: size.saturating_mul(1 + u128::from(sums_shared)) }
    }
}

/// The flops of a single-operand reduction over an operand of `size` elements.
pub(crate) fn reduction_flops(size: u128) -> u128 {
    size.saturating_mul(2)
}

/// Finds the order of pairwise steps for `p` under `options`.
pub(crate) fn search(p: &Problem<'_>, options: &EinsumOptions) -> Result<SsaPath> {
    let n = p.sets.len();
    if let PathStrategy::Explicit(linear) = &options.strategy {
        return from_linear(n, linear);
    }
    if n <= 1 {
        return Ok(Vec::new());
    }
    let limit = options.memory_limit.map(|l| l as u128);
    let exact = match options.strategy {
        PathStrategy::Optimal if n > OPTIMAL_MAX_OPERANDS => {
            return fail(EinsumError::TooManyOperands { operands: n, max: OPTIMAL_MAX_OPERANDS });
        }
        PathStrategy::Optimal => true,
        _ => n <= AUTO_OPTIMAL_MAX_OPERANDS,
    };
    if exact {
        match optimal::optimal(p, limit) {
            Some(path) => Ok(path),
            None => {
                fail(EinsumError::MemoryLimit { limit: limit.unwrap_or(u128::MAX), needed: optimal::smallest_peak(p) })
            }
        }
    } else {
        greedy::greedy(p, limit)
            .or_else(|needed| fail(EinsumError::MemoryLimit { limit: limit.unwrap_or(u128::MAX), needed }))
    }
}

/// Checks a numpy-style linear path and converts it to SSA form.
fn from_linear(n: usize, linear: &[(usize, usize)]) -> Result<SsaPath> {
    let mut current: Vec<usize> = (0..n).collect();
    let mut ssa = Vec::with_capacity(linear.len());
    for (s, &(i, j)) in linear.iter().enumerate() {
        let len = current.len();
        if i == j || i >= len || j >= len {
            return fail(EinsumError::InvalidPath {
                reason: format!("step {s} names positions ({i}, {j}) of a list of {len} operand(s)"),
            });
        }
        let (a, b) = (current[i], current[j]);
        current.remove(i.max(j));
        current.remove(i.min(j));
        ssa.push((a, b));
        current.push(n + s);
    }
    if current.len() > 1 {
        return fail(EinsumError::InvalidPath {
            reason: format!("it leaves {} operands uncontracted; a path contracts them to one", current.len()),
        });
    }
    Ok(ssa)
}

#[cfg(test)]
mod tests;
