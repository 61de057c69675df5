//! The state of one run of the suite: what to measure, how long, and the figures so far.

use crate::{MeasureConfig, Party, Timing, measure};

/// The unit a case reports in (names match `xtask/py/peers.py`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Floating-point operations per second, in billions (higher is better).
    GflopPerSecond,
    /// Bytes moved per second, in billions (higher is better).
    GigabytePerSecond,
    /// Nanoseconds per call (lower is better).
    Nanoseconds,
    /// A dimensionless ratio such as a speed-up (higher is better).
    Times,
}

impl Unit {
    /// The unit as printed and written to the TSV.
    pub fn name(self) -> &'static str {
        match self {
            Unit::GflopPerSecond => "GFLOP/s",
            Unit::GigabytePerSecond => "GB/s",
            Unit::Nanoseconds => "ns",
            Unit::Times => "x",
        }
    }

    /// Whether a larger figure is better.
    pub fn higher_is_better(self) -> bool {
        self != Unit::Nanoseconds
    }
}

/// Options of one run and the TSV lines measured so far.
pub struct Suite {
    /// Measurement lengths.
    pub config: MeasureConfig,
    /// `--quick`: smaller repetitions everywhere.
    pub quick: bool,
    /// Only cases whose name contains this run.
    pub filter: Option<String>,
    /// The thread count of the `_tmax` cases.
    pub threads: usize,
    lines: Vec<String>,
    failures: Vec<String>,
}

impl Suite {
    /// A run with these options.
    pub fn new(quick: bool, filter: Option<String>, threads: usize) -> Self {
        let config = if quick { MeasureConfig::quick() } else { MeasureConfig::full() };
        Suite { config, quick, filter, threads, lines: Vec::new(), failures: Vec::new() }
    }

    /// Whether `case` passes the filter.
    pub fn wants(&self, case: &str) -> bool {
        self.filter.as_deref().is_none_or(|f| case.contains(f))
    }

    /// Measures `parties` alternately and records each in `unit`; `per_call` converts
    /// seconds per call into the unit (ignored for [`Unit::Nanoseconds`]).
    pub fn measure(&mut self, case: &str, unit: Unit, parties: &mut [Party<'_>], per_call: impl Fn(f64) -> f64) {
        eprintln!("  {case}");
        let timings = measure(self.config, parties);
        for (who, t) in timings {
            self.record(case, unit, who, t, &per_call);
        }
    }

    /// Records one party's timing of `case`.
    pub fn record(&mut self, case: &str, unit: Unit, who: &str, t: Timing, per_call: impl Fn(f64) -> f64) {
        let convert = |s: f64| if unit == Unit::Nanoseconds { s * 1e9 } else { per_call(s) };
        self.record_value(case, unit, who, convert(t.median), convert(t.best));
    }

    /// Records a figure already in the case's unit (median and best).
    pub fn record_value(&mut self, case: &str, unit: Unit, who: &str, median: f64, best: f64) {
        self.lines.push(format!(
            "{case}\t{}\t{}\t{who}\t{median}\t{best}",
            unit.name(),
            u8::from(unit.higher_is_better())
        ));
    }

    /// Notes that `case` could not be measured honestly (a result check failed, or a
    /// party errored); the case is left out and the run exits non-zero.
    pub fn fail(&mut self, case: &str, why: impl std::fmt::Display) {
        eprintln!("strata-bench: {case}: {why}");
        self.failures.push(format!("{case}: {why}"));
    }

    /// The recorded TSV lines.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The cases that failed.
    pub fn failures(&self) -> &[String] {
        &self.failures
    }
}

/// Seconds per call into GFLOP/s for `flops` per call.
pub fn gflops(flops: f64) -> impl Fn(f64) -> f64 {
    move |s| flops / s / 1e9
}

/// Seconds per call into GB/s for `bytes` per call.
pub fn gbps(bytes: f64) -> impl Fn(f64) -> f64 {
    move |s| bytes / s / 1e9
}
