//! Moving distributed tensors between layouts: scatter from a root, gather to a root,
//! and redistribution between two distributions, all as one `MPI_Alltoallv`.
//!
//! Every layout here is per axis, so the elements one rank sends another are a
//! Cartesian product: along each axis, the global indices the sender holds that the
//! receiver wants. Both sides enumerate that product in row-major order of global
//! indices (their local order, since local indices grow with global ones), so the
//! counts and the order agree without sending any index.
//! Where the source holds replicas, one replica serves each receiver: the one whose
//! coordinates on the replica grid dimensions are the receiver's rank modulo their
//! extents (spreading the sending over the replicas).

use mpi::collective::CommunicatorCollectives;
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::Communicator;
use strata_tensor::{Error, ErrorKind, Result, Scalar, Tensor, TensorRead, TypedTensor, dispatch_dtype};

use crate::agree::{Signature, agree};
use crate::collectives::{MpiScalar, check_count, compact, dtype_code, dtype_of, tensor_signature};
use crate::context::MpiContext;
use crate::dist_tensor::DistTensor;
use crate::distribution::Distribution;

/// Who holds which elements, on one side of an exchange.
#[derive(Clone, Copy)]
enum Holding<'a> {
    /// As a distribution lays them out.
    Distributed(&'a Distribution),
    /// The whole tensor on one rank, nothing elsewhere.
    Root(usize),
}

impl Holding<'_> {
    /// Per axis, the sorted global indices `rank` holds; `None` when it holds nothing.
    fn held(&self, shape: &[usize], rank: usize) -> Option<Vec<Vec<usize>>> {
        match self {
            Holding::Root(root) => (*root == rank).then(|| shape.iter().map(|&n| (0..n).collect()).collect()),
            Holding::Distributed(dist) => {
                let coords = dist.grid().coords(rank);
                Some(
                    (0..shape.len())
                        .map(|axis| match dist.split(axis, shape[axis]) {
                            None => (0..shape[axis]).collect(),
                            Some((g, s)) => (0..s.local_extent(coords[g])).map(|l| s.global(coords[g], l)).collect(),
                        })
                        .collect(),
                )
            }
        }
    }

    /// Whether `sender` is the replica that serves `receiver`.
    fn serves(&self, sender: usize, receiver: usize) -> bool {
        match self {
            Holding::Root(root) => *root == sender,
            Holding::Distributed(dist) => {
                let grid = dist.grid();
                let coords = grid.coords(sender);
                let used: Vec<usize> = dist.axes().iter().filter_map(|a| a.grid_dim()).collect();
                (0..grid.ndim()).filter(|u| !used.contains(u)).all(|u| coords[u] == receiver % grid.dims()[u])
            }
        }
    }
}

/// Positions in `a` and in `b` (both sorted) of their common values.
fn intersect(a: &[usize], b: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let (mut i, mut j) = (0, 0);
    let (mut pa, mut pb) = (Vec::new(), Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                pa.push(i);
                pb.push(j);
                i += 1;
                j += 1;
            }
        }
    }
    (pa, pb)
}

/// Row-major strides of a compact tensor of `shape`.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for a in (0..shape.len().saturating_sub(1)).rev() {
        s[a] = s[a + 1] * shape[a + 1];
    }
    s
}

/// Calls `f` with the offset of every element of the product of per-axis positions
/// `lists` in a compact block with `strides`, in row-major order.
fn for_each_product(lists: &[Vec<usize>], strides: &[usize], mut f: impl FnMut(usize)) {
    if lists.iter().any(|l| l.is_empty()) {
        return;
    }
    let rank = lists.len();
    if rank == 0 {
        f(0);
        return;
    }
    let mut pos = vec![0usize; rank];
    let inner = &lists[rank - 1];
    let inner_stride = strides[rank - 1];
    loop {
        let base: usize = (0..rank - 1).map(|a| lists[a][pos[a]] * strides[a]).sum();
        for &l in inner {
            f(base + l * inner_stride);
        }
        let mut axis = rank - 1;
        loop {
            if axis == 0 {
                return;
            }
            axis -= 1;
            pos[axis] += 1;
            if pos[axis] < lists[axis].len() {
                break;
            }
            pos[axis] = 0;
        }
    }
}

/// The exchange from `from` to `to` of a tensor of `shape`; `block` is this rank's
/// compact block under `from` (empty when it holds nothing). Returns this rank's block
/// under `to` and its shape (`None` when it receives nothing).
fn exchange<T: MpiScalar, C: Communicator>(
    comm: &C,
    shape: &[usize],
    from: Holding<'_>,
    block: &[T],
    to: Holding<'_>,
) -> Result<Option<TypedTensor<T>>> {
    let size = comm.size() as usize;
    let me = comm.rank() as usize;
    let my_from = from.held(shape, me);
    let my_to = to.held(shape, me);
    let from_strides = my_from.as_ref().map(|h| strides(&h.iter().map(Vec::len).collect::<Vec<_>>()));
    let to_shape: Option<Vec<usize>> = my_to.as_ref().map(|h| h.iter().map(Vec::len).collect());

    let mut send = Vec::new();
    let mut send_counts = vec![0i32; size];
    if let (Some(mine), Some(st)) = (&my_from, &from_strides) {
        for (d, count) in send_counts.iter_mut().enumerate() {
            if !from.serves(me, d) {
                continue;
            }
            let Some(theirs) = to.held(shape, d) else { continue };
            let lists: Vec<Vec<usize>> = mine.iter().zip(&theirs).map(|(a, b)| intersect(a, b).0).collect();
            let before = send.len();
            for_each_product(&lists, st, |o| send.push(block[o].wire()));
            *count = (send.len() - before) as i32;
        }
    }
    let mut recv_counts = vec![0i32; size];
    let mut recv_lists: Vec<Vec<Vec<usize>>> = vec![Vec::new(); size];
    if let Some(wanted) = &my_to {
        for s in 0..size {
            if !from.serves(s, me) {
                continue;
            }
            let Some(theirs) = from.held(shape, s) else { continue };
            let lists: Vec<Vec<usize>> = theirs.iter().zip(wanted).map(|(a, b)| intersect(a, b).1).collect();
            recv_counts[s] = lists.iter().map(Vec::len).product::<usize>() as i32;
            recv_lists[s] = lists;
        }
    }
    let displs = |counts: &[i32]| -> Vec<i32> {
        counts.iter().scan(0i32, |acc, &c| Some(std::mem::replace(acc, *acc + c))).collect()
    };
    let (send_displs, recv_displs) = (displs(&send_counts), displs(&recv_counts));
    let mut recv = vec![T::Wire::default(); recv_counts.iter().map(|&c| c as usize).sum()];
    {
        let send_part = Partition::new(&send[..], &send_counts[..], &send_displs[..]);
        let mut recv_part = PartitionMut::new(&mut recv[..], &recv_counts[..], &recv_displs[..]);
        comm.all_to_all_varcount_into(&send_part, &mut recv_part);
    }
    let Some(to_shape) = to_shape else { return Ok(None) };
    let mut out = vec![T::zero(); to_shape.iter().product()];
    let to_strides = strides(&to_shape);
    for s in 0..size {
        if recv_counts[s] == 0 {
            continue;
        }
        let mut k = recv_displs[s] as usize;
        for_each_product(&recv_lists[s], &to_strides, |o| {
            out[o] = T::unwire(recv[k]);
            k += 1;
        });
    }
    Ok(Some(TypedTensor::from_vec(out, &to_shape)?))
}

fn layout_part(sig: Signature, what: &'static str, dist: &Distribution) -> Signature {
    sig.part(what, dist.encode(), dist.to_string(), ErrorKind::InvalidArgument)
}

impl MpiContext {
    /// Checks a distributed tensor against this job: its grid spans the job's ranks and
    /// it is this rank's block.
    fn check_dist_tensor(&self, op: &'static str, x: &DistTensor) -> Result<()> {
        self.check_grid(op, x.distribution().grid())?;
        if x.grid_rank() != self.rank() {
            return Err(Error::invalid_argument(
                op,
                format!("rank {} passed the block of grid rank {}", self.rank(), x.grid_rank()),
            ));
        }
        check_count(op, x.local().len())
    }

    /// This rank's block of a tensor the generator `f` defines by global index, under
    /// `distribution` (no communication).
    ///
    /// Errors: the grid does not span the job's ranks, or the distribution does not fit
    /// `shape`.
    pub fn from_fn<T: strata_tensor::Scalar>(
        &self,
        shape: &[usize],
        distribution: Distribution,
        f: impl FnMut(&[usize]) -> T,
    ) -> Result<DistTensor> {
        self.check_grid("dist_tensor", distribution.grid())?;
        DistTensor::from_fn(shape, distribution, self.rank(), f)
    }

    /// Splits the root's tensor `x` into `distribution`'s blocks, one per rank (only
    /// the root's `x` is read; dtype and shape travel from it).
    ///
    /// Errors (on every rank, before any data moves): `root` out of range or not the same
    /// everywhere, no tensor at the root, distributions differing across ranks, a grid
    /// that does not span the job, a distribution that does not fit the root's shape.
    pub fn scatter(&self, x: Option<TensorRead<'_>>, root: usize, distribution: &Distribution) -> Result<DistTensor> {
        const OP: &str = "scatter";
        let size = self.size();
        let local = self.check_grid(OP, distribution.grid()).and_then(|()| {
            if root >= size {
                return Err(Error::invalid_argument(OP, format!("root {root} is not a rank of a job of {size}")));
            }
            if self.rank() != root {
                return Ok(());
            }
            let x = x.as_ref().ok_or_else(|| Error::invalid_argument(OP, "the root rank passed no tensor"))?;
            distribution.validate(x.shape()).map_err(|e| e.in_op(OP))?;
            check_count(OP, x.len())
        });
        let sig = Signature::default().part("operation", vec![2], OP.to_string(), ErrorKind::InvalidArgument).part(
            "root",
            vec![root as u64],
            format!("root {root}"),
            ErrorKind::InvalidArgument,
        );
        agree(&self.world, OP, local, &layout_part(sig, "distribution", distribution))?;

        // The root's dtype and shape, then the exchange.
        let mut header = vec![0u64; 2];
        if let (true, Some(x)) = (self.rank() == root, &x) {
            header = vec![dtype_code(x.dtype()), x.rank() as u64];
            header.extend(x.shape().iter().map(|&d| d as u64));
        }
        let root_process = self.world.process_at_rank(root as i32);
        let mut head = [header[0], header[1]];
        mpi::collective::Root::broadcast_into(&root_process, &mut head[..]);
        let mut dims = if self.rank() == root { header[2..].to_vec() } else { vec![0u64; head[1] as usize] };
        mpi::collective::Root::broadcast_into(&root_process, &mut dims[..]);
        let shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
        let dtype = dtype_of(head[0]);
        let local = dispatch_dtype!(dtype, T => {
            let block = match (self.rank() == root, &x) {
                (true, Some(x)) => compact::<T>(x)?,
                _ => std::borrow::Cow::Owned(Vec::new()),
            };
            let out = exchange::<T, _>(&self.world, &shape, Holding::Root(root), &block, Holding::Distributed(distribution))?;
            T::into_tensor(out.ok_or_else(|| Error::internal(OP, "every rank holds a block of a distribution"))?)
        });
        DistTensor::from_local(&shape, distribution.clone(), self.rank(), local)
    }

    /// The whole tensor at rank `root` (`Some` there, `None` elsewhere).
    ///
    /// Errors (on every rank, before any data moves): ranks passing tensors of different
    /// dtypes, shapes or distributions, `root` out of range or differing, a grid that does
    /// not span the job.
    pub fn gather(&self, x: &DistTensor, root: usize) -> Result<Option<Tensor>> {
        const OP: &str = "gather";
        let size = self.size();
        let local = self.check_dist_tensor(OP, x).and_then(|()| {
            if root >= size {
                return Err(Error::invalid_argument(OP, format!("root {root} is not a rank of a job of {size}")));
            }
            check_count(OP, x.shape().iter().product())
        });
        let sig = tensor_signature(OP, x.dtype(), x.shape()).part(
            "root",
            vec![root as u64],
            format!("root {root}"),
            ErrorKind::InvalidArgument,
        );
        agree(&self.world, OP, local, &layout_part(sig, "distribution", x.distribution()))?;
        dispatch_dtype!(x.dtype(), T => {
            let block = x.local().as_typed::<T>()?.data();
            let out = exchange::<T, _>(&self.world, x.shape(), Holding::Distributed(x.distribution()), block, Holding::Root(root))?;
            Ok(out.map(T::into_tensor))
        })
    }

    /// `x` laid out by `to` instead (one all-to-all; each element sent once per
    /// receiving replica).
    ///
    /// Errors (on every rank, before any data moves): ranks passing different dtypes,
    /// shapes or distributions, grids that do not span the job, a target that does not
    /// fit the shape.
    pub fn redistribute(&self, x: &DistTensor, to: &Distribution) -> Result<DistTensor> {
        const OP: &str = "redistribute";
        let local = self
            .check_dist_tensor(OP, x)
            .and_then(|()| self.check_grid(OP, to.grid()))
            .and_then(|()| to.validate(x.shape()).map_err(|e| e.in_op(OP)))
            .and_then(|()| to.local_shape(x.shape(), self.rank()).and_then(|s| check_count(OP, s.iter().product())));
        let sig = layout_part(tensor_signature(OP, x.dtype(), x.shape()), "source distribution", x.distribution());
        agree(&self.world, OP, local, &layout_part(sig, "target distribution", to))?;
        if x.distribution() == to {
            return Ok(x.clone());
        }
        let local = dispatch_dtype!(x.dtype(), T => {
            let block = x.local().as_typed::<T>()?.data();
            let out = exchange::<T, _>(&self.world, x.shape(), Holding::Distributed(x.distribution()), block, Holding::Distributed(to))?;
            T::into_tensor(out.ok_or_else(|| Error::internal(OP, "every rank holds a block of a distribution"))?)
        });
        DistTensor::from_local(x.shape(), to.clone(), self.rank(), local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersections_and_products() {
        assert_eq!(intersect(&[0, 2, 4, 6], &[1, 2, 3, 6, 7]), (vec![1, 3], vec![1, 3]));
        assert_eq!(intersect(&[], &[1]), (vec![], vec![]));
        let mut seen = Vec::new();
        for_each_product(&[vec![0, 2], vec![1]], &strides(&[3, 2]), |o| seen.push(o));
        assert_eq!(seen, vec![1, 5]);
        let mut n = 0;
        for_each_product(&[], &[], |_| n += 1);
        assert_eq!(n, 1);
        for_each_product(&[vec![0], vec![]], &[1, 1], |_| n += 1);
        assert_eq!(n, 1);
    }
}
