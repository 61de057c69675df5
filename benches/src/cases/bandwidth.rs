//! The bandwidth reference: STREAM-like loops over arrays far larger than the caches,
//! at the run's thread count, measured by the bench itself so that every memory-bound
//! case can be stated as a share of what this machine moves at that moment.
//!
//! Bytes are counted as STREAM counts them (each array element read or written once;
//! the write-allocate read of a store's line is not counted), and so are the bytes of
//! the memory-bound cases, so a case at 100 % moves data as fast as the plain loop.

use rayon::prelude::*;

use crate::suite::{Case, Suite, Unit, gbps};
use crate::{Party, random_f64};

/// Elements per array: 128 MiB of f64, four times the largest last-level cache seen.
const LEN: usize = 16 << 20;
/// Elements per task.
const CHUNK: usize = 1 << 16;

/// `stream_copy` (c = a), `stream_triad` (a = b + 3 c) and `stream_read` (sum of a).
pub fn cases(threads: usize) -> Vec<Case> {
    let case = |name: &str| Case::new(name, "bandwidth", Unit::GigabytePerSecond, threads).references(&["stream"]);
    vec![
        case("stream_copy").run(move |s| measure(s, Kernel::Copy)),
        case("stream_triad").run(move |s| measure(s, Kernel::Triad)),
        case("stream_read").run(move |s| measure(s, Kernel::Read)),
    ]
}

#[derive(Clone, Copy)]
enum Kernel {
    Copy,
    Triad,
    Read,
}

fn measure(suite: &mut Suite, kernel: Kernel) -> Result<(), String> {
    let pool =
        rayon::ThreadPoolBuilder::new().num_threads(suite.threads).build().map_err(|e| format!("rayon pool: {e}"))?;
    let a = random_f64(LEN, 61);
    let b = random_f64(LEN, 62);
    let mut c = vec![0.0f64; LEN];
    let bytes = match kernel {
        Kernel::Copy => 16.0,
        Kernel::Triad => 24.0,
        Kernel::Read => 8.0,
    } * LEN as f64;
    // The loops fault their pages in first, so the measurement is of moving data.
    let step = |c: &mut [f64]| -> f64 {
        pool.install(|| match kernel {
            Kernel::Copy => {
                c.par_chunks_mut(CHUNK).zip(a.par_chunks(CHUNK)).for_each(|(c, a)| c.copy_from_slice(a));
                0.0
            }
            Kernel::Triad => {
                c.par_chunks_mut(CHUNK).zip(a.par_chunks(CHUNK)).zip(b.par_chunks(CHUNK)).for_each(|((c, a), b)| {
                    for ((c, a), b) in c.iter_mut().zip(a).zip(b) {
                        *c = a + 3.0 * b;
                    }
                });
                0.0
            }
            Kernel::Read => a
                .par_chunks(CHUNK)
                .map(|c| {
                    let mut acc = [0.0f64; 8];
                    let mut lanes = c.chunks_exact(8);
                    for l in &mut lanes {
                        for (s, x) in acc.iter_mut().zip(l) {
                            *s += x;
                        }
                    }
                    acc.iter().sum::<f64>() + lanes.remainder().iter().sum::<f64>()
                })
                .sum(),
        })
    };
    let check = step(&mut c);
    match kernel {
        Kernel::Copy if c != a => return Err("the copy loop did not copy".into()),
        Kernel::Triad if c.iter().zip(&a).zip(&b).any(|((c, a), b)| *c != a + 3.0 * b) => {
            return Err("the triad loop computed something else".into());
        }
        Kernel::Read if (check - a.iter().sum::<f64>()).abs() > 1e-9 * LEN as f64 => {
            return Err("the read loop's sum is off".into());
        }
        _ => {}
    }
    let mut parties = vec![Party::new("stream", || {
        std::hint::black_box(step(&mut c));
    })];
    suite.measure(&mut parties, gbps(bytes));
    Ok(())
}
