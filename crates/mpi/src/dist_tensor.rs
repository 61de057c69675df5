//! A dense tensor distributed over a process grid: its global shape, its
//! [`Distribution`] and this rank's local block.

use strata_tensor::{DType, Error, Result, Scalar, Tensor, TypedTensor};

use crate::distribution::{Distribution, for_each_index};

/// One rank's view of a distributed dense tensor: the global shape, the distribution
/// and the local block this rank holds (a compact row-major [`Tensor`] of shape
/// [`Distribution::local_shape`]).
///
/// Creating one from a generator needs no communication; moving data between ranks
/// (scatter, gather, redistribution, contraction) goes through [`crate::MpiContext`]
/// (feature `mpi`).
///
/// ```
/// use strata_mpi::{AxisLayout, DistTensor, Distribution, ProcessGrid};
/// let dist = Distribution::new(ProcessGrid::line(2)?, vec![AxisLayout::Block { grid_dim: 0 }, AxisLayout::Whole])?;
/// // Rank 1's half of a 4 x 3 matrix whose entry (i, j) is 10 i + j.
/// let t = DistTensor::from_fn(&[4, 3], dist, 1, |ix| (10 * ix[0] + ix[1]) as f64)?;
/// assert_eq!(t.local().shape(), &[2, 3]);
/// assert_eq!(t.local().as_typed::<f64>()?.data()[0], 20.0);
/// # Ok::<(), strata_tensor::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct DistTensor {
    shape: Vec<usize>,
    distribution: Distribution,
    grid_rank: usize,
    local: Tensor,
}

impl DistTensor {
    /// The block of grid rank `grid_rank`, each element made by `f` from its global index.
    pub fn from_fn<T: Scalar>(
        shape: &[usize],
        distribution: Distribution,
        grid_rank: usize,
        mut f: impl FnMut(&[usize]) -> T,
    ) -> Result<Self> {
        check_rank_in_grid(&distribution, grid_rank)?;
        let local_shape = distribution.local_shape(shape, grid_rank)?;
        let coords = distribution.grid().coords(grid_rank);
        let mut data = Vec::new();
        data.try_reserve_exact(local_shape.iter().product()).map_err(|_| {
            Error::runtime_state("dist_tensor", format!("cannot allocate a local block of shape {local_shape:?}"))
        })?;
        for_each_index(&local_shape, |l| data.push(f(&distribution.global_index(shape, &coords, l))));
        let local = T::into_tensor(TypedTensor::from_vec(data, &local_shape)?);
        Ok(DistTensor { shape: shape.to_vec(), distribution, grid_rank, local })
    }

    /// Wraps a local block that this rank already holds. Its shape must be the block
    /// shape the distribution gives grid rank `grid_rank`.
    pub fn from_local(shape: &[usize], distribution: Distribution, grid_rank: usize, local: Tensor) -> Result<Self> {
        check_rank_in_grid(&distribution, grid_rank)?;
        let expected = distribution.local_shape(shape, grid_rank)?;
        if local.shape() != expected.as_slice() {
            return Err(Error::shape_mismatch(
                "dist_tensor",
                format!(
                    "grid rank {grid_rank}'s block of a {shape:?} tensor laid out {distribution} has shape \
                     {expected:?}, the local tensor has {:?}",
                    local.shape()
                ),
            ));
        }
        Ok(DistTensor { shape: shape.to_vec(), distribution, grid_rank, local })
    }

    /// The global shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.local.dtype()
    }

    /// The distribution.
    pub fn distribution(&self) -> &Distribution {
        &self.distribution
    }

    /// This rank's position in the grid (its rank in the communicator).
    pub fn grid_rank(&self) -> usize {
        self.grid_rank
    }

    /// This rank's local block.
    pub fn local(&self) -> &Tensor {
        &self.local
    }

    /// This rank's local block, mutably (its shape cannot change).
    pub fn local_mut(&mut self) -> &mut Tensor {
        &mut self.local
    }

    /// The local block, giving up the distributed wrapper.
    pub fn into_local(self) -> Tensor {
        self.local
    }
}

fn check_rank_in_grid(distribution: &Distribution, grid_rank: usize) -> Result<()> {
    if grid_rank >= distribution.grid().size() {
        return Err(Error::invalid_argument(
            "dist_tensor",
            format!(
                "rank {grid_rank} is outside the grid {} of {} ranks",
                distribution.grid(),
                distribution.grid().size()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AxisLayout, ProcessGrid};

    /// Every rank's generated block, reassembled by the distribution's index map, is the
    /// whole tensor made by the generator (each element once per replica).
    #[test]
    fn generated_blocks_reassemble_the_global_tensor() {
        let grid = ProcessGrid::new(vec![2, 2]).unwrap();
        let shape = [5, 3, 7];
        let dist = Distribution::new(
            grid.clone(),
            vec![
                AxisLayout::Block { grid_dim: 1 },
                AxisLayout::Whole,
                AxisLayout::BlockCyclic { grid_dim: 0, block: 2 },
            ],
        )
        .unwrap();
        let value = |ix: &[usize]| (ix[0] * 100 + ix[1] * 10 + ix[2]) as i64;
        let mut seen = std::collections::HashMap::new();
        for rank in 0..4 {
            let t = DistTensor::from_fn(&shape, dist.clone(), rank, value).unwrap();
            let coords = grid.coords(rank);
            let data = t.local().as_typed::<i64>().unwrap().data().to_vec();
            let mut k = 0;
            for_each_index(t.local().shape(), |l| {
                let g = dist.global_index(&shape, &coords, l);
                assert_eq!(data[k], value(&g));
                *seen.entry(g).or_insert(0) += 1;
                k += 1;
            });
        }
        assert_eq!(seen.len(), 5 * 3 * 7);
        assert!(seen.values().all(|&n| n == 1));
    }

    #[test]
    fn wrong_local_blocks_and_ranks_are_typed_errors() {
        let dist = Distribution::new(ProcessGrid::line(3).unwrap(), vec![AxisLayout::Block { grid_dim: 0 }]).unwrap();
        let e = DistTensor::from_local(&[7], dist.clone(), 0, Tensor::zeros(DType::F32, &[2]).unwrap()).unwrap_err();
        assert_eq!(e.kind(), strata_tensor::ErrorKind::ShapeMismatch);
        assert!(e.to_string().contains("[3]"), "{e}");
        assert!(DistTensor::from_fn(&[7], dist.clone(), 3, |_| 0.0f32).is_err());
        let t = DistTensor::from_local(&[7], dist, 2, Tensor::zeros(DType::C64, &[1]).unwrap()).unwrap();
        assert_eq!(t.dtype(), DType::C64);
    }
}
