//! `ElementwiseFusionPlan`: an SSA list of elementwise instructions over a call's inputs,
//! executed by the kernels in one pass without intermediate tensors.

use super::{BinaryOp, CompareDir, UnaryOp};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::scalar::{c32, c64};

/// A value in a plan: the result of the instruction at this position.
pub type FusionValue = usize;

/// A scalar constant of any dtype, broadcast over the plan's shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FusionConstant {
    /// An `f32`.
    F32(f32),
    /// An `f64`.
    F64(f64),
    /// An `i32`.
    I32(i32),
    /// An `i64`.
    I64(i64),
    /// A `bool`.
    Bool(bool),
    /// A `c32`.
    C32(c32),
    /// A `c64`.
    C64(c64),
}

impl FusionConstant {
    /// The constant's dtype.
    pub const fn dtype(&self) -> DType {
        match self {
            FusionConstant::F32(_) => DType::F32,
            FusionConstant::F64(_) => DType::F64,
            FusionConstant::I32(_) => DType::I32,
            FusionConstant::I64(_) => DType::I64,
            FusionConstant::Bool(_) => DType::Bool,
            FusionConstant::C32(_) => DType::C32,
            FusionConstant::C64(_) => DType::C64,
        }
    }
}

/// One instruction. Operands name earlier instructions; each op has the semantics of
/// the standalone op of the same name.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FusionInstr {
    /// The call's input at this position.
    Input(usize),
    /// A scalar constant.
    Constant(FusionConstant),
    /// A unary op.
    Unary(UnaryOp, FusionValue),
    /// A binary op on two values of one dtype.
    Binary(BinaryOp, FusionValue, FusionValue),
    /// A comparison, giving Bool.
    Compare(CompareDir, FusionValue, FusionValue),
    /// `pred ? on_true : on_false` with a Bool predicate.
    Select {
        /// The Bool predicate.
        pred: FusionValue,
        /// Taken where `pred` is true.
        on_true: FusionValue,
        /// Taken where `pred` is false.
        on_false: FusionValue,
    },
    /// `min(max(x, lo), hi)`.
    Clamp {
        /// Lower bound.
        lo: FusionValue,
        /// The clamped value.
        x: FusionValue,
        /// Upper bound.
        hi: FusionValue,
    },
    /// Conversion to another dtype (the cast rules of `structural::cast`).
    Cast(FusionValue, DType),
}

/// An SSA list of elementwise instructions and the values it returns.
///
/// ```
/// use strata_tensor::{DType, config::{BinaryOp, ElementwiseFusionPlan, FusionConstant, FusionInstr, UnaryOp}};
/// // out = exp(x * 2) + y
/// let mut plan = ElementwiseFusionPlan::default();
/// let x = plan.push(FusionInstr::Input(0));
/// let y = plan.push(FusionInstr::Input(1));
/// let two = plan.push(FusionInstr::Constant(FusionConstant::F64(2.0)));
/// let x2 = plan.push(FusionInstr::Binary(BinaryOp::Mul, x, two));
/// let e = plan.push(FusionInstr::Unary(UnaryOp::Exp, x2));
/// let out = plan.push(FusionInstr::Binary(BinaryOp::Add, e, y));
/// plan.add_output(out);
/// let sig = plan.validate(&[(DType::F64, &[2, 3]), (DType::F64, &[2, 3])]).unwrap();
/// assert_eq!(sig.output_dtypes, vec![DType::F64]);
/// assert_eq!(sig.shape, vec![2, 3]);
/// // A clash of dtypes is caught before anything runs.
/// assert!(plan.validate(&[(DType::F64, &[2, 3]), (DType::F32, &[2, 3])]).is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ElementwiseFusionPlan {
    instrs: Vec<FusionInstr>,
    outputs: Vec<FusionValue>,
}

/// What a plan computes for given inputs, established by [`ElementwiseFusionPlan::validate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FusionSignature {
    /// The shape every input shares and every output has.
    pub shape: Vec<usize>,
    /// The dtype of each instruction's value.
    pub value_dtypes: Vec<DType>,
    /// The dtype of each output.
    pub output_dtypes: Vec<DType>,
}

const OP: &str = "fusion";

impl ElementwiseFusionPlan {
    /// A plan from its instructions and outputs (checked by [`Self::validate`]).
    pub fn new(instrs: Vec<FusionInstr>, outputs: Vec<FusionValue>) -> Self {
        ElementwiseFusionPlan { instrs, outputs }
    }

    /// Appends an instruction and returns the value it defines.
    pub fn push(&mut self, instr: FusionInstr) -> FusionValue {
        self.instrs.push(instr);
        self.instrs.len() - 1
    }

    /// Marks a value as an output (outputs are returned in the order added).
    pub fn add_output(&mut self, value: FusionValue) {
        self.outputs.push(value);
    }

    /// The instructions in order.
    pub fn instructions(&self) -> &[FusionInstr] {
        &self.instrs
    }

    /// The returned values in order.
    pub fn outputs(&self) -> &[FusionValue] {
        &self.outputs
    }

    /// Checks the plan against its inputs (dtype and shape of each): every operand is
    /// defined earlier, every input index exists, inputs share one shape, operand dtypes
    /// agree, every op is defined on its dtype, predicates are Bool and there is at least
    /// one output. Gives the dtype of every value.
    pub fn validate(&self, inputs: &[(DType, &[usize])]) -> Result<FusionSignature> {
        let shape: Vec<usize> = inputs.first().map(|(_, s)| s.to_vec()).unwrap_or_default();
        for (i, (_, s)) in inputs.iter().enumerate() {
            if *s != shape.as_slice() {
                return Err(Error::shape_mismatch(
                    OP,
                    format!("input {i} has shape {s:?}, input 0 has shape {shape:?}; fused inputs share one shape"),
                ));
            }
        }
        let mut dtypes: Vec<DType> = Vec::with_capacity(self.instrs.len());
        for (at, instr) in self.instrs.iter().enumerate() {
            let get = |v: FusionValue| -> Result<DType> {
                dtypes.get(v).copied().ok_or_else(|| {
                    Error::invalid_argument(
                        OP,
                        format!("instruction {at} uses value {v}, which is not defined before it"),
                    )
                })
            };
            let same = |a: DType, b: DType, what: &str| -> Result<()> {
                if a == b {
                    Ok(())
                } else {
                    Err(Error::dtype_mismatch(OP, format!("instruction {at} ({what}) mixes dtypes {a} and {b}")))
                }
            };
            let dtype = match *instr {
                FusionInstr::Input(i) => inputs.get(i).map(|(d, _)| *d).ok_or_else(|| {
                    Error::invalid_argument(
                        OP,
                        format!("instruction {at} reads input {i}, the call has {}", inputs.len()),
                    )
                })?,
                FusionInstr::Constant(c) => c.dtype(),
                FusionInstr::Unary(op, v) => op.validate(get(v)?).map_err(|e| at_instr(e, at))?,
                FusionInstr::Binary(op, a, b) => {
                    let (da, db) = (get(a)?, get(b)?);
                    same(da, db, op.name())?;
                    if !op.supports(da) {
                        return Err(Error::unsupported(
                            OP,
                            format!("instruction {at}: {} is not defined for {da}", op.name()),
                        ));
                    }
                    da
                }
                FusionInstr::Compare(dir, a, b) => {
                    let (da, db) = (get(a)?, get(b)?);
                    same(da, db, "compare")?;
                    if !dir.supports(da) {
                        return Err(Error::unsupported(
                            OP,
                            format!("instruction {at}: compare {} is not defined for {da}", dir.name()),
                        ));
                    }
                    DType::Bool
                }
                FusionInstr::Select { pred, on_true, on_false } => {
                    let dp = get(pred)?;
                    if dp != DType::Bool {
                        return Err(Error::dtype_mismatch(
                            OP,
                            format!("instruction {at}: select predicate has dtype {dp}, expected bool"),
                        ));
                    }
                    let (dt, df) = (get(on_true)?, get(on_false)?);
                    same(dt, df, "select")?;
                    dt
                }
                FusionInstr::Clamp { lo, x, hi } => {
                    let (dl, dx, dh) = (get(lo)?, get(x)?, get(hi)?);
                    same(dl, dx, "clamp")?;
                    same(dx, dh, "clamp")?;
                    dx
                }
                FusionInstr::Cast(v, to) => {
                    get(v)?;
                    to
                }
            };
            dtypes.push(dtype);
        }
        if self.outputs.is_empty() {
            return Err(Error::invalid_argument(OP, "the plan has no outputs"));
        }
        let output_dtypes = self
            .outputs
            .iter()
            .map(|&v| {
                dtypes.get(v).copied().ok_or_else(|| {
                    Error::invalid_argument(
                        OP,
                        format!("output value {v} is not defined (the plan has {} values)", dtypes.len()),
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(FusionSignature { shape, value_dtypes: dtypes, output_dtypes })
    }
}

fn at_instr(e: Error, at: usize) -> Error {
    Error::new(e.kind(), OP, format!("instruction {at}: {} {}", e.op(), e.message()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn plan(instrs: Vec<FusionInstr>, outputs: Vec<FusionValue>) -> ElementwiseFusionPlan {
        ElementwiseFusionPlan::new(instrs, outputs)
    }

    #[test]
    fn valid_plan_types_every_value() {
        use FusionInstr::*;
        let p = plan(
            vec![
                Input(0),
                Constant(FusionConstant::F32(0.5)),
                Compare(CompareDir::Lt, 0, 1),
                Select { pred: 2, on_true: 0, on_false: 1 },
                Cast(3, DType::I64),
                Unary(UnaryOp::Abs, 4),
            ],
            vec![5, 2],
        );
        let s = p.validate(&[(DType::F32, &[4])]).unwrap();
        assert_eq!(s.value_dtypes, vec![DType::F32, DType::F32, DType::Bool, DType::F32, DType::I64, DType::I64]);
        assert_eq!(s.output_dtypes, vec![DType::I64, DType::Bool]);
    }

    #[test]
    fn each_malformed_plan_gets_its_typed_error() {
        use FusionInstr::*;
        let f32_in: &[(DType, &[usize])] = &[(DType::F32, &[3])];
        let cases: Vec<(ElementwiseFusionPlan, ErrorKind, &str)> = vec![
            (plan(vec![Unary(UnaryOp::Neg, 0)], vec![0]), ErrorKind::InvalidArgument, "not defined before"),
            (plan(vec![Input(1)], vec![0]), ErrorKind::InvalidArgument, "reads input 1"),
            (plan(vec![Input(0)], vec![]), ErrorKind::InvalidArgument, "no outputs"),
            (plan(vec![Input(0)], vec![4]), ErrorKind::InvalidArgument, "output value 4"),
            (
                plan(vec![Input(0), Constant(FusionConstant::F64(1.0)), Binary(BinaryOp::Add, 0, 1)], vec![2]),
                ErrorKind::DTypeMismatch,
                "mixes dtypes",
            ),
            (
                plan(vec![Input(0), Select { pred: 0, on_true: 0, on_false: 0 }], vec![1]),
                ErrorKind::DTypeMismatch,
                "predicate",
            ),
            (plan(vec![Input(0), Cast(0, DType::I32), Unary(UnaryOp::Exp, 1)], vec![2]), ErrorKind::Unsupported, "exp"),
            (
                plan(vec![Input(0), Cast(0, DType::C32), Compare(CompareDir::Gt, 1, 1)], vec![2]),
                ErrorKind::Unsupported,
                "gt",
            ),
            (
                plan(vec![Input(0), Cast(0, DType::Bool), Binary(BinaryOp::Mul, 1, 1)], vec![2]),
                ErrorKind::Unsupported,
                "mul",
            ),
        ];
        for (p, kind, needle) in cases {
            let e = p.validate(f32_in).unwrap_err();
            assert_eq!(e.kind(), kind, "{p:?}: {e}");
            assert_eq!(e.op(), "fusion");
            assert!(e.message().contains(needle), "{e}");
        }
        let two = plan(vec![Input(0), Input(1), Binary(BinaryOp::Add, 0, 1)], vec![2]);
        let e = two.validate(&[(DType::F32, &[3]), (DType::F32, &[4])]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    }
}
