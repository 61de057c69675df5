//! The cost of the fork-join audit, for instruction counts: `repetitions` fork-joins of
//! `indices` indices each, through the audited `Parallelism` or straight to the executor.
//! The executor is `InlineExecutor` (every index on this thread), so callgrind counts are
//! exact and the difference between the two modes is the audit alone.
//!
//! ```sh
//! cargo build --release -p strata-kernels --example audit_cost
//! for mode in audited raw; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/audit_cost $mode 64 10000
//! done
//! ```

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

use strata_engine::{CpuDomainExecutor, InlineExecutor};
use strata_kernels::{Parallelism, ScheduleAudit};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let parsed = (args.get(1), args.get(2).and_then(|v| v.parse().ok()), args.get(3).and_then(|v| v.parse().ok()));
    let (mode, indices, repetitions): (&str, usize, usize) = match parsed {
        (Some(mode), Some(i), Some(r)) => (mode.as_str(), i, r),
        _ => {
            eprintln!("usage: audit_cost audited|raw <indices> <repetitions>");
            std::process::exit(2);
        }
    };
    let sum = AtomicUsize::new(0);
    let body = |i: usize| {
        sum.fetch_add(black_box(i), Ordering::Relaxed);
    };
    for _ in 0..repetitions {
        match mode {
            "audited" => {
                let audit = ScheduleAudit::new();
                // A budget above 1 so the fork-join reaches the executor, audited.
                Parallelism::new(&InlineExecutor, 2, &audit).for_each_index(indices, &body);
                audit.check("audit_cost").expect("a correct executor");
            }
            "raw" => InlineExecutor.for_each_index(indices, &body),
            other => {
                eprintln!("unknown mode {other}");
                std::process::exit(2);
            }
        }
    }
    println!("{}", sum.into_inner());
}
