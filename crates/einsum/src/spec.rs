//! numpy's einsum notation: parsing a spec ([`EinsumSpec`]) and binding it to operand
//! shapes ([`Network`]).
//!
//! The rules are numpy's (`np.einsum` without `optimize`, which is the reference; its
//! optimised mode is laxer in places, see DECISIONS.md):
//! - terms are separated by `,`; an optional `->` starts the output; spaces are ignored
//!   (but not inside `->` or `...`);
//! - subscripts are the letters `A-Z`, `a-z`, case-sensitive;
//! - one `...` per term stands for the axes the letters do not name; the ellipses of all
//!   operands broadcast against each other right-aligned, as numpy broadcasting does;
//! - a letter repeated within one operand takes that operand's diagonal (equal extents);
//! - a letter's extents in different operands must be equal or 1 (1 broadcasts);
//! - without `->`, the output is the ellipsis (if any operand has one) followed by the
//!   letters that appear exactly once, in ASCII order (upper case first);
//! - an explicit output names each letter at most once, only letters some operand has,
//!   and must contain `...` when the ellipsis covers any axis.

use std::fmt;

use strata_tensor::Result;

use crate::error::{EinsumError, fail};
use crate::label::{LETTERS, Label, LabelName, MAX_LABELS, ellipsis_label, label_char, letter_label};

/// One item of a term.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Subscript {
    Letter(Label),
    Ellipsis,
}

/// The subscripts of one operand or of the output.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Term {
    items: Vec<Subscript>,
}

impl Term {
    fn has_ellipsis(&self) -> bool {
        self.items.contains(&Subscript::Ellipsis)
    }

    fn letters(&self) -> impl Iterator<Item = Label> + '_ {
        self.items.iter().filter_map(|s| match s {
            Subscript::Letter(l) => Some(*l),
            Subscript::Ellipsis => None,
        })
    }

    /// The axis labels of an operand of `rank` axes whose ellipsis covers the last
    /// `rank - letters` of the `broadcast` ellipsis axes.
    fn expand(&self, rank: usize, broadcast: usize) -> Vec<Label> {
        let covered = rank.saturating_sub(self.letters().count());
        let mut labels = Vec::with_capacity(rank.max(self.items.len()));
        for s in &self.items {
            match s {
                Subscript::Letter(l) => labels.push(*l),
                Subscript::Ellipsis => labels.extend((broadcast - covered..broadcast).map(ellipsis_label)),
            }
        }
        labels
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for s in &self.items {
            match s {
                Subscript::Letter(l) => write!(f, "{}", label_char(*l))?,
                Subscript::Ellipsis => f.write_str("...")?,
            }
        }
        Ok(())
    }
}

/// A parsed einsum spec, independent of operand shapes.
///
/// ```
/// use strata_einsum::EinsumSpec;
/// let spec = EinsumSpec::parse("ij, jk")?;
/// assert_eq!(spec.num_operands(), 2);
/// assert_eq!(spec.to_string(), "ij,jk->ik"); // the implicit output made explicit
/// let spec = EinsumSpec::parse("...ii->...i")?;
/// assert_eq!(spec.to_string(), "...ii->...i");
/// assert!(EinsumSpec::parse("ij->ij->i").is_err());
/// # Ok::<(), strata_tensor::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EinsumSpec {
    inputs: Vec<Term>,
    output: Term,
    explicit: bool,
}

impl EinsumSpec {
    /// Parses `spec` in numpy's notation.
    ///
    /// Errors (`InvalidArgument`, with an [`EinsumError`] source): a character that is
    /// not a subscript, a stray `.`, two ellipses in a term, a broken or second `->`, a
    /// `,` in the output, an output subscript repeated or absent from every operand.
    pub fn parse(spec: &str) -> Result<EinsumSpec> {
        let mut inputs = Vec::new();
        let mut current = Term::default();
        let mut output: Option<Term> = None;
        let term_name = |inputs: &Vec<Term>, in_output: bool| {
            if in_output { "the output".to_string() } else { format!("operand {}", inputs.len()) }
        };
        let bytes = spec.as_bytes();
        let mut chars = spec.char_indices().peekable();
        while let Some((pos, c)) = chars.next() {
            let in_output = output.is_some();
            match c {
                ' ' => {}
                '.' => {
                    if bytes.get(pos + 1) != Some(&b'.') || bytes.get(pos + 2) != Some(&b'.') {
                        return fail(EinsumError::StrayDot { position: pos });
                    }
                    chars.next();
                    chars.next();
                    if current.has_ellipsis() {
                        return fail(EinsumError::SecondEllipsis { term: term_name(&inputs, in_output) });
                    }
                    current.items.push(Subscript::Ellipsis);
                }
                ',' if in_output => return fail(EinsumError::CommaInOutput { position: pos }),
                ',' => inputs.push(std::mem::take(&mut current)),
                '-' => {
                    if chars.peek().map(|&(_, c)| c) != Some('>') {
                        return fail(EinsumError::BrokenArrow { position: pos, character: '-' });
                    }
                    chars.next();
                    if in_output {
                        return fail(EinsumError::SecondArrow { position: pos });
                    }
                    inputs.push(std::mem::take(&mut current));
                    output = Some(Term::default());
                }
                '>' => return fail(EinsumError::BrokenArrow { position: pos, character: '>' }),
                c => match letter_label(c) {
                    Some(l) => current.items.push(Subscript::Letter(l)),
                    None => return fail(EinsumError::InvalidCharacter { position: pos, character: c }),
                },
            }
        }
        let explicit = output.is_some();
        let output = if explicit {
            let out = current;
            let mut seen = [false; LETTERS];
            for l in out.letters() {
                if std::mem::replace(&mut seen[l as usize], true) {
                    return fail(EinsumError::OutputLabelRepeated { label: label_char(l) });
                }
                if !inputs.iter().any(|t| t.letters().any(|m| m == l)) {
                    return fail(EinsumError::OutputLabelUnknown { label: label_char(l) });
                }
            }
            out
        } else {
            inputs.push(current);
            implicit_output(&inputs)
        };
        Ok(EinsumSpec { inputs, output, explicit })
    }

    /// Number of operand terms.
    pub fn num_operands(&self) -> usize {
        self.inputs.len()
    }

    /// Whether the spec named its output (`->`) rather than leaving it implicit.
    pub fn is_explicit(&self) -> bool {
        self.explicit
    }

    /// Binds the spec to operand shapes: expands ellipses, checks ranks, diagonals and
    /// broadcasting, and fixes every label's extent.
    pub(crate) fn bind(&self, shapes: &[&[usize]]) -> Result<Network> {
        if shapes.len() != self.inputs.len() {
            return fail(EinsumError::OperandCount { terms: self.inputs.len(), operands: shapes.len() });
        }
        let mut broadcast = 0;
        for (k, (term, shape)) in self.inputs.iter().zip(shapes).enumerate() {
            let letters = term.letters().count();
            let fits = if term.has_ellipsis() { shape.len() >= letters } else { shape.len() == letters };
            if !fits {
                let at_least = if term.has_ellipsis() { "at least " } else { "" };
                return fail(EinsumError::RankMismatch {
                    operand: k,
                    subscripts: term.to_string(),
                    rank: shape.len(),
                    expected: format!("name {at_least}{letters} axis/axes"),
                });
            }
            broadcast = broadcast.max(shape.len() - letters);
        }
        if broadcast > MAX_LABELS - LETTERS {
            return fail(EinsumError::TooManyAxes { axes: broadcast, max: MAX_LABELS - LETTERS });
        }
        if broadcast > 0 && !self.output.has_ellipsis() {
            return fail(EinsumError::OutputEllipsisMissing { axes: broadcast });
        }
        // The extent of each label, and the operand that set it (for messages).
        let mut extents = vec![1usize; MAX_LABELS];
        let mut setter: Vec<Option<usize>> = vec![None; MAX_LABELS];
        let mut operands = Vec::with_capacity(shapes.len());
        for (k, (term, shape)) in self.inputs.iter().zip(shapes).enumerate() {
            let labels = term.expand(shape.len(), broadcast);
            for (axis, (&l, &d)) in labels.iter().zip(shape.iter()).enumerate() {
                if let Some(first) = labels[..axis].iter().position(|&m| m == l)
                    && shape[first] != d
                {
                    return fail(EinsumError::DiagonalExtents {
                        operand: k,
                        label: label_char(l),
                        first: shape[first],
                        second: d,
                    });
                }
                let li = l as usize;
                match setter[li] {
                    None => {
                        extents[li] = d;
                        setter[li] = Some(k);
                    }
                    Some(_) if extents[li] == d || d == 1 => {}
                    Some(_) if extents[li] == 1 => {
                        extents[li] = d;
                        setter[li] = Some(k);
                    }
                    Some(first) => {
                        return fail(EinsumError::ExtentMismatch {
                            label: LabelName(l).to_string(),
                            first_operand: first,
                            first_extent: extents[li],
                            second_operand: k,
                            second_extent: d,
                        });
                    }
                }
            }
            operands.push(labels);
        }
        let output = self.output.expand(broadcast + self.output.letters().count(), broadcast);
        Ok(Network { operands, extents, output })
    }
}

/// numpy's implicit output: the ellipsis when any operand has one, then every letter that
/// appears exactly once over all operands, in ASCII order.
fn implicit_output(inputs: &[Term]) -> Term {
    let mut count = [0usize; LETTERS];
    for l in inputs.iter().flat_map(|t| t.letters()) {
        count[l as usize] += 1;
    }
    let mut items = Vec::new();
    if inputs.iter().any(Term::has_ellipsis) {
        items.push(Subscript::Ellipsis);
    }
    items.extend((0..LETTERS).filter(|&l| count[l] == 1).map(|l| Subscript::Letter(l as Label)));
    Term { items }
}

impl fmt::Display for EinsumSpec {
    /// The spec with its output made explicit (`ij,jk` prints as `ij,jk->ik`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, t) in self.inputs.iter().enumerate() {
            if k > 0 {
                f.write_str(",")?;
            }
            write!(f, "{t}")?;
        }
        write!(f, "->{}", self.output)
    }
}

/// A spec bound to shapes: the label of every operand axis, every label's extent, and
/// the output labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Network {
    /// The label of each axis of each operand, as given (repeats included).
    pub operands: Vec<Vec<Label>>,
    /// The extent of each label (`MAX_LABELS` entries; unused labels are 1). Where
    /// operands disagree by broadcasting, the non-1 extent.
    pub extents: Vec<usize>,
    /// The output's labels, in order.
    pub output: Vec<Label>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_tensor::ErrorKind;

    fn typed(e: strata_tensor::Error) -> EinsumError {
        std::error::Error::source(&e).and_then(|s| s.downcast_ref::<EinsumError>()).cloned().unwrap()
    }

    fn parse_err(spec: &str) -> EinsumError {
        typed(EinsumSpec::parse(spec).unwrap_err())
    }

    fn bind_err(spec: &str, shapes: &[&[usize]]) -> EinsumError {
        typed(EinsumSpec::parse(spec).unwrap().bind(shapes).unwrap_err())
    }

    fn letters(s: &str) -> Vec<Label> {
        s.chars().map(|c| letter_label(c).unwrap()).collect()
    }

    #[test]
    fn implicit_output_is_ellipsis_then_single_letters_in_ascii_order() {
        let show = |s: &str| EinsumSpec::parse(s).unwrap().to_string();
        assert_eq!(show("ij,jk"), "ij,jk->ik");
        assert_eq!(show("ba"), "ba->ab");
        assert_eq!(show("aB"), "aB->Ba");
        assert_eq!(show("a...B"), "a...B->...Ba");
        assert_eq!(show("ii"), "ii->");
        assert_eq!(show("i,i"), "i,i->");
        assert_eq!(show(""), "->");
        assert_eq!(show(","), ",->");
        assert_eq!(show(" i j , j k -> i k "), "ij,jk->ik");
        assert!(!EinsumSpec::parse("ij").unwrap().is_explicit());
        assert!(EinsumSpec::parse("ij->").unwrap().is_explicit());
    }

    #[test]
    fn every_syntax_rule_has_its_error() {
        assert_eq!(parse_err("i1"), EinsumError::InvalidCharacter { position: 1, character: '1' });
        assert_eq!(parse_err("ié"), EinsumError::InvalidCharacter { position: 1, character: 'é' });
        assert_eq!(parse_err("..i"), EinsumError::StrayDot { position: 0 });
        assert_eq!(parse_err("i.j"), EinsumError::StrayDot { position: 1 });
        assert_eq!(parse_err("i. ..->i"), EinsumError::StrayDot { position: 1 });
        assert_eq!(parse_err("i......"), EinsumError::SecondEllipsis { term: "operand 0".into() });
        assert_eq!(parse_err("i,......"), EinsumError::SecondEllipsis { term: "operand 1".into() });
        assert_eq!(parse_err("i->......"), EinsumError::SecondEllipsis { term: "the output".into() });
        assert_eq!(parse_err("i-i"), EinsumError::BrokenArrow { position: 1, character: '-' });
        assert_eq!(parse_err("i- >i"), EinsumError::BrokenArrow { position: 1, character: '-' });
        assert_eq!(parse_err("i>i"), EinsumError::BrokenArrow { position: 1, character: '>' });
        assert_eq!(parse_err("i->i->i"), EinsumError::SecondArrow { position: 4 });
        assert_eq!(parse_err("i,j->i,j"), EinsumError::CommaInOutput { position: 6 });
        assert_eq!(parse_err("ij->ii"), EinsumError::OutputLabelRepeated { label: 'i' });
        assert_eq!(parse_err("i->j"), EinsumError::OutputLabelUnknown { label: 'j' });
        let e = EinsumSpec::parse("i->I").unwrap_err();
        assert_eq!((e.kind(), e.op()), (ErrorKind::InvalidArgument, "einsum"));
        assert_eq!(e.message(), "output subscript 'I' appears in no operand");
    }

    #[test]
    fn binding_expands_ellipses_right_aligned() {
        let n = EinsumSpec::parse("...ij,j...->...i").unwrap().bind(&[&[5, 4, 2, 3], &[3, 4]]).unwrap();
        let (e0, e1) = (ellipsis_label(0), ellipsis_label(1));
        assert_eq!(n.operands[0], vec![e0, e1, letters("i")[0], letters("j")[0]]);
        assert_eq!(n.operands[1], vec![letters("j")[0], e1]);
        assert_eq!(n.output, vec![e0, e1, letters("i")[0]]);
        assert_eq!((n.extents[e0 as usize], n.extents[e1 as usize]), (5, 4));
        // An ellipsis covering nothing, and an output ellipsis no operand has.
        let n = EinsumSpec::parse("i...->...").unwrap().bind(&[&[3]]).unwrap();
        assert_eq!(n.output, Vec::<Label>::new());
        let n = EinsumSpec::parse("ij->i...").unwrap().bind(&[&[2, 3]]).unwrap();
        assert_eq!(n.output, letters("i"));
    }

    #[test]
    fn size_one_extents_broadcast_between_operands_only() {
        let n = EinsumSpec::parse("ij,jk->ik").unwrap().bind(&[&[2, 1], &[3, 4]]).unwrap();
        assert_eq!(n.extents[letters("j")[0] as usize], 3);
        let n = EinsumSpec::parse("...i,...i").unwrap().bind(&[&[0, 3], &[1, 3]]).unwrap();
        assert_eq!(n.extents[ellipsis_label(0) as usize], 0);
        assert_eq!(
            bind_err("ij,jk->ik", &[&[2, 3], &[4, 5]]),
            EinsumError::ExtentMismatch {
                label: "j".into(),
                first_operand: 0,
                first_extent: 3,
                second_operand: 1,
                second_extent: 4
            }
        );
        assert_eq!(
            bind_err("...i,...i->...i", &[&[2, 3], &[4, 3]]),
            EinsumError::ExtentMismatch {
                label: "...[0]".into(),
                first_operand: 0,
                first_extent: 2,
                second_operand: 1,
                second_extent: 4
            }
        );
        // Within one operand a repeated subscript never broadcasts.
        assert_eq!(
            bind_err("ii->i", &[&[3, 1]]),
            EinsumError::DiagonalExtents { operand: 0, label: 'i', first: 3, second: 1 }
        );
        let e = EinsumSpec::parse("ii").unwrap().bind(&[&[3, 4]]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
        assert_eq!(
            e.message(),
            "subscript 'i' is repeated in operand 0 over axes of extents 3 and 4; a diagonal needs equal extents"
        );
    }

    #[test]
    fn ranks_operand_counts_and_missing_output_ellipsis() {
        assert_eq!(bind_err("i,i", &[&[2]]), EinsumError::OperandCount { terms: 2, operands: 1 });
        assert_eq!(
            bind_err("ij", &[&[2, 3, 4]]),
            EinsumError::RankMismatch {
                operand: 0,
                subscripts: "ij".into(),
                rank: 3,
                expected: "name 2 axis/axes".into()
            }
        );
        assert_eq!(
            bind_err("i,...ij", &[&[2], &[3]]),
            EinsumError::RankMismatch {
                operand: 1,
                subscripts: "...ij".into(),
                rank: 1,
                expected: "name at least 2 axis/axes".into()
            }
        );
        assert_eq!(bind_err("...ij->ij", &[&[4, 2, 3]]), EinsumError::OutputEllipsisMissing { axes: 1 });
        // An empty ellipsis needs no output ellipsis.
        assert!(EinsumSpec::parse("...ij->ij").unwrap().bind(&[&[2, 3]]).is_ok());
        let long = vec![1usize; 80];
        assert_eq!(bind_err("...", &[&long]), EinsumError::TooManyAxes { axes: 80, max: 76 });
    }
}
