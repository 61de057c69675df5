//! Agreeing on validity before moving data: every collective first exchanges a small
//! signature and each rank's own verdict, so that bad input on any rank becomes the same
//! typed error on every rank instead of a hang or a crash inside MPI.
//!
//! Phase 1 (always): an all-gather of a fixed-size header per rank (its verdict and one
//! hash per signature part). Phase 2 (only when something is wrong, decided identically
//! on every rank from phase 1): an all-gather of each rank's text, its own error or its
//! description of the first part that differs, from which every rank builds the error.

use mpi::collective::CommunicatorCollectives;
use mpi::datatype::PartitionMut;
use mpi::topology::Communicator;
use strata_tensor::{Error, ErrorKind, Result};

/// Signature parts one collective may compare (op, dtype, shapes, layout, root, ...).
const MAX_PARTS: usize = 8;
/// Header words: verdict, error kind, then one hash per part.
const HEADER: usize = 2 + MAX_PARTS;

/// What ranks must agree on: named parts, each with the words compared, a description
/// for error messages and the error kind a disagreement on it is.
#[derive(Default)]
pub(crate) struct Signature {
    parts: Vec<(&'static str, Vec<u64>, String, ErrorKind)>,
}

impl Signature {
    /// Adds a part (at most [`MAX_PARTS`]; further parts are folded into the last).
    pub(crate) fn part(mut self, what: &'static str, words: Vec<u64>, description: String, kind: ErrorKind) -> Self {
        if self.parts.len() == MAX_PARTS {
            if let Some(last) = self.parts.last_mut() {
                last.1.extend(words);
                last.2.push_str(&format!("; {what} {description}"));
            }
        } else {
            self.parts.push((what, words, description, kind));
        }
        self
    }
}

fn fnv1a(words: &[u64]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for w in words {
        for b in w.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

fn kind_code(kind: ErrorKind) -> u64 {
    match kind {
        ErrorKind::InvalidArgument => 1,
        ErrorKind::ShapeMismatch => 2,
        ErrorKind::DTypeMismatch => 3,
        ErrorKind::Unsupported => 4,
        ErrorKind::RuntimeState => 5,
        ErrorKind::BackendFailure => 6,
        _ => 7,
    }
}

fn kind_of(code: u64) -> ErrorKind {
    match code {
        1 => ErrorKind::InvalidArgument,
        2 => ErrorKind::ShapeMismatch,
        3 => ErrorKind::DTypeMismatch,
        4 => ErrorKind::Unsupported,
        5 => ErrorKind::RuntimeState,
        6 => ErrorKind::BackendFailure,
        _ => ErrorKind::Internal,
    }
}

/// Runs the agreement for `op` on `comm`: `Ok` on every rank when every rank's `local`
/// verdict is `Ok` and all signatures are equal, else the same error on every rank.
pub(crate) fn agree<C: Communicator>(
    comm: &C,
    op: &'static str,
    local: Result<()>,
    signature: &Signature,
) -> Result<()> {
    let size = comm.size() as usize;
    let mut header = [0u64; HEADER];
    if let Err(e) = &local {
        header[0] = 1;
        header[1] = kind_code(e.kind());
    }
    for (i, (_, words, _, _)) in signature.parts.iter().enumerate() {
        header[2 + i] = fnv1a(words);
    }
    let mut all = vec![0u64; HEADER * size];
    comm.all_gather_into(&header[..], &mut all[..]);
    let rows: Vec<&[u64]> = all.chunks(HEADER).collect();

    let failed: Vec<usize> = (0..size).filter(|&r| rows[r][0] != 0).collect();
    let differing = (0..MAX_PARTS).find(|&p| rows.iter().any(|row| row[2 + p] != rows[0][2 + p]));
    if failed.is_empty() && differing.is_none() {
        return Ok(());
    }

    // Phase 2: everyone sends the text the error needs.
    let text = match (&local, differing) {
        (Err(e), _) => e.to_string(),
        (Ok(()), Some(p)) => signature.parts.get(p).map_or_else(String::new, |part| part.2.clone()),
        (Ok(()), None) => String::new(),
    };
    let texts = all_gather_strings(comm, &text);

    if let Some(&first) = failed.first() {
        let lines: Vec<String> = failed.iter().take(8).map(|&r| format!("rank {r}: {}", texts[r])).collect();
        let more = if failed.len() > 8 { format!(" (and {} more ranks)", failed.len() - 8) } else { String::new() };
        return Err(Error::new(
            kind_of(rows[first][1]),
            op,
            format!("invalid input on {} of {size} ranks, no data was moved: {}{more}", failed.len(), lines.join("; ")),
        ));
    }
    // INVARIANT: no rank failed, so some part differs.
    let p = differing.unwrap_or(0);
    let (what, kind) = signature.parts.get(p).map_or(("arguments", ErrorKind::InvalidArgument), |s| (s.0, s.3));
    // One line per distinct value, naming the ranks that hold it.
    let mut groups: Vec<(u64, Vec<usize>)> = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        match groups.iter_mut().find(|g| g.0 == row[2 + p]) {
            Some(g) => g.1.push(r),
            None => groups.push((row[2 + p], vec![r])),
        }
    }
    let lines: Vec<String> =
        groups.iter().take(6).map(|(_, ranks)| format!("{} {}", rank_list(ranks), texts[ranks[0]])).collect();
    Err(Error::new(kind, op, format!("ranks disagree on the {what}, no data was moved: {}", lines.join("; "))))
}

fn rank_list(ranks: &[usize]) -> String {
    let shown: Vec<String> = ranks.iter().take(6).map(|r| r.to_string()).collect();
    let more = if ranks.len() > 6 { ",…" } else { "" };
    let noun = if ranks.len() == 1 { "rank" } else { "ranks" };
    format!("{noun} {}{more} ha{}", shown.join(","), if ranks.len() == 1 { "s" } else { "ve" })
}

/// Every rank's string, on every rank.
pub(crate) fn all_gather_strings<C: Communicator>(comm: &C, text: &str) -> Vec<String> {
    let size = comm.size() as usize;
    // Messages are short; an absurd one is cut rather than overflowing an MPI count.
    let bytes = &text.as_bytes()[..text.len().min(1 << 20)];
    let mut counts = vec![0i32; size];
    comm.all_gather_into(&(bytes.len() as i32), &mut counts[..]);
    let displs: Vec<i32> = counts.iter().scan(0i32, |acc, &c| Some(std::mem::replace(acc, *acc + c))).collect();
    let total = counts.iter().map(|&c| c as usize).sum();
    let mut buf = vec![0u8; total];
    {
        let mut partition = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
        comm.all_gather_varcount_into(bytes, &mut partition);
    }
    (0..size)
        .map(|r| {
            let start = displs[r] as usize;
            String::from_utf8_lossy(&buf[start..start + counts[r] as usize]).into_owned()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_and_kind_codes_round_trip() {
        assert_ne!(fnv1a(&[1, 2]), fnv1a(&[2, 1]));
        assert_eq!(fnv1a(&[]), fnv1a(&[]));
        for kind in [
            ErrorKind::InvalidArgument,
            ErrorKind::ShapeMismatch,
            ErrorKind::DTypeMismatch,
            ErrorKind::Unsupported,
            ErrorKind::RuntimeState,
            ErrorKind::BackendFailure,
        ] {
            assert_eq!(kind_of(kind_code(kind)), kind);
        }
        assert_eq!(rank_list(&[0, 2]), "ranks 0,2 have");
        assert_eq!(rank_list(&[3]), "rank 3 has");
    }
}
