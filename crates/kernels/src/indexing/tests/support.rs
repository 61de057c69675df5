//! Test support: a tiny deterministic RNG, value conversions per dtype, randomly strided
//! tensors holding given logical values, and a threaded executor double.

use strata_engine::{AffinityClaim, CpuDomainExecutor, ExecutorCapabilities, ReentrancyBehaviour, ShutdownOwner};
use strata_tensor::{Scalar, Tensor, TensorRead, TypedView, c32, c64};

use crate::{KernelContext, Parallelism};

/// Records fork-join violations of the executors used here (none are expected).
static AUDIT: crate::ScheduleAudit = crate::ScheduleAudit::new();

/// xorshift64*: deterministic per seed, good enough for drawing shapes.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    pub(crate) fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
    /// A random subset of `0..n`, ascending.
    pub(crate) fn subset(&mut self, n: usize) -> Vec<usize> {
        (0..n).filter(|_| self.coin()).collect()
    }
    /// A random permutation of `items`.
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// Exact conversions between test values and each dtype: values are small integers (or
/// pairs of them for complex numbers), so every reference computation is exact.
pub(crate) trait TestScalar: Scalar {
    fn from_pair(re: f64, im: f64) -> Self;
    fn to_pair(self) -> (f64, f64);
    fn from_i64(x: i64) -> Self {
        Self::from_pair(x as f64, (x % 3) as f64)
    }
}

impl TestScalar for f32 {
    fn from_pair(re: f64, _: f64) -> Self {
        re as f32
    }
    fn to_pair(self) -> (f64, f64) {
        (f64::from(self), 0.0)
    }
}
impl TestScalar for f64 {
    fn from_pair(re: f64, _: f64) -> Self {
        re
    }
    fn to_pair(self) -> (f64, f64) {
        (self, 0.0)
    }
}
impl TestScalar for i32 {
    fn from_pair(re: f64, _: f64) -> Self {
        re as i32
    }
    fn to_pair(self) -> (f64, f64) {
        (f64::from(self), 0.0)
    }
}
impl TestScalar for i64 {
    fn from_pair(re: f64, _: f64) -> Self {
        re as i64
    }
    fn to_pair(self) -> (f64, f64) {
        (self as f64, 0.0)
    }
}
impl TestScalar for bool {
    fn from_pair(re: f64, _: f64) -> Self {
        re != 0.0
    }
    fn to_pair(self) -> (f64, f64) {
        (if self { 1.0 } else { 0.0 }, 0.0)
    }
}
impl TestScalar for c32 {
    fn from_pair(re: f64, im: f64) -> Self {
        c32::new(re as f32, im as f32)
    }
    fn to_pair(self) -> (f64, f64) {
        (f64::from(self.re), f64::from(self.im))
    }
}
impl TestScalar for c64 {
    fn from_pair(re: f64, im: f64) -> Self {
        c64::new(re, im)
    }
    fn to_pair(self) -> (f64, f64) {
        (self.re, self.im)
    }
}

/// Row-major multi-index of flat position `flat` in `shape`.
pub(crate) fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for (i, &d) in index.iter_mut().zip(shape).rev() {
        *i = flat % d;
        flat /= d;
    }
    index
}

/// Every multi-index of `shape` in row-major order.
pub(crate) fn indices_of(shape: &[usize]) -> Vec<Vec<usize>> {
    let n: usize = shape.iter().product();
    (0..n).map(|f| unravel(f, shape)).collect()
}

/// A tensor of given logical values stored under a random layout: axes stored in a random
/// order, some reversed, some with gaps between elements; unused buffer slots hold junk.
pub(crate) struct Strided<T> {
    buffer: Vec<T>,
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
}

impl<T: TestScalar> Strided<T> {
    /// Values `value(index)` for every index of `shape`, in a layout drawn from `rng`
    /// (compact row-major when `rng` draws it so, one time in four).
    pub(crate) fn new(rng: &mut Rng, shape: &[usize], mut value: impl FnMut(&[usize]) -> T) -> Self {
        let rank = shape.len();
        let plain = rng.below(4) == 0;
        let steps: Vec<usize> = (0..rank).map(|_| if !plain && rng.below(3) == 0 { 2 } else { 1 }).collect();
        let reversed: Vec<bool> = (0..rank).map(|_| !plain && rng.below(3) == 0).collect();
        let mut order: Vec<usize> = (0..rank).collect();
        if !plain {
            rng.shuffle(&mut order);
        }
        // Physical extents, stored row-major in `order` (order[0] outermost).
        let phys: Vec<usize> = (0..rank).map(|a| shape[a] * steps[a]).collect();
        let mut phys_stride = vec![0isize; rank];
        let mut acc = 1isize;
        for &a in order.iter().rev() {
            phys_stride[a] = acc;
            acc *= phys[a].max(1) as isize;
        }
        let len = phys.iter().product::<usize>().max(1);
        let junk = T::from_i64(-77);
        let mut buffer = vec![junk; len];
        let mut strides = vec![0isize; rank];
        let mut offset = 0isize;
        for a in 0..rank {
            let s = steps[a] as isize * phys_stride[a];
            if reversed[a] && shape[a] > 0 {
                offset += (shape[a] as isize - 1) * s;
                strides[a] = -s;
            } else {
                strides[a] = s;
            }
        }
        for index in indices_of(shape) {
            let at = offset + index.iter().zip(&strides).map(|(&i, &s)| i as isize * s).sum::<isize>();
            buffer[at as usize] = value(&index);
        }
        Strided { buffer, shape: shape.to_vec(), strides, offset: offset as usize }
    }

    pub(crate) fn view(&self) -> TypedView<'_, T> {
        TypedView::new(&self.buffer, &self.shape, &self.strides, self.offset).expect("test layout fits its buffer")
    }

    pub(crate) fn read(&self) -> TensorRead<'_> {
        self.view().into()
    }
}

/// The data of a result tensor of type `T`.
pub(crate) fn data<T: Scalar>(t: &Tensor) -> Vec<T> {
    t.as_typed::<T>().expect("result has the operand's dtype").data().to_vec()
}

/// An executor double that runs each index of a fork-join on its own scoped thread.
#[derive(Debug)]
pub(crate) struct ThreadPerIndex;

impl CpuDomainExecutor for ThreadPerIndex {
    fn run(&self, job: &mut (dyn FnMut() + Send)) {
        job()
    }
    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            for i in 0..n {
                let done = done.clone();
                s.spawn(move || {
                    // Signals completion on drop, so a panicking task still reports in
                    // (and its panic then propagates when the scope joins it).
                    let _signal = DoneSignal(done);
                    body(i);
                });
            }
            // Bounded wait: a worker that hangs fails the whole run instead of blocking it
            // (a scope cannot be left while its threads run, so abort is the only way out).
            for _ in 0..n {
                if finished.recv_timeout(std::time::Duration::from_secs(60)).is_err() {
                    eprintln!("a fork-join task did not finish within 60 s");
                    std::process::abort();
                }
            }
        });
    }
    fn capabilities(&self) -> ExecutorCapabilities {
        ExecutorCapabilities {
            workers: 4,
            affinity: AffinityClaim::Unconstrained,
            shutdown: ShutdownOwner::Caller,
            reentrancy: ReentrancyBehaviour::RunsInline,
        }
    }
}

/// Sends on drop: marks a fork-join task finished however it ends.
struct DoneSignal(std::sync::mpsc::Sender<()>);

impl Drop for DoneSignal {
    fn drop(&mut self) {
        // The receiver lives until every task has reported, so the send cannot fail.
        let _ = self.0.send(());
    }
}

/// A kernel context that splits work over 4 real threads.
pub(crate) fn threaded() -> KernelContext<'static> {
    static EXEC: ThreadPerIndex = ThreadPerIndex;
    KernelContext::new(Parallelism::new(&EXEC, 4, &AUDIT))
}
