//! Who holds permits: the calling thread, or an [`OwnerToken`] shared with child tasks.
//!
//! Re-entrancy is detected by remembering, per owner, which arbiters it holds a permit of.
//! The thread's record lives in a thread-local (no lock, no allocation for up to
//! [`INLINE`] arbiters); a token's record sits behind its own small mutex.

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

/// Arbiter ids remembered without allocating.
const INLINE: usize = 4;

/// A small set of arbiter ids.
pub(crate) struct HeldArbiters {
    inline: [u64; INLINE],
    inline_len: usize,
    overflow: Vec<u64>,
}

impl HeldArbiters {
    pub(crate) const fn new() -> HeldArbiters {
        HeldArbiters { inline: [0; INLINE], inline_len: 0, overflow: Vec::new() }
    }

    #[inline]
    pub(crate) fn contains(&self, arbiter: u64) -> bool {
        self.inline[..self.inline_len].contains(&arbiter) || self.overflow.contains(&arbiter)
    }

    #[inline]
    pub(crate) fn insert(&mut self, arbiter: u64) {
        if self.inline_len < INLINE {
            self.inline[self.inline_len] = arbiter;
            self.inline_len += 1;
        } else {
            self.overflow.push(arbiter);
        }
    }

    #[inline]
    pub(crate) fn remove(&mut self, arbiter: u64) {
        if let Some(i) = self.inline[..self.inline_len].iter().position(|&a| a == arbiter) {
            self.inline_len -= 1;
            self.inline[i] = self.inline[self.inline_len];
            // Refill the inline part from the overflow so `contains` stays short.
            if let Some(spill) = self.overflow.pop() {
                self.inline[self.inline_len] = spill;
                self.inline_len += 1;
            }
        } else if let Some(i) = self.overflow.iter().position(|&a| a == arbiter) {
            self.overflow.swap_remove(i);
        }
    }
}

thread_local! {
    static THREAD_HELD: RefCell<HeldArbiters> = const { RefCell::new(HeldArbiters::new()) };
}

/// Marks the calling thread as holding a permit of `arbiter`; false if it already was.
///
/// One thread-local access serves as both the re-entrancy check and the record.
#[inline]
pub(crate) fn thread_try_mark(arbiter: u64) -> bool {
    THREAD_HELD
        .try_with(|held| {
            let mut held = held.borrow_mut();
            if held.contains(arbiter) {
                return false;
            }
            held.insert(arbiter);
            true
        })
        // During thread teardown the record is gone; nothing can re-enter then anyway.
        .unwrap_or(true)
}

#[inline]
pub(crate) fn thread_remove(arbiter: u64) {
    let _ = THREAD_HELD.try_with(|held| held.borrow_mut().remove(arbiter));
}

static NEXT_TOKEN_ID: AtomicU64 = AtomicU64::new(1);

/// An owner identity that can be handed to child tasks on other threads.
///
/// By default a permit belongs to the thread that acquired it. A task that fans work out
/// to other threads can instead acquire with a token ([`crate::Owner::Token`]) and give
/// clones of it to its children: a child that asks the same arbiter for a permit with the
/// token while the parent holds one gets [`crate::AdmissionError::ReEntrant`] at once,
/// instead of waiting forever for CPUs its own parent holds.
///
/// Clones are the same owner. A token may hold at most one permit per arbiter at a time;
/// a second request with the token (from any thread) while the first is held or still
/// waiting is refused as re-entrant.
#[derive(Clone)]
pub struct OwnerToken {
    inner: Arc<TokenState>,
}

struct TokenState {
    id: u64,
    // Arbiters this token holds a permit of, or is currently asking for one.
    held: Mutex<HeldArbiters>,
}

impl OwnerToken {
    /// A fresh owner, distinct from every thread and every other token.
    pub fn new() -> OwnerToken {
        OwnerToken {
            inner: Arc::new(TokenState {
                id: NEXT_TOKEN_ID.fetch_add(1, Ordering::Relaxed),
                held: Mutex::new(HeldArbiters::new()),
            }),
        }
    }

    /// A number identifying this owner (equal for clones), for diagnostics.
    pub fn id(&self) -> u64 {
        self.inner.id
    }

    /// Marks the token as holding (or asking for) a permit of `arbiter`; false if it
    /// already was.
    pub(crate) fn try_mark(&self, arbiter: u64) -> bool {
        let mut held = self.inner.held.lock();
        if held.contains(arbiter) {
            return false;
        }
        held.insert(arbiter);
        true
    }

    pub(crate) fn unmark(&self, arbiter: u64) {
        self.inner.held.lock().remove(arbiter);
    }
}

impl Default for OwnerToken {
    fn default() -> Self {
        OwnerToken::new()
    }
}

impl fmt::Debug for OwnerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnerToken").field("id", &self.inner.id).finish()
    }
}

/// On whose behalf a permit is requested.
#[derive(Debug, Clone, Copy)]
pub enum Owner<'t> {
    /// The calling thread (the default of `acquire`, `try_acquire`, `acquire_timeout`).
    CurrentThread,
    /// A token shared with child tasks; see [`OwnerToken`].
    Token(&'t OwnerToken),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_set_spills_and_refills() {
        let mut held = HeldArbiters::new();
        for id in 1..=7 {
            held.insert(id);
        }
        assert!((1..=7).all(|id| held.contains(id)));
        held.remove(2);
        held.remove(6);
        assert!(!held.contains(2) && !held.contains(6));
        for id in [1, 3, 4, 5, 7] {
            assert!(held.contains(id), "lost {id}");
        }
        for id in [1, 3, 4, 5, 7] {
            held.remove(id);
        }
        assert!((1..=7).all(|id| !held.contains(id)));
        assert_eq!(held.inline_len, 0);
        assert!(held.overflow.is_empty());
    }

    #[test]
    fn token_clones_share_one_record() {
        let token = OwnerToken::new();
        let clone = token.clone();
        assert_eq!(token.id(), clone.id());
        assert_ne!(token.id(), OwnerToken::new().id());
        assert!(token.try_mark(9));
        assert!(!clone.try_mark(9));
        assert!(clone.try_mark(10));
        clone.unmark(9);
        assert!(token.try_mark(9));
    }
}
