//! Where work ran: a census of every thread's CPU time, a recording GEMM provider and a
//! caller executor of its own, for the provenance tests.
#![allow(dead_code)]

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::ThreadId;

use strata_engine::{AffinityClaim, CpuDomainExecutor, ExecutorCapabilities, ReentrancyBehaviour, ShutdownOwner};
use strata_provider::{
    BatchedGemm, CpuProviderBundle, FaerGemmProvider, GemmError, GemmProvider, ProviderCapabilities, ProviderKind,
    ProviderParallelism, ScheduleError,
};
use strata_tensor::{c32, c64};

/// Provenance measurements read every thread of the process: tests that take them run
/// one at a time, so no other test's work lands in a census.
pub fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// The calling thread's OS id (from `/proc/thread-self`, a link to `<pid>/task/<tid>`).
pub fn current_tid() -> u32 {
    let link = std::fs::read_link("/proc/thread-self").expect("read /proc/thread-self");
    link.file_name().and_then(|n| n.to_str()).and_then(|n| n.parse().ok()).expect("a numeric thread id")
}

/// Nanoseconds the calling thread has run: `CLOCK_THREAD_CPUTIME_ID`, which (unlike a
/// running thread's own `schedstat`) includes the time since the last scheduler tick.
pub fn own_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `clock_gettime` writes one `timespec` through a valid pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Name of the thread that drops the tests' outputs: freeing a result is the caller's
/// business after the op, not work of the op, so it is kept off the calling thread and
/// out of every census.
pub const DROPPER: &str = "test-dropper";

/// Sends values to a thread named [`DROPPER`] that drops them.
pub fn dropper() -> std::sync::mpsc::Sender<Box<dyn std::any::Any + Send>> {
    let (tx, rx) = std::sync::mpsc::channel::<Box<dyn std::any::Any + Send>>();
    std::thread::Builder::new()
        .name(DROPPER.into())
        .spawn(move || rx.into_iter().for_each(drop))
        .expect("spawn the dropper");
    tx
}

fn schedstat_ns(text: &str) -> u64 {
    text.split_whitespace().next().and_then(|f| f.parse().ok()).unwrap_or(0)
}

/// Name (as the kernel truncates it, 15 bytes) and CPU nanoseconds of every live thread.
pub fn census() -> HashMap<u32, (String, u64)> {
    let mut threads = HashMap::new();
    for entry in std::fs::read_dir("/proc/self/task").expect("list /proc/self/task").flatten() {
        let Some(tid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else { continue };
        // A thread may exit between the listing and the reads: it is simply not counted.
        let (Ok(comm), Ok(stat)) = (
            std::fs::read_to_string(entry.path().join("comm")),
            std::fs::read_to_string(entry.path().join("schedstat")),
        ) else {
            continue;
        };
        threads.insert(tid, (comm.trim_end().to_string(), schedstat_ns(&stat)));
    }
    threads
}

/// Whether a thread name (possibly truncated to 15 bytes by the kernel) carries `prefix`.
pub fn named(name: &str, prefix: &str) -> bool {
    let cut = prefix.len().min(15).min(name.len());
    !name.is_empty() && name.starts_with(&prefix[..cut]) && cut > 0
}

/// CPU time one measured stretch of work cost, split by where it ran.
#[derive(Debug, Default)]
pub struct Split {
    /// On the thread that called the ops.
    pub caller_ns: u64,
    /// On the domain's threads (including time its exited threads reported).
    pub domain_ns: u64,
    /// Anywhere else, per thread.
    pub outside: Vec<(String, u64)>,
}

impl Split {
    pub fn outside_ns(&self) -> u64 {
        self.outside.iter().map(|(_, ns)| ns).sum()
    }

    pub fn total_ns(&self) -> u64 {
        self.caller_ns + self.domain_ns + self.outside_ns()
    }
}

/// Runs `work` and splits the CPU time every thread of the process spent meanwhile into
/// the caller's, the domain's (threads named with `prefix`, plus `reported()` for domain
/// threads that exited) and everyone else's.
pub fn measure(prefix: &str, reported: &dyn Fn() -> u64, work: &mut dyn FnMut()) -> Split {
    let me = current_tid();
    let before = census();
    let reported_before = reported();
    let mine_before = own_cpu_ns();
    work();
    let mine_after = own_cpu_ns();
    let reported_after = reported();
    let after = census();
    let mut split = Split {
        caller_ns: mine_after.saturating_sub(mine_before),
        domain_ns: reported_after.saturating_sub(reported_before),
        ..Split::default()
    };
    for (tid, (name, ns)) in after {
        if tid == me {
            continue;
        }
        let delta = ns.saturating_sub(before.get(&tid).map_or(0, |(_, b)| *b));
        if name == DROPPER {
            continue;
        }
        if named(&name, prefix) {
            split.domain_ns += delta;
        } else if delta > 0 {
            split.outside.push((name, delta));
        }
    }
    split
}

/// Every GEMM call and every index of its fork-join, as (thread, thread name).
pub type Sightings = Mutex<Vec<(ThreadId, Option<String>)>>;

fn sight(seen: &Sightings) {
    let t = std::thread::current();
    seen.lock().unwrap_or_else(|p| p.into_inner()).push((t.id(), t.name().map(str::to_string)));
}

/// faer, recording on which thread every call and every panel ran.
#[derive(Debug, Default)]
pub struct RecordingProvider {
    pub seen: Sightings,
    pub calls: AtomicUsize,
}

/// Forwards a provider's fork-join, recording the thread of every index.
struct RecordingPar<'a> {
    inner: &'a dyn ProviderParallelism,
    seen: &'a Sightings,
}

// SAFETY: every call goes to `inner`, whose contract covers it; the wrapper only records
// the thread before running the same index, and changes no index, count or result.
unsafe impl ProviderParallelism for RecordingPar<'_> {
    fn threads(&self) -> usize {
        self.inner.threads()
    }

    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) -> Result<(), ScheduleError> {
        self.inner.for_each_index(n, &|i| {
            sight(self.seen);
            body(i)
        })
    }
}

macro_rules! recorded {
    ($($method:ident: $t:ty),*) => {$(
        fn $method(&self, job: &mut BatchedGemm<'_, $t>, par: &dyn ProviderParallelism) -> Result<(), GemmError> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            sight(&self.seen);
            FaerGemmProvider.$method(job, &RecordingPar { inner: par, seen: &self.seen })
        }
    )*};
}

impl GemmProvider for RecordingProvider {
    fn capabilities(&self) -> ProviderCapabilities {
        ProviderCapabilities { name: "recording-faer".into(), ..FaerGemmProvider.capabilities() }
    }

    recorded!(gemm_f32: f32, gemm_f64: f64, gemm_c32: c32, gemm_c64: c64);
}

impl RecordingProvider {
    /// A bundle serving every GEMM dtype with `provider`.
    pub fn bundle(provider: &Arc<RecordingProvider>) -> CpuProviderBundle {
        CpuProviderBundle::builder(ProviderKind::Injected)
            .provider(Arc::clone(provider) as Arc<dyn GemmProvider>)
            .build()
            .expect("a bundle of the recording provider")
    }

    /// Takes the sightings so far.
    pub fn take(&self) -> Vec<(ThreadId, Option<String>)> {
        std::mem::take(&mut *self.seen.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

thread_local! {
    static ON_SPAWNING_WORKER: Cell<bool> = const { Cell::new(false) };
}

/// A caller's own executor, not Rayon: every job and fork-join runs on fresh threads
/// named `custom-exec-*` (scoped, joined before returning). A fork-join from one of its
/// threads spawns helpers and takes part itself, so nesting never waits for a free worker.
/// Exited threads report their CPU time into `reported_ns`.
#[derive(Debug)]
pub struct SpawningExecutor {
    pub workers: usize,
    pub reported_ns: AtomicU64,
}

pub const SPAWNING_PREFIX: &str = "custom-exec-";

impl SpawningExecutor {
    pub fn new(workers: usize) -> Arc<Self> {
        Arc::new(SpawningExecutor { workers, reported_ns: AtomicU64::new(0) })
    }

    fn as_worker(&self, f: impl FnOnce()) {
        ON_SPAWNING_WORKER.set(true);
        f();
        self.reported_ns.fetch_add(own_cpu_ns(), Ordering::Relaxed);
    }

    pub fn reported(&self) -> u64 {
        self.reported_ns.load(Ordering::Relaxed)
    }
}

impl CpuDomainExecutor for SpawningExecutor {
    fn run(&self, job: &mut (dyn FnMut() + Send)) {
        if ON_SPAWNING_WORKER.get() {
            return job();
        }
        std::thread::scope(|s| {
            std::thread::Builder::new()
                .name(format!("{SPAWNING_PREFIX}run"))
                .spawn_scoped(s, || self.as_worker(job))
                .expect("spawn a worker");
        });
    }

    fn for_each_index(&self, n: usize, body: &(dyn Fn(usize) + Sync)) {
        let next = AtomicUsize::new(0);
        let work = || {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                body(i);
            }
        };
        let on_worker = ON_SPAWNING_WORKER.get();
        let helpers = if on_worker { self.workers - 1 } else { self.workers }.min(n);
        std::thread::scope(|s| {
            for k in 0..helpers {
                std::thread::Builder::new()
                    .name(format!("{SPAWNING_PREFIX}{k}"))
                    .spawn_scoped(s, || self.as_worker(work))
                    .expect("spawn a worker");
            }
            if on_worker {
                work();
            }
        });
    }

    fn capabilities(&self) -> ExecutorCapabilities {
        ExecutorCapabilities {
            workers: self.workers,
            affinity: AffinityClaim::Unconstrained,
            shutdown: ShutdownOwner::Caller,
            reentrancy: ReentrancyBehaviour::RunsInline,
        }
    }

    fn current_thread_is_worker(&self) -> bool {
        ON_SPAWNING_WORKER.get()
    }
}
