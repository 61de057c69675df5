//! Index labels and sets of them.
//!
//! A label is a small number: the 52 letters in ASCII order (`A`-`Z` are 0-25, `a`-`z`
//! 26-51, so sorting labels sorts letters the way numpy's implicit output does), then one
//! label per axis of the broadcast ellipsis, outermost first. A [`LabelSet`] is a 128-bit
//! set of them: every set operation of the path search is one or two instructions.

use std::fmt;

/// One index of an einsum expression.
pub(crate) type Label = u8;

/// Labels `0..LETTERS` are letters; the ellipsis axes follow.
pub(crate) const LETTERS: usize = 52;

/// Labels fit a [`LabelSet`]; the ellipsis may therefore cover `MAX_LABELS - LETTERS` axes.
pub(crate) const MAX_LABELS: usize = 128;

/// The label of an ASCII letter, or `None` for any other character.
pub(crate) fn letter_label(c: char) -> Option<Label> {
    match c {
        'A'..='Z' => Some(c as u8 - b'A'),
        'a'..='z' => Some(c as u8 - b'a' + 26),
        _ => None,
    }
}

/// The label of axis `k` (outermost first) of the broadcast ellipsis.
pub(crate) fn ellipsis_label(k: usize) -> Label {
    // INVARIANT: callers bound the ellipsis rank by `MAX_LABELS - LETTERS` first.
    (LETTERS + k) as Label
}

/// How a label reads in messages and printed paths: its letter, or `...[k]` for the
/// ellipsis axis `k`.
pub(crate) struct LabelName(pub Label);

impl fmt::Display for LabelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = self.0 as usize;
        match l {
            0..26 => write!(f, "{}", (b'A' + l as u8) as char),
            26..LETTERS => write!(f, "{}", (b'a' + (l - 26) as u8) as char),
            _ => write!(f, "...[{}]", l - LETTERS),
        }
    }
}

/// The character a label prints as in a step's subscripts. Ellipsis axes have no letter
/// of their own; printed paths give them the Greek and other letters after the Latin ones,
/// as opt_einsum does for its generated symbols.
pub(crate) fn label_char(l: Label) -> char {
    let l = l as usize;
    match l {
        0..26 => (b'A' + l as u8) as char,
        26..LETTERS => (b'a' + (l - 26) as u8) as char,
        // U+03B1 (alpha) onwards: 76 consecutive letters and symbols, all printable.
        _ => char::from_u32(0x3B1 + (l - LETTERS) as u32).unwrap_or('?'),
    }
}

/// A set of labels.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct LabelSet(u128);

impl LabelSet {
    /// The empty set.
    pub(crate) const EMPTY: LabelSet = LabelSet(0);

    /// The set of `labels`.
    pub(crate) fn of(labels: &[Label]) -> LabelSet {
        labels.iter().fold(LabelSet::EMPTY, |s, &l| s.with(l))
    }

    /// This set plus `l`.
    #[inline]
    pub(crate) fn with(self, l: Label) -> LabelSet {
        LabelSet(self.0 | (1u128 << l))
    }

    /// Whether `l` is in the set.
    #[inline]
    pub(crate) fn contains(self, l: Label) -> bool {
        self.0 & (1u128 << l) != 0
    }

    /// Union.
    #[inline]
    pub(crate) fn union(self, o: LabelSet) -> LabelSet {
        LabelSet(self.0 | o.0)
    }

    /// Intersection.
    #[inline]
    pub(crate) fn intersect(self, o: LabelSet) -> LabelSet {
        LabelSet(self.0 & o.0)
    }

    /// The labels of `self` not in `o`.
    #[inline]
    pub(crate) fn minus(self, o: LabelSet) -> LabelSet {
        LabelSet(self.0 & !o.0)
    }

    /// True when no label is in the set.
    #[inline]
    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Number of labels.
    #[cfg(test)]
    pub(crate) fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// The labels in ascending order.
    pub(crate) fn iter(self) -> impl Iterator<Item = Label> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let l = bits.trailing_zeros() as Label;
            bits &= bits - 1;
            Some(l)
        })
    }

    /// The product of the labels' extents (1 for the empty set), saturating.
    #[inline]
    pub(crate) fn size(self, extents: &[usize]) -> u128 {
        self.iter().fold(1u128, |acc, l| acc.saturating_mul(extents[l as usize] as u128))
    }
}

impl fmt::Debug for LabelSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for l in self.iter() {
            write!(f, "{}", label_char(l))?;
        }
        f.write_str("}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_sort_in_ascii_order_and_print_back() {
        let labels: Vec<Label> = "ZAaz".chars().map(|c| letter_label(c).unwrap()).collect();
        assert_eq!(labels, vec![25, 0, 26, 51]);
        let names: Vec<String> = labels.iter().map(|&l| LabelName(l).to_string()).collect();
        assert_eq!(names, vec!["Z", "A", "a", "z"]);
        assert_eq!(LabelName(ellipsis_label(2)).to_string(), "...[2]");
        assert_eq!(letter_label('1'), None);
        assert_eq!(letter_label('é'), None);
    }

    #[test]
    fn set_operations() {
        let a = LabelSet::of(&[1, 5, 127]);
        let b = LabelSet::of(&[5, 6]);
        assert_eq!(a.union(b).iter().collect::<Vec<_>>(), vec![1, 5, 6, 127]);
        assert_eq!(a.intersect(b).iter().collect::<Vec<_>>(), vec![5]);
        assert_eq!(a.minus(b).len(), 2);
        assert!(a.contains(127) && !a.contains(6));
        let mut extents = vec![1; MAX_LABELS];
        extents[1] = 3;
        extents[5] = 4;
        extents[127] = 5;
        assert_eq!(a.size(&extents), 60);
        assert_eq!(LabelSet::EMPTY.size(&extents), 1);
    }
}
