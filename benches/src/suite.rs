//! Cases and the state of one run: what a case is (its declaration and the closure that
//! measures it), how long to measure, and the records of the case being measured.

use std::path::PathBuf;

use xtask::record::{CaseDecl, Record};

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
    /// The unit as printed and written in the records.
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

/// What measures one case: records its figures into the suite, or says why it cannot.
pub type Measure = Box<dyn Fn(&mut Suite) -> Result<(), String>>;

/// One case: what it is and how to measure it.
pub struct Case {
    /// Name, group, unit, threads, peers, references, target, limit.
    pub decl: CaseDecl,
    /// The measurement.
    pub run: Measure,
}

impl Case {
    /// A case named `name` in `group`, measured in `unit` with `threads` threads, with no
    /// peers, references, target or limit yet, and a measurement that fails.
    pub fn new(name: impl Into<String>, group: &str, unit: Unit, threads: usize) -> Self {
        let name = name.into();
        Case {
            decl: CaseDecl {
                name,
                group: group.into(),
                unit: unit.name().into(),
                higher_is_better: unit.higher_is_better(),
                threads,
                target: None,
                peers: Vec::new(),
                references: Vec::new(),
                limit: None,
            },
            run: Box::new(|_| Err("this case has no measurement".into())),
        }
    }

    /// The peers strata is compared to (Rust and Python ones alike).
    pub fn peers(mut self, peers: &[&str]) -> Self {
        self.decl.peers = peers.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Hardware references shown beside the case (not in the ratio).
    pub fn references(mut self, refs: &[&str]) -> Self {
        self.decl.references = refs.iter().map(|s| s.to_string()).collect();
        self
    }

    /// The target (see `xtask::target` for the spec).
    pub fn target(mut self, spec: &str) -> Self {
        self.decl.target = Some(spec.into());
        self
    }

    /// The bandwidth case that bounds this one.
    pub fn limit(mut self, case: &str) -> Self {
        self.decl.limit = Some(case.into());
        self
    }

    /// The measurement.
    pub fn run(mut self, f: impl Fn(&mut Suite) -> Result<(), String> + 'static) -> Self {
        self.run = Box::new(f);
        self
    }
}

/// Options of one run and the records of the case being measured.
pub struct Suite {
    /// Measurement lengths.
    pub config: MeasureConfig,
    /// `--quick`: shorter measurements and smaller sweeps.
    pub quick: bool,
    /// The thread count of the multi-threaded cases.
    pub threads: usize,
    /// Where cases leave results for the Python peers to check against.
    pub results: Option<PathBuf>,
    current: Option<CaseDecl>,
    records: Vec<Record>,
}

impl Suite {
    /// A run with these options.
    pub fn new(quick: bool, threads: usize, results: Option<PathBuf>) -> Self {
        let config = if quick { MeasureConfig::quick() } else { MeasureConfig::full() };
        Suite { config, quick, threads, results, current: None, records: Vec::new() }
    }

    /// Starts measuring `decl`: later records belong to it.
    pub fn begin(&mut self, decl: &CaseDecl) {
        self.current = Some(decl.clone());
    }

    /// The case being measured.
    pub fn case(&self) -> &str {
        self.current.as_ref().map_or("?", |d| d.name.as_str())
    }

    fn unit_is_ns(&self) -> bool {
        self.current.as_ref().is_some_and(|d| d.unit == "ns")
    }

    /// Measures `parties` alternately and records each; `per_call` converts seconds per
    /// call into the case's unit (nanosecond cases convert themselves).
    pub fn measure(&mut self, parties: &mut [Party<'_>], per_call: impl Fn(f64) -> f64) {
        let timings = measure(self.config, parties);
        for (who, t) in timings {
            self.record(who, t, &per_call);
        }
    }

    /// Records one party's timing.
    pub fn record(&mut self, who: &str, t: Timing, per_call: impl Fn(f64) -> f64) {
        let ns = self.unit_is_ns();
        let convert = |s: f64| if ns { s * 1e9 } else { per_call(s) };
        self.record_value(who, convert(t.median), convert(t.best));
    }

    /// Records a figure already in the case's unit (median and best).
    pub fn record_value(&mut self, who: &str, median: f64, best: f64) {
        let case = self.case().to_string();
        self.records.push(Record::Value { case, who: who.into(), median, best });
    }

    /// Records the result check of one party.
    pub fn check(&mut self, who: &str, rel_err: f64, tol: f64) {
        let case = self.case().to_string();
        self.records.push(Record::Check { case, who: who.into(), rel_err, tol });
    }

    /// Records that a peer could not be measured (the case goes on without it).
    pub fn fail_party(&mut self, who: &str, message: impl std::fmt::Display) {
        let case = self.case().to_string();
        self.records.push(Record::Fail { case, who: who.into(), message: message.to_string() });
    }

    /// Adds a note for the reader.
    pub fn note(&mut self, text: impl Into<String>) {
        self.records.push(Record::Note(text.into()));
    }

    /// Takes the records so far.
    pub fn take_records(&mut self) -> Vec<Record> {
        std::mem::take(&mut self.records)
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
