//! Benchmark records: reading the runners' TSV output, the ratio rule, and the three
//! outputs (terminal table, summary.json, summary.svg).
//!
//! Runner line format (tab-separated, one measurement per line):
//! `case  unit  higher_is_better(0|1)  who  median  best`, where `who` is `strata`, a
//! peer (`faer`, `openblas`, `ndarray`, `numpy`, `jax`) or a hardware reference
//! (`rust_loop`, `memcpy`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Peers that count for the ratio, in table order.
pub const PEERS: [&str; 5] = ["faer", "openblas", "ndarray", "numpy", "jax"];
/// Hardware references: shown, never part of the ratio.
pub const REFERENCES: [&str; 2] = ["rust_loop", "memcpy"];

/// One benchmark case with every figure measured for it (medians).
#[derive(Clone, Debug, Default)]
pub struct Case {
    pub name: String,
    pub unit: String,
    pub higher_is_better: bool,
    pub strata: Option<f64>,
    pub strata_best: Option<f64>,
    pub peers: BTreeMap<String, f64>,
    pub ratio: Option<f64>,
}

pub fn read_cases(path: &Path) -> Result<Vec<Case>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut cases: Vec<Case> = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 6 {
            return Err(format!("{}:{}: expected 6 tab-separated fields, got {}", path.display(), n + 1, f.len()));
        }
        let num =
            |s: &str| s.parse::<f64>().map_err(|_| format!("{}:{}: `{s}` is not a number", path.display(), n + 1));
        let (median, best) = (num(f[4])?, num(f[5])?);
        let idx = match cases.iter().position(|c| c.name == f[0]) {
            Some(i) => i,
            None => {
                cases.push(Case {
                    name: f[0].into(),
                    unit: f[1].into(),
                    higher_is_better: f[2] == "1",
                    ..Case::default()
                });
                cases.len() - 1
            }
        };
        let case = &mut cases[idx];
        if f[3] == "strata" {
            case.strata = Some(median);
            case.strata_best = Some(best);
        } else {
            case.peers.insert(f[3].into(), median);
        }
    }
    Ok(cases)
}

/// Adds the peers measured elsewhere (Python) to the matching cases, creating cases
/// that only the other side measured.
pub fn merge_peers(cases: &mut Vec<Case>, other: Vec<Case>) {
    for o in other {
        match cases.iter_mut().find(|c| c.name == o.name) {
            Some(c) => c.peers.extend(o.peers),
            None => cases.push(o),
        }
    }
}

/// strata against the best peer: > 1 means strata is better. `None` without a peer figure.
pub fn ratio(c: &Case) -> Option<f64> {
    let s = c.strata?;
    let peer_values = c.peers.iter().filter(|(k, _)| PEERS.contains(&k.as_str())).map(|(_, &v)| v);
    if c.higher_is_better {
        let best = peer_values.fold(f64::NAN, f64::max);
        (best.is_finite() && best > 0.0).then(|| s / best)
    } else {
        let best = peer_values.fold(f64::NAN, f64::min);
        (best.is_finite() && s > 0.0).then(|| best / s)
    }
}

/// A target of issue 9 for one case (reached in the table, never asserted).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// strata ≥ factor × the best of these peers (in the case's direction).
    VsPeers(&'static [&'static str], f64),
    /// strata ≥ factor × this hardware reference.
    VsReference(&'static str, f64),
    /// strata's figure ≤ this (lower-is-better cases).
    AtMost(f64),
    /// strata's figure ≥ this.
    AtLeast(f64),
}

/// The target of `case`, if the issue sets one.
pub fn target_of(case: &str) -> Option<Target> {
    const GEMM_PEERS: &[&str] = &["faer", "openblas"];
    Some(match case {
        c if c.starts_with("gemm_") => Target::VsPeers(GEMM_PEERS, 0.97),
        "einsum_abcd_cdef_f64_d32" => Target::VsPeers(&["numpy"], 1.0),
        "add_f64_8m_into" => Target::VsReference("rust_loop", 0.9),
        "add_f64_8m_alloc" => Target::VsPeers(&["numpy"], 1.2),
        "sum_f64_8m" => Target::VsReference("rust_loop", 0.9),
        "permute_f64_64mib_3210" => Target::VsReference("memcpy", 0.6),
        "tiny_add_ns" => Target::AtMost(250.0),
        "tiny_add_session_ns" => Target::AtMost(100.0),
        "matmul_2x2_ns" => Target::AtMost(500.0),
        "arbiter_uncontended_ns" => Target::AtMost(100.0),
        "pool_reuse_8mib_ns" => Target::AtMost(100.0),
        "concurrent_budget1_scaling" => Target::AtLeast(1.8),
        _ => return None,
    })
}

/// The target as text and whether it was reached (`None`: a figure it needs is missing).
pub fn target_status(c: &Case) -> Option<(String, Option<bool>)> {
    let t = target_of(&c.name)?;
    let s = c.strata;
    let vs = |base: Option<f64>, factor: f64| -> Option<bool> {
        let (s, base) = (s?, base?);
        Some(if c.higher_is_better { s >= factor * base } else { s * factor <= base })
    };
    Some(match t {
        Target::VsPeers(peers, f) => {
            let values = peers.iter().filter_map(|p| c.peers.get(*p).copied());
            let best = if c.higher_is_better {
                values.fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
            } else {
                values.fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))))
            };
            (format!(">={f}x {}", peers.join("/")), vs(best, f))
        }
        Target::VsReference(r, f) => (format!(">={f}x {r}"), vs(c.peers.get(r).copied(), f)),
        Target::AtMost(v) => (format!("<={v}"), s.map(|s| s <= v)),
        Target::AtLeast(v) => (format!(">={v}"), s.map(|s| s >= v)),
    })
}

fn fmt_value(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v.abs() >= 1000.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.3}"),
    }
}

pub fn table(cases: &[Case]) -> String {
    let mut cols: Vec<&str> = vec!["case", "unit", "strata"];
    cols.extend(PEERS);
    cols.extend(REFERENCES);
    cols.push("ratio");
    cols.push("target");
    let rows: Vec<Vec<String>> = cases
        .iter()
        .map(|c| {
            let mut r = vec![c.name.clone(), c.unit.clone(), fmt_value(c.strata)];
            r.extend(PEERS.iter().chain(&REFERENCES).map(|p| fmt_value(c.peers.get(*p).copied())));
            r.push(c.ratio.map(|x| format!("{x:.2}x")).unwrap_or_else(|| "-".into()));
            r.push(match target_status(c) {
                None => "-".into(),
                Some((t, Some(true))) => format!("{t} met"),
                Some((t, Some(false))) => format!("{t} MISSED"),
                Some((t, None)) => format!("{t} n/a"),
            });
            r
        })
        .collect();
    let widths: Vec<usize> = (0..cols.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).chain([cols[i].len()]).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    let line = |out: &mut String, cells: &[String]| {
        let parts: Vec<String> = cells.iter().zip(&widths).map(|(c, w)| format!("{c:>w$}")).collect();
        let _ = writeln!(out, "{}", parts.join("  "));
    };
    line(&mut out, &cols.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    for r in &rows {
        line(&mut out, r);
    }
    out
}

fn json_number(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v}"),
        _ => "null".into(),
    }
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
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

pub fn to_json(cases: &[Case]) -> String {
    let items: Vec<String> = cases
        .iter()
        .map(|c| {
            let peers: Vec<String> =
                c.peers.iter().map(|(k, v)| format!("{}: {}", json_string(k), json_number(Some(*v)))).collect();
            let (target, met) = match target_status(c) {
                Some((t, m)) => (json_string(&t), m.map_or("null".to_string(), |m| m.to_string())),
                None => ("null".to_string(), "null".to_string()),
            };
            format!(
                "  {{\"case\": {}, \"unit\": {}, \"higher_is_better\": {}, \"strata\": {}, \"peers\": {{{}}}, \"ratio\": {}, \"target\": {}, \"target_met\": {}}}",
                json_string(&c.name),
                json_string(&c.unit),
                c.higher_is_better,
                json_number(c.strata),
                peers.join(", "),
                json_number(c.ratio),
                target,
                met
            )
        })
        .collect();
    format!("[\n{}\n]\n", items.join(",\n"))
}

/// A horizontal bar chart of the ratios on a log scale, 1.0 marked.
pub fn to_svg(cases: &[Case]) -> String {
    let rated: Vec<&Case> = cases.iter().filter(|c| c.ratio.is_some()).collect();
    let (row_h, label_w, plot_w) = (22.0, 260.0, 520.0);
    let height = 60.0 + row_h * rated.len() as f64;
    // Log2 scale from 1/8x to 8x.
    let x_of = |r: f64| label_w + plot_w * ((r.log2().clamp(-3.0, 3.0) + 3.0) / 6.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">",
        label_w + plot_w + 80.0
    );
    let _ = writeln!(s, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(
        s,
        "<text x=\"10\" y=\"20\" font-size=\"14\">strata vs best peer (ratio &gt; 1: strata better; log scale)</text>"
    );
    for tick in [0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0] {
        let x = x_of(tick);
        let stroke = if tick == 1.0 { "black" } else { "#ccc" };
        let _ = writeln!(s, "<line x1=\"{x}\" y1=\"35\" x2=\"{x}\" y2=\"{}\" stroke=\"{stroke}\"/>", height - 10.0);
        let _ = writeln!(s, "<text x=\"{x}\" y=\"32\" text-anchor=\"middle\">{tick}x</text>");
    }
    for (i, c) in rated.iter().enumerate() {
        let r = c.ratio.unwrap_or(1.0);
        let y = 40.0 + row_h * i as f64;
        let (x0, x1) = (x_of(1.0), x_of(r));
        let (left, width) = if x1 >= x0 { (x0, x1 - x0) } else { (x1, x0 - x1) };
        let color = if r >= 1.0 { "#2a9d8f" } else { "#e76f51" };
        let _ = writeln!(s, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", label_w - 6.0, y + 14.0, c.name);
        let _ = writeln!(
            s,
            "<rect x=\"{left}\" y=\"{}\" width=\"{width}\" height=\"{}\" fill=\"{color}\"/>",
            y + 3.0,
            row_h - 6.0
        );
        let _ = writeln!(s, "<text x=\"{}\" y=\"{}\">{r:.2}x</text>", label_w + plot_w + 6.0, y + 14.0);
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_compare_in_the_case_direction() {
        let mut add =
            Case { name: "add_f64_8m_into".into(), higher_is_better: true, strata: Some(9.0), ..Case::default() };
        add.peers.insert("rust_loop".into(), 10.0);
        assert_eq!(target_status(&add), Some((">=0.9x rust_loop".into(), Some(true))));
        add.strata = Some(8.9);
        assert_eq!(target_status(&add).unwrap().1, Some(false));
        let mut gemm =
            Case { name: "gemm_f64_1024_t1".into(), higher_is_better: true, strata: Some(97.0), ..Case::default() };
        assert_eq!(target_status(&gemm).unwrap().1, None);
        gemm.peers.insert("faer".into(), 100.0);
        gemm.peers.insert("numpy".into(), 200.0);
        assert_eq!(target_status(&gemm).unwrap().1, Some(true));
        let tiny = Case { name: "tiny_add_ns".into(), strata: Some(251.0), ..Case::default() };
        assert_eq!(target_status(&tiny), Some(("<=250".into(), Some(false))));
        assert_eq!(target_status(&Case { name: "gather_1m_rows".into(), ..Case::default() }), None);
        let j = to_json(&[tiny]);
        assert!(j.contains("\"target\": \"<=250\", \"target_met\": false"), "{j}");
    }

    #[test]
    fn ratio_uses_the_best_peer_and_ignores_references() {
        let mut c = Case { higher_is_better: true, strata: Some(90.0), ..Case::default() };
        c.peers.insert("faer".into(), 100.0);
        c.peers.insert("openblas".into(), 80.0);
        c.peers.insert("memcpy".into(), 1000.0);
        assert_eq!(ratio(&c), Some(0.9));
        let mut t = Case { higher_is_better: false, strata: Some(200.0), ..Case::default() };
        t.peers.insert("numpy".into(), 1000.0);
        t.peers.insert("jax".into(), 4000.0);
        assert_eq!(ratio(&t), Some(5.0));
        t.peers.clear();
        t.peers.insert("rust_loop".into(), 1.0);
        assert_eq!(ratio(&t), None);
    }

    #[test]
    fn tsv_round_trips_into_json() {
        let dir = std::env::temp_dir().join(format!("xtask-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("r.tsv");
        std::fs::write(
            &p,
            "sum\tGB/s\t1\tstrata\t10\t11\nsum\tGB/s\t1\trust_loop\t12\t12\nsum\tGB/s\t1\tnumpy\t5\t6\n",
        )
        .unwrap();
        let mut cases = read_cases(&p).unwrap();
        cases[0].ratio = ratio(&cases[0]);
        assert_eq!(cases[0].ratio, Some(2.0));
        let j = to_json(&cases);
        assert!(j.contains("\"case\": \"sum\"") && j.contains("\"rust_loop\": 12") && j.contains("\"ratio\": 2"));
        assert!(to_svg(&cases).contains("2.00x"));
        std::fs::write(&p, "bad line\n").unwrap();
        assert!(read_cases(&p).is_err());
        std::fs::write(&p, "sum\tGB/s\t1\tstrata\tten\t11\n").unwrap();
        assert!(read_cases(&p).is_err());
    }
}
