//! The inspectable result of planning: the chosen path, each step's subscripts (in the
//! memory order of its operands and result), shape and flops, and the totals, printable
//! like `np.einsum_path`.

use std::fmt;

/// What a step of a [`ContractionPath`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StepKind {
    /// Sums labels only one operand has (after taking its diagonals).
    Reduce,
    /// A pairwise contraction: one `dot_general`.
    Contract,
    /// A pairwise product that sums nothing (outer or elementwise): one multiply.
    Multiply,
    /// The final copy into the output's axis order.
    Transpose,
}

impl StepKind {
    /// The kind's name as printed.
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Reduce => "reduce",
            StepKind::Contract => "contract",
            StepKind::Multiply => "multiply",
            StepKind::Transpose => "transpose",
        }
    }
}

/// One step of a [`ContractionPath`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathStep {
    pub(crate) kind: StepKind,
    pub(crate) operands: Vec<usize>,
    pub(crate) subscripts: String,
    pub(crate) shape: Vec<usize>,
    pub(crate) flops: u128,
}

impl PathStep {
    /// What the step does.
    pub fn kind(&self) -> StepKind {
        self.kind
    }

    /// The tensors it reads, as SSA ids: operands are `0..n`, pair step `s` produces
    /// `n + s`.
    pub fn operands(&self) -> &[usize] {
        &self.operands
    }

    /// Its subscripts, each term in the memory order of that tensor (`ikj,jl->ikl`).
    /// Ellipsis axes print as Greek letters (`α`, `β`, ...), outermost first.
    pub fn subscripts(&self) -> &str {
        &self.subscripts
    }

    /// The shape of its result.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Its flops (opt_einsum's count; 0 for the transpose).
    pub fn flops(&self) -> u128 {
        self.flops
    }
}

/// The plan of an einsum expression, like `np.einsum_path`'s report.
///
/// ```
/// use strata_einsum::{EinsumOptions, StepKind, einsum_path};
/// let path = einsum_path("ij,jk,kl->il", &[&[2, 3], &[3, 4], &[4, 5]], &EinsumOptions::new())?;
/// assert_eq!(path.flops(), 128); // opt_einsum's count (numpy prints one more)
/// assert_eq!(path.naive_flops(), 360);
/// assert_eq!(path.linear(), &[(0, 1), (0, 1)]);
/// assert!(path.steps().iter().all(|s| s.kind() == StepKind::Contract));
/// println!("{path}");
/// # Ok::<(), strata_tensor::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractionPath {
    spec: String,
    input_shapes: Vec<Vec<usize>>,
    output_shape: Vec<usize>,
    strategy: &'static str,
    steps: Vec<PathStep>,
    linear: Vec<(usize, usize)>,
    naive_flops: u128,
}

impl ContractionPath {
    pub(crate) fn new(
        input_shapes: Vec<Vec<usize>>,
        output_shape: Vec<usize>,
        strategy: &'static str,
        steps: Vec<PathStep>,
        linear: Vec<(usize, usize)>,
        naive_flops: u128,
    ) -> Self {
        ContractionPath { spec: String::new(), input_shapes, output_shape, strategy, steps, linear, naive_flops }
    }

    pub(crate) fn with_spec(mut self, spec: String) -> Self {
        self.spec = spec;
        self
    }

    /// The expression with its output made explicit.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// Every step in execution order: single-operand reductions, pair steps, the final
    /// transpose if one is needed.
    pub fn steps(&self) -> &[PathStep] {
        &self.steps
    }

    /// The pair steps in numpy's linear form (`np.einsum(..., optimize=['einsum_path',
    /// *linear])` takes the same order; so does [`crate::PathStrategy::Explicit`]).
    pub fn linear(&self) -> &[(usize, usize)] {
        &self.linear
    }

    /// The strategy that chose the path.
    pub fn strategy(&self) -> &str {
        self.strategy
    }

    /// The operand shapes it was planned for.
    pub fn input_shapes(&self) -> &[Vec<usize>] {
        &self.input_shapes
    }

    /// The result's shape.
    pub fn output_shape(&self) -> &[usize] {
        &self.output_shape
    }

    /// The total flops of the steps (opt_einsum's count).
    pub fn flops(&self) -> u128 {
        self.steps.iter().fold(0u128, |a, s| a.saturating_add(s.flops))
    }

    /// The flops of one loop nest over all labels (numpy's "naive" count).
    pub fn naive_flops(&self) -> u128 {
        self.naive_flops
    }

    /// Naive over optimised flops.
    pub fn speedup(&self) -> f64 {
        self.naive_flops as f64 / (self.flops().max(1)) as f64
    }

    /// The most elements any step produces.
    pub fn largest_intermediate(&self) -> u128 {
        self.steps.iter().map(|s| s.shape.iter().fold(1u128, |a, &d| a.saturating_mul(d as u128))).max().unwrap_or(0)
    }
}

impl fmt::Display for ContractionPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rule = "-".repeat(88);
        writeln!(f, "  Complete contraction:  {}", self.spec)?;
        writeln!(f, "              Strategy:  {}", self.strategy)?;
        writeln!(f, "      Naive FLOP count:  {:.3e}", self.naive_flops as f64)?;
        writeln!(f, "  Optimized FLOP count:  {:.3e}", self.flops() as f64)?;
        writeln!(f, "   Theoretical speedup:  {:.3}", self.speedup())?;
        writeln!(f, "  Largest intermediate:  {:.3e} elements", self.largest_intermediate() as f64)?;
        writeln!(f, "{rule}")?;
        writeln!(f, "{:>4}  {:<9}  {:<32}  {:<22}  {:>10}", "step", "kind", "subscripts", "shape", "flops")?;
        writeln!(f, "{rule}")?;
        for (i, s) in self.steps.iter().enumerate() {
            writeln!(
                f,
                "{:>4}  {:<9}  {:<32}  {:<22}  {:>10.3e}",
                i,
                s.kind.name(),
                s.subscripts,
                format!("{:?}", s.shape),
                s.flops as f64
            )?;
        }
        Ok(())
    }
}
