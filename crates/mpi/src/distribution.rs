//! How a dense tensor is split over a process grid: per axis, whole on every rank or
//! dealt in blocks (contiguous or block-cyclic) over one grid dimension.
//!
//! A rank stores its part as one compact row-major tensor (its *local block*): along a
//! split axis, the blocks it owns are concatenated in global order (ScaLAPACK's local
//! storage), so the local index grows with the global index and a rank's local block is
//! itself a tensor the single-node kernels can contract directly.

use strata_tensor::{Error, Result};

use crate::grid::ProcessGrid;

/// How one axis of a tensor is laid out over the process grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AxisLayout {
    /// Every rank holds the whole axis.
    Whole,
    /// One contiguous block per coordinate of grid dimension `grid_dim`: block size
    /// `ceil(extent / dims[grid_dim])`, the last coordinates possibly short or empty.
    Block {
        /// The grid dimension the axis is split over.
        grid_dim: usize,
    },
    /// Blocks of `block` indices dealt round-robin over the coordinates of `grid_dim`
    /// (ScaLAPACK's block-cyclic layout; `block = ceil(extent / p)` is [`AxisLayout::Block`]).
    BlockCyclic {
        /// The grid dimension the axis is split over.
        grid_dim: usize,
        /// Indices per block (at least 1).
        block: usize,
    },
}

impl AxisLayout {
    /// The grid dimension this axis is split over, if any.
    pub fn grid_dim(self) -> Option<usize> {
        match self {
            AxisLayout::Whole => None,
            AxisLayout::Block { grid_dim } | AxisLayout::BlockCyclic { grid_dim, .. } => Some(grid_dim),
        }
    }
}

/// The layout of one split axis with its extent and grid extent resolved: the index
/// arithmetic of block-cyclic storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AxisSplit {
    /// The global extent.
    pub extent: usize,
    /// Indices per block.
    pub block: usize,
    /// Coordinates of the grid dimension.
    pub parts: usize,
}

impl AxisSplit {
    /// How many indices coordinate `coord` holds (ScaLAPACK's `numroc`).
    pub fn local_extent(self, coord: usize) -> usize {
        if self.extent == 0 {
            return 0;
        }
        let blocks = self.extent.div_ceil(self.block);
        let mine = blocks / self.parts + usize::from(coord < blocks % self.parts);
        let mut len = mine * self.block;
        let last = blocks - 1;
        if last % self.parts == coord {
            len -= self.block - (self.extent - last * self.block);
        }
        len
    }

    /// The owning coordinate and the local index of global index `i`.
    pub fn owner(self, i: usize) -> (usize, usize) {
        let b = i / self.block;
        (b % self.parts, (b / self.parts) * self.block + i % self.block)
    }

    /// The global index of local index `l` at coordinate `coord`.
    pub fn global(self, coord: usize, l: usize) -> usize {
        ((l / self.block) * self.parts + coord) * self.block + l % self.block
    }
}

/// A tensor's layout over a process grid: one [`AxisLayout`] per axis. Grid dimensions
/// that no axis uses hold replicas: the ranks that differ only there hold equal blocks.
///
/// ```
/// use strata_mpi::{AxisLayout, Distribution, ProcessGrid};
/// // A 10 x 6 matrix: rows in blocks over grid dim 0, columns cyclic in pairs over dim 1.
/// let grid = ProcessGrid::new(vec![2, 2])?;
/// let dist = Distribution::new(
///     grid,
///     vec![AxisLayout::Block { grid_dim: 0 }, AxisLayout::BlockCyclic { grid_dim: 1, block: 2 }],
/// )?;
/// assert_eq!(dist.local_shape(&[10, 6], 0)?, vec![5, 4]); // columns 0,1,4,5
/// assert_eq!(dist.local_shape(&[10, 6], 3)?, vec![5, 2]); // columns 2,3
/// # Ok::<(), strata_tensor::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Distribution {
    grid: ProcessGrid,
    axes: Vec<AxisLayout>,
}

const OP: &str = "distribution";

impl Distribution {
    /// A distribution with one layout per tensor axis. Each grid dimension splits at most
    /// one axis; block sizes are at least 1.
    pub fn new(grid: ProcessGrid, axes: Vec<AxisLayout>) -> Result<Self> {
        let mut used = vec![None; grid.ndim()];
        for (axis, layout) in axes.iter().enumerate() {
            if let AxisLayout::BlockCyclic { block: 0, .. } = layout {
                return Err(Error::invalid_argument(OP, format!("axis {axis} has block size 0")));
            }
            let Some(g) = layout.grid_dim() else { continue };
            if g >= grid.ndim() {
                return Err(Error::invalid_argument(
                    OP,
                    format!("axis {axis} is split over grid dimension {g}, but the grid {grid} has {}", grid.ndim()),
                ));
            }
            if let Some(first) = used[g] {
                return Err(Error::invalid_argument(
                    OP,
                    format!("axes {first} and {axis} are both split over grid dimension {g}"),
                ));
            }
            used[g] = Some(axis);
        }
        Ok(Distribution { grid, axes })
    }

    /// Every axis whole on every rank of `grid` (a replicated tensor of rank `rank`).
    pub fn replicated(grid: ProcessGrid, rank: usize) -> Self {
        Distribution { grid, axes: vec![AxisLayout::Whole; rank] }
    }

    /// The process grid.
    pub fn grid(&self) -> &ProcessGrid {
        &self.grid
    }

    /// The per-axis layouts.
    pub fn axes(&self) -> &[AxisLayout] {
        &self.axes
    }

    /// Checks that the distribution describes a tensor of `shape`.
    pub fn validate(&self, shape: &[usize]) -> Result<()> {
        if shape.len() != self.axes.len() {
            return Err(Error::shape_mismatch(
                OP,
                format!(
                    "the distribution lays out {} axes, the tensor has shape {shape:?} ({} axes)",
                    self.axes.len(),
                    shape.len()
                ),
            ));
        }
        Ok(())
    }

    /// The resolved split of `axis` of a tensor whose extent there is `extent`, or
    /// `None` when the axis is whole.
    pub(crate) fn split(&self, axis: usize, extent: usize) -> Option<(usize, AxisSplit)> {
        let (grid_dim, block) = match self.axes[axis] {
            AxisLayout::Whole => return None,
            AxisLayout::Block { grid_dim } => (grid_dim, extent.div_ceil(self.grid.dims()[grid_dim]).max(1)),
            AxisLayout::BlockCyclic { grid_dim, block } => (grid_dim, block),
        };
        Some((grid_dim, AxisSplit { extent, block, parts: self.grid.dims()[grid_dim] }))
    }

    /// The shape of the local block held by grid rank `rank`.
    pub fn local_shape(&self, shape: &[usize], rank: usize) -> Result<Vec<usize>> {
        self.validate(shape)?;
        let coords = self.grid.coords(rank);
        Ok((0..shape.len())
            .map(|axis| match self.split(axis, shape[axis]) {
                None => shape[axis],
                Some((g, s)) => s.local_extent(coords[g]),
            })
            .collect())
    }

    #[cfg(test)]
    /// For global index `index`, the coordinates it fixes (`Some` on the grid dimensions
    /// that split an axis; `None` where every coordinate holds a replica) and the local
    /// index inside the owners' blocks.
    pub(crate) fn locate(&self, shape: &[usize], index: &[usize]) -> (Vec<Option<usize>>, Vec<usize>) {
        let mut fixed = vec![None; self.grid.ndim()];
        let local = (0..shape.len())
            .map(|axis| match self.split(axis, shape[axis]) {
                None => index[axis],
                Some((g, s)) => {
                    let (c, l) = s.owner(index[axis]);
                    fixed[g] = Some(c);
                    l
                }
            })
            .collect();
        (fixed, local)
    }

    /// The global index of local index `local` on grid coordinates `coords`.
    pub(crate) fn global_index(&self, shape: &[usize], coords: &[usize], local: &[usize]) -> Vec<usize> {
        (0..shape.len())
            .map(|axis| match self.split(axis, shape[axis]) {
                None => local[axis],
                Some((g, s)) => s.global(coords[g], local[axis]),
            })
            .collect()
    }

    /// A stable digest of the layout (for agreeing across ranks without sending it).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn encode(&self) -> Vec<u64> {
        let mut out = vec![self.grid.ndim() as u64];
        out.extend(self.grid.dims().iter().map(|&d| d as u64));
        out.push(self.axes.len() as u64);
        for layout in &self.axes {
            match *layout {
                AxisLayout::Whole => out.extend([0, 0, 0]),
                AxisLayout::Block { grid_dim } => out.extend([1, grid_dim as u64, 0]),
                AxisLayout::BlockCyclic { grid_dim, block } => out.extend([2, grid_dim as u64, block as u64]),
            }
        }
        out
    }
}

impl std::fmt::Display for Distribution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "grid {} [", self.grid)?;
        for (i, layout) in self.axes.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            match layout {
                AxisLayout::Whole => write!(f, "whole")?,
                AxisLayout::Block { grid_dim } => write!(f, "block/{grid_dim}")?,
                AxisLayout::BlockCyclic { grid_dim, block } => write!(f, "cyclic({block})/{grid_dim}")?,
            }
        }
        write!(f, "]")
    }
}

/// Calls `f` with every multi-index of `shape` in row-major order.
pub(crate) fn for_each_index(shape: &[usize], mut f: impl FnMut(&[usize])) {
    if shape.contains(&0) {
        return;
    }
    let mut index = vec![0; shape.len()];
    loop {
        f(&index);
        let mut axis = shape.len();
        loop {
            if axis == 0 {
                return;
            }
            axis -= 1;
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
}

/// The row-major offset of `index` in a compact tensor of `shape`.
#[cfg(test)]
pub(crate) fn row_major_offset(shape: &[usize], index: &[usize]) -> usize {
    index.iter().zip(shape).fold(0, |acc, (&i, &n)| acc * n + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Block-cyclic index arithmetic against an independent enumeration: deal the blocks
    /// out one by one and record which coordinate gets which index.
    #[test]
    fn block_cyclic_arithmetic_matches_dealing_blocks() {
        for extent in 0..40 {
            for parts in 1..6 {
                for block in 1..9 {
                    let s = AxisSplit { extent, block, parts };
                    let mut held: Vec<Vec<usize>> = vec![Vec::new(); parts];
                    for i in 0..extent {
                        held[(i / block) % parts].push(i);
                    }
                    for (coord, indices) in held.iter().enumerate() {
                        assert_eq!(s.local_extent(coord), indices.len(), "{s:?} coord {coord}");
                        for (l, &i) in indices.iter().enumerate() {
                            assert_eq!(s.owner(i), (coord, l), "{s:?} index {i}");
                            assert_eq!(s.global(coord, l), i, "{s:?} coord {coord} local {l}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_element_has_one_owner_per_replica_set() {
        let grid = ProcessGrid::new(vec![2, 3]).unwrap();
        let shape = [7, 5, 4];
        let dist = Distribution::new(
            grid.clone(),
            vec![
                AxisLayout::BlockCyclic { grid_dim: 1, block: 2 },
                AxisLayout::Whole,
                AxisLayout::Block { grid_dim: 0 },
            ],
        )
        .unwrap();
        let mut count = vec![0usize; shape.iter().product()];
        for rank in 0..grid.size() {
            let coords = grid.coords(rank);
            let local_shape = dist.local_shape(&shape, rank).unwrap();
            for_each_index(&local_shape, |l| {
                let g = dist.global_index(&shape, &coords, l);
                let (fixed, back) = dist.locate(&shape, &g);
                assert_eq!(back, l);
                for (c, f) in coords.iter().zip(&fixed) {
                    assert!(f.is_none_or(|f| f == *c));
                }
                count[row_major_offset(&shape, &g)] += 1;
            });
        }
        // No grid dimension is a replica dimension here: every element lives exactly once.
        assert!(count.iter().all(|&c| c == 1), "{count:?}");

        // Grid dim 1 unused: three replicas of each element.
        let dist = Distribution::new(grid.clone(), vec![AxisLayout::Block { grid_dim: 0 }, AxisLayout::Whole]).unwrap();
        let total: usize =
            (0..grid.size()).map(|r| dist.local_shape(&[9, 2], r).unwrap().iter().product::<usize>()).sum();
        assert_eq!(total, 3 * 18);
    }

    #[test]
    fn bad_distributions_are_typed_errors() {
        let grid = ProcessGrid::new(vec![2, 2]).unwrap();
        let two_on_one = Distribution::new(
            grid.clone(),
            vec![AxisLayout::Block { grid_dim: 0 }, AxisLayout::BlockCyclic { grid_dim: 0, block: 1 }],
        );
        assert!(two_on_one.unwrap_err().to_string().contains("both split over grid dimension 0"));
        let out_of_grid = Distribution::new(grid.clone(), vec![AxisLayout::Block { grid_dim: 2 }]);
        assert!(out_of_grid.unwrap_err().to_string().contains("grid dimension 2"));
        let zero_block = Distribution::new(grid.clone(), vec![AxisLayout::BlockCyclic { grid_dim: 1, block: 0 }]);
        assert!(zero_block.is_err());
        let dist = Distribution::replicated(grid, 2);
        let e = dist.local_shape(&[3, 4, 5], 0).unwrap_err();
        assert_eq!(e.kind(), strata_tensor::ErrorKind::ShapeMismatch);
    }

    #[test]
    fn empty_and_rank_zero_tensors() {
        let grid = ProcessGrid::new(vec![3]).unwrap();
        let dist = Distribution::new(grid.clone(), vec![AxisLayout::Block { grid_dim: 0 }]).unwrap();
        for r in 0..3 {
            assert_eq!(dist.local_shape(&[0], r).unwrap(), vec![0]);
        }
        // Fewer indices than ranks: the last rank holds none.
        assert_eq!(dist.local_shape(&[2], 2).unwrap(), vec![0]);
        let scalar = Distribution::replicated(grid, 0);
        assert_eq!(scalar.local_shape(&[], 1).unwrap(), Vec::<usize>::new());
        let mut n = 0;
        for_each_index(&[], |_| n += 1);
        assert_eq!(n, 1);
    }
}
