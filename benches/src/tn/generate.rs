//! The input generator both sides implement (Rust here, numpy in `xtask/py/peers.py`):
//! element `j` of input `X` of workload `W` is `splitmix64(FNV-1a("W/X") + (j + 1) ·
//! 0x9E3779B97F4A7C15)`, its top 53 bits mapped to [-1, 1). Counter-based, so numpy
//! computes it vectorised and both sides get the same bits.

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// 64-bit FNV-1a of a string.
pub fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// Value `j` of the stream `seed`, in [-1, 1).
pub fn splitmix_unit(seed: u64, j: u64) -> f64 {
    let mut z = seed.wrapping_add((j + 1).wrapping_mul(GOLDEN));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0
}

/// The values of input `input` of `workload`: `len` reals, or `2 len` (re, im pairs).
pub fn input_values(workload: &str, input: &str, len: usize, complex: bool) -> Vec<f64> {
    let seed = fnv1a(&format!("{workload}/{input}"));
    let n = if complex { 2 * len } else { len };
    (0..n as u64).map(|j| splitmix_unit(seed, j)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_matches_its_published_values() {
        // The same values are asserted by peers.py's self-test (`--self-test`).
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
        let v = input_values("mps_env_chi64_d2", "A", 3, false);
        assert_eq!(v, [-0.5436707696964116, -0.8878692824834487, 0.7500244487547176]);
        assert_eq!(input_values("mps_env_chi64_d2", "A", 3, true)[..3], v[..]);
        assert_ne!(input_values("mps_env_chi64_d2", "E", 3, false), v);
        let mean: f64 = input_values("w", "x", 100_000, false).iter().sum::<f64>() / 1e5;
        assert!(mean.abs() < 0.01, "{mean}");
    }
}
