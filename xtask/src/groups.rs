//! The groups the table and the plot are split into, and the names parties are shown by.
//!
//! Adding a group: one entry in [`GROUPS`] (the runner refuses a case whose group is not
//! listed here, so a typo cannot hide a case).

/// A group of cases shown together.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Group {
    /// The id cases name in their declaration.
    pub id: &'static str,
    /// The heading in the table and the plot.
    pub title: &'static str,
    /// One line on what the group measures.
    pub about: &'static str,
}

/// Every group, in the order the table and the plot show them.
pub const GROUPS: [Group; 12] = [
    Group { id: "latency", title: "Latency", about: "fixed cost of one call on tiny operands" },
    Group { id: "concurrency", title: "Concurrency", about: "two independent budget-1 callers against one" },
    Group {
        id: "bandwidth",
        title: "Memory bandwidth (reference)",
        about: "STREAM-like loops of this run, the limit of the memory-bound cases",
    },
    Group { id: "streaming", title: "Streaming", about: "elementwise ops and sums larger than the caches" },
    Group { id: "in-cache", title: "In-cache elementwise", about: "4 Ki-256 Ki elements, operands in L1/L2" },
    Group { id: "analytic", title: "Analytic functions", about: "8 Mi elements into a preallocated output" },
    Group { id: "movement", title: "Data movement", about: "permutations and gathers" },
    Group { id: "gemm", title: "GEMM", about: "dense matrix products" },
    Group { id: "contraction", title: "Contraction", about: "one dot_general of tensors" },
    Group {
        id: "tn",
        title: "Tensor networks",
        about: "sequences of dot_general steps with fresh outputs (benches/tn/workloads.tn)",
    },
    Group { id: "einsum", title: "einsum", about: "the tensor-network suite written as einsum strings" },
    Group { id: "distributed", title: "Distributed (MPI)", about: "strong scaling over MPI ranks" },
];

/// The group with this id.
pub fn group(id: &str) -> Option<&'static Group> {
    GROUPS.iter().find(|g| g.id == id)
}

/// Whether a group's cases have no peers by design (the bandwidth reference, the
/// distributed group's self-relative efficiency), so a missing peer figure is no news.
pub fn without_peers(id: &str) -> bool {
    id == "bandwidth" || id == "distributed"
}

/// Every party a case can name: peers first (they count for the ratio), then references.
pub const PARTIES: [(&str, &str, &str); 13] = [
    // (who, short column header, name in sentences)
    ("faer", "faer", "faer"),
    ("openblas", "openblas", "OpenBLAS"),
    ("ndarray", "ndarray", "ndarray"),
    ("numpy", "numpy", "numpy"),
    ("numpy-einsum", "np.einsum", "numpy einsum"),
    ("numpy-einsum-opt", "np.einopt", "numpy einsum optimize='optimal'"),
    ("opt_einsum", "opt_ein", "opt_einsum"),
    ("jax", "jax", "JAX"),
    ("tenferro", "tenferro", "tenferro-cpu"),
    ("rust_loop", "loop", "the plain Rust loop"),
    ("memcpy", "memcpy", "memcpy"),
    ("strata_1t", "strata@1t", "strata at 1 thread"),
    ("stream", "stream", "the STREAM-like loop"),
];

/// The column header of a party (its id when unknown).
pub fn header(who: &str) -> &str {
    PARTIES.iter().find(|p| p.0 == who).map_or(who, |p| p.1)
}

/// The name of a party in a sentence (its id when unknown).
pub fn spoken(who: &str) -> &str {
    PARTIES.iter().find(|p| p.0 == who).map_or(who, |p| p.2)
}

/// The order parties are shown in (unknown ones last).
pub fn order(who: &str) -> usize {
    PARTIES.iter().position(|p| p.0 == who).unwrap_or(PARTIES.len())
}

/// Which peers come from the Python environment.
pub const PYTHON_PEERS: [&str; 5] = ["numpy", "numpy-einsum", "numpy-einsum-opt", "opt_einsum", "jax"];

/// A unit in words for headings.
pub fn unit_words(unit: &str, higher_is_better: bool) -> String {
    let dir = if higher_is_better { "higher is better" } else { "lower is better" };
    match unit {
        "ns" => format!("ns per call, {dir}"),
        "x" => format!("speed-up, {dir}"),
        u => format!("{u}, {dir}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_names_resolve() {
        for (i, g) in GROUPS.iter().enumerate() {
            assert!(GROUPS[i + 1..].iter().all(|h| h.id != g.id), "{}", g.id);
            assert_eq!(group(g.id), Some(g));
        }
        assert_eq!(group("nope"), None);
        assert_eq!(header("numpy-einsum"), "np.einsum");
        assert_eq!(header("numpy-einsum-opt"), "np.einopt");
        assert_eq!(spoken("opt_einsum"), "opt_einsum");
        assert!(PYTHON_PEERS.iter().all(|p| PARTIES.iter().any(|q| q.0 == *p)), "every Python peer is a party");
        assert_eq!(spoken("rust_loop"), "the plain Rust loop");
        assert_eq!(header("someone"), "someone");
        assert!(order("faer") < order("memcpy") && order("memcpy") < order("someone"));
        assert!(PARTIES.iter().all(|p| p.1.len() <= 9), "headers fit the columns");
    }
}
