//! Short per-axis lists (shapes, strides) stored inline up to [`INLINE_RANK`] axes.
//!
//! Almost every tensor has few axes, and for a tiny op one heap allocation (and its free)
//! per shape or stride list costs about as much as the arithmetic: with short lists
//! inline, a fresh small tensor costs exactly one allocation (its data) and a view of an
//! owned tensor costs none. Longer lists live on the heap as before. Every public API
//! still speaks `&[usize]` / `&[isize]`.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};

/// Most axes kept without a heap allocation.
pub(crate) const INLINE_RANK: usize = 4;

/// A per-axis list: inline for ≤ [`INLINE_RANK`] entries, else a vector.
#[derive(Clone)]
pub(crate) enum AxisList<T: Copy + Default> {
    /// The first `len` entries of `items` are the list.
    Inline { len: u8, items: [T; INLINE_RANK] },
    /// More entries than fit inline.
    Heap(Vec<T>),
}

/// The extents of a shape.
pub(crate) type Extents = AxisList<usize>;

impl<T: Copy + Default> AxisList<T> {
    /// A copy of `list`.
    #[inline]
    pub(crate) fn from_slice(list: &[T]) -> Self {
        if list.len() <= INLINE_RANK {
            let mut items = [T::default(); INLINE_RANK];
            // Element by element: a `copy_from_slice` of unknown length is a `memcpy`
            // call, which costs more than these at most four stores.
            for (d, &s) in items.iter_mut().zip(list) {
                *d = s;
            }
            // `list.len() <= INLINE_RANK`, which fits in a `u8`.
            AxisList::Inline { len: list.len() as u8, items }
        } else {
            AxisList::Heap(list.to_vec())
        }
    }

    /// Takes `list` over (kept on the heap only when it is too long to fit inline).
    #[inline]
    pub(crate) fn from_vec(list: Vec<T>) -> Self {
        if list.len() <= INLINE_RANK { Self::from_slice(&list) } else { AxisList::Heap(list) }
    }

    /// `len` copies of `value`.
    #[inline]
    pub(crate) fn filled(len: usize, value: T) -> Self {
        if len <= INLINE_RANK {
            // `len <= INLINE_RANK`, which fits in a `u8`.
            AxisList::Inline { len: len as u8, items: [value; INLINE_RANK] }
        } else {
            AxisList::Heap(vec![value; len])
        }
    }

    /// The list as a vector.
    pub(crate) fn into_vec(self) -> Vec<T> {
        match self {
            AxisList::Heap(v) => v,
            inline => inline.to_vec(),
        }
    }

    /// Inserts `value` at `index` (`<= len`), like `Vec::insert`.
    pub(crate) fn insert(&mut self, index: usize, value: T) {
        let mut v = std::mem::replace(self, AxisList::Heap(Vec::new())).into_vec();
        v.insert(index, value);
        *self = Self::from_vec(v);
    }

    /// Removes the entry at `index` (`< len`), like `Vec::remove`.
    pub(crate) fn remove(&mut self, index: usize) -> T {
        let mut v = std::mem::replace(self, AxisList::Heap(Vec::new())).into_vec();
        let removed = v.remove(index);
        *self = Self::from_vec(v);
        removed
    }
}

impl<T: Copy + Default> FromIterator<T> for AxisList<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut items = [T::default(); INLINE_RANK];
        let mut iter = iter.into_iter();
        for len in 0..=INLINE_RANK {
            match iter.next() {
                None => return AxisList::Inline { len: len as u8, items },
                Some(x) if len < INLINE_RANK => items[len] = x,
                Some(x) => {
                    // A fifth entry: the list goes to the heap.
                    let mut v = items.to_vec();
                    v.push(x);
                    v.extend(iter);
                    return AxisList::Heap(v);
                }
            }
        }
        // INVARIANT: the loop returns by its last iteration (`len == INLINE_RANK` either
        // ends the list or spills it); this line only satisfies the type checker.
        AxisList::Inline { len: INLINE_RANK as u8, items }
    }
}

impl<T: Copy + Default> Deref for AxisList<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        match self {
            AxisList::Inline { len, items } => &items[..usize::from(*len)],
            AxisList::Heap(v) => v,
        }
    }
}

impl<T: Copy + Default> DerefMut for AxisList<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            AxisList::Inline { len, items } => &mut items[..usize::from(*len)],
            AxisList::Heap(v) => v,
        }
    }
}

impl<T: Copy + Default + PartialEq> PartialEq for AxisList<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Copy + Default + Eq> Eq for AxisList<T> {}

impl<T: Copy + Default + Hash> Hash for AxisList<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // As the slice (and so as the `Vec` this replaced): equal lists hash equally
        // whatever their storage.
        (**self).hash(state)
    }
}

impl<T: Copy + Default + fmt::Debug> fmt::Debug for AxisList<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    fn hash_of<H: Hash + ?Sized>(x: &H) -> u64 {
        let mut h = DefaultHasher::new();
        x.hash(&mut h);
        h.finish()
    }

    #[test]
    fn round_trips_every_length_inline_or_not() {
        for rank in 0..=INLINE_RANK + 3 {
            let list: Vec<usize> = (0..rank).map(|i| 3 * i + 1).collect();
            for e in [Extents::from_slice(&list), Extents::from_vec(list.clone())] {
                assert_eq!(&*e, &list[..]);
                assert_eq!(matches!(e, AxisList::Inline { .. }), rank <= INLINE_RANK);
                assert_eq!(format!("{e:?}"), format!("{list:?}"));
                assert_eq!(hash_of(&e), hash_of(&list));
                assert_eq!(e.clone(), e);
                assert_eq!(e.into_vec(), list);
            }
            assert_eq!(&*AxisList::filled(rank, -2isize), &vec![-2isize; rank][..]);
            let collected: Extents = list.iter().copied().collect();
            assert_eq!(&*collected, &list[..]);
            assert_eq!(matches!(collected, AxisList::Inline { .. }), rank <= INLINE_RANK);
        }
        assert_ne!(Extents::from_slice(&[1, 2]), Extents::from_slice(&[1, 2, 1]));
        // Equality is by entries, whatever the storage.
        assert_eq!(Extents::from_slice(&[2; 5]), AxisList::Heap(vec![2; 5]));
        assert_eq!(Extents::from_slice(&[2, 3]), AxisList::Heap(vec![2, 3]));
    }

    #[test]
    fn insert_and_remove_follow_vec_across_the_inline_limit() {
        let mut list = AxisList::<isize>::from_slice(&[]);
        let mut want: Vec<isize> = Vec::new();
        for (k, at) in [0usize, 1, 0, 2, 4, 3, 6].into_iter().enumerate() {
            list.insert(at, k as isize);
            want.insert(at, k as isize);
            assert_eq!(&*list, &want[..]);
            assert_eq!(matches!(list, AxisList::Inline { .. }), want.len() <= INLINE_RANK);
        }
        for at in [6usize, 0, 2, 1, 0, 1, 0] {
            assert_eq!(list.remove(at), want.remove(at));
            assert_eq!(&*list, &want[..]);
        }
        assert!(list.is_empty());
        let mut m = AxisList::from_slice(&[1usize, 2, 3]);
        m[1] = 9;
        assert_eq!(&*m, &[1, 9, 3]);
    }
}
