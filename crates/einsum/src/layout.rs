//! How the planner models the memory layout of each tensor of an expression, to choose
//! operand order and result layouts that spare copies.
//!
//! A `dot_general` runs as a strided GEMM without copying an operand when, in that
//! operand, its free axes and its contracted axes each *collapse*: ordered outermost
//! first, every stride equals the next one times the next extent (extent-1 axes do not
//! count). The free axes are visited in the order of the result, the contracted ones in
//! one order common to both operands. An operand that fails is packed (copied compact)
//! first. The model below predicts exactly that for the tensors the planner knows: inputs
//! assumed row-major as their shapes say, and every intermediate, which is a fresh
//! row-major tensor in the order the planner chose. A wrong guess about an input costs a
//! copy, never correctness: the kernel decides on the real strides.

use crate::label::{Label, LabelSet};

/// Where a step reads a tensor from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Source {
    /// Operand `k` of the call.
    Input(usize),
    /// The result of an earlier step.
    Temp(usize),
}

/// A tensor as the planner sees it: its distinct labels (in the order the tensor first
/// presents them), the memory stride of each, and the source axes each label is read
/// from (several for a diagonal, whose stride is their sum).
#[derive(Clone, Debug)]
pub(crate) struct Value {
    pub source: Source,
    pub labels: Vec<Label>,
    pub strides: Vec<isize>,
    pub axes: Vec<Vec<usize>>,
    /// Element count.
    pub len: u128,
}

impl Value {
    /// A fresh row-major tensor whose axes carry `labels` in order.
    pub(crate) fn compact(source: Source, labels: Vec<Label>, extents: &[usize]) -> Value {
        let mut strides = vec![0isize; labels.len()];
        let mut acc: isize = 1;
        for (s, &l) in strides.iter_mut().zip(&labels).rev() {
            *s = acc;
            acc = acc.wrapping_mul(extents[l as usize].max(1) as isize);
        }
        let axes = (0..labels.len()).map(|a| vec![a]).collect();
        let len = LabelSet::of(&labels).size(extents);
        Value { source, labels, strides, axes, len }
    }

    /// The position of `l` among the labels.
    pub(crate) fn position(&self, l: Label) -> Option<usize> {
        self.labels.iter().position(|&m| m == l)
    }

    fn stride(&self, l: Label) -> isize {
        self.position(l).map_or(0, |p| self.strides[p])
    }

    /// The labels of `set` this value has, ordered by decreasing stride magnitude (the
    /// order the kernel tries for contracted axes), extent-1 labels dropped.
    pub(crate) fn by_stride(&self, set: LabelSet, extents: &[usize]) -> Vec<Label> {
        let mut v: Vec<Label> =
            self.labels.iter().copied().filter(|&l| set.contains(l) && extents[l as usize] != 1).collect();
        v.sort_by_key(|&l| std::cmp::Reverse(self.stride(l).unsigned_abs()));
        v
    }

    /// True when `order` (extent-1 labels skipped) addresses this value with one stride.
    pub(crate) fn collapses(&self, order: &[Label], extents: &[usize]) -> bool {
        let mut kept = order.iter().copied().filter(|&l| extents[l as usize] != 1);
        let Some(mut prev) = kept.next() else { return true };
        for l in kept {
            if self.stride(prev) != self.stride(l).wrapping_mul(extents[l as usize] as isize) {
                return false;
            }
            prev = l;
        }
        true
    }

    /// True when the labels of `set` collapse in some order (their memory order).
    pub(crate) fn adjacent(&self, set: LabelSet, extents: &[usize]) -> bool {
        self.collapses(&self.by_stride(set, extents), extents)
    }

    /// The labels of `set` (extent-1 ones aside) that lie outside its largest run that
    /// collapses (by element count; the innermost among equals). A step can leave this
    /// value uncopied by making those labels batch axes, its partner broadcast along them.
    pub(crate) fn outside_largest_run(&self, set: LabelSet, extents: &[usize]) -> LabelSet {
        let order = self.by_stride(set, extents);
        let (mut best, mut best_size) = (LabelSet::EMPTY, 0u128);
        let (mut run, mut run_size) = (LabelSet::EMPTY, 0u128);
        let mut prev: Option<Label> = None;
        for l in order.iter().copied() {
            let extent = extents[l as usize] as u128;
            let continues =
                prev.is_some_and(|p| self.stride(p) == self.stride(l).wrapping_mul(extents[l as usize] as isize));
            if continues {
                run = run.with(l);
                run_size = run_size.saturating_mul(extent);
            } else {
                (run, run_size) = (LabelSet::EMPTY.with(l), extent);
            }
            if run_size >= best_size {
                (best, best_size) = (run, run_size);
            }
            prev = Some(l);
        }
        LabelSet::of(&order).minus(best)
    }
}

/// Products of at most this many multiply-adds run the kernel's direct loop, which reads
/// any strides without packing.
const DIRECT_MACS: u128 = 512;

/// Which operands a `dot_general` of `lhs` and `rhs` would pack, producing the free
/// labels in the orders `lhs_free` and `rhs_free` and contracting `contracted`.
pub(crate) fn predicted_packs(
    lhs: &Value,
    rhs: &Value,
    lhs_free: &[Label],
    rhs_free: &[Label],
    contracted: LabelSet,
    extents: &[usize],
) -> (bool, bool) {
    let all = LabelSet::of(&lhs.labels).union(LabelSet::of(&rhs.labels));
    let macs = all.size(extents);
    if macs <= DIRECT_MACS || macs == 0 {
        return (false, false);
    }
    let by_lhs = lhs.by_stride(contracted, extents);
    let by_rhs = rhs.by_stride(contracted, extents);
    let k = if !lhs.collapses(&by_lhs, extents) && rhs.collapses(&by_rhs, extents) { by_rhs } else { by_lhs };
    let pack_lhs = !(lhs.collapses(lhs_free, extents) && lhs.collapses(&k, extents));
    let pack_rhs = !(rhs.collapses(&k, extents) && rhs.collapses(rhs_free, extents));
    (pack_lhs, pack_rhs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(s: &str) -> Vec<Label> {
        s.bytes().map(|b| b - b'a').collect()
    }

    fn extents(pairs: &[(char, usize)]) -> Vec<usize> {
        let mut e = vec![1usize; 128];
        for &(c, d) in pairs {
            e[(c as u8 - b'a') as usize] = d;
        }
        e
    }

    #[test]
    fn compact_values_collapse_along_adjacent_labels() {
        let ext = extents(&[('a', 4), ('b', 5), ('c', 6), ('d', 7)]);
        let v = Value::compact(Source::Temp(0), labels("abcd"), &ext);
        assert_eq!(v.strides, vec![210, 42, 7, 1]);
        assert!(v.collapses(&labels("bc"), &ext));
        assert!(!v.collapses(&labels("cb"), &ext));
        assert!(!v.collapses(&labels("ac"), &ext));
        assert!(v.adjacent(LabelSet::of(&labels("cb")), &ext));
        assert!(!v.adjacent(LabelSet::of(&labels("ad")), &ext));
        // An extent-1 label in between does not break a run.
        let ext1 = extents(&[('a', 4), ('b', 1), ('c', 6)]);
        let v = Value::compact(Source::Temp(0), labels("abc"), &ext1);
        assert!(v.collapses(&labels("ac"), &ext1));
    }

    #[test]
    fn the_largest_run_stays_and_the_rest_can_be_batched() {
        let ext = extents(&[('a', 8), ('s', 2), ('t', 2), ('d', 8), ('b', 3)]);
        // astd: a and d are split by s, t; equal sizes keep the inner run (d).
        let v = Value::compact(Source::Input(0), labels("astd"), &ext);
        assert_eq!(v.outside_largest_run(LabelSet::of(&labels("ad")), &ext), LabelSet::of(&labels("a")));
        // bad (b, a adjacent, 24 elements) against d (8): d is batched.
        let v = Value::compact(Source::Input(0), labels("basd"), &ext);
        assert_eq!(v.outside_largest_run(LabelSet::of(&labels("bad")), &ext), LabelSet::of(&labels("d")));
        assert!(v.outside_largest_run(LabelSet::of(&labels("ba")), &ext).is_empty());
    }

    #[test]
    fn packs_follow_the_kernels_rule() {
        let ext = extents(&[('i', 32), ('j', 32), ('k', 32), ('l', 32)]);
        let a = Value::compact(Source::Input(0), labels("ij"), &ext);
        let b = Value::compact(Source::Input(1), labels("jk"), &ext);
        let j = LabelSet::of(&labels("j"));
        // ij,jk->ik: both as they are.
        assert_eq!(predicted_packs(&a, &b, &labels("i"), &labels("k"), j, &ext), (false, false));
        // ijk,jl->ikl with the lhs free labels split by j: the lhs is packed.
        let c = Value::compact(Source::Input(0), labels("ijk"), &ext);
        let d = Value::compact(Source::Input(1), labels("jl"), &ext);
        assert_eq!(predicted_packs(&c, &d, &labels("ik"), &labels("l"), j, &ext), (true, false));
        // ijk,kjl: contracted labels in opposite orders: one side is packed.
        let e = Value::compact(Source::Input(0), labels("ijk"), &ext);
        let f = Value::compact(Source::Input(1), labels("kjl"), &ext);
        let jk = LabelSet::of(&labels("jk"));
        assert_eq!(predicted_packs(&e, &f, &labels("i"), &labels("l"), jk, &ext), (false, true));
        // Tiny products run the direct loop: nothing is packed.
        let small = extents(&[('i', 2), ('j', 2), ('k', 2)]);
        let c = Value::compact(Source::Input(0), labels("ijk"), &small);
        let d = Value::compact(Source::Input(1), labels("jl"), &small);
        assert_eq!(predicted_packs(&c, &d, &labels("ik"), &labels("l"), j, &small), (false, false));
    }
}
