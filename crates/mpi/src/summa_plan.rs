//! The plan of a distributed `dot_general` by SUMMA: which axes carry the matrix form's
//! rows, columns and contraction, the 2-D process grid, the operands' and result's
//! distributions, the panel width, and the words every rank receives.
//!
//! The contraction's matrix form groups the axes as the single-node planner does:
//! batch axes, lhs free axes (rows M), rhs free axes (columns N), contracted pairs (K).
//! SUMMA splits one axis of each group, the one with the largest extent (in tensor
//! networks the bond dimension): M's over grid rows, N's over grid columns, and K's in
//! panels dealt cyclically over the grid columns (lhs) and rows (rhs). All other axes
//! stay whole, so every rank's blocks are ordinary tensors with the operands' axes and
//! each step is one local `dot_general` with the caller's config.

use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{Error, Result};

use crate::distribution::{AxisLayout, AxisSplit, Distribution};
use crate::grid::ProcessGrid;

const OP: &str = "distributed_dot_general";

/// Inner dimension one SUMMA step aims for: faer runs near its peak from a few hundred
/// on, and fewer, larger steps pay less per-step overhead.
pub const TARGET_PANEL_DEPTH: usize = 512;

/// Caller's choices for a distributed `dot_general`; the defaults pick everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SummaOptions {
    /// The 2-D grid (default: [`ProcessGrid::for_matrix_product`] of the matrix form).
    pub grid: Option<ProcessGrid>,
    /// Panel width along the split contracted axis (default: a step depth of about
    /// [`TARGET_PANEL_DEPTH`] multiply-adds per output element).
    pub panel: Option<usize>,
    /// Broadcast each step's panels right before it instead of during the previous
    /// step's product (default: overlapped; this switch exists to measure the overlap).
    pub no_overlap: bool,
    /// Conjugate the lhs (complex dtypes; ignored for real ones).
    pub conj_lhs: bool,
    /// Conjugate the rhs (complex dtypes; ignored for real ones).
    pub conj_rhs: bool,
}

/// A planned SUMMA contraction (see the module docs). Pure: the same on every rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaPlan {
    /// The 2-D grid `rows × cols`.
    pub grid: ProcessGrid,
    /// The lhs free axis split over grid rows, if the lhs has free axes.
    pub m_axis: Option<usize>,
    /// The rhs free axis split over grid columns, if the rhs has free axes.
    pub n_axis: Option<usize>,
    /// The contracted pair `(lhs axis, rhs axis)` cut into panels, if any axis is contracted.
    pub k_axes: Option<(usize, usize)>,
    /// Panel width along the split contracted axis.
    pub panel: usize,
    /// The lhs layout SUMMA reads.
    pub lhs: Distribution,
    /// The rhs layout SUMMA reads.
    pub rhs: Distribution,
    /// The result's layout.
    pub out: Distribution,
    /// The result's global shape.
    pub out_shape: Vec<usize>,
    lhs_shape: Vec<usize>,
    rhs_shape: Vec<usize>,
}

/// The index of the largest extent among `axes` (the first on ties).
fn largest(axes: &[usize], shape: &[usize]) -> Option<usize> {
    axes.iter().copied().fold(None, |best, a| match best {
        Some(b) if shape[b] >= shape[a] => Some(b),
        _ => Some(a),
    })
}

impl SummaPlan {
    /// Plans `dot_general(lhs, rhs, config)` over `ranks` ranks.
    ///
    /// ```
    /// use strata_mpi::{SummaOptions, SummaPlan};
    /// use strata_tensor::config::DotGeneralConfig;
    /// let plan = SummaPlan::new(&[64, 32], &[32, 48], &DotGeneralConfig::matmul(), 4, &SummaOptions::default())?;
    /// assert_eq!(plan.grid.dims(), &[2, 2]);
    /// assert_eq!((plan.m_axis, plan.n_axis, plan.k_axes), (Some(0), Some(1), Some((1, 0))));
    /// assert_eq!(plan.steps(), 2); // two panels of 16 along k
    /// # Ok::<(), strata_tensor::Error>(())
    /// ```
    pub fn new(
        lhs_shape: &[usize],
        rhs_shape: &[usize],
        config: &DotGeneralConfig,
        ranks: usize,
        options: &SummaOptions,
    ) -> Result<Self> {
        let out_shape = config.output_shape(lhs_shape, rhs_shape).map_err(|e| e.in_op(OP))?;
        let lhs_free = config.lhs_free(lhs_shape.len());
        let rhs_free = config.rhs_free(rhs_shape.len());
        let m_axis = largest(&lhs_free, lhs_shape);
        let n_axis = largest(&rhs_free, rhs_shape);
        let k_pos = (0..config.lhs_contracting.len()).fold(None, |best: Option<usize>, i| match best {
            Some(b) if lhs_shape[config.lhs_contracting[b]] >= lhs_shape[config.lhs_contracting[i]] => Some(b),
            _ => Some(i),
        });
        let k_axes = k_pos.map(|i| (config.lhs_contracting[i], config.rhs_contracting[i]));
        let k: usize = config.lhs_contracting.iter().map(|&a| lhs_shape[a]).product();

        let grid = match &options.grid {
            Some(g) => {
                if g.ndim() != 2 || g.size() != ranks {
                    return Err(Error::invalid_argument(
                        OP,
                        format!("SUMMA needs a 2-D grid of {ranks} ranks, the options give {g}"),
                    ));
                }
                g.clone()
            }
            None => {
                // A side without free axes has nothing to split: put every rank on the other.
                let (m_ext, n_ext) = (m_axis.map_or(1, |a| lhs_shape[a]), n_axis.map_or(1, |a| rhs_shape[a]));
                ProcessGrid::for_matrix_product(ranks, m_ext.max(1), n_ext.max(1), k)?.with_fallback_for(
                    m_axis.is_some(),
                    n_axis.is_some(),
                    ranks,
                )?
            }
        };
        let (rows, cols) = (grid.dims()[0], grid.dims()[1]);

        let k_extent = k_axes.map_or(1, |(l, _)| lhs_shape[l]);
        let k_rest = (k / k_extent.max(1)).max(1);
        let panel = match options.panel {
            Some(0) => return Err(Error::invalid_argument(OP, "the panel width must be at least 1")),
            Some(p) => p,
            None => TARGET_PANEL_DEPTH.div_ceil(k_rest).min(k_extent.div_ceil(rows.max(cols))).max(1),
        };

        let mut lhs_axes = vec![AxisLayout::Whole; lhs_shape.len()];
        let mut rhs_axes = vec![AxisLayout::Whole; rhs_shape.len()];
        let mut out_axes = vec![AxisLayout::Whole; out_shape.len()];
        let batch = config.lhs_batch.len();
        if let Some(a) = m_axis {
            lhs_axes[a] = AxisLayout::Block { grid_dim: 0 };
            let pos = batch + lhs_free.iter().position(|&x| x == a).unwrap_or(0);
            out_axes[pos] = AxisLayout::Block { grid_dim: 0 };
        }
        if let Some(a) = n_axis {
            rhs_axes[a] = AxisLayout::Block { grid_dim: 1 };
            let pos = batch + lhs_free.len() + rhs_free.iter().position(|&x| x == a).unwrap_or(0);
            out_axes[pos] = AxisLayout::Block { grid_dim: 1 };
        }
        if let Some((l, r)) = k_axes {
            lhs_axes[l] = AxisLayout::BlockCyclic { grid_dim: 1, block: panel };
            rhs_axes[r] = AxisLayout::BlockCyclic { grid_dim: 0, block: panel };
        }
        Ok(SummaPlan {
            lhs: Distribution::new(grid.clone(), lhs_axes)?,
            rhs: Distribution::new(grid.clone(), rhs_axes)?,
            out: Distribution::new(grid.clone(), out_axes)?,
            grid,
            m_axis,
            n_axis,
            k_axes,
            panel,
            out_shape,
            lhs_shape: lhs_shape.to_vec(),
            rhs_shape: rhs_shape.to_vec(),
        })
    }

    /// The number of SUMMA steps (panels along the split contracted axis; 1 without one).
    pub fn steps(&self) -> usize {
        self.k_axes.map_or(1, |(l, _)| self.lhs_shape[l].div_ceil(self.panel).max(1))
    }

    /// The split of the contracted axis (lhs side over grid columns, rhs over rows).
    pub(crate) fn k_splits(&self) -> Option<(AxisSplit, AxisSplit)> {
        let (l, _) = self.k_axes?;
        let extent = self.lhs_shape[l];
        let (rows, cols) = (self.grid.dims()[0], self.grid.dims()[1]);
        Some((
            AxisSplit { extent, block: self.panel, parts: cols },
            AxisSplit { extent, block: self.panel, parts: rows },
        ))
    }

    /// Step `t`'s panel: its width, its owning grid column (lhs) and row (rhs), and
    /// where it starts in the owners' local blocks.
    pub(crate) fn panel_of(&self, t: usize) -> Option<PanelStep> {
        let (ls, rs) = self.k_splits()?;
        let start = t * self.panel;
        let width = self.panel.min(ls.extent - start);
        let (owner_col, lhs_local) = ls.owner(start);
        let (owner_row, rhs_local) = rs.owner(start);
        Some(PanelStep { width, owner_col, owner_row, lhs_local, rhs_local })
    }

    /// The shape of grid rank `rank`'s lhs panel at step `t` (its block with the
    /// contracted axis cut to the panel), and the same for the rhs.
    pub(crate) fn panel_shapes(&self, rank: usize, t: usize) -> Result<(Vec<usize>, Vec<usize>)> {
        let mut lhs = self.lhs.local_shape(&self.lhs_shape, rank)?;
        let mut rhs = self.rhs.local_shape(&self.rhs_shape, rank)?;
        if let (Some((l, r)), Some(step)) = (self.k_axes, self.panel_of(t)) {
            lhs[l] = step.width;
            rhs[r] = step.width;
        }
        Ok((lhs, rhs))
    }

    /// Elements grid rank `rank` receives over the whole contraction: the lhs panels
    /// owned by other grid columns and the rhs panels owned by other grid rows.
    pub fn words_received(&self, rank: usize) -> Result<u64> {
        let coords = self.grid.coords(rank);
        let mut words = 0u64;
        for t in 0..self.steps() {
            let Some(step) = self.panel_of(t) else { break };
            let (lhs, rhs) = self.panel_shapes(rank, t)?;
            if step.owner_col != coords[1] && self.grid.dims()[1] > 1 {
                words += lhs.iter().product::<usize>() as u64;
            }
            if step.owner_row != coords[0] && self.grid.dims()[0] > 1 {
                words += rhs.iter().product::<usize>() as u64;
            }
        }
        Ok(words)
    }

    /// The most elements any rank receives ([`SummaPlan::words_received`] maximised).
    pub fn max_words_received(&self) -> Result<u64> {
        (0..self.grid.size()).try_fold(0, |acc, r| Ok(acc.max(self.words_received(r)?)))
    }

    /// The matrix form's extents `(batch, m, n, k)`.
    pub fn matrix_form(&self, config: &DotGeneralConfig) -> (usize, usize, usize, usize) {
        let product = |axes: &[usize], shape: &[usize]| axes.iter().map(|&a| shape[a]).product::<usize>();
        (
            product(&config.lhs_batch, &self.lhs_shape),
            product(&config.lhs_free(self.lhs_shape.len()), &self.lhs_shape),
            product(&config.rhs_free(self.rhs_shape.len()), &self.rhs_shape),
            product(&config.lhs_contracting, &self.lhs_shape),
        )
    }
}

/// One SUMMA step's panel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PanelStep {
    pub width: usize,
    pub owner_col: usize,
    pub owner_row: usize,
    pub lhs_local: usize,
    pub rhs_local: usize,
}

impl ProcessGrid {
    /// A matrix side without free axes cannot be split: its grid extent becomes 1.
    fn with_fallback_for(self, has_rows: bool, has_cols: bool, ranks: usize) -> Result<Self> {
        match (has_rows, has_cols) {
            (true, true) => Ok(self),
            (false, true) => ProcessGrid::new(vec![1, ranks]),
            (true, false) | (false, false) => ProcessGrid::new(vec![ranks, 1]),
        }
    }
}

/// A lower bound on the elements some rank must receive or send in any parallel
/// classical `m × k` by `k × n` product on `ranks` ranks that starts with every matrix
/// spread evenly and not replicated.
///
/// Some rank performs at least `F = mnk / P` multiply-adds; by the Loomis–Whitney
/// inequality the A, B and C elements it touches, `a`, `b`, `c`, satisfy `abc ≥ F²`,
/// with `a ≤ mk`, `b ≤ kn`, `c ≤ mn`. The bound is the least `a + b + c` under those
/// constraints (each capped variable fixed at its cap in turn, the rest balanced by
/// AM–GM) less the `(mk + kn + mn) / P` elements the rank holds at the start. For
/// square matrices on enough ranks it is `3 (n³/P)^(2/3) − 3n²/P`.
///
/// ```
/// use strata_mpi::summa_plan::matmul_lower_bound_words;
/// // Two ranks, square n: 3 (n³/2)^(2/3) − 1.5 n² ≈ 0.39 n².
/// let n = 4096.0;
/// let bound = matmul_lower_bound_words(2, 4096, 4096, 4096);
/// assert!((bound / (n * n) - (3.0 * 0.5f64.powf(2.0 / 3.0) - 1.5)).abs() < 1e-9);
/// assert_eq!(matmul_lower_bound_words(1, 10, 10, 10), 0.0);
/// ```
pub fn matmul_lower_bound_words(ranks: usize, m: usize, n: usize, k: usize) -> f64 {
    let p = ranks.max(1) as f64;
    let (m, n, k) = (m as f64, n as f64, k as f64);
    let f2 = (m * n * k / p).powi(2);
    let mut caps = [m * k, k * n, m * n];
    caps.sort_by(f64::total_cmp);
    let accessed = if f2 == 0.0 {
        0.0
    } else if f2.cbrt() <= caps[0] {
        3.0 * f2.cbrt()
    } else if (f2 / caps[0]).sqrt() <= caps[1] {
        caps[0] + 2.0 * (f2 / caps[0]).sqrt()
    } else {
        caps[0] + caps[1] + f2 / (caps[0] * caps[1])
    };
    (accessed - (caps[0] + caps[1] + caps[2]) / p).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distribution::for_each_index;

    fn cfg(lb: &[usize], rb: &[usize], lc: &[usize], rc: &[usize]) -> DotGeneralConfig {
        DotGeneralConfig::new(lb.to_vec(), rb.to_vec(), lc.to_vec(), rc.to_vec())
    }

    /// The plan's model of received words against a brute-force count: for every step,
    /// every rank, every element of the panel it needs, whether it holds it already.
    #[test]
    fn words_received_match_an_element_count() {
        type Case = (Vec<usize>, Vec<usize>, DotGeneralConfig, usize, Option<usize>);
        let cases: Vec<Case> = vec![
            (vec![12, 10], vec![10, 9], DotGeneralConfig::matmul(), 4, Some(3)),
            (vec![12, 10], vec![10, 9], DotGeneralConfig::matmul(), 6, None),
            (vec![3, 8, 5, 2], vec![3, 5, 7], cfg(&[0], &[0], &[2], &[1]), 4, Some(2)),
            (vec![4, 6, 3], vec![3, 6, 5], cfg(&[], &[], &[1, 2], &[1, 0]), 3, Some(4)),
            (vec![9, 7], vec![7], cfg(&[], &[], &[1], &[0]), 4, None),
        ];
        for (ls, rs, config, ranks, panel) in cases {
            let options = SummaOptions { panel, ..SummaOptions::default() };
            let plan = SummaPlan::new(&ls, &rs, &config, ranks, &options).unwrap();
            let (l, r) = plan.k_axes.unwrap();
            let (rows, cols) = (plan.grid.dims()[0], plan.grid.dims()[1]);
            for rank in 0..ranks {
                let coords = plan.grid.coords(rank);
                let mut count = 0u64;
                // Lhs elements rank needs: its block row's elements (rows by the M split,
                // every k), held when their k index is owned by its grid column.
                let lhs_local = plan.lhs.local_shape(&ls, rank).unwrap();
                let mut need_shape = lhs_local.clone();
                need_shape[l] = ls[l];
                for_each_index(&need_shape, |ix| {
                    let owner_col = (ix[l] / plan.panel) % cols;
                    if owner_col != coords[1] {
                        count += 1;
                    }
                });
                let rhs_local = plan.rhs.local_shape(&rs, rank).unwrap();
                let mut need_shape = rhs_local.clone();
                need_shape[r] = rs[r];
                for_each_index(&need_shape, |ix| {
                    let owner_row = (ix[r] / plan.panel) % rows;
                    if owner_row != coords[0] {
                        count += 1;
                    }
                });
                assert_eq!(plan.words_received(rank).unwrap(), count, "{ls:?} {rs:?} rank {rank} grid {}", plan.grid);
            }
        }
    }

    #[test]
    fn axes_grids_and_panels() {
        // A tensor-network step: [chi, d, chi] x [chi, d, d, chi] contracting the bond and
        // one physical axis: the largest free axes carry rows and columns.
        let config = cfg(&[], &[], &[2, 1], &[0, 1]);
        let plan = SummaPlan::new(&[64, 4, 64], &[64, 4, 4, 64], &config, 2, &SummaOptions::default()).unwrap();
        assert_eq!(plan.m_axis, Some(0));
        assert_eq!(plan.n_axis, Some(3));
        assert_eq!(plan.k_axes, Some((2, 0)));
        // Depth per step ~512 = panel x 4 (the other contracted axis), capped by k / 2.
        assert_eq!(plan.panel, 32);
        assert_eq!(plan.out_shape, vec![64, 4, 64]);
        assert_eq!(plan.out.axes()[0], AxisLayout::Block { grid_dim: 0 });
        assert_eq!(plan.out.axes()[2], AxisLayout::Block { grid_dim: 1 });

        // No rhs free axis (matrix-vector): every rank on the rows.
        let mv = SummaPlan::new(&[40, 30], &[30], &cfg(&[], &[], &[1], &[0]), 4, &SummaOptions::default()).unwrap();
        assert_eq!(mv.grid.dims(), &[4, 1]);
        assert_eq!(mv.n_axis, None);

        // An outer product: one step, nothing received.
        let outer = SummaPlan::new(&[8], &[6], &cfg(&[], &[], &[], &[]), 2, &SummaOptions::default()).unwrap();
        assert_eq!(outer.steps(), 1);
        assert_eq!(outer.max_words_received().unwrap(), 0);
    }

    #[test]
    fn bad_plans_are_typed_errors() {
        let e = SummaPlan::new(&[4, 3], &[4, 5], &DotGeneralConfig::matmul(), 2, &SummaOptions::default()).unwrap_err();
        assert_eq!(e.kind(), strata_tensor::ErrorKind::ShapeMismatch);
        assert_eq!(e.op(), OP);
        let grid = Some(ProcessGrid::new(vec![3]).unwrap());
        let e = SummaPlan::new(
            &[4, 4],
            &[4, 4],
            &DotGeneralConfig::matmul(),
            3,
            &SummaOptions { grid, ..Default::default() },
        )
        .unwrap_err();
        assert!(e.to_string().contains("2-D grid"), "{e}");
        let e = SummaPlan::new(
            &[4, 4],
            &[4, 4],
            &DotGeneralConfig::matmul(),
            1,
            &SummaOptions { panel: Some(0), ..Default::default() },
        )
        .unwrap_err();
        assert!(e.to_string().contains("panel"), "{e}");
    }

    /// The bound against a brute-force minimisation of a + b + c over a grid of a and b.
    #[test]
    fn lower_bound_is_the_constrained_minimum() {
        for &(p, m, n, k) in &[(2, 64, 64, 64), (4, 1000, 10, 10), (16, 300, 200, 100), (64, 50, 50, 5000)] {
            let bound = matmul_lower_bound_words(p, m, n, k);
            let (mf, nf, kf) = (m as f64, n as f64, k as f64);
            let f2 = (mf * nf * kf / p as f64).powi(2);
            let mut best = f64::INFINITY;
            // Log-spaced a and b from a millionth of their caps to the caps.
            let steps = 2000;
            let at = |cap: f64, i: usize| cap * 1e-6f64.powf(1.0 - i as f64 / steps as f64);
            for i in 0..=steps {
                for j in 0..=steps {
                    let (a, b) = (at(mf * kf, i), at(kf * nf, j));
                    let c = f2 / (a * b);
                    if c <= mf * nf * (1.0 + 1e-12) {
                        best = best.min(a + b + c);
                    }
                }
            }
            let owned = (mf * kf + kf * nf + mf * nf) / p as f64;
            let accessed = bound + owned;
            assert!(bound > 0.0, "{p} {m}x{n}x{k}");
            assert!(accessed <= best * (1.0 + 1e-9), "{p} {m}x{n}x{k}: {accessed} > {best}");
            assert!(accessed >= best * 0.995, "{p} {m}x{n}x{k}: {accessed} << {best}");
        }
    }
}
