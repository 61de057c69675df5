//! Randomized sequences of acquires, returns, recycles, `into_vec`, tensors made from
//! loans (dropped, or taken apart with `into_vec`) and cap changes over all seven dtypes, checked step by step against an independent model of the pool's
//! documented rules (best fit within the over-size bound, LRU eviction across dtypes,
//! discards above the cap). After every step: retained bytes <= cap, and every counter
//! and every lent capacity equals the model's.

use proptest::prelude::*;
use strata_pool::{BufferLoan, BufferPool, PoolStats, REUSE_SLACK_BYTES};
use strata_tensor::{DType, Scalar, TypedTensor, dispatch_dtype};

/// The documented rules, written as plainly as possible: a list of retained buffers
/// (dtype, capacity in bytes, address), least recently used first.
#[derive(Default)]
struct Model {
    cap: usize,
    lru: Vec<(DType, usize, usize)>,
    hits: u64,
    misses: u64,
    evictions: u64,
    discards: u64,
    returned_on_drop: u64,
    outstanding: usize,
}

impl Model {
    /// Returns the byte capacity the loan must have, and its address when it reuses a
    /// retained buffer.
    fn acquire(&mut self, dtype: DType, len: usize) -> (usize, Option<usize>) {
        self.outstanding += 1;
        let bytes = len * dtype.size_bytes();
        if bytes == 0 {
            return (0, None);
        }
        let max = 2 * bytes + REUSE_SLACK_BYTES;
        let mut best: Option<usize> = None;
        for (i, &(d, c, _)) in self.lru.iter().enumerate() {
            if d == dtype && c >= bytes && c <= max {
                // Smallest capacity; among equals the later (more recent) one.
                if best.is_none_or(|b| c <= self.lru[b].1) {
                    best = Some(i);
                }
            }
        }
        match best {
            Some(i) => {
                self.hits += 1;
                let (_, c, addr) = self.lru.remove(i);
                (c, Some(addr))
            }
            None => {
                self.misses += 1;
                (bytes, None)
            }
        }
    }

    fn give_back(&mut self, dtype: DType, capacity_bytes: usize, addr: usize) {
        if capacity_bytes == 0 {
            return;
        }
        if capacity_bytes > self.cap {
            self.discards += 1;
            return;
        }
        self.lru.push((dtype, capacity_bytes, addr));
        self.evict();
    }

    fn evict(&mut self) {
        while self.lru.iter().map(|b| b.1).sum::<usize>() > self.cap {
            self.lru.remove(0);
            self.evictions += 1;
        }
    }

    fn check(&self, s: PoolStats) {
        let retained: usize = self.lru.iter().map(|b| b.1).sum();
        assert!(s.retained_bytes <= s.cap_bytes, "retained {} > cap {}", s.retained_bytes, s.cap_bytes);
        assert_eq!(s.cap_bytes, self.cap);
        assert_eq!((s.buffers, s.retained_bytes), (self.lru.len(), retained));
        assert_eq!(
            (s.hits, s.misses, s.evictions, s.discards),
            (self.hits, self.misses, self.evictions, self.discards)
        );
        assert_eq!(s.outstanding_loans, self.outstanding);
        assert_eq!(s.returned_on_drop, self.returned_on_drop);
    }
}

/// A live loan of any dtype, with what the test wrote into it.
trait LiveLoan {
    fn dtype(&self) -> DType;
    fn capacity_bytes(&self) -> usize;
    fn addr(&self) -> usize;
    /// Checks the contents are still what was written (one owner per buffer).
    fn check_contents(&self);
    /// Takes the buffer out of the pool and recycles it; returns its capacity in bytes.
    fn leave_and_recycle(self: Box<Self>, pool: &BufferPool) -> (usize, usize);
    /// Takes the buffer out of the pool for good.
    fn leave(self: Box<Self>);
    /// Ends the loan as a tensor, which returns the buffer when it drops.
    fn into_tensor(self: Box<Self>) -> Box<dyn LiveTensor>;
}

/// A tensor made from a loan, with what the loan knew about its buffer.
trait LiveTensor {
    fn dtype(&self) -> DType;
    fn capacity_bytes(&self) -> usize;
    fn addr(&self) -> usize;
    /// Takes the buffer away for good (checking its contents).
    fn leave(self: Box<Self>);
}

struct HeldTensor<T: Scalar> {
    tensor: TypedTensor<T>,
    capacity_bytes: usize,
    written: T,
}

impl<T: Scalar> LiveTensor for HeldTensor<T> {
    fn dtype(&self) -> DType {
        T::DTYPE
    }
    fn capacity_bytes(&self) -> usize {
        self.capacity_bytes
    }
    fn addr(&self) -> usize {
        self.tensor.data().as_ptr() as usize
    }
    fn leave(self: Box<Self>) {
        let v = self.tensor.into_vec();
        assert!(v.iter().all(|&x| x == self.written));
    }
}

struct Held<T: Scalar> {
    loan: BufferLoan<T>,
    written: T,
}

impl<T: Scalar> LiveLoan for Held<T> {
    fn dtype(&self) -> DType {
        T::DTYPE
    }
    fn capacity_bytes(&self) -> usize {
        self.loan.capacity() * T::DTYPE.size_bytes()
    }
    fn addr(&self) -> usize {
        self.loan.as_ptr() as usize
    }
    fn check_contents(&self) {
        assert!(self.loan.iter().all(|&x| x == self.written));
    }
    fn leave_and_recycle(self: Box<Self>, pool: &BufferPool) -> (usize, usize) {
        let found = (self.capacity_bytes(), self.addr());
        pool.recycle(self.loan.into_vec());
        found
    }
    fn leave(self: Box<Self>) {
        let v = self.loan.into_vec();
        assert!(v.iter().all(|&x| x == self.written));
    }
    fn into_tensor(self: Box<Self>) -> Box<dyn LiveTensor> {
        let capacity_bytes = self.capacity_bytes();
        let len = self.loan.len();
        // INVARIANT (of the test): `[len]` always has the loan's element count.
        let tensor = self.loan.into_tensor(&[len]).unwrap();
        assert!(len == 0 || tensor.has_recycler());
        Box::new(HeldTensor { tensor, capacity_bytes, written: self.written })
    }
}

/// Acquires in one of the two modes, checks zeroing, then writes `T::one()`.
fn acquire<T: Scalar>(pool: &BufferPool, len: usize, zeroed: bool) -> Box<dyn LiveLoan> {
    let loan = if zeroed {
        let mut l = pool.acquire_zeroed::<T>(len).unwrap();
        assert!(l.iter().all(|&x| x == T::zero()));
        l.fill(T::one());
        l
    } else {
        pool.acquire_for_overwrite::<T>(len).unwrap().write_with(|s| s.fill(T::one())).0
    };
    assert_eq!(loan.len(), len);
    Box::new(Held { loan, written: T::one() })
}

#[derive(Clone, Debug)]
enum Step {
    Acquire {
        dtype: usize,
        len: usize,
        zeroed: bool,
    },
    /// Several loans of one size held together: their buffers come back with equal
    /// capacities, which exercises the tie rule.
    AcquireSeveral {
        dtype: usize,
        len: usize,
        count: usize,
    },
    Drop(usize),
    IntoVecRecycle(usize),
    IntoVecKeep(usize),
    IntoTensor(usize),
    DropTensor(usize),
    TensorIntoVec(usize),
    Recycle {
        dtype: usize,
        len: usize,
        spare: usize,
    },
    SetCap(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        // A few repeated lengths make equal capacities (and so the tie rule) common.
        5 => (0..7usize, prop_oneof![Just(0usize), prop::sample::select(vec![64usize, 100, 512]), 1..600usize, 600..3000usize], any::<bool>())
            .prop_map(|(dtype, len, zeroed)| Step::Acquire { dtype, len, zeroed }),
        1 => (0..7usize, 1..400usize, 2..5usize).prop_map(|(dtype, len, count)| Step::AcquireSeveral { dtype, len, count }),
        5 => any::<usize>().prop_map(Step::Drop),
        1 => any::<usize>().prop_map(Step::IntoVecRecycle),
        1 => any::<usize>().prop_map(Step::IntoVecKeep),
        2 => any::<usize>().prop_map(Step::IntoTensor),
        2 => any::<usize>().prop_map(Step::DropTensor),
        1 => any::<usize>().prop_map(Step::TensorIntoVec),
        1 => (0..7usize, 0..500usize, 0..200usize).prop_map(|(dtype, len, spare)| Step::Recycle { dtype, len, spare }),
        1 => prop_oneof![Just(0usize), 0..20_000usize, 20_000..80_000usize].prop_map(Step::SetCap),
    ]
}

fn recycle_fresh<T: Scalar>(pool: &BufferPool, len: usize, spare: usize) -> (usize, usize) {
    let mut v = Vec::<T>::with_capacity(len + spare);
    v.resize(len, T::one());
    let found = (v.capacity() * T::DTYPE.size_bytes(), v.as_ptr() as usize);
    pool.recycle(v);
    found
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn pool_follows_the_model_and_the_cap_always_holds(
        cap in prop_oneof![Just(0usize), 0..20_000usize, 20_000..80_000usize],
        steps in prop::collection::vec(step(), 1..120),
    ) {
        let pool = BufferPool::new(cap);
        let mut model = Model { cap, ..Model::default() };
        let mut live: Vec<Box<dyn LiveLoan>> = Vec::new();
        let mut tensors: Vec<Box<dyn LiveTensor>> = Vec::new();
        for s in steps {
            match s {
                Step::Acquire { dtype, len, zeroed } => {
                    let dtype = DType::ALL[dtype];
                    let loan = dispatch_dtype!(dtype, T => acquire::<T>(&pool, len, zeroed));
                    let (bytes, addr) = model.acquire(dtype, len);
                    prop_assert_eq!(loan.capacity_bytes(), bytes);
                    if let Some(addr) = addr {
                        prop_assert_eq!(loan.addr(), addr, "reused the wrong buffer");
                    }
                    live.push(loan);
                }
                Step::AcquireSeveral { dtype, len, count } => {
                    let dtype = DType::ALL[dtype];
                    for k in 0..count {
                        let loan = dispatch_dtype!(dtype, T => acquire::<T>(&pool, len, k % 2 == 0));
                        let (bytes, addr) = model.acquire(dtype, len);
                        prop_assert_eq!(loan.capacity_bytes(), bytes);
                        if let Some(addr) = addr {
                            prop_assert_eq!(loan.addr(), addr, "reused the wrong buffer");
                        }
                        live.push(loan);
                    }
                }
                Step::Drop(i) if !live.is_empty() => {
                    let loan = live.swap_remove(i % live.len());
                    loan.check_contents();
                    let (dtype, bytes, addr) = (loan.dtype(), loan.capacity_bytes(), loan.addr());
                    drop(loan);
                    model.outstanding -= 1;
                    model.give_back(dtype, bytes, addr);
                }
                Step::IntoVecRecycle(i) if !live.is_empty() => {
                    let loan = live.swap_remove(i % live.len());
                    let dtype = loan.dtype();
                    let (bytes, addr) = loan.leave_and_recycle(&pool);
                    model.outstanding -= 1;
                    model.give_back(dtype, bytes, addr);
                }
                Step::IntoVecKeep(i) if !live.is_empty() => {
                    live.swap_remove(i % live.len()).leave();
                    model.outstanding -= 1;
                }
                Step::IntoTensor(i) if !live.is_empty() => {
                    tensors.push(live.swap_remove(i % live.len()).into_tensor());
                    model.outstanding -= 1;
                }
                Step::DropTensor(i) if !tensors.is_empty() => {
                    let t = tensors.swap_remove(i % tensors.len());
                    let (dtype, bytes, addr) = (t.dtype(), t.capacity_bytes(), t.addr());
                    drop(t);
                    if bytes > 0 {
                        model.returned_on_drop += 1;
                    }
                    model.give_back(dtype, bytes, addr);
                }
                Step::TensorIntoVec(i) if !tensors.is_empty() => {
                    tensors.swap_remove(i % tensors.len()).leave();
                }
                Step::Recycle { dtype, len, spare } => {
                    let dtype = DType::ALL[dtype];
                    let (bytes, addr) = dispatch_dtype!(dtype, T => recycle_fresh::<T>(&pool, len, spare));
                    model.give_back(dtype, bytes, addr);
                }
                Step::SetCap(c) => {
                    pool.set_cap_bytes(c);
                    model.cap = c;
                    model.evict();
                }
                Step::Drop(_)
                | Step::IntoVecRecycle(_)
                | Step::IntoVecKeep(_)
                | Step::IntoTensor(_)
                | Step::DropTensor(_)
                | Step::TensorIntoVec(_) => {}
            }
            model.check(pool.stats());
        }
        drop(live);
        drop(tensors);
        prop_assert_eq!(pool.stats().outstanding_loans, 0);
        prop_assert!(pool.stats().retained_bytes <= pool.stats().cap_bytes);
    }
}
