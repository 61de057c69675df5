//! Thread counts given by people: `RAYON_NUM_THREADS` and explicit counts.

use std::num::NonZeroUsize;

use crate::error::TopologyError;

/// The environment variable that overrides the default thread budget.
pub const RAYON_NUM_THREADS: &str = "RAYON_NUM_THREADS";

/// The largest thread count accepted from text or as an explicit count.
///
/// Larger values are far beyond any machine and almost certainly typos.
pub const MAX_THREAD_COUNT: usize = 65_536;

/// Parses a thread count such as a `RAYON_NUM_THREADS` value.
///
/// Surrounding whitespace is ignored. Empty, zero, negative, fractional, non-numeric and
/// values above [`MAX_THREAD_COUNT`] are errors naming `origin`: a bad setting is reported,
/// never silently replaced by a default.
///
/// ```
/// use strata_topology::parse_thread_count;
/// assert_eq!(parse_thread_count("RAYON_NUM_THREADS", " 4\n")?.get(), 4);
/// assert!(parse_thread_count("RAYON_NUM_THREADS", "0").is_err());
/// assert!(parse_thread_count("RAYON_NUM_THREADS", "four").is_err());
/// # Ok::<(), strata_topology::TopologyError>(())
/// ```
pub fn parse_thread_count(origin: &'static str, value: &str) -> Result<NonZeroUsize, TopologyError> {
    let error = |reason| TopologyError::InvalidThreadCount { origin, value: value.chars().take(80).collect(), reason };
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(error("empty"));
    }
    if !trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return Err(error("not a positive whole number"));
    }
    let count: usize = trimmed.parse().map_err(|_| error("exceeds the largest accepted count (65536)"))?;
    check_thread_count(origin, count).map_err(|_| match count {
        0 => error("zero threads"),
        _ => error("exceeds the largest accepted count (65536)"),
    })
}

/// Validates an explicit thread count: 1 ..= [`MAX_THREAD_COUNT`].
pub fn check_thread_count(origin: &'static str, count: usize) -> Result<NonZeroUsize, TopologyError> {
    let error = |reason| TopologyError::InvalidThreadCount { origin, value: count.to_string(), reason };
    if count > MAX_THREAD_COUNT {
        return Err(error("exceeds the largest accepted count (65536)"));
    }
    NonZeroUsize::new(count).ok_or_else(|| error("zero threads"))
}

/// Reads `RAYON_NUM_THREADS`: `None` when unset, an error when set to non-Unicode bytes.
pub(crate) fn rayon_num_threads_from_env() -> Result<Option<String>, TopologyError> {
    match std::env::var(RAYON_NUM_THREADS) {
        Ok(v) => Ok(Some(v)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(raw)) => Err(TopologyError::InvalidThreadCount {
            origin: RAYON_NUM_THREADS,
            value: raw.to_string_lossy().into_owned(),
            reason: "not valid Unicode",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_positive_counts() {
        for (text, n) in [("1", 1), ("4", 4), (" 16\n", 16), ("007", 7), ("65536", 65_536)] {
            assert_eq!(parse_thread_count("test", text).unwrap().get(), n, "{text:?}");
        }
        assert_eq!(check_thread_count("test", 3).unwrap().get(), 3);
    }

    #[test]
    fn rejects_nonsense_with_reasons() {
        for (text, reason) in [
            ("", "empty"),
            ("  ", "empty"),
            ("0", "zero threads"),
            ("000", "zero threads"),
            ("-1", "not a positive whole number"),
            ("+4", "not a positive whole number"),
            ("4.5", "not a positive whole number"),
            ("four", "not a positive whole number"),
            ("4 4", "not a positive whole number"),
            ("65537", "exceeds the largest accepted count (65536)"),
            ("999999999999999999999999", "exceeds the largest accepted count (65536)"),
        ] {
            match parse_thread_count("RAYON_NUM_THREADS", text) {
                Err(TopologyError::InvalidThreadCount { origin, reason: got, .. }) => {
                    assert_eq!((origin, got), ("RAYON_NUM_THREADS", reason), "{text:?}");
                }
                other => panic!("{text:?} gave {other:?}"),
            }
        }
        assert!(check_thread_count("explicit", 0).is_err());
        assert!(check_thread_count("explicit", MAX_THREAD_COUNT + 1).is_err());
    }
}
