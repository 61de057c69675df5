//! The topology as one JSON object, written by hand to keep the crate free of serde.

use std::fmt::Write as _;
use std::num::NonZeroUsize;

use crate::cpuset::CpuSet;
use crate::topology::CpuTopology;

impl CpuTopology {
    /// One JSON object describing the topology, with `default_thread_budget` as given
    /// (usually [`CpuTopology::default_thread_budget`]).
    ///
    /// Keys: `source` (string), `pinnable` (bool), `allowed_cpus` (ints), `nodes` (objects with `id` and
    /// `cpus`), `cores` (lists of SMT sibling ids), `llc_groups` (objects with `level`,
    /// `size_bytes` (int or null) and `cpus`), `distances` (matrix in the order of `nodes`,
    /// or null), `cpu_quota` (CPUs as a number, or null), `cpu_quota_us` and
    /// `cpu_period_us` (ints or null), `hardware_thread_budget` and
    /// `default_thread_budget` (ints).
    ///
    /// ```
    /// use strata_topology::{SyntheticTopology, TopologySource};
    /// let topo = SyntheticTopology::new(1, 2, 1)?.load()?;
    /// let json = topo.to_json(topo.hardware_thread_budget());
    /// assert!(json.contains(r#""allowed_cpus":[0,1]"#));
    /// # Ok::<(), strata_topology::TopologyError>(())
    /// ```
    pub fn to_json(&self, default_thread_budget: NonZeroUsize) -> String {
        let mut out = String::from("{");
        // Writing to a String cannot fail.
        let _ = write!(out, "\"source\":{},\"pinnable\":{}", json_string(self.source()), self.is_pinnable());
        let _ = write!(out, ",\"allowed_cpus\":{}", ids(self.allowed_cpus()));
        let nodes: Vec<String> =
            self.nodes().iter().map(|n| format!("{{\"id\":{},\"cpus\":{}}}", n.id(), ids(n.cpus()))).collect();
        let _ = write!(out, ",\"nodes\":[{}]", nodes.join(","));
        let cores: Vec<String> = self.cores().iter().map(|c| ids(c.cpus())).collect();
        let _ = write!(out, ",\"cores\":[{}]", cores.join(","));
        let groups: Vec<String> = self
            .llc_groups()
            .iter()
            .map(|g| {
                format!(
                    "{{\"level\":{},\"size_bytes\":{},\"cpus\":{}}}",
                    g.level(),
                    g.size_bytes().map_or_else(|| "null".to_string(), |s| s.to_string()),
                    ids(g.cpus())
                )
            })
            .collect();
        let _ = write!(out, ",\"llc_groups\":[{}]", groups.join(","));
        let first = self.nodes()[0].id();
        if self.distance(first, first).is_some() {
            let rows: Vec<String> = self
                .nodes()
                .iter()
                .map(|from| {
                    let row: Vec<String> = self
                        .nodes()
                        .iter()
                        .filter_map(|to| self.distance(from.id(), to.id()))
                        .map(|d| d.to_string())
                        .collect();
                    format!("[{}]", row.join(","))
                })
                .collect();
            let _ = write!(out, ",\"distances\":[{}]", rows.join(","));
        } else {
            out.push_str(",\"distances\":null");
        }
        match self.cpu_quota() {
            Some(q) => {
                let _ = write!(
                    out,
                    ",\"cpu_quota\":{},\"cpu_quota_us\":{},\"cpu_period_us\":{}",
                    json_number(q.cpus()),
                    q.quota_us(),
                    q.period_us()
                );
            }
            None => out.push_str(",\"cpu_quota\":null,\"cpu_quota_us\":null,\"cpu_period_us\":null"),
        }
        let _ = write!(
            out,
            ",\"hardware_thread_budget\":{},\"default_thread_budget\":{}}}",
            self.hardware_thread_budget(),
            default_thread_budget
        );
        out
    }
}

fn ids(set: &CpuSet) -> String {
    let items: Vec<String> = set.iter().map(|c| c.to_string()).collect();
    format!("[{}]", items.join(","))
}

/// A finite f64 as a JSON number (quota ratios are always finite and positive).
fn json_number(value: f64) -> String {
    if value.is_finite() { format!("{value}") } else { "null".to_string() }
}

fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CpuQuota, SyntheticTopology, TopologySource};

    #[test]
    fn json_of_a_small_synthetic_machine() {
        let topo = SyntheticTopology::new(2, 1, 2)
            .unwrap()
            .with_quota(CpuQuota::new(150_000, 100_000).unwrap())
            .load()
            .unwrap();
        let json = topo.to_json(NonZeroUsize::new(3).unwrap());
        // CPU numbering: thread t of core 0 on node n is t * 2 + n.
        let expected = concat!(
            r#"{"source":"synthetic","pinnable":false,"allowed_cpus":[0,1,2,3],"#,
            r#""nodes":[{"id":0,"cpus":[0,2]},{"id":1,"cpus":[1,3]}],"#,
            r#""cores":[[0,2],[1,3]],"#,
            r#""llc_groups":[{"level":3,"size_bytes":null,"cpus":[0,2]},{"level":3,"size_bytes":null,"cpus":[1,3]}],"#,
            r#""distances":[[10,20],[20,10]],"#,
            r#""cpu_quota":1.5,"cpu_quota_us":150000,"cpu_period_us":100000,"#,
            r#""hardware_thread_budget":2,"default_thread_budget":3}"#
        );
        assert_eq!(json, expected);
    }

    #[test]
    fn strings_are_escaped() {
        assert_eq!(json_string("a\"b\\c\n"), r#""a\"b\\c\u000a""#);
        assert_eq!(json_number(f64::NAN), "null");
    }
}
