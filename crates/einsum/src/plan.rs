//! From a bound network to a [`Program`]: single-operand work first, the path search,
//! then a layout for every step, chosen so the steps after it need as few copies as the
//! model in [`crate::layout`] predicts.
//!
//! **Single operands.** An axis of extent 1 whose label has another extent elsewhere is
//! a broadcast: it is dropped (its one element multiplies every term). Repeated labels
//! are diagonals: one axis whose stride is the sum of theirs, a view, no copy. Labels
//! that no other operand and not the output has are summed right away (one reduction),
//! so the path search and every GEMM see only labels that matter.
//!
//! **Pairs.** A step that sums a label both operands share is one `dot_general`: labels
//! both keep are batch axes, the rest free. A step that sums nothing (outer and Hadamard
//! products, broadcasts) is one elementwise multiply of two broadcast views, whose result
//! layout is free. The dot_general result is batch, lhs free, rhs free; the planner picks
//! which operand goes left, the order within each group (an order other than the
//! operand's memory order costs the kernel a pack of that operand) and so the layout the
//! next step reads. The candidates are scored by predicted copy volume: packs in this
//! step, a pack of the result in the step that consumes it, a final transpose.

use strata_tensor::Result;
use strata_tensor::config::DotGeneralConfig;

use crate::label::{Label, LabelSet};
use crate::layout::{Source, Value, predicted_packs};
use crate::path::{self, EinsumOptions, Problem, StepCost, reduction_flops};
use crate::report::{ContractionPath, PathStep, StepKind};
use crate::spec::Network;

/// An operand of a step: which tensor, and how to present it: for each presented axis,
/// the source axes it walks (several for a diagonal, none for a broadcast) and its extent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Operand {
    pub source: Source,
    pub axes: Vec<Vec<usize>>,
    pub shape: Vec<usize>,
}

/// What one step computes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum StepOp {
    /// The sum of `input` over its `axes`.
    Reduce { input: Operand, axes: Vec<usize> },
    /// `dot_general(lhs, rhs, config)`.
    Contract { lhs: Operand, rhs: Operand, config: DotGeneralConfig },
    /// `lhs * rhs`, both presented in the result's shape.
    Multiply { lhs: Operand, rhs: Operand },
    /// A compact copy of `input` (the final transpose, or the result of an expression that
    /// only rearranges one operand).
    Copy { input: Operand },
}

/// One step: its op, the temporary it writes, and the temporaries it reads for the last
/// time (returned to the backend's pool after it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    pub op: StepOp,
    pub out: usize,
    pub frees: Vec<usize>,
}

/// Everything needed to run an expression on operands of the planned shapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Program {
    pub steps: Vec<Step>,
    pub temps: usize,
    /// The temporary holding the result (its element order is the output's; only its
    /// shape may differ by the position of extent-1 axes).
    pub result: usize,
    pub output_shape: Vec<usize>,
}

impl Program {
    /// An estimate of the heap bytes the program holds (for cache limits).
    pub(crate) fn footprint_bytes(&self) -> usize {
        let operand = |o: &Operand| {
            size_of::<Operand>()
                + o.shape.len() * size_of::<usize>()
                + o.axes.iter().map(|a| 24 + a.len() * 8).sum::<usize>()
        };
        let step = |s: &Step| {
            size_of::<Step>()
                + s.frees.len() * size_of::<usize>()
                + match &s.op {
                    StepOp::Reduce { input, axes } => operand(input) + axes.len() * 8,
                    StepOp::Contract { lhs, rhs, config } => {
                        operand(lhs)
                            + operand(rhs)
                            + 8 * (config.lhs_batch.len() * 2 + config.lhs_contracting.len() * 2)
                    }
                    StepOp::Multiply { lhs, rhs } => operand(lhs) + operand(rhs),
                    StepOp::Copy { input } => operand(input),
                }
        };
        size_of::<Program>() + self.steps.iter().map(step).sum::<usize>() + self.output_shape.len() * 8
    }
}

/// A free label turned into a batch axis costs about this many copied elements per extra
/// batch item (one more GEMM call).
const ITEM_COST: u128 = 512;

/// Free labels become batch axes only while each batch item keeps at least this many
/// multiply-adds (so it stays on the GEMM provider's route).
const MIN_ITEM_MACS: u128 = 8192;

/// How a pair step is arranged as a `dot_general`.
#[derive(Clone, Debug, Default)]
struct Contraction {
    /// Whether the first operand of the path step goes left.
    lhs_first: bool,
    /// The batch labels in result order (shared kept labels and promoted free ones).
    batch: Vec<Label>,
    /// The lhs and rhs free labels left as GEMM dimensions, in result order.
    lhs_free: Vec<Label>,
    rhs_free: Vec<Label>,
}

/// All but the largest collapsing run of `v`'s free labels, when its contracted labels
/// collapse but its free ones do not (then batching the rest spares packing `v`).
fn split_free(v: &Value, free: LabelSet, contracted: LabelSet, extents: &[usize]) -> LabelSet {
    if v.adjacent(contracted, extents) && !v.adjacent(free, extents) {
        v.outside_largest_run(free, extents)
    } else {
        LabelSet::EMPTY
    }
}

/// The cost of the extra batch items that promoting `promoted` adds to `batch`.
fn batch_penalty(batch: LabelSet, promoted: LabelSet, extents: &[usize]) -> u128 {
    if promoted.is_empty() {
        return 0;
    }
    batch.size(extents).saturating_mul(promoted.size(extents).saturating_sub(1)).saturating_mul(ITEM_COST)
}

/// The planner's state while it walks the path.
struct Planner<'a> {
    net: &'a Network,
    extents: &'a [usize],
    /// The legs of every SSA id: operands `0..n`, then one per pair step.
    legs: Vec<LabelSet>,
    /// For every SSA id, the pair step that consumes it and the partner it meets there.
    consumer: Vec<Option<(usize, usize)>>,
    /// The layout of every SSA id once planned.
    values: Vec<Option<Value>>,
    n: usize,
    steps: Vec<Step>,
    report: Vec<PathStep>,
    temps: usize,
}

/// Plans `net` under `options`.
pub(crate) fn build(net: &Network, shapes: &[&[usize]], options: &EinsumOptions) -> Result<(Program, ContractionPath)> {
    let extents = &net.extents[..];
    let n = net.operands.len();
    let output = LabelSet::of(&net.output);

    // Single-operand work: which axes each operand keeps, and what it sums alone.
    let views: Vec<Value> = (0..n).map(|k| input_view(net, k, shapes[k])).collect();
    let mut holders = [0usize; crate::label::MAX_LABELS];
    for v in &views {
        for &l in &v.labels {
            holders[l as usize] += 1;
        }
    }
    let summed: Vec<LabelSet> = views
        .iter()
        .map(|v| {
            LabelSet::of(&v.labels)
                .minus(output)
                .iter()
                .filter(|&l| holders[l as usize] == 1)
                .fold(LabelSet::EMPTY, LabelSet::with)
        })
        .collect();
    let sets: Vec<LabelSet> = views.iter().zip(&summed).map(|(v, s)| LabelSet::of(&v.labels).minus(*s)).collect();

    let problem = Problem { sets: &sets, output, extents };
    let ssa = path::search(&problem, options)?;

    let mut planner = Planner::new(net, &sets, &ssa);
    // Operands used as they are first (their layout is fixed), then reductions, whose
    // layouts may then match the partners they meet.
    for (k, v) in views.iter().enumerate() {
        if summed[k].is_empty() {
            planner.values[k] = Some(v.clone());
        }
    }
    for (k, v) in views.iter().enumerate() {
        if !summed[k].is_empty() {
            planner.plan_reduction(k, v, summed[k]);
        }
    }
    for (s, &(a, b)) in ssa.iter().enumerate() {
        planner.plan_pair(s, a, b);
    }
    let result_id = if ssa.is_empty() { 0 } else { n + ssa.len() - 1 };
    planner.finish(result_id);

    let linear = linear_path(n, &ssa);
    let naive = naive_flops(&views, output, extents);
    let Planner { steps, report, temps, .. } = planner;
    let result = steps.last().map_or(0, |s| s.out);
    let output_shape: Vec<usize> = net.output.iter().map(|&l| extents[l as usize]).collect();
    let program = Program { steps: with_frees(steps, result), temps, result, output_shape: output_shape.clone() };
    let path = ContractionPath::new(
        shapes.iter().map(|s| s.to_vec()).collect(),
        output_shape,
        options.strategy.name(),
        report,
        linear,
        naive,
    );
    Ok((program, path))
}

/// Operand `k` as the planner first sees it: broadcast axes dropped, repeated labels
/// merged into one diagonal axis (at the first one's place), row-major strides assumed.
fn input_view(net: &Network, k: usize, shape: &[usize]) -> Value {
    let labels = &net.operands[k];
    let row_major = strata_tensor::shape::row_major_strides(shape);
    let mut v = Value { source: Source::Input(k), labels: Vec::new(), strides: Vec::new(), axes: Vec::new(), len: 1 };
    for (axis, &l) in labels.iter().enumerate() {
        if shape[axis] == 1 && net.extents[l as usize] != 1 {
            continue;
        }
        match v.position(l) {
            Some(p) => {
                v.strides[p] += row_major[axis];
                v.axes[p].push(axis);
            }
            None => {
                v.labels.push(l);
                v.strides.push(row_major[axis]);
                v.axes.push(vec![axis]);
            }
        }
    }
    v.len = LabelSet::of(&v.labels).size(&net.extents);
    v
}

impl<'a> Planner<'a> {
    fn new(net: &'a Network, sets: &[LabelSet], ssa: &[(usize, usize)]) -> Self {
        let n = sets.len();
        let extents = &net.extents[..];
        let output = LabelSet::of(&net.output);
        let mut legs = sets.to_vec();
        let mut consumer = vec![None; n + ssa.len()];
        let mut holders = [0usize; crate::label::MAX_LABELS];
        for s in sets {
            for l in s.iter() {
                holders[l as usize] += 1;
            }
        }
        for (s, &(a, b)) in ssa.iter().enumerate() {
            let either = legs[a].union(legs[b]);
            let mut kept = either.intersect(output);
            for l in either.minus(output).iter() {
                let here = usize::from(legs[a].contains(l)) + usize::from(legs[b].contains(l));
                if holders[l as usize] > here {
                    kept = kept.with(l);
                }
            }
            for l in legs[a].iter().chain(legs[b].iter()) {
                holders[l as usize] -= 1;
            }
            for l in kept.iter() {
                holders[l as usize] += 1;
            }
            legs.push(kept);
            consumer[a] = Some((s, b));
            consumer[b] = Some((s, a));
        }
        Planner {
            net,
            extents,
            legs,
            consumer,
            values: vec![None; n + ssa.len()],
            n,
            steps: Vec::new(),
            report: Vec::new(),
            temps: 0,
        }
    }

    fn new_temp(&mut self) -> usize {
        self.temps += 1;
        self.temps - 1
    }

    /// The copy volume a layout `order` of SSA id `id` costs later: a pack in the step
    /// that consumes it (or a mismatch with its partner's contracted order), or the final
    /// transpose when it is the result.
    fn layout_cost(&self, id: usize, order: &[Label]) -> u128 {
        let ext = self.extents;
        let v = Value::compact(Source::Temp(0), order.to_vec(), ext);
        let Some((s, partner)) = self.consumer[id] else {
            return if same_order(order, &self.net.output, ext) { 0 } else { v.len };
        };
        let (mine, theirs, kept) = (self.legs[id], self.legs[partner], self.legs[self.n + s]);
        let contracted = mine.intersect(theirs).minus(kept);
        if contracted.is_empty() {
            return 0;
        }
        if !v.adjacent(contracted, ext) {
            return v.len;
        }
        let free = mine.minus(theirs);
        let mut cost = 0;
        if !v.adjacent(free, ext) {
            // The consumer can keep the largest free run as its GEMM side and batch the rest.
            let promoted = v.outside_largest_run(free, ext);
            let batch = mine.intersect(theirs).intersect(kept);
            let item = free.minus(promoted).size(ext) * theirs.minus(mine).size(ext) * contracted.size(ext);
            if item < MIN_ITEM_MACS {
                return v.len;
            }
            cost = v.len.min(batch_penalty(batch, promoted, ext));
        }
        if let Some(z) = &self.values[partner]
            && z.adjacent(contracted, ext)
            && z.by_stride(contracted, ext) != v.by_stride(contracted, ext)
        {
            cost = cost.saturating_add(v.len.min(z.len));
        }
        if self.n + s + 1 == self.values.len() && !self.output_friendly(order, free) {
            // The consumer writes the output: it must pack this value or transpose.
            cost = cost.saturating_add(v.len.min(LabelSet::of(&self.net.output).size(ext)));
        }
        cost
    }

    /// Whether a value ordered `order`, whose labels `free` pass into the result, lets
    /// the final step write the output's order without a copy: once the output's first
    /// one to three labels are set aside (that step can make them batch axes), the rest
    /// of its free labels lie together and in the output's order.
    fn output_friendly(&self, order: &[Label], free: LabelSet) -> bool {
        let ext = self.extents;
        let v = Value::compact(Source::Temp(0), order.to_vec(), ext);
        let big: Vec<Label> = self.net.output.iter().copied().filter(|&l| ext[l as usize] != 1).collect();
        (0..=big.len().min(3)).any(|p| {
            let rest = free.minus(LabelSet::of(&big[..p]));
            let wanted = big[p..].iter().filter(|l| rest.contains(**l));
            let mine = order.iter().filter(|l| rest.contains(**l) && ext[**l as usize] != 1);
            wanted.eq(mine) && v.adjacent(rest, ext)
        })
    }

    /// Orders worth trying for SSA id `id`, whose natural order is `base`: the output's
    /// when it is the result, else its labels grouped by their role in the consuming step
    /// (batch, contracted, free; all six group orders), the contracted ones in the
    /// partner's memory order when that is known.
    fn templates(&self, id: usize, base: &[Label]) -> Vec<Vec<Label>> {
        let ext = self.extents;
        let Some((s, partner)) = self.consumer[id] else {
            return vec![self.net.output.clone()];
        };
        let (mine, theirs, kept) = (self.legs[id], self.legs[partner], self.legs[self.n + s]);
        let contracted = mine.intersect(theirs).minus(kept);
        let batch = mine.intersect(theirs).intersect(kept);
        let free = mine.minus(theirs);
        let in_base = |set: LabelSet| base.iter().copied().filter(|&l| set.contains(l)).collect::<Vec<_>>();
        let k_order = match &self.values[partner] {
            Some(z) => {
                let k = z.by_stride(contracted, ext);
                let rest: Vec<Label> = in_base(contracted).into_iter().filter(|l| !k.contains(l)).collect();
                [k, rest].concat()
            }
            None => in_base(contracted),
        };
        const ORDERS: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        let arrange = |groups: &[Vec<Label>; 3]| -> Vec<Vec<Label>> {
            ORDERS.iter().map(|o| o.iter().flat_map(|&g| groups[g].iter().copied()).collect()).collect()
        };
        let mut templates = arrange(&[in_base(batch), k_order.clone(), in_base(free)]);
        if self.n + s + 1 == self.values.len() {
            // The consumer produces the result: its kept labels in the output's order let
            // it write the output directly.
            let in_output =
                |set: LabelSet| self.net.output.iter().copied().filter(|&l| set.contains(l)).collect::<Vec<_>>();
            templates.extend(arrange(&[in_output(batch), k_order, in_output(free)]));
        }
        templates
    }

    /// The cheapest of `base` and the templates for an id whose layout is free.
    fn free_order(&self, id: usize, base: Vec<Label>) -> Vec<Label> {
        let mut best_cost = self.layout_cost(id, &base);
        let mut best = base.clone();
        for t in self.templates(id, &base) {
            let c = self.layout_cost(id, &t);
            if c < best_cost {
                best_cost = c;
                best = t;
            }
        }
        best
    }

    /// Operand `k` sums `summed` on its own: one reduction into the order its consumer
    /// (or the output) prefers.
    fn plan_reduction(&mut self, k: usize, view: &Value, summed: LabelSet) {
        let keep: Vec<Label> = view.labels.iter().copied().filter(|&l| !summed.contains(l)).collect();
        let order = self.free_order(k, keep);
        let sum_labels: Vec<Label> = view.labels.iter().copied().filter(|&l| summed.contains(l)).collect();
        let presented: Vec<Label> = order.iter().chain(&sum_labels).copied().collect();
        let input = self.present(view, &presented);
        let axes = (order.len()..presented.len()).collect();
        let out = self.new_temp();
        let value = Value::compact(Source::Temp(out), order, self.extents);
        self.report.push(PathStep {
            kind: StepKind::Reduce,
            operands: vec![k],
            subscripts: format!("{}->{}", letters(&view.labels), letters(&value.labels)),
            shape: self.shape_of(&value.labels),
            flops: reduction_flops(view.len),
        });
        self.steps.push(Step { op: StepOp::Reduce { input, axes }, out, frees: Vec::new() });
        self.values[k] = Some(value);
    }

    /// Pair step `s` joining SSA ids `a` and `b`.
    fn plan_pair(&mut self, s: usize, a: usize, b: usize) {
        let ext = self.extents;
        let id = self.n + s;
        let kept = self.legs[id];
        // INVARIANT: SSA order plans both operands before the step that joins them.
        let (pa, pb) = match (&self.values[a], &self.values[b]) {
            (Some(pa), Some(pb)) => (pa.clone(), pb.clone()),
            _ => unreachable!("SSA operands are planned before their step"),
        };
        let flops = StepCost::of(self.legs[a], self.legs[b], kept, kept.size(ext), ext).flops;
        let contracted = self.legs[a].intersect(self.legs[b]).minus(kept);
        let (op, order, lhs_label, rhs_label) = if contracted.is_empty() {
            // Nothing summed: an elementwise product of broadcast views, layout free.
            let (big, small) = if pa.len >= pb.len { (&pa, &pb) } else { (&pb, &pa) };
            let mut base = memory_order(big, LabelSet::of(&big.labels), ext);
            base.extend(memory_order(small, LabelSet::of(&small.labels).minus(LabelSet::of(&big.labels)), ext));
            let order = self.free_order(id, base);
            let lhs = self.present(&pa, &order);
            let rhs = self.present(&pb, &order);
            (StepOp::Multiply { lhs, rhs }, order, &pa, &pb)
        } else {
            let choice = self.best_contraction(id, &pa, &pb, contracted);
            let op = self.contraction_op(&choice, &pa, &pb, contracted);
            let (l, r) = if choice.lhs_first { (&pa, &pb) } else { (&pb, &pa) };
            (op, [choice.batch, choice.lhs_free, choice.rhs_free].concat(), l, r)
        };
        let out = self.new_temp();
        let value = Value::compact(Source::Temp(out), order, ext);
        self.report.push(PathStep {
            kind: if matches!(op, StepOp::Contract { .. }) { StepKind::Contract } else { StepKind::Multiply },
            operands: vec![a, b],
            subscripts: format!(
                "{},{}->{}",
                letters(&lhs_label.labels),
                letters(&rhs_label.labels),
                letters(&value.labels)
            ),
            shape: self.shape_of(&value.labels),
            flops,
        });
        self.steps.push(Step { op, out, frees: Vec::new() });
        self.values[id] = Some(value);
    }

    /// The cheapest `dot_general` arrangement of `pa` and `pb` producing SSA id `id`:
    /// which operand goes left, which free labels become batch axes (the other operand
    /// broadcast along them, so an operand whose free labels the contracted ones split
    /// needs no pack), the result order, the config and both presented operands.
    fn best_contraction(&self, id: usize, pa: &Value, pb: &Value, contracted: LabelSet) -> Contraction {
        let ext = self.extents;
        let kept = self.legs[id];
        let k_size = contracted.size(ext);
        let mut best: Option<(u128, Contraction)> = None;
        for lhs_first in [true, false] {
            let (l, r) = if lhs_first { (pa, pb) } else { (pb, pa) };
            let (ls, rs) = (LabelSet::of(&l.labels), LabelSet::of(&r.labels));
            let batch = ls.intersect(rs).intersect(kept);
            let (lf, rf) = (ls.minus(rs), rs.minus(ls));
            let natural_order = [memory_order(l, ls, ext), memory_order(r, rs.minus(ls), ext)].concat();
            for promoted in self.promotions(id, l, r, contracted, &natural_order) {
                let (pl, pr) = (promoted.intersect(lf), promoted.intersect(rf));
                {
                    let (mf, nf) = (lf.minus(pl), rf.minus(pr));
                    if !promoted.is_empty() && mf.size(ext) * nf.size(ext) * k_size < MIN_ITEM_MACS {
                        continue;
                    }
                    let penalty = batch_penalty(batch, promoted, ext);
                    let all_batch = batch.union(promoted);
                    let natural_batch = [memory_order(l, batch.union(pl), ext), memory_order(r, pr, ext)].concat();
                    let natural: Vec<Label> =
                        [natural_batch.clone(), memory_order(l, mf, ext), memory_order(r, nf, ext)].concat();
                    let templates = self.templates(id, &natural);
                    let options = |set: LabelSet, native: Vec<Label>| {
                        let mut options = vec![native];
                        for t in &templates {
                            let o: Vec<Label> = t.iter().copied().filter(|&x| set.contains(x)).collect();
                            if !options.contains(&o) {
                                options.push(o);
                            }
                        }
                        options
                    };
                    let mut batch_options = options(all_batch, natural_batch);
                    let from_rhs =
                        [memory_order(r, batch, ext), memory_order(l, pl, ext), memory_order(r, pr, ext)].concat();
                    if !batch_options.contains(&from_rhs) {
                        batch_options.push(from_rhs);
                    }
                    let m_options = options(mf, memory_order(l, mf, ext));
                    let n_options = options(nf, memory_order(r, nf, ext));
                    for bo in &batch_options {
                        for mo in &m_options {
                            for no in &n_options {
                                let (pack_l, pack_r) = predicted_packs(l, r, mo, no, contracted, ext);
                                let order: Vec<Label> = [bo.as_slice(), mo, no].concat();
                                let cost = (u128::from(pack_l) * l.len)
                                    .saturating_add(u128::from(pack_r) * r.len)
                                    .saturating_add(penalty)
                                    .saturating_add(self.layout_cost(id, &order));
                                if best.as_ref().is_none_or(|b| cost < b.0) {
                                    let choice = Contraction {
                                        lhs_first,
                                        batch: bo.clone(),
                                        lhs_free: mo.clone(),
                                        rhs_free: no.clone(),
                                    };
                                    best = Some((cost, choice));
                                }
                            }
                        }
                    }
                }
            }
        }
        // INVARIANT: the unpromoted arrangement of each side is always tried, so `best` is set.
        best.map(|(_, c)| c).unwrap_or_default()
    }

    /// Free labels worth making batch axes in a step of `l` and `r` producing `id`: none;
    /// those that split either operand's free labels (see [`split_free`]); and the free
    /// labels among the first one to three of each template order, which lets a result
    /// start with labels from both operands (the output's order, or the next step's).
    fn promotions(&self, id: usize, l: &Value, r: &Value, contracted: LabelSet, natural: &[Label]) -> Vec<LabelSet> {
        let ext = self.extents;
        let (ls, rs) = (LabelSet::of(&l.labels), LabelSet::of(&r.labels));
        let free = ls.union(rs).minus(ls.intersect(rs));
        let (sl, sr) = (split_free(l, ls.minus(rs), contracted, ext), split_free(r, rs.minus(ls), contracted, ext));
        let mut options = vec![LabelSet::EMPTY, sl, sr, sl.union(sr)];
        for t in self.templates(id, natural) {
            let mut prefix = LabelSet::EMPTY;
            for &label in t.iter().filter(|&&x| ext[x as usize] != 1).take(3) {
                prefix = prefix.with(label);
                options.push(prefix.intersect(free));
            }
        }
        options.sort_unstable();
        options.dedup();
        // The free labels must keep one GEMM dimension on some side: promoting all of
        // them leaves a batched dot product, which the plain arrangement does better.
        options.retain(|p| p.is_empty() || !free.minus(*p).is_empty());
        options
    }

    /// The operands and config of a chosen arrangement.
    fn contraction_op(&self, c: &Contraction, pa: &Value, pb: &Value, contracted: LabelSet) -> StepOp {
        let ext = self.extents;
        let (l, r) = if c.lhs_first { (pa, pb) } else { (pb, pa) };
        let k = memory_order(l, contracted, ext);
        let k: Vec<Label> = {
            let by = l.by_stride(contracted, ext);
            by.iter().copied().chain(k.into_iter().filter(|x| !by.contains(x))).collect()
        };
        let (nb, nl, nk) = (c.batch.len(), c.lhs_free.len(), k.len());
        let lhs = self.present(l, &[c.batch.as_slice(), &c.lhs_free, &k].concat());
        let rhs = self.present(r, &[c.batch.as_slice(), &k, &c.rhs_free].concat());
        let config = DotGeneralConfig::new(
            (0..nb).collect(),
            (0..nb).collect(),
            (nb + nl..nb + nl + nk).collect(),
            (nb..nb + nk).collect(),
        );
        StepOp::Contract { lhs, rhs, config }
    }

    /// The result: a copy into the output order unless the last step already wrote it.
    fn finish(&mut self, id: usize) {
        let ext = self.extents;
        // INVARIANT: every SSA id is planned by now.
        let Some(v) = self.values[id].clone() else { unreachable!("the result is planned") };
        let needs_copy = matches!(v.source, Source::Input(_)) || !same_order(&v.labels, &self.net.output, ext);
        if needs_copy {
            let input = self.present(&v, &self.net.output.clone());
            let out = self.new_temp();
            self.report.push(PathStep {
                kind: StepKind::Transpose,
                operands: vec![id],
                subscripts: format!("{}->{}", letters(&v.labels), letters(&self.net.output)),
                shape: self.shape_of(&self.net.output),
                flops: 0,
            });
            self.steps.push(Step { op: StepOp::Copy { input }, out, frees: Vec::new() });
        }
    }

    /// `v` presented with its labels in `order` (every presented label is either `v`'s
    /// or, for a broadcast operand, absent from it).
    fn present(&self, v: &Value, order: &[Label]) -> Operand {
        let axes = order.iter().map(|&l| v.position(l).map_or_else(Vec::new, |p| v.axes[p].clone())).collect();
        Operand { source: v.source, axes, shape: self.shape_of(order) }
    }

    fn shape_of(&self, labels: &[Label]) -> Vec<usize> {
        labels.iter().map(|&l| self.extents[l as usize]).collect()
    }
}

/// The labels of `set` in `v`'s memory order (outermost first; extent-1 labels keep their
/// place in the label list).
fn memory_order(v: &Value, set: LabelSet, extents: &[usize]) -> Vec<Label> {
    let mut out = v.by_stride(set, extents);
    for (i, &l) in v.labels.iter().enumerate() {
        if set.contains(l) && extents[l as usize] == 1 {
            out.insert(i.min(out.len()), l);
        }
    }
    out
}

/// Whether `a` and `b` order their labels alike, extent-1 labels aside (moving those
/// does not move data).
fn same_order(a: &[Label], b: &[Label], extents: &[usize]) -> bool {
    let big = |l: &&Label| extents[**l as usize] != 1;
    a.iter().filter(big).eq(b.iter().filter(big))
}

fn letters(labels: &[Label]) -> String {
    labels.iter().map(|&l| crate::label::label_char(l)).collect()
}

/// Marks, for each step, the temporaries it reads for the last time.
fn with_frees(mut steps: Vec<Step>, result: usize) -> Vec<Step> {
    let reads = |op: &StepOp| -> Vec<usize> {
        let temp = |o: &Operand| match o.source {
            Source::Temp(t) => Some(t),
            Source::Input(_) => None,
        };
        match op {
            StepOp::Reduce { input, .. } | StepOp::Copy { input } => temp(input).into_iter().collect(),
            StepOp::Contract { lhs, rhs, .. } | StepOp::Multiply { lhs, rhs } => {
                temp(lhs).into_iter().chain(temp(rhs)).collect()
            }
        }
    };
    let mut last = std::collections::HashMap::new();
    for (i, s) in steps.iter().enumerate() {
        for t in reads(&s.op) {
            last.insert(t, i);
        }
    }
    for (t, i) in last {
        if t != result {
            steps[i].frees.push(t);
        }
    }
    for s in &mut steps {
        s.frees.sort_unstable();
    }
    steps
}

/// numpy's linear form of an SSA path.
fn linear_path(n: usize, ssa: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut current: Vec<usize> = (0..n).collect();
    let mut out = Vec::with_capacity(ssa.len());
    for (s, &(a, b)) in ssa.iter().enumerate() {
        // INVARIANT: an SSA path names each live id once.
        let i = current.iter().position(|&x| x == a).unwrap_or(0);
        let j = current.iter().position(|&x| x == b).unwrap_or(0);
        out.push((i.min(j), i.max(j)));
        current.retain(|&x| x != a && x != b);
        current.push(n + s);
    }
    out
}

/// numpy's naive count: one loop nest over every label.
fn naive_flops(views: &[Value], output: LabelSet, extents: &[usize]) -> u128 {
    let all = views.iter().fold(LabelSet::EMPTY, |s, v| s.union(LabelSet::of(&v.labels)));
    let terms = views.len().saturating_sub(1).max(1) as u128;
    let inner = u128::from(!all.minus(output).is_empty());
    all.size(extents).saturating_mul(terms + inner)
}
