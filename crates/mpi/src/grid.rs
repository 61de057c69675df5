//! The process grid: ranks arranged as a row-major box of coordinates.

use strata_tensor::{Error, Result};

/// Ranks `0..size` arranged as a box `dims[0] × dims[1] × …`, numbered row-major (the
/// last grid dimension varies fastest), as `MPI_Cart_create` numbers them without
/// reordering.
///
/// ```
/// use strata_mpi::ProcessGrid;
/// let grid = ProcessGrid::new(vec![2, 3])?;
/// assert_eq!(grid.size(), 6);
/// assert_eq!(grid.coords(4), vec![1, 1]);
/// assert_eq!(grid.rank(&[1, 2]), 5);
/// # Ok::<(), strata_tensor::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProcessGrid {
    dims: Vec<usize>,
}

const OP: &str = "process_grid";

impl ProcessGrid {
    /// A grid of these extents (at least one dimension, every extent at least 1).
    pub fn new(dims: Vec<usize>) -> Result<Self> {
        if dims.is_empty() {
            return Err(Error::invalid_argument(OP, "a process grid needs at least one dimension"));
        }
        if let Some(d) = dims.iter().position(|&e| e == 0) {
            return Err(Error::invalid_argument(OP, format!("grid dimension {d} has extent 0 in {dims:?}")));
        }
        if dims.iter().try_fold(1usize, |acc, &e| acc.checked_mul(e)).is_none() {
            return Err(Error::invalid_argument(OP, format!("grid {dims:?} has more ranks than a usize counts")));
        }
        Ok(ProcessGrid { dims })
    }

    /// A one-dimensional grid of `size` ranks.
    pub fn line(size: usize) -> Result<Self> {
        Self::new(vec![size])
    }

    /// The 2-D grid `rows × cols` of `size` ranks that makes SUMMA move the fewest words
    /// for an `m × k` by `k × n` product (see [`ProcessGrid::summa_words_per_rank`]).
    /// Ties go to the squarer grid, then to more rows.
    ///
    /// ```
    /// use strata_mpi::ProcessGrid;
    /// assert_eq!(ProcessGrid::for_matrix_product(4, 1000, 1000, 1000)?.dims(), &[2, 2]);
    /// // A tall product splits its rows.
    /// assert_eq!(ProcessGrid::for_matrix_product(4, 100_000, 500, 100)?.dims(), &[4, 1]);
    /// # Ok::<(), strata_tensor::Error>(())
    /// ```
    pub fn for_matrix_product(size: usize, m: usize, n: usize, k: usize) -> Result<Self> {
        if size == 0 {
            return Err(Error::invalid_argument(OP, "a process grid needs at least one rank"));
        }
        let mut best: Option<(f64, usize, usize)> = None;
        for rows in (1..=size).filter(|r| size.is_multiple_of(*r)) {
            let cols = size / rows;
            let words = Self::summa_words_per_rank(rows, cols, m, n, k);
            // Idle ranks (more grid rows than matrix rows) cost a share of the work.
            let idle = (rows.saturating_sub(m.max(1)) + cols.saturating_sub(n.max(1))) as f64;
            let cost = words + idle * (m as f64) * (n as f64) * (k as f64);
            let squareness = rows.abs_diff(cols);
            let better = match best {
                None => true,
                Some((c, r, cl)) => {
                    cost < c * (1.0 - 1e-12) || (cost <= c * (1.0 + 1e-12) && squareness < r.abs_diff(cl))
                }
            };
            if better {
                best = Some((cost, rows, cols));
            }
        }
        // INVARIANT: rows = 1 always divides `size`, so `best` is set.
        let (_, rows, cols) = best.unwrap_or((0.0, size, 1));
        Self::new(vec![rows, cols])
    }

    /// Words (elements) one rank receives in SUMMA on a `rows × cols` grid for an
    /// `m × k` by `k × n` product, when A is split (rows, cols) and B (rows, cols) and
    /// every panel is broadcast along its grid row or column: its A block row
    /// `m/rows × k` less the share it holds, plus its B block column `k × n/cols` less
    /// its share.
    pub fn summa_words_per_rank(rows: usize, cols: usize, m: usize, n: usize, k: usize) -> f64 {
        let (r, c) = (rows as f64, cols as f64);
        let (m, n, k) = (m as f64, n as f64, k as f64);
        m * k / r * (1.0 - 1.0 / c) + k * n / c * (1.0 - 1.0 / r)
    }

    /// The extents.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The number of grid dimensions.
    pub fn ndim(&self) -> usize {
        self.dims.len()
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.dims.iter().product()
    }

    /// The coordinates of `rank` (row-major). Meaningful for `rank < size()`.
    pub fn coords(&self, rank: usize) -> Vec<usize> {
        let mut coords = vec![0; self.dims.len()];
        let mut rest = rank;
        for (c, &d) in coords.iter_mut().zip(&self.dims).rev() {
            *c = rest % d;
            rest /= d;
        }
        coords
    }

    /// The rank at `coords` (row-major). Meaningful for coordinates inside the grid.
    pub fn rank(&self, coords: &[usize]) -> usize {
        coords.iter().zip(&self.dims).fold(0, |acc, (&c, &d)| acc * d + c)
    }
}

impl std::fmt::Display for ProcessGrid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.dims.iter().map(|d| d.to_string()).collect();
        write!(f, "{}", parts.join("x"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coords_and_rank_are_inverse_row_major() {
        let grid = ProcessGrid::new(vec![3, 1, 4]).unwrap();
        let mut seen = Vec::new();
        for rank in 0..grid.size() {
            let c = grid.coords(rank);
            assert!(c.iter().zip(grid.dims()).all(|(&c, &d)| c < d));
            assert_eq!(grid.rank(&c), rank);
            seen.push(c);
        }
        // Row-major: the last dimension varies fastest.
        assert_eq!(seen[1], vec![0, 0, 1]);
        assert_eq!(seen[4], vec![1, 0, 0]);
    }

    #[test]
    fn bad_grids_are_typed_errors() {
        assert!(ProcessGrid::new(vec![]).is_err());
        let e = ProcessGrid::new(vec![2, 0]).unwrap_err();
        assert!(e.to_string().contains("extent 0"), "{e}");
        assert!(ProcessGrid::new(vec![usize::MAX, 2]).is_err());
        assert!(ProcessGrid::for_matrix_product(0, 1, 1, 1).is_err());
    }

    /// The chosen grid is the cheapest of all factorizations by the volume formula,
    /// checked by brute force against a direct evaluation.
    #[test]
    fn matrix_grid_minimises_summa_volume() {
        for size in 1..=12 {
            for &(m, n, k) in &[(64, 64, 64), (4096, 64, 64), (64, 4096, 64), (100, 300, 7), (5, 5, 1000)] {
                let g = ProcessGrid::for_matrix_product(size, m, n, k).unwrap();
                assert_eq!(g.size(), size);
                let chosen = ProcessGrid::summa_words_per_rank(g.dims()[0], g.dims()[1], m, n, k);
                // Grids that leave ranks without rows or columns are only a last resort.
                let busy = |rows: usize, cols: usize| rows <= m && cols <= n;
                let any_busy = (1..=size).any(|r| size.is_multiple_of(r) && busy(r, size / r));
                assert!(!any_busy || busy(g.dims()[0], g.dims()[1]), "size {size} {m}x{n}x{k}: {g} idles ranks");
                for rows in (1..=size).filter(|r| size.is_multiple_of(*r) && busy(*r, size / r)) {
                    let other = ProcessGrid::summa_words_per_rank(rows, size / rows, m, n, k);
                    assert!(chosen <= other * (1.0 + 1e-9), "size {size} {m}x{n}x{k}: {g} moves {chosen} > {other}");
                }
            }
        }
        // A square problem on 4 ranks: 2x2, each rank receives half its block row and column.
        let words = ProcessGrid::summa_words_per_rank(2, 2, 8, 8, 8);
        assert_eq!(words, 8.0 * 8.0 / 2.0 * 0.5 * 2.0);
    }
}
