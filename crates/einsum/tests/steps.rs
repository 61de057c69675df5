//! What an expression runs as: a backend double that forwards to the CPU backend and logs
//! every op proves that einsum needs nothing but the op traits, that each pair step is
//! one op, and that a transpose is paid only where no operand order or layout avoids it.

mod common;

use std::cell::RefCell;

use strata_backend::CpuBackend;
use strata_einsum::{EinsumOps, PreparedEinsum};
use strata_tensor::config::{
    BinaryOp, CompareDir, DotGeneralConfig, GatherConfig, GroupedGemmConfig, PadConfig, ReduceOp, ScatterConfig,
    SliceConfig, UnaryOp,
};
use strata_tensor::{
    BufferOps, ContractionOps, DType, ElementwiseOps, IndexingOps, ReductionOps, Result, StructuralOps, Tensor,
    TensorRead, TensorWrite, TypedTensor, c64,
};

/// Forwards every op to a CPU backend and records its name.
struct Logged {
    inner: CpuBackend,
    log: RefCell<Vec<&'static str>>,
}

impl Logged {
    fn new() -> Self {
        Logged { inner: CpuBackend::with_threads(1).unwrap(), log: RefCell::new(Vec::new()) }
    }
    fn note(&self, op: &'static str) {
        self.log.borrow_mut().push(op);
    }
    fn take(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.log.borrow_mut())
    }
}

impl ElementwiseOps for Logged {
    fn binary(&self, op: BinaryOp, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.note(op.name());
        self.inner.binary(op, a, b)
    }
    fn binary_into(&self, op: BinaryOp, a: TensorRead<'_>, b: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()> {
        self.note("binary_into");
        self.inner.binary_into(op, a, b, out)
    }
    fn unary(&self, op: UnaryOp, x: TensorRead<'_>) -> Result<Tensor> {
        self.note("unary");
        self.inner.unary(op, x)
    }
    fn unary_into(&self, op: UnaryOp, x: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()> {
        self.note("unary_into");
        self.inner.unary_into(op, x, out)
    }
    fn compare(&self, dir: CompareDir, a: TensorRead<'_>, b: TensorRead<'_>) -> Result<Tensor> {
        self.note("compare");
        self.inner.compare(dir, a, b)
    }
    fn compare_into(&self, dir: CompareDir, a: TensorRead<'_>, b: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()> {
        self.note("compare_into");
        self.inner.compare_into(dir, a, b, out)
    }
    fn select(&self, p: TensorRead<'_>, t: TensorRead<'_>, f: TensorRead<'_>) -> Result<Tensor> {
        self.note("select");
        self.inner.select(p, t, f)
    }
    fn select_into(&self, p: TensorRead<'_>, t: TensorRead<'_>, f: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()> {
        self.note("select_into");
        self.inner.select_into(p, t, f, out)
    }
    fn clamp(&self, lo: TensorRead<'_>, x: TensorRead<'_>, hi: TensorRead<'_>) -> Result<Tensor> {
        self.note("clamp");
        self.inner.clamp(lo, x, hi)
    }
    fn clamp_into(
        &self,
        lo: TensorRead<'_>,
        x: TensorRead<'_>,
        hi: TensorRead<'_>,
        out: TensorWrite<'_>,
    ) -> Result<()> {
        self.note("clamp_into");
        self.inner.clamp_into(lo, x, hi, out)
    }
}

impl ReductionOps for Logged {
    fn reduce(&self, op: ReduceOp, x: TensorRead<'_>, axes: &[usize]) -> Result<Tensor> {
        self.note(op.name());
        self.inner.reduce(op, x, axes)
    }
    fn reduce_into(&self, op: ReduceOp, x: TensorRead<'_>, axes: &[usize], out: TensorWrite<'_>) -> Result<()> {
        self.note("reduce_into");
        self.inner.reduce_into(op, x, axes, out)
    }
}

impl StructuralOps for Logged {
    fn transpose(&self, x: TensorRead<'_>, perm: &[usize]) -> Result<Tensor> {
        self.note("transpose");
        self.inner.transpose(x, perm)
    }
    fn to_contiguous(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.note("to_contiguous");
        self.inner.to_contiguous(x)
    }
    fn copy_into(&self, src: TensorRead<'_>, dst: TensorWrite<'_>) -> Result<()> {
        self.note("copy_into");
        self.inner.copy_into(src, dst)
    }
    fn cast(&self, x: TensorRead<'_>, dtype: DType) -> Result<Tensor> {
        self.note("cast");
        self.inner.cast(x, dtype)
    }
    fn cast_into(&self, x: TensorRead<'_>, out: TensorWrite<'_>) -> Result<()> {
        self.note("cast_into");
        self.inner.cast_into(x, out)
    }
    fn reshape(&self, x: TensorRead<'_>, shape: &[usize]) -> Result<Tensor> {
        self.note("reshape");
        self.inner.reshape(x, shape)
    }
    fn broadcast_in_dim(&self, x: TensorRead<'_>, out_shape: &[usize], dims: &[usize]) -> Result<Tensor> {
        self.note("broadcast_in_dim");
        self.inner.broadcast_in_dim(x, out_shape, dims)
    }
    fn extract_diagonal(&self, x: TensorRead<'_>, a: usize, b: usize) -> Result<Tensor> {
        self.note("extract_diagonal");
        self.inner.extract_diagonal(x, a, b)
    }
    fn embed_diagonal(&self, x: TensorRead<'_>, a: usize, b: usize) -> Result<Tensor> {
        self.note("embed_diagonal");
        self.inner.embed_diagonal(x, a, b)
    }
    fn tril(&self, x: TensorRead<'_>, k: isize) -> Result<Tensor> {
        self.note("tril");
        self.inner.tril(x, k)
    }
    fn triu(&self, x: TensorRead<'_>, k: isize) -> Result<Tensor> {
        self.note("triu");
        self.inner.triu(x, k)
    }
}

impl ContractionOps for Logged {
    fn dot_general(
        &self,
        lhs: TensorRead<'_>,
        rhs: TensorRead<'_>,
        config: &DotGeneralConfig,
        conj_lhs: bool,
        conj_rhs: bool,
    ) -> Result<Tensor> {
        self.note("dot_general");
        ContractionOps::dot_general(&self.inner, lhs, rhs, config, conj_lhs, conj_rhs)
    }
    fn dot_general_into(
        &self,
        lhs: TensorRead<'_>,
        rhs: TensorRead<'_>,
        config: &DotGeneralConfig,
        conj_lhs: bool,
        conj_rhs: bool,
        alpha: c64,
        beta: c64,
        out: TensorWrite<'_>,
    ) -> Result<()> {
        self.note("dot_general_into");
        ContractionOps::dot_general_into(&self.inner, lhs, rhs, config, conj_lhs, conj_rhs, alpha, beta, out)
    }
    fn grouped_gemm(
        &self,
        lhs: &[TensorRead<'_>],
        rhs: &[TensorRead<'_>],
        c: &GroupedGemmConfig,
    ) -> Result<Vec<Tensor>> {
        self.note("grouped_gemm");
        self.inner.grouped_gemm(lhs, rhs, c)
    }
    fn vdot(&self, x: TensorRead<'_>, y: TensorRead<'_>) -> Result<Tensor> {
        self.note("vdot");
        self.inner.vdot(x, y)
    }
    fn norm_squared(&self, x: TensorRead<'_>) -> Result<Tensor> {
        self.note("norm_squared");
        self.inner.norm_squared(x)
    }
    fn axpby_into(&self, a: c64, x: TensorRead<'_>, b: c64, y: TensorWrite<'_>) -> Result<()> {
        self.note("axpby_into");
        self.inner.axpby_into(a, x, b, y)
    }
}

impl IndexingOps for Logged {
    fn gather(&self, o: TensorRead<'_>, i: TensorRead<'_>, c: &GatherConfig) -> Result<Tensor> {
        self.note("gather");
        self.inner.gather(o, i, c)
    }
    fn scatter(&self, o: TensorRead<'_>, i: TensorRead<'_>, u: TensorRead<'_>, c: &ScatterConfig) -> Result<Tensor> {
        self.note("scatter");
        self.inner.scatter(o, i, u, c)
    }
    fn slice(&self, o: TensorRead<'_>, c: &SliceConfig) -> Result<Tensor> {
        self.note("slice");
        self.inner.slice(o, c)
    }
    fn dynamic_slice(&self, o: TensorRead<'_>, starts: &[i64], sizes: &[usize]) -> Result<Tensor> {
        self.note("dynamic_slice");
        self.inner.dynamic_slice(o, starts, sizes)
    }
    fn dynamic_update_slice(&self, o: TensorRead<'_>, u: TensorRead<'_>, starts: &[i64]) -> Result<Tensor> {
        self.note("dynamic_update_slice");
        self.inner.dynamic_update_slice(o, u, starts)
    }
    fn pad(&self, o: TensorRead<'_>, v: TensorRead<'_>, c: &PadConfig) -> Result<Tensor> {
        self.note("pad");
        self.inner.pad(o, v, c)
    }
    fn concatenate(&self, operands: &[TensorRead<'_>], axis: usize) -> Result<Tensor> {
        self.note("concatenate");
        self.inner.concatenate(operands, axis)
    }
    fn reverse(&self, o: TensorRead<'_>, axes: &[usize]) -> Result<Tensor> {
        self.note("reverse");
        self.inner.reverse(o, axes)
    }
}

impl BufferOps for Logged {
    fn recycle(&self, tensor: Tensor) {
        self.note("recycle");
        self.inner.recycle(tensor)
    }
    fn download(&self, tensor: Tensor) -> Result<Tensor> {
        self.inner.download(tensor)
    }
    fn upload(&self, tensor: Tensor) -> Result<Tensor> {
        self.inner.upload(tensor)
    }
    fn empty(&self, dtype: strata_tensor::DType, shape: &[usize]) -> Result<Tensor> {
        self.inner.empty(dtype, shape)
    }
}

/// The ops `spec` runs on operands of `shapes` (f64, row-major), with its result checked
/// against the plain backend's einsum.
fn ops_of(spec: &str, shapes: &[&[usize]]) -> Vec<&'static str> {
    let logged = Logged::new();
    let tensors: Vec<Tensor> = shapes
        .iter()
        .enumerate()
        .map(|(k, s)| TypedTensor::from_vec(common::operand_data::<f64>(k as u64, s), s).unwrap().into())
        .collect();
    let operands: Vec<TensorRead<'_>> = tensors.iter().map(Into::into).collect();
    let prepared = PreparedEinsum::new(spec, shapes).unwrap();
    let ops: &dyn EinsumOps = &logged;
    let got = prepared.execute(ops, &operands).unwrap();
    let want = logged.inner.einsum(spec, &operands).unwrap();
    assert_eq!(got.as_typed::<f64>().unwrap().data(), want.as_typed::<f64>().unwrap().data());
    logged.take()
}

#[test]
fn pair_steps_are_single_ops_and_need_no_transpose_when_an_order_avoids_it() {
    assert_eq!(ops_of("ij,jk->ik", &[&[8, 9], &[9, 10]]), vec!["dot_general"]);
    // The output wants k before i: the operands swap sides instead of a transpose.
    assert_eq!(ops_of("ij,jk->ki", &[&[8, 9], &[9, 10]]), vec!["dot_general"]);
    assert_eq!(ops_of("bij,bjk->bik", &[&[4, 8, 9], &[4, 9, 10]]), vec!["dot_general"]);
    assert_eq!(ops_of("ij,jk,kl->li", &[&[8, 9], &[9, 10], &[10, 11]]), vec!["dot_general", "dot_general", "recycle"]);
    // An MPS environment: two GEMMs, the intermediate laid out for the second.
    assert_eq!(
        ops_of("ab,asc,bsd->cd", &[&[16, 16], &[16, 2, 16], &[16, 2, 16]]),
        vec!["dot_general", "dot_general", "recycle"]
    );
}

#[test]
fn free_labels_split_by_contracted_ones_become_batch_axes_instead_of_copies() {
    // A TEBD gate: psi's free labels a and d are split by the contracted s, t. The gate is
    // broadcast along a (a batch axis), so neither psi is packed nor the result transposed.
    assert_eq!(ops_of("astd,stuv->auvd", &[&[8, 4, 4, 64], &[4, 4, 4, 4]]), vec!["dot_general"]);
    // A CTMRG corner move: three GEMMs, the last one batched over c.
    assert_eq!(
        ops_of("ab,bcd,aef,dfgh->cegh", &[&[16, 16], &[16, 16, 8], &[16, 16, 8], &[8, 8, 8, 8]]),
        vec!["dot_general", "dot_general", "recycle", "dot_general", "recycle"]
    );
}

#[test]
fn single_operand_work_is_views_and_one_reduction() {
    // A trace reads the diagonal through a view: no extract_diagonal copy.
    assert_eq!(ops_of("ii->", &[&[6, 6]]), vec!["reduce_sum"]);
    // Summing into a permuted output: one reduction, already in output order.
    assert_eq!(ops_of("ijk->kj", &[&[5, 6, 7]]), vec!["reduce_sum"]);
    // A pure rearrangement is one copy.
    assert_eq!(ops_of("ijk->kji", &[&[5, 6, 7]]), vec!["to_contiguous"]);
    assert_eq!(ops_of("ii->i", &[&[6, 6]]), vec!["to_contiguous"]);
    // A label only the first operand has is summed before the contraction.
    assert_eq!(ops_of("ijk,jl->il", &[&[5, 6, 7], &[6, 8]]), vec!["reduce_sum", "dot_general", "recycle"]);
}

#[test]
fn products_that_sum_nothing_are_one_multiply() {
    assert_eq!(ops_of("i,j->ij", &[&[5], &[6]]), vec!["mul"]);
    assert_eq!(ops_of("ij,j->ij", &[&[5, 6], &[6]]), vec!["mul"]);
    assert_eq!(ops_of("ij,ji->ij", &[&[5, 6], &[6, 5]]), vec!["mul"]);
}

#[test]
fn a_batch_axis_the_output_wants_last_costs_one_transpose() {
    // dot_general puts batch axes first, so "ijb,jkb->ikb" needs the final copy.
    assert_eq!(ops_of("ijb,jkb->ikb", &[&[8, 9, 3], &[9, 10, 3]]), vec!["dot_general", "to_contiguous", "recycle"]);
}

#[test]
fn integer_contractions_multiply_and_sum_in_blocks() {
    let backend = CpuBackend::with_threads(1).unwrap();
    // 96 x 96 x 96 products: above one block, so the product space is split.
    let n = 96usize;
    let a = TypedTensor::from_fn(&[n, n], |i| (i[0] as i64 * 7 + i[1] as i64 * 3) % 11 - 5).unwrap();
    let b = TypedTensor::from_fn(&[n, n], |i| (i[0] as i64 * 5 + i[1] as i64) % 13 - 6).unwrap();
    let c = backend.einsum("ij,jk->ik", &[(&a).into(), (&b).into()]).unwrap();
    let c = c.as_typed::<i64>().unwrap();
    for i in 0..n {
        for k in 0..n {
            let want: i64 = (0..n).map(|j| a.data()[i * n + j] * b.data()[j * n + k]).sum();
            assert_eq!(c.data()[i * n + k], want, "({i}, {k})");
        }
    }
    // i32 wraps like numpy's int32 accumulation.
    let big = TypedTensor::from_vec(vec![i32::MAX, 2], &[2]).unwrap();
    let s = backend.einsum("i,i->", &[(&big).into(), (&big).into()]).unwrap();
    let want = i32::MAX.wrapping_mul(i32::MAX).wrapping_add(4);
    assert_eq!(s.as_typed::<i32>().unwrap().data(), &[want]);
}
