//! Opt-in profiling: per-op counts and times, printable and exportable as Chrome-trace
//! JSON. Off by default; on with [`crate::CpuBackend::set_profiling`] or the environment
//! variable `STRATA_PROFILE=1` (read when a backend is constructed). When off, an op pays
//! one relaxed atomic load.

use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// The environment variable that turns profiling on at construction (`1`, `true`, `on`).
pub const STRATA_PROFILE: &str = "STRATA_PROFILE";

/// Most timeline events kept for the Chrome trace; counts and totals keep growing past it.
pub const MAX_TRACE_EVENTS: usize = 1 << 20;

/// One timed op, as kept for the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileEvent {
    /// The op's name.
    pub op: &'static str,
    /// Start, relative to when the profiler was created.
    pub start: Duration,
    /// How long it ran.
    pub duration: Duration,
    /// A small process-unique number of the calling thread.
    pub thread: u64,
}

/// Count and total time of one op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpProfile {
    /// The op's name.
    pub op: &'static str,
    /// How many times it ran.
    pub count: u64,
    /// Total time spent in it.
    pub total: Duration,
}

/// What a profiler collected: per-op totals (in first-seen order) and the timeline.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProfileReport {
    /// Per-op counts and times.
    pub ops: Vec<OpProfile>,
    /// The timeline (at most [`MAX_TRACE_EVENTS`] events).
    pub events: Vec<ProfileEvent>,
}

impl ProfileReport {
    /// The totals of `op`, if it ran.
    pub fn op(&self, op: &str) -> Option<&OpProfile> {
        self.ops.iter().find(|o| o.op == op)
    }

    /// The timeline as Chrome-trace JSON (load it in `chrome://tracing` or Perfetto).
    pub fn to_chrome_trace(&self) -> String {
        let mut out = String::from("{\"traceEvents\":[");
        for (i, e) in self.events.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            // Writing to a String cannot fail.
            let _ = write!(
                out,
                "{{\"name\":\"{}\",\"cat\":\"strata\",\"ph\":\"X\",\"ts\":{:.3},\"dur\":{:.3},\"pid\":1,\"tid\":{}}}",
                json_escape(e.op),
                e.start.as_nanos() as f64 / 1e3,
                e.duration.as_nanos() as f64 / 1e3,
                e.thread
            );
        }
        out.push_str("],\"displayTimeUnit\":\"ns\"}");
        out
    }
}

impl fmt::Display for ProfileReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{:<24} {:>10} {:>14} {:>12}", "op", "count", "total", "mean")?;
        for o in &self.ops {
            let mean = if o.count == 0 { Duration::ZERO } else { o.total / o.count as u32 };
            writeln!(f, "{:<24} {:>10} {:>14?} {:>12?}", o.op, o.count, o.total, mean)?;
        }
        Ok(())
    }
}

fn json_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

fn thread_number() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static NUMBER: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    NUMBER.with(|n| *n)
}

#[derive(Debug, Default)]
struct Collected {
    ops: Vec<OpProfile>,
    events: Vec<ProfileEvent>,
}

/// The collector shared by a backend and its clones.
#[derive(Debug)]
pub(crate) struct Profiler {
    enabled: AtomicBool,
    origin: Instant,
    collected: Mutex<Collected>,
}

impl Profiler {
    pub(crate) fn new(enabled: bool) -> Self {
        Profiler { enabled: AtomicBool::new(enabled), origin: Instant::now(), collected: Mutex::default() }
    }

    /// Whether `STRATA_PROFILE` asks for profiling.
    pub(crate) fn from_env() -> Self {
        let on = std::env::var(STRATA_PROFILE)
            .map(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "on" | "yes"))
            .unwrap_or(false);
        Profiler::new(on)
    }

    #[inline]
    pub(crate) fn start(&self) -> Option<Instant> {
        if self.enabled.load(Ordering::Relaxed) { Some(Instant::now()) } else { None }
    }

    #[cold]
    pub(crate) fn record(&self, op: &'static str, started: Instant) {
        let duration = started.elapsed();
        let start = started.saturating_duration_since(self.origin);
        let thread = thread_number();
        let mut c = self.collected.lock();
        match c.ops.iter_mut().find(|o| o.op == op) {
            Some(o) => {
                o.count += 1;
                o.total += duration;
            }
            None => c.ops.push(OpProfile { op, count: 1, total: duration }),
        }
        if c.events.len() < MAX_TRACE_EVENTS {
            c.events.push(ProfileEvent { op, start, duration, thread });
        }
    }

    pub(crate) fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::Relaxed);
    }

    pub(crate) fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    pub(crate) fn report(&self) -> ProfileReport {
        let c = self.collected.lock();
        ProfileReport { ops: c.ops.clone(), events: c.events.clone() }
    }

    pub(crate) fn reset(&self) {
        *self.collected.lock() = Collected::default();
    }
}
