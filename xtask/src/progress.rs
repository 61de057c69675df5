//! Progress on stderr: `[k/N] case … elapsed, ETA`. The ETA sums what the remaining
//! cases took in the previous run of the same kind (`durations-*.tsv`), and the average
//! of the cases finished so far for those it has not seen.

use std::collections::HashMap;
use std::time::Instant;

/// Progress through a planned list of cases.
pub struct Progress {
    plan: Vec<String>,
    prior: HashMap<String, f64>,
    start: Instant,
    finished: Vec<f64>,
}

/// `m:ss` (or `h:mm:ss`).
pub fn clock(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

impl Progress {
    /// Progress through `plan`, with per-case seconds of an earlier run.
    pub fn new(plan: Vec<String>, prior: HashMap<String, f64>) -> Self {
        Progress { plan, prior, start: Instant::now(), finished: Vec::new() }
    }

    /// The line announcing case number `k` (0-based) after `elapsed` seconds.
    pub fn line_at(&self, k: usize, elapsed: f64) -> String {
        let n = self.plan.len();
        let name = self.plan.get(k).map_or("?", String::as_str);
        let eta = self.eta(k);
        let eta = eta.map_or("ETA unknown".to_string(), |e| format!("ETA {}", clock(e)));
        format!("[{}/{n}] {name} … {} elapsed, {eta}", k + 1, clock(elapsed))
    }

    /// The line for case `k`, now.
    pub fn line(&self, k: usize) -> String {
        self.line_at(k, self.start.elapsed().as_secs_f64())
    }

    /// Seconds until the plan is through, counting case `k` as not started.
    fn eta(&self, k: usize) -> Option<f64> {
        let mean = (!self.finished.is_empty()).then(|| self.finished.iter().sum::<f64>() / self.finished.len() as f64);
        let mut total = 0.0;
        for name in self.plan.iter().skip(k) {
            total += match self.prior.get(name) {
                Some(&s) => s,
                None => mean?,
            };
        }
        Some(total)
    }

    /// Notes that a case took `seconds`.
    pub fn finished(&mut self, seconds: f64) {
        self.finished.push(seconds);
    }
}

/// Reads `case<TAB>seconds` lines (missing or malformed files give nothing).
pub fn read_durations(text: &str) -> HashMap<String, f64> {
    text.lines()
        .filter_map(|l| {
            let (name, s) = l.split_once('\t')?;
            Some((name.to_string(), s.trim().parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_counts_and_estimates() {
        let plan: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let mut p = Progress::new(plan.clone(), HashMap::new());
        assert_eq!(p.line_at(0, 0.0), "[1/3] a … 0:00 elapsed, ETA unknown");
        p.finished(10.0);
        assert_eq!(p.line_at(1, 10.4), "[2/3] b … 0:10 elapsed, ETA 0:20");
        let prior = read_durations("b\t65\nc\t5\nbad line\nd\tx\n");
        assert_eq!(prior.len(), 2);
        let p = Progress::new(plan, prior);
        assert_eq!(p.line_at(1, 3725.0), "[2/3] b … 1:02:05 elapsed, ETA 1:10");
        assert_eq!(clock(59.6), "1:00");
    }
}
