//! Thousands of generated bad and extreme inputs over every op: never a panic, never an
//! abort, and every error typed, naming the op the user called, never `Internal`.
//!
//! Inputs mix mismatched shapes and dtypes, out-of-range and repeated axes, huge extents
//! (2^31 … `usize::MAX`), views with extreme strides (`isize::MIN`/`MAX` on extent-1
//! axes, any strides on zero-size views, broadcast zeros), extreme paddings, starts,
//! slice strides, diagonal offsets and scalars. Operand buffers stay small; whatever size
//! an op is asked to produce, the capped test allocator refuses anything above 64 MiB,
//! so huge valid requests must come back as typed allocation errors.
//!
//! This runs in the debug profile under `cargo test` (overflow checks on), and so in CI.
//! `STRATA_BAD_INPUT_CASES` raises the number of cases (default 12 000);
//! `STRATA_BAD_INPUT_SEED` changes the seed.

mod capped_alloc;
mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use capped_alloc::CappedAllocator;
use common::Rng;
use strata_backend::prelude::*;
use strata_tensor::config::{
    DotGeneralConfig, ElementwiseFusionPlan, FusionConstant, FusionInstr, GatherConfig, GroupedGemmConfig, PadConfig,
    ScatterCombiner, ScatterConfig, SliceConfig,
};
use strata_tensor::{
    Result, Scalar, TensorView, TensorViewMut, TensorWrite, TypedView, TypedViewMut, c32, c64, dispatch_dtype,
};

#[global_allocator]
static ALLOCATOR: CappedAllocator = CappedAllocator;

const EXTREME_EXTENTS: [usize; 8] =
    [1 << 31, 1 << 32, 1 << 33, 1 << 40, 1 << 62, usize::MAX / 2, usize::MAX - 1, usize::MAX];
const EXTREME_STRIDES: [isize; 8] = [isize::MIN, isize::MAX, 1 << 62, -(1 << 62), 1 << 31, -(1 << 33), 0, -1];
const EXTREME_I64: [i64; 10] =
    [i64::MIN, i64::MAX, i64::MAX - 1, i64::MIN + 1, 1 << 62, -(1 << 62), 1 << 33, -(1 << 33), 1 << 31, -(1 << 31)];

/// The generator: draws extreme values often, ordinary small ones otherwise.
struct Gen(Rng);

impl Gen {
    fn below(&mut self, n: usize) -> usize {
        (self.0.next_u64() % n as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }

    fn dtype(&mut self) -> DType {
        self.pick(&DType::ALL)
    }

    /// An extent: zero, small, or huge.
    fn extent(&mut self) -> usize {
        match self.below(10) {
            0 | 1 => 0,
            2..=6 => 1 + self.below(4),
            _ => self.pick(&EXTREME_EXTENTS),
        }
    }

    fn small_extent(&mut self) -> usize {
        self.below(4)
    }

    fn shape(&mut self, rank: usize) -> Vec<usize> {
        (0..rank).map(|_| self.extent()).collect()
    }

    fn stride(&mut self) -> isize {
        if self.chance(40) { self.pick(&EXTREME_STRIDES) } else { self.below(9) as isize - 4 }
    }

    fn i64(&mut self) -> i64 {
        if self.chance(40) { self.pick(&EXTREME_I64) } else { self.below(9) as i64 - 4 }
    }

    fn usize_param(&mut self) -> usize {
        if self.chance(35) { self.pick(&EXTREME_EXTENTS) } else { self.below(6) }
    }

    /// An axis: usually in range, sometimes just past it, sometimes absurd.
    fn axis(&mut self, rank: usize) -> usize {
        match self.below(10) {
            0 => rank,
            1 => self.pick(&[rank + 1, 1 << 40, usize::MAX]),
            _ => self.below(rank.max(1)),
        }
    }

    fn axes(&mut self, rank: usize) -> Vec<usize> {
        let n = self.below(rank + 2);
        (0..n).map(|_| self.axis(rank)).collect()
    }

    fn c64(&mut self) -> c64 {
        let pick = [0.0, 1.0, -1.0, f64::NAN, f64::INFINITY, 1e300, -0.5];
        c64::new(self.pick(&pick), self.pick(&pick))
    }

    fn rank(&mut self) -> usize {
        self.below(5)
    }
}

/// An owned buffer and, optionally, a strided layout to view it through.
struct Operand {
    buf: Tensor,
    layout: Option<(Vec<usize>, Vec<isize>, usize)>,
}

fn typed_buffer<T: Scalar>(g: &mut Gen, len: usize, from: impl Fn(i64) -> T) -> Tensor {
    let data: Vec<T> = (0..len).map(|_| from(g.below(9) as i64 - 4)).collect();
    T::into_tensor(TypedTensor::from_vec(data, &[len]).expect("a flat buffer"))
}

fn buffer(g: &mut Gen, dtype: DType, len: usize) -> Tensor {
    match dtype {
        DType::F32 => typed_buffer(g, len, |v| v as f32),
        DType::F64 => typed_buffer(g, len, |v| v as f64),
        DType::I32 => typed_buffer(g, len, |v| v as i32),
        DType::I64 => typed_buffer(g, len, |v| v),
        DType::Bool => typed_buffer(g, len, |v| v > 0),
        DType::C32 => typed_buffer(g, len, |v| c32::new(v as f32, 1.0)),
        DType::C64 => typed_buffer(g, len, |v| c64::new(v as f64, -1.0)),
    }
}

/// Index buffers hold extreme values too.
fn index_buffer(g: &mut Gen, shape: &[usize]) -> Tensor {
    let len = shape.iter().product::<usize>();
    if g.chance(50) {
        let data: Vec<i64> = (0..len).map(|_| g.i64()).collect();
        TypedTensor::from_vec(data, shape).expect("index shape").into()
    } else {
        let data: Vec<i32> = (0..len).map(|_| g.i64() as i32).collect();
        TypedTensor::from_vec(data, shape).expect("index shape").into()
    }
}

fn view_of<'a>(t: &'a Tensor, shape: &[usize], strides: &[isize], offset: usize) -> Result<TensorView<'a>> {
    dispatch_dtype!(t.dtype(), T => {
        let typed = T::tensor_ref(t).expect("the buffer's own dtype");
        TypedView::new(typed.data(), shape, strides, offset).map(T::into_view)
    })
}

fn view_mut_of<'a>(t: &'a mut Tensor, shape: &[usize], strides: &[isize], offset: usize) -> Result<TensorViewMut<'a>> {
    dispatch_dtype!(t.dtype(), T => {
        let typed = T::tensor_mut(t).expect("the buffer's own dtype");
        TypedViewMut::new(typed.data_mut(), shape, strides, offset).map(T::into_view_mut)
    })
}

impl Operand {
    fn read(&self) -> TensorRead<'_> {
        if let Some((shape, strides, offset)) = &self.layout
            && let Ok(v) = view_of(&self.buf, shape, strides, *offset)
        {
            return v.into();
        }
        (&self.buf).into()
    }

    fn write(&mut self) -> TensorWrite<'_> {
        if let Some((shape, strides, offset)) = self.layout.clone()
            && view_mut_of(&mut self.buf, &shape, &strides, offset).is_ok()
        {
            // INVARIANT: the same arguments built a view just above.
            return view_mut_of(&mut self.buf, &shape, &strides, offset).expect("rebuilt view").into();
        }
        (&mut self.buf).into()
    }
}

/// A small tensor, a strided or broadcast view of one, or a zero-size view with huge
/// extents on its other axes.
fn operand_of(g: &mut Gen, dtype: DType, rank: usize) -> Operand {
    let len = 1 + g.below(64);
    let buf = buffer(g, dtype, len);
    let layout = match g.below(4) {
        0 => None,
        1 => {
            // Zero-size: addresses nothing, so any other extents and strides are valid.
            let mut shape = g.shape(rank.max(1));
            let zero = g.below(shape.len());
            shape[zero] = 0;
            let strides = (0..shape.len()).map(|_| g.stride()).collect();
            Some((shape, strides, g.below(len)))
        }
        2 => {
            // Small extents with extreme strides where they are harmless (extent 1).
            let shape: Vec<usize> = (0..rank).map(|_| 1 + g.below(3)).collect();
            let strides = shape.iter().map(|&d| if d == 1 { g.stride() } else { g.below(5) as isize - 2 }).collect();
            Some((shape, strides, g.below(len)))
        }
        _ => {
            // Broadcast: stride 0 somewhere.
            let shape: Vec<usize> = (0..rank).map(|_| g.small_extent()).collect();
            let strides = (0..rank).map(|_| if g.chance(50) { 0 } else { 1 }).collect();
            Some((shape, strides, 0))
        }
    };
    match (layout, g.chance(30)) {
        (None, _) | (_, true) => {
            // A plain tensor of a small shape (reinterpreting the buffer when it fits).
            let shape: Vec<usize> = (0..rank).map(|_| g.small_extent()).collect();
            let n: usize = shape.iter().product();
            let buf = buffer(g, dtype, n);
            let buf = dispatch_dtype!(dtype, T => {
                let flat = T::from_tensor(buf).expect("own dtype");
                T::into_tensor(TypedTensor::from_vec(flat.into_vec(), &shape).expect("fits"))
            });
            Operand { buf, layout: None }
        }
        (layout, false) => Operand { buf, layout },
    }
}

fn operand(g: &mut Gen) -> Operand {
    let (dtype, rank) = (g.dtype(), g.rank());
    operand_of(g, dtype, rank)
}

/// Two operands that often agree in dtype and shape, so ops get past validation.
fn pair(g: &mut Gen) -> (Operand, Operand) {
    let a = operand(g);
    if g.chance(60) {
        let shape = a.read().shape().to_vec();
        let dtype = if g.chance(85) { a.buf.dtype() } else { g.dtype() };
        let len = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)).unwrap_or(usize::MAX);
        let buf = buffer(g, dtype, len.min(1 << 12));
        let b = match reshaped(buf, &shape) {
            Some(buf) => Operand { buf, layout: None },
            None => operand_of(g, dtype, shape.len()),
        };
        (a, b)
    } else {
        (a, operand(g))
    }
}

/// A flat buffer given `shape`, when the element counts agree.
fn reshaped(t: Tensor, shape: &[usize]) -> Option<Tensor> {
    let n: usize = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))?;
    if n != t.len() {
        return None;
    }
    Some(dispatch_dtype!(t.dtype(), T => {
        let flat = T::from_tensor(t).ok()?;
        T::into_tensor(TypedTensor::from_vec(flat.into_vec(), shape).ok()?)
    }))
}

fn dot_config(g: &mut Gen, lr: usize, rr: usize) -> DotGeneralConfig {
    if g.chance(30) {
        return DotGeneralConfig::matmul();
    }
    let batch = g.below(2);
    let lb: Vec<usize> = (0..batch).map(|_| g.axis(lr)).collect();
    let rb: Vec<usize> = (0..batch).map(|_| g.axis(rr)).collect();
    let contract = g.below(3);
    let lc: Vec<usize> = (0..contract).map(|_| g.axis(lr)).collect();
    let rc: Vec<usize> = (0..contract).map(|_| g.axis(rr)).collect();
    DotGeneralConfig::new(lb, rb, lc, rc)
}

fn gather_config(g: &mut Gen, operand_rank: usize, indices_rank: usize) -> GatherConfig {
    if g.chance(40) {
        return GatherConfig::rows(indices_rank, g.usize_param());
    }
    GatherConfig {
        offset_dims: g.axes(operand_rank + indices_rank),
        collapsed_slice_dims: g.axes(operand_rank),
        start_index_map: g.axes(operand_rank),
        index_vector_dim: g.axis(indices_rank + 1),
        slice_sizes: (0..operand_rank + g.below(2)).map(|_| g.usize_param()).collect(),
        ..GatherConfig::default()
    }
}

fn scatter_config(g: &mut Gen, operand_rank: usize, indices_rank: usize) -> ScatterConfig {
    let combiner = g.pick(&[
        ScatterCombiner::Replace,
        ScatterCombiner::Add,
        ScatterCombiner::Multiply,
        ScatterCombiner::Max,
        ScatterCombiner::Min,
    ]);
    if g.chance(40) {
        return ScatterConfig::rows(indices_rank, combiner);
    }
    ScatterConfig {
        update_window_dims: g.axes(operand_rank + indices_rank),
        inserted_window_dims: g.axes(operand_rank),
        scatter_dims_to_operand_dims: g.axes(operand_rank),
        index_vector_dim: g.axis(indices_rank + 1),
        combiner,
        ..ScatterConfig::default()
    }
}

fn fusion_plan(g: &mut Gen, inputs: usize) -> ElementwiseFusionPlan {
    let mut plan = ElementwiseFusionPlan::default();
    for i in 0..1 + g.below(5) {
        let value = |g: &mut Gen| if g.chance(90) { g.below(i + 1) } else { g.usize_param() };
        let instr = match g.below(5) {
            0 => FusionInstr::Input(if g.chance(85) { g.below(inputs.max(1)) } else { g.usize_param() }),
            1 => FusionInstr::Constant(g.pick(&[
                FusionConstant::F64(f64::NAN),
                FusionConstant::F32(1.5),
                FusionConstant::I32(i32::MIN),
                FusionConstant::I64(i64::MAX),
                FusionConstant::Bool(true),
                FusionConstant::C64(c64::new(0.0, 1.0)),
            ])),
            2 => FusionInstr::Unary(g.pick(&UnaryOp::ALL), value(g)),
            3 => FusionInstr::Binary(g.pick(&BinaryOp::ALL), value(g), value(g)),
            _ => FusionInstr::Compare(g.pick(&CompareDir::ALL), value(g), value(g)),
        };
        plan.push(instr);
    }
    for _ in 0..g.below(3) + 1 {
        let v = if g.chance(90) { g.below(plan.instructions().len()) } else { g.usize_param() };
        plan.add_output(v);
    }
    plan
}

/// Runs one generated case: the op's name (as its errors must carry it) and its outcome.
fn one_case(g: &mut Gen, b: &CpuBackend) -> (String, Result<()>) {
    let which = g.below(40);
    let name = |s: &str| s.to_string();
    match which {
        0 | 1 => {
            let op = g.pick(&BinaryOp::ALL);
            let (x, y) = pair(g);
            (name(op.name()), b.binary(op, x.read(), y.read()).map(drop))
        }
        2 => {
            let op = g.pick(&BinaryOp::ALL);
            let (x, y) = pair(g);
            let mut out = operand(g);
            (name(op.name()), b.binary_into(op, x.read(), y.read(), out.write()))
        }
        3 | 4 => {
            let op = g.pick(&UnaryOp::ALL);
            let x = operand(g);
            (name(op.name()), b.unary(op, x.read()).map(drop))
        }
        5 => {
            let op = g.pick(&UnaryOp::ALL);
            let (x, mut out) = pair(g);
            (name(op.name()), b.unary_into(op, x.read(), out.write()))
        }
        6 => {
            let (x, y) = pair(g);
            (name("compare"), b.compare(g.pick(&CompareDir::ALL), x.read(), y.read()).map(drop))
        }
        7 => {
            let (x, y) = pair(g);
            let p = operand_of(g, DType::Bool, x.read().rank());
            (name("select"), b.select(p.read(), x.read(), y.read()).map(drop))
        }
        8 => {
            let (x, lo) = pair(g);
            let hi = operand(g);
            (name("clamp"), b.clamp(lo.read(), x.read(), hi.read()).map(drop))
        }
        9 | 10 => {
            let op = g.pick(&ReduceOp::ALL);
            let x = operand(g);
            let axes = g.axes(x.read().rank());
            (name(op.name()), b.reduce(op, x.read(), &axes).map(drop))
        }
        11 => {
            let op = g.pick(&ReduceOp::ALL);
            let (x, mut out) = pair(g);
            let axes = g.axes(x.read().rank());
            (name(op.name()), b.reduce_into(op, x.read(), &axes, out.write()))
        }
        12 => {
            let x = operand(g);
            let rank = x.read().rank();
            let perm: Vec<usize> = if g.chance(70) {
                let mut p: Vec<usize> = (0..rank).collect();
                p.reverse();
                p
            } else {
                g.axes(rank)
            };
            (name("transpose"), b.transpose(x.read(), &perm).map(drop))
        }
        13 => (name("to_contiguous"), b.to_contiguous(operand(g).read()).map(drop)),
        14 => {
            let (x, mut out) = pair(g);
            (name("copy_into"), b.copy_into(x.read(), out.write()))
        }
        15 => {
            let x = operand(g);
            (name("cast"), b.cast(x.read(), g.dtype()).map(drop))
        }
        16 => {
            let (x, mut out) = pair(g);
            (name("cast"), b.cast_into(x.read(), out.write()))
        }
        17 => {
            let x = operand(g);
            let rank = g.rank();
            let shape = g.shape(rank);
            (name("reshape"), b.reshape(x.read(), &shape).map(drop))
        }
        18 | 19 => {
            let x = operand(g);
            let rank = g.rank() + 1;
            let out_shape = g.shape(rank);
            let dims = if g.chance(60) {
                (0..x.read().rank()).map(|k| k.min(out_shape.len().saturating_sub(1))).collect()
            } else {
                g.axes(out_shape.len())
            };
            (name("broadcast_in_dim"), b.broadcast_in_dim(x.read(), &out_shape, &dims).map(drop))
        }
        20 => {
            let x = operand(g);
            let rank = x.read().rank();
            let (i, j) = (g.axis(rank), g.axis(rank));
            if g.chance(50) {
                (name("extract_diagonal"), b.extract_diagonal(x.read(), i, j).map(drop))
            } else {
                (name("embed_diagonal"), b.embed_diagonal(x.read(), i, j).map(drop))
            }
        }
        21 => {
            let x = operand(g);
            let k = g.pick(&[isize::MIN, isize::MAX, 0, 1, -1, 1 << 40, -(1 << 40), isize::MIN + 1]);
            if g.chance(50) {
                (name("tril"), b.tril(x.read(), k).map(drop))
            } else {
                (name("triu"), b.triu(x.read(), k).map(drop))
            }
        }
        22 | 23 => {
            let (x, y) = (operand(g), operand(g));
            let cfg = dot_config(g, x.read().rank(), y.read().rank());
            (
                name("dot_general"),
                ContractionOps::dot_general(b, x.read(), y.read(), &cfg, g.chance(50), g.chance(50)).map(drop),
            )
        }
        24 => {
            let (x, y) = (operand(g), operand(g));
            let mut out = operand(g);
            let cfg = dot_config(g, x.read().rank(), y.read().rank());
            let (alpha, beta) = (g.c64(), g.c64());
            let (cl, cr) = (g.chance(50), g.chance(50));
            (
                name("dot_general_into"),
                ContractionOps::dot_general_into(b, x.read(), y.read(), &cfg, cl, cr, alpha, beta, out.write()),
            )
        }
        25 => {
            let jobs = g.below(4);
            let ops: Vec<(Operand, Operand)> = (0..jobs).map(|_| (operand(g), operand(g))).collect();
            let lhs: Vec<TensorRead<'_>> = ops.iter().map(|(l, _)| l.read()).collect();
            let rhs: Vec<TensorRead<'_>> = ops.iter().map(|(_, r)| r.read()).collect();
            let cfg = GroupedGemmConfig { conj_lhs: g.chance(50), conj_rhs: g.chance(50) };
            (name("grouped_gemm"), b.grouped_gemm(&lhs, &rhs, &cfg).map(drop))
        }
        26 => {
            let (x, y) = pair(g);
            if g.chance(50) {
                (name("vdot"), b.vdot(x.read(), y.read()).map(drop))
            } else {
                (name("norm_squared"), b.norm_squared(x.read()).map(drop))
            }
        }
        27 => {
            let (x, mut y) = pair(g);
            let (alpha, beta) = (g.c64(), g.c64());
            (name("axpby_into"), b.axpby_into(alpha, x.read(), beta, y.write()))
        }
        28 | 29 => {
            let x = operand(g);
            let idx_shape: Vec<usize> = (0..g.below(3) + 1).map(|_| g.small_extent()).collect();
            let idx = index_buffer(g, &idx_shape);
            let cfg = gather_config(g, x.read().rank(), idx_shape.len());
            (name("gather"), b.gather(x.read(), &idx, &cfg).map(drop))
        }
        30 => {
            let (x, u) = pair(g);
            let idx_shape: Vec<usize> = (0..g.below(3) + 1).map(|_| g.small_extent()).collect();
            let idx = index_buffer(g, &idx_shape);
            let cfg = scatter_config(g, x.read().rank(), idx_shape.len());
            (name("scatter"), b.scatter(x.read(), &idx, u.read(), &cfg).map(drop))
        }
        31 => {
            let x = operand(g);
            let rank = x.read().rank() + usize::from(g.chance(10));
            let cfg = SliceConfig::new(
                (0..rank).map(|_| g.usize_param()).collect(),
                (0..rank).map(|_| g.usize_param()).collect(),
                (0..rank).map(|_| g.usize_param()).collect(),
            );
            (name("slice"), b.slice(x.read(), &cfg).map(drop))
        }
        32 => {
            let x = operand(g);
            let rank = x.read().rank() + usize::from(g.chance(10));
            let starts: Vec<i64> = (0..rank).map(|_| g.i64()).collect();
            let sizes: Vec<usize> = (0..rank).map(|_| g.usize_param()).collect();
            (name("dynamic_slice"), b.dynamic_slice(x.read(), &starts, &sizes).map(drop))
        }
        33 => {
            let (x, u) = pair(g);
            let starts: Vec<i64> = (0..x.read().rank()).map(|_| g.i64()).collect();
            (name("dynamic_update_slice"), b.dynamic_update_slice(x.read(), u.read(), &starts).map(drop))
        }
        34 | 35 => {
            let x = operand(g);
            let value = operand_of(g, x.buf.dtype(), 0);
            let rank = x.read().rank() + usize::from(g.chance(10));
            let cfg = PadConfig::new(
                (0..rank).map(|_| g.i64()).collect(),
                (0..rank).map(|_| g.i64()).collect(),
                (0..rank).map(|_| g.i64()).collect(),
            );
            (name("pad"), b.pad(x.read(), value.read(), &cfg).map(drop))
        }
        36 => {
            let parts: Vec<Operand> = (0..g.below(4)).map(|_| operand(g)).collect();
            let reads: Vec<TensorRead<'_>> = parts.iter().map(Operand::read).collect();
            let rank = reads.first().map_or(1, |r| r.rank());
            (name("concatenate"), b.concatenate(&reads, g.axis(rank)).map(drop))
        }
        37 => {
            let x = operand(g);
            let axes = g.axes(x.read().rank());
            (name("reverse"), b.reverse(x.read(), &axes).map(drop))
        }
        38 => {
            let inputs: Vec<Operand> = {
                let (a, c) = pair(g);
                if g.chance(50) { vec![a, c] } else { vec![a] }
            };
            let reads: Vec<TensorRead<'_>> = inputs.iter().map(Operand::read).collect();
            let plan = fusion_plan(g, reads.len());
            (name("execute_fusion"), b.execute_fusion(&plan, &reads).map(drop))
        }
        _ => {
            let (x, y) = (operand(g), operand(g));
            let rank = g.rank();
            let out_shape = g.shape(rank);
            let xd = g.axes(out_shape.len());
            let yd = g.axes(out_shape.len());
            (name("broadcast_multiply"), b.broadcast_multiply(x.read(), &xd, y.read(), &yd, &out_shape).map(drop))
        }
    }
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Where the last panic of any thread happened (set by the hook the test installs).
static LAST_PANIC: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

#[test]
fn generated_bad_inputs_never_panic_and_give_typed_errors_naming_the_op() {
    let cases = env_or("STRATA_BAD_INPUT_CASES", 12_000);
    let seed = env_or("STRATA_BAD_INPUT_SEED", 0x5EED_BAD1);
    let threads = strata_topology::discover().unwrap().allowed_cpus().len().min(2);
    // Inline (Auto, small work), the domain's workers (explicit placement) and budget 1.
    let auto = CpuBackend::with_threads(threads).unwrap();
    let placed = auto.for_placement(CpuPlacement::AllAllowed).unwrap();
    let single = CpuBackend::with_threads(1).unwrap();
    let backends = [&auto, &placed, &single];
    // Every failure is collected (one line per distinct place), so one run reports them all.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        let at = info.location().map_or_else(|| "?".to_string(), |l| format!("{}:{}", l.file(), l.line()));
        let message = strata_tensor::panic_message(info.payload()).to_string();
        // The innermost frame in strata's own sources (the panic may be in a library).
        let trace = std::backtrace::Backtrace::force_capture().to_string();
        let ours = trace
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with("at ") && l.contains("crates/") && !l.contains("/tests/"));
        let ours = ours.map_or(String::new(), |l| format!(" (from {})", l.trim_start_matches("at ")));
        *LAST_PANIC.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!("{at}{ours}: {message}"));
    }));
    let mut g = Gen(Rng::new(seed));
    let (mut ok, mut errors) = (0usize, 0usize);
    let mut failures: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    for case in 0..cases {
        let backend = backends[case as usize % backends.len()];
        // Each case gets its own generator state, so a failure names a reproducible case.
        let case_seed = g.0.next_u64();
        let mut case_gen = Gen(Rng::new(case_seed));
        let outcome = catch_unwind(AssertUnwindSafe(|| one_case(&mut case_gen, backend)));
        let (op, result) = match outcome {
            Ok(r) => r,
            Err(_) => {
                let at = LAST_PANIC.lock().unwrap_or_else(|p| p.into_inner()).take().unwrap_or_default();
                let key = at.split(": ").next().unwrap_or_default().to_string();
                failures.entry(key).or_insert_with(|| format!("case {case} (seed {case_seed:#x}) panicked at {at}"));
                continue;
            }
        };
        match result {
            Ok(()) => ok += 1,
            Err(e) if e.kind() == ErrorKind::Internal || e.op() != op => {
                failures
                    .entry(format!("{op}: {:?} error named {}", e.kind(), e.op()))
                    .or_insert_with(|| format!("case {case} (seed {case_seed:#x}), {op}: {e}"));
            }
            Err(_) => errors += 1,
        }
    }
    std::panic::set_hook(default_hook);
    assert!(
        failures.is_empty(),
        "{} kinds of failure:\n{}",
        failures.len(),
        failures.into_values().collect::<Vec<_>>().join("\n")
    );
    // The generator reaches past validation often enough to exercise the kernels too.
    eprintln!("{cases} generated cases: {ok} succeeded, {errors} typed errors");
    assert!(ok >= cases as usize / 20, "only {ok} of {cases} cases succeeded ({errors} errors)");
}

/// The cases the issue names, each valid or a typed error in every profile.
#[test]
fn the_reported_extreme_cases_work_or_fail_typed() {
    let b = CpuBackend::with_threads(1).unwrap();
    let scalar: Tensor = TypedTensor::from_vec(vec![2.0f64], &[]).unwrap().into();
    let huge = 1usize << 33;
    // A scalar broadcast to [2^33, 2^33]: 2^66 elements cannot even be counted.
    let e = b.broadcast_in_dim(&scalar, &[huge, huge], &[]).unwrap_err();
    assert_eq!((e.op(), e.kind()), ("broadcast_in_dim", ErrorKind::InvalidArgument), "{e}");
    let e = b.broadcast_multiply(&scalar, &[], &scalar, &[], &[huge, huge]).unwrap_err();
    assert_eq!(e.op(), "broadcast_multiply", "{e}");
    // dynamic_slice asking for more than the operand has.
    let v: Tensor = TypedTensor::from_vec(vec![1.0f64; 4], &[4]).unwrap().into();
    let e = b.dynamic_slice(&v, &[0], &[usize::MAX]).unwrap_err();
    assert_eq!(e.op(), "dynamic_slice", "{e}");
    // [1, 2^33, 0] x [1, 0, 2^33]: contracting nothing into 2^66 outputs.
    let buf = [0.0f64; 1];
    let l = TypedView::new(&buf[..], &[1, huge, 0], &[1, 1, 1], 0).unwrap();
    let r = TypedView::new(&buf[..], &[1, 0, huge], &[1, 1, 1], 0).unwrap();
    let cfg = DotGeneralConfig::new(vec![0], vec![0], vec![2], vec![1]);
    let e = ContractionOps::dot_general(&b, l.into(), r.into(), &cfg, false, false).unwrap_err();
    assert_eq!(e.op(), "dot_general", "{e}");
    // Valid: a slice with stride 2^62 takes the first element.
    let s = b.slice(&v, &SliceConfig::new(vec![0], vec![4], vec![1 << 62])).unwrap();
    assert_eq!(s.as_typed::<f64>().unwrap().data(), &[1.0]);
    // Valid: interior padding i64::MAX on an axis whose result is empty.
    let empty: Tensor = TypedTensor::from_vec(Vec::<f64>::new(), &[0, 2]).unwrap().into();
    let zero: Tensor = TypedTensor::from_vec(vec![0.0f64], &[]).unwrap().into();
    let p = b.pad(&empty, &zero, &PadConfig::new(vec![0, 0], vec![0, 0], vec![i64::MAX, 0])).unwrap();
    assert_eq!(p.shape(), &[0, 2]);
    // Valid: reverse of a view with stride isize::MIN on an extent-1 axis.
    let data = [1.0f64, 2.0, 3.0];
    let view = TypedView::new(&data[..], &[1, 3], &[isize::MIN, 1], 0).unwrap();
    let r = b.reverse(view, &[0, 1]).unwrap();
    assert_eq!(r.as_typed::<f64>().unwrap().data(), &[3.0, 2.0, 1.0]);
}
