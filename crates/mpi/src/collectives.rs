//! Collectives on strata tensors of every dtype: all-reduce (sum, max, min), broadcast,
//! all-gather. Data goes straight from the input's buffer and into the output's buffer
//! (no packing) whenever the input is compact.

use std::borrow::Cow;

use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::datatype::Equivalence;
use mpi::point_to_point as p2p;
use mpi::topology::Communicator;
use strata_backend::CpuBackend;
use strata_tensor::config::BinaryOp;
use strata_tensor::{DType, Error, ErrorKind, Result, Scalar, Tensor, TensorRead, TypedTensor, dispatch_dtype};

use crate::agree::{Signature, agree};
use crate::context::MpiContext;

/// A strata scalar as MPI carries it: its *wire* type is itself for numbers, and `i32`
/// for bool (one-byte types failed in Open MPI 4.1's `MPI_Alltoallv` with truncation
/// errors here; 0/1 as `int` does not). Conversions of whole buffers borrow or move when the wire type is the
/// scalar itself, so numbers are sent and received in place.
pub(crate) trait MpiScalar: Scalar {
    /// The type on the wire.
    type Wire: Equivalence + Copy + Default;
    /// One value to the wire.
    fn wire(self) -> Self::Wire;
    /// One value from the wire.
    fn unwire(w: Self::Wire) -> Self;
    /// A buffer as wire values (borrowed when the types are equal).
    fn as_wire(values: &[Self]) -> Cow<'_, [Self::Wire]>;
    /// An owned buffer to wire values (moved when the types are equal).
    fn into_wire(values: Vec<Self>) -> Vec<Self::Wire>;
    /// Wire values back to a buffer (moved when the types are equal).
    fn from_wire(values: Vec<Self::Wire>) -> Vec<Self>;
    /// A buffer as a mutable slice of wire values, where the types are equal (so MPI
    /// can send from and receive into a tensor's own memory); `None` otherwise.
    fn wire_mut(values: &mut [Self]) -> Option<&mut [Self::Wire]>;
}

macro_rules! wire_is_self {
    ($($t:ty),*) => {$(
        impl MpiScalar for $t {
            type Wire = $t;
            fn wire(self) -> $t {
                self
            }
            fn unwire(w: $t) -> $t {
                w
            }
            fn as_wire(values: &[$t]) -> Cow<'_, [$t]> {
                Cow::Borrowed(values)
            }
            fn into_wire(values: Vec<$t>) -> Vec<$t> {
                values
            }
            fn from_wire(values: Vec<$t>) -> Vec<$t> {
                values
            }
            fn wire_mut(values: &mut [$t]) -> Option<&mut [$t]> {
                Some(values)
            }
        }
    )*};
}
wire_is_self!(f32, f64, i32, i64, strata_tensor::c32, strata_tensor::c64);

impl MpiScalar for bool {
    type Wire = i32;
    fn wire(self) -> i32 {
        i32::from(self)
    }
    fn unwire(w: i32) -> bool {
        w != 0
    }
    fn as_wire(values: &[bool]) -> Cow<'_, [i32]> {
        Cow::Owned(values.iter().map(|&b| i32::from(b)).collect())
    }
    fn into_wire(values: Vec<bool>) -> Vec<i32> {
        values.into_iter().map(i32::from).collect()
    }
    fn from_wire(values: Vec<i32>) -> Vec<bool> {
        values.into_iter().map(|w| w != 0).collect()
    }
    fn wire_mut(_: &mut [bool]) -> Option<&mut [i32]> {
        None
    }
}

/// The combining operation of [`MpiContext::all_reduce`], with strata's semantics for
/// every dtype (those of `add`, `maximum` and `minimum`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceKind {
    /// Sum (logical or for bool; two's-complement wrap for integers).
    Sum,
    /// Maximum: NaN propagates, `-0 < +0`, complex by real then imaginary part; or for bool.
    Max,
    /// Minimum, the mirror of `Max`; and for bool.
    Min,
}

/// Largest element count one MPI call carries (counts are C `int`).
pub(crate) const MAX_MPI_COUNT: usize = i32::MAX as usize;

/// A compact copy of `x`'s elements, borrowed when `x` already is compact.
pub(crate) fn compact<'a, T: Scalar>(x: &TensorRead<'a>) -> Result<Cow<'a, [T]>> {
    match x.contiguous::<T>() {
        Some(slice) => Ok(Cow::Borrowed(slice)),
        None => Ok(Cow::Owned(x.typed_view::<T>()?.to_tensor().into_vec())),
    }
}

pub(crate) fn dtype_code(d: DType) -> u64 {
    DType::ALL.iter().position(|&x| x == d).unwrap_or(0) as u64
}

pub(crate) fn dtype_of(code: u64) -> DType {
    DType::ALL.get(code as usize).copied().unwrap_or(DType::F64)
}

pub(crate) fn shape_words(shape: &[usize]) -> Vec<u64> {
    std::iter::once(shape.len() as u64).chain(shape.iter().map(|&d| d as u64)).collect()
}

/// The signature parts most collectives compare: op, dtype, shape.
pub(crate) fn tensor_signature(op: &'static str, dtype: DType, shape: &[usize]) -> Signature {
    Signature::default()
        .part("operation", op.bytes().map(u64::from).collect(), op.to_string(), ErrorKind::InvalidArgument)
        .part("dtype", vec![dtype_code(dtype)], format!("{dtype:?}"), ErrorKind::DTypeMismatch)
        .part("shape", shape_words(shape), format!("{shape:?}"), ErrorKind::ShapeMismatch)
}

pub(crate) fn check_count(op: &'static str, n: usize) -> Result<()> {
    if n > MAX_MPI_COUNT {
        return Err(Error::unsupported(op, format!("{n} elements exceed one MPI message ({MAX_MPI_COUNT})")));
    }
    Ok(())
}

impl MpiContext {
    /// The element-wise reduction of `x` over all ranks, on every rank. Every rank
    /// passes a tensor of the same dtype and shape (else every rank gets the same typed
    /// error, and nothing is sent).
    ///
    /// Sums of numbers and integer max/min use MPI's built-in operations (`MPI_Allreduce`
    /// straight from `x`'s buffer into the result's); bool uses logical or/and; float and
    /// complex max/min, which MPI does not define with strata's NaN and ordering rules,
    /// run a ring reduce-scatter + all-gather combining through the rank's backend, so
    /// they are exact and equal on every rank. Float sums depend on MPI's reduction
    /// order, which may change with the number of ranks.
    ///
    /// ```no_run
    /// use strata_mpi::{MpiContext, ReduceKind};
    /// use strata_tensor::Tensor;
    /// let ctx = MpiContext::init()?;
    /// let x = Tensor::from_vec(vec![ctx.rank() as f64; 3], &[3])?;
    /// let total = ctx.all_reduce((&x).into(), ReduceKind::Sum)?;
    /// let n = ctx.size() as f64;
    /// assert_eq!(total.as_typed::<f64>()?.data()[0], n * (n - 1.0) / 2.0);
    /// # Ok::<(), strata_tensor::Error>(())
    /// ```
    pub fn all_reduce(&self, x: TensorRead<'_>, kind: ReduceKind) -> Result<Tensor> {
        const OP: &str = "all_reduce";
        let local = check_count(OP, x.len());
        let sig = tensor_signature(OP, x.dtype(), x.shape()).part(
            "reduction",
            vec![kind as u64],
            format!("{kind:?}"),
            ErrorKind::InvalidArgument,
        );
        agree(&self.world, OP, local, &sig)?;
        dispatch_dtype!(x.dtype(), T => all_reduce_typed::<T, _>(&self.world, self.backend(), &x, kind))
    }

    /// `x` from rank `root` on every rank. Only the root's `x` is read (other ranks pass
    /// `None`, or anything: it is ignored); the dtype and shape travel with the data.
    ///
    /// Errors (on every rank): `root` out of range or not the same on every rank, or no
    /// tensor at the root.
    pub fn broadcast(&self, x: Option<TensorRead<'_>>, root: usize) -> Result<Tensor> {
        const OP: &str = "broadcast";
        let size = self.size();
        let local = if root >= size {
            Err(Error::invalid_argument(OP, format!("root {root} is not a rank of a job of {size}")))
        } else if self.rank() == root {
            match &x {
                None => Err(Error::invalid_argument(OP, "the root rank passed no tensor")),
                Some(t) => check_count(OP, t.len()),
            }
        } else {
            Ok(())
        };
        let sig = Signature::default().part("operation", vec![1], OP.to_string(), ErrorKind::InvalidArgument).part(
            "root",
            vec![root as u64],
            format!("root {root}"),
            ErrorKind::InvalidArgument,
        );
        agree(&self.world, OP, local, &sig)?;
        broadcast_tensor(&self.world, x.as_ref(), root)
    }

    /// Every rank's `x` stacked along a new leading axis of extent `size()`, on every
    /// rank (`MPI_Allgather` from `x`'s buffer into the result's). Every rank passes the
    /// same dtype and shape.
    pub fn all_gather(&self, x: TensorRead<'_>) -> Result<Tensor> {
        const OP: &str = "all_gather";
        let total = x.len().checked_mul(self.size());
        let local = match total {
            Some(n) => check_count(OP, n),
            None => Err(Error::unsupported(OP, "the gathered tensor's size overflows")),
        };
        agree(&self.world, OP, local, &tensor_signature(OP, x.dtype(), x.shape()))?;
        dispatch_dtype!(x.dtype(), T => {
            let send = compact::<T>(&x)?;
            let send = T::as_wire(&send);
            let mut out = vec![<T as MpiScalar>::Wire::default(); x.len() * self.size()];
            self.world.all_gather_into(&send[..], &mut out[..]);
            let mut shape = vec![self.size()];
            shape.extend_from_slice(x.shape());
            Ok(T::into_tensor(TypedTensor::from_vec(T::from_wire(out), &shape)?))
        })
    }
}

/// Broadcasts a header (dtype, shape) then the data, straight into the result's buffer.
/// Callers have agreed on `root` and the root's tensor exists.
pub(crate) fn broadcast_tensor<C: Communicator>(comm: &C, x: Option<&TensorRead<'_>>, root: usize) -> Result<Tensor> {
    let at_root = comm.rank() as usize == root;
    let mut header = [0u64; 2];
    if at_root && let Some(t) = x {
        header = [dtype_code(t.dtype()), t.rank() as u64];
    }
    let root_process = comm.process_at_rank(root as i32);
    root_process.broadcast_into(&mut header[..]);
    let mut shape_words = vec![0u64; header[1] as usize];
    if at_root && let Some(t) = x {
        shape_words = t.shape().iter().map(|&d| d as u64).collect();
    }
    root_process.broadcast_into(&mut shape_words[..]);
    let shape: Vec<usize> = shape_words.iter().map(|&d| d as usize).collect();
    dispatch_dtype!(dtype_of(header[0]), T => {
        let mut data = match (at_root, x) {
            (true, Some(t)) => T::into_wire(compact::<T>(t)?.into_owned()),
            _ => vec![<T as MpiScalar>::Wire::default(); shape.iter().product()],
        };
        root_process.broadcast_into(&mut data[..]);
        Ok(T::into_tensor(TypedTensor::from_vec(T::from_wire(data), &shape)?))
    })
}

fn all_reduce_typed<T: MpiScalar, C: Communicator>(
    comm: &C,
    backend: &CpuBackend,
    x: &TensorRead<'_>,
    kind: ReduceKind,
) -> Result<Tensor> {
    let send = compact::<T>(x)?;
    let builtin = match (T::DTYPE, kind) {
        (DType::Bool, ReduceKind::Sum | ReduceKind::Max) => Some(SystemOperation::logical_or()),
        (DType::Bool, ReduceKind::Min) => Some(SystemOperation::logical_and()),
        (_, ReduceKind::Sum) => Some(SystemOperation::sum()),
        (DType::I32 | DType::I64, ReduceKind::Max) => Some(SystemOperation::max()),
        (DType::I32 | DType::I64, ReduceKind::Min) => Some(SystemOperation::min()),
        _ => None,
    };
    let data = match builtin {
        Some(op) => {
            let wire = T::as_wire(&send);
            let mut out = vec![<T as MpiScalar>::Wire::default(); send.len()];
            comm.all_reduce_into(&wire[..], &mut out[..], op);
            T::from_wire(out)
        }
        None => {
            let op = if kind == ReduceKind::Max { BinaryOp::Max } else { BinaryOp::Min };
            ring_all_reduce(comm, backend, send.into_owned(), op)?
        }
    };
    Ok(T::into_tensor(TypedTensor::from_vec(data, x.shape())?))
}

/// Ring all-reduce with the combine done by `backend.binary(op, ..)`: `p − 1` steps of
/// reduce-scatter (each rank ends with one fully combined chunk), then `p − 1` steps of
/// all-gather. Every chunk is combined on one rank and copied to the others, so every
/// rank ends with the same bits.
fn ring_all_reduce<T: MpiScalar, C: Communicator>(
    comm: &C,
    backend: &CpuBackend,
    mut data: Vec<T>,
    op: BinaryOp,
) -> Result<Vec<T>> {
    let p = comm.size() as usize;
    let r = comm.rank() as usize;
    if p == 1 {
        return Ok(data);
    }
    let n = data.len();
    let chunk = |c: usize| (c * n / p)..((c + 1) * n / p);
    let next = comm.process_at_rank(((r + 1) % p) as i32);
    let prev = comm.process_at_rank(((r + p - 1) % p) as i32);
    let mut incoming = vec![<T as MpiScalar>::Wire::default(); n.div_ceil(p) + 1];
    for s in 0..p - 1 {
        let send = chunk((r + p - s) % p);
        let recv = chunk((r + 2 * p - s - 1) % p);
        let len = recv.len();
        p2p::send_receive_into(&T::as_wire(&data[send])[..], &next, &mut incoming[..len], &prev);
        let mine = TypedTensor::from_vec(data[recv.clone()].to_vec(), &[len])?;
        let theirs = TypedTensor::from_vec(incoming[..len].iter().map(|&w| T::unwire(w)).collect(), &[len])?;
        let combined = backend.binary(op, &mine, &theirs)?;
        data[recv].copy_from_slice(combined.as_typed::<T>()?.data());
    }
    for s in 0..p - 1 {
        let send = chunk((r + 1 + p - s) % p);
        let recv = chunk((r + p - s) % p);
        let len = recv.len();
        p2p::send_receive_into(&T::as_wire(&data[send])[..], &next, &mut incoming[..len], &prev);
        for (d, &w) in data[recv].iter_mut().zip(&incoming[..len]) {
            *d = T::unwire(w);
        }
    }
    Ok(data)
}
