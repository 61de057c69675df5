//! Op configs. Each config validates itself against its operands' shapes once, in the
//! kernel entry, so every op rejects bad input the same way and before writing anything.

mod compare;
mod dot_general;
mod elementwise;
mod fusion;
mod gather;
mod grouped_gemm;
mod pad;
mod scatter;
mod slice;

#[allow(unused_imports)]
pub use self::{
    compare::*, dot_general::*, elementwise::*, fusion::*, gather::*, grouped_gemm::*, pad::*, scatter::*, slice::*,
};
