//! The terminal table: one block per group, at most [`WIDTH`] columns, units in each
//! group's heading, the best peer marked, targets and failures in words under their row.

use std::fmt::Write as _;

use crate::groups::{self, GROUPS};
use crate::summary::{CaseResult, CaseStatus, Summary};

/// The widest line the table prints.
pub const WIDTH: usize = 100;
/// Width of a figure column.
const CELL: usize = 8;
/// Case names longer than this are cut (with `~`) so that rows fit.
const NAME_MAX: usize = 28;

/// A figure in at most `CELL` characters, about four significant digits.
pub fn fmt_value(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "?".into()
    } else if a >= 1e7 {
        format!("{v:.2e}")
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Splits `text` into lines of at most `width` characters after `indent` spaces.
pub fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    let room = width.saturating_sub(indent).max(20);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word = word.to_string();
        while word.chars().count() > room {
            let head: String = word.chars().take(room).collect();
            word = word.chars().skip(room).collect();
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            lines.push(head);
        }
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > room {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines.into_iter().map(|l| format!("{}{l}", " ".repeat(indent))).collect()
}

fn short_name(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        name.to_string()
    } else {
        let head: String = name.chars().take(max.saturating_sub(1)).collect();
        format!("{head}~")
    }
}

/// The lines above the groups: the run, the peers, how to read the ratio.
pub fn header(s: &Summary) -> Vec<String> {
    let m = |k: &str| s.meta.get(k).cloned();
    let mut facts = vec!["strata bench".to_string()];
    facts.extend(m("commit").map(|c| format!("commit {c}")));
    facts.extend(m("date"));
    match (m("cpu_model"), m("allowed_cpus")) {
        (Some(cpu), Some(n)) => facts.push(format!("{cpu}, {n} CPUs")),
        (Some(cpu), None) => facts.push(cpu),
        _ => {}
    }
    facts.extend(m("threads").map(|t| format!("tmax = {t} threads")));
    if m("quick").as_deref() == Some("true") {
        facts.push("--quick".into());
    }
    let mut out = wrap(&facts.join(" · "), WIDTH, 0);
    let present = s.present_peers();
    out.extend(wrap(
        &format!("peers: {}", if present.is_empty() { "none".into() } else { present.join(", ") }),
        WIDTH,
        0,
    ));
    let absent = s.absent_peers();
    if !absent.is_empty() {
        out.extend(wrap(&format!("absent (their cells read `absent`): {}", absent.join("; ")), WIDTH, 0));
    }
    out.extend(wrap(
        "ratio = strata over the best peer (the figure marked *), medians of repetitions that alternate \
         between the parties; above 1.00x strata is better. loop, memcpy, stream and strata@1t are \
         references, not peers. 'of STREAM' = strata as a share of this run's STREAM-like bandwidth (the case's limit).",
        WIDTH,
        0,
    ));
    out
}

/// The whole table.
pub fn table(s: &Summary) -> String {
    let mut out = String::new();
    for l in header(s) {
        let _ = writeln!(out, "{l}");
    }
    for g in GROUPS.iter() {
        let cases: Vec<&CaseResult> = s.group_cases(g.id).collect();
        if cases.is_empty() {
            continue;
        }
        out.push('\n');
        for l in group_block(s, g.title, g.about, &cases) {
            let _ = writeln!(out, "{l}");
        }
    }
    let unknown: Vec<&CaseResult> = s.cases.iter().filter(|c| groups::group(&c.decl.group).is_none()).collect();
    if !unknown.is_empty() {
        out.push('\n');
        for l in group_block(s, "Other", "cases of groups the table does not know", &unknown) {
            let _ = writeln!(out, "{l}");
        }
    }
    let no_peer: Vec<&str> = s
        .cases
        .iter()
        .filter(|c| c.status() == CaseStatus::Ok && c.comparison().is_none() && !groups::without_peers(&c.decl.group))
        .map(|c| c.decl.name.as_str())
        .collect();
    if !no_peer.is_empty() {
        out.push('\n');
        for l in wrap(&format!("without a peer figure in this run: {}", no_peer.join(", ")), WIDTH, 0) {
            let _ = writeln!(out, "{l}");
        }
    }
    let failed = s.failed();
    if !failed.is_empty() {
        let names: Vec<&str> = failed.iter().map(|c| c.decl.name.as_str()).collect();
        for l in wrap(&format!("FAILED or not run ({}): {}", failed.len(), names.join(", ")), WIDTH, 0) {
            let _ = writeln!(out, "{l}");
        }
    }
    for n in &s.notes {
        for l in wrap(&format!("note: {n}"), WIDTH, 0) {
            let _ = writeln!(out, "{l}");
        }
    }
    out
}

/// The lines of one group.
fn group_block(s: &Summary, title: &str, about: &str, cases: &[&CaseResult]) -> Vec<String> {
    // Columns: the group's peers, then its references, in the usual order.
    let mut parties: Vec<&str> = Vec::new();
    for c in cases {
        for p in c.decl.peers.iter().chain(&c.decl.references) {
            if !parties.contains(&p.as_str()) {
                parties.push(p);
            }
        }
    }
    parties.sort_by_key(|p| groups::order(p));
    let with_limit = cases.iter().any(|c| c.decl.limit.is_some());
    // The name column gets what the figure columns leave of the width.
    let figures_w = 4 + (1 + CELL) * (1 + parties.len()) + 7 + if with_limit { 10 } else { 0 };
    let name_max = WIDTH.saturating_sub(figures_w).clamp(12, NAME_MAX);
    let name_w = cases.iter().map(|c| short_name(&c.decl.name, name_max).chars().count()).max().unwrap_or(4).max(4);

    let mut units: Vec<(String, bool)> = Vec::new();
    for c in cases {
        let u = (c.decl.unit.clone(), c.decl.higher_is_better);
        if !units.contains(&u) {
            units.push(u);
        }
    }
    let unit_text: Vec<String> = units.iter().map(|(u, h)| groups::unit_words(u, *h)).collect();
    let mut lines = wrap(&format!("== {title}: {about} · {} ==", unit_text.join("; ")), WIDTH, 0);

    let mut head = format!("{:<name_w$} {:>3} {:>CELL$}", "case", "thr", "strata");
    for p in &parties {
        let _ = write!(head, " {:>CELL$}", groups::header(p));
    }
    let _ = write!(head, " {:>6}", "ratio");
    if with_limit {
        let _ = write!(head, " {:>9}", "of STREAM");
    }
    lines.push(head);

    for c in cases {
        let mut row = format!("{:<name_w$} {:>3}", short_name(&c.decl.name, name_w), c.decl.threads);
        let status = c.status();
        if status == CaseStatus::NotRun {
            let _ = write!(row, " {:>CELL$}", "not run");
            lines.push(row);
            continue;
        }
        if status == CaseStatus::Failed && c.strata().is_none() {
            let _ = write!(row, " {:>CELL$}", "FAILED");
            lines.push(row);
            lines.extend(wrap(&format!("failed: {}", c.failure_text()), WIDTH, 2));
            continue;
        }
        let cmp = c.comparison();
        let _ = write!(row, " {:>CELL$}", c.strata().map_or("-".to_string(), |f| fmt_value(f.median)));
        for p in &parties {
            let declared = c.decl.peers.iter().chain(&c.decl.references).any(|x| x == p);
            let cell = match c.figures.get(*p) {
                Some(f) => {
                    let mut v = fmt_value(f.median);
                    if cmp.as_ref().is_some_and(|x| x.peer == *p) {
                        v = format!("*{v}");
                    }
                    if c.checks.get(*p).is_some_and(|ch| !ch.ok()) {
                        v.push('!');
                    }
                    v
                }
                None if !declared => String::new(),
                None if s.absent(p) => "absent".into(),
                None if c.failures.contains_key(*p) => "failed".into(),
                None => "-".into(),
            };
            let _ = write!(row, " {cell:>CELL$}");
        }
        let _ = write!(row, " {:>6}", cmp.as_ref().map_or("-".to_string(), |x| format!("{:.2}x", x.ratio)));
        if with_limit {
            let lim = s.fraction_of_limit(c).map_or(String::new(), |f| format!("{:.0}%", 100.0 * f));
            let _ = write!(row, " {lim:>9}");
        }
        lines.push(row.trim_end().to_string());
        if let Some((words, st)) = c.target() {
            lines.extend(wrap(&format!("target: {words}: {}", st.word()), WIDTH, 2));
        }
        if status == CaseStatus::Failed {
            lines.extend(wrap(&format!("FAILED: {}", c.failure_text()), WIDTH, 2));
        }
        for (who, msg) in c.failures.iter().filter(|(w, _)| *w != "strata") {
            lines.extend(wrap(&format!("{who} failed: {msg}"), WIDTH, 2));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Record;
    use crate::summary::tests::fixture;

    #[test]
    fn figures_fit_their_cells() {
        for v in [0.0012, 1.5, 12.345, 123.45, 1234.5, 341935.0, 1.2e9, -3.5] {
            assert!(fmt_value(v).len() <= CELL, "{v} -> {}", fmt_value(v));
        }
        assert_eq!(fmt_value(71.66), "71.66");
        assert_eq!(fmt_value(1234.5), "1234");
    }

    #[test]
    fn wrapping_keeps_every_line_inside_the_width() {
        let text = "word ".repeat(60) + &"x".repeat(250);
        for l in wrap(&text, 40, 2) {
            assert!(l.chars().count() <= 40 && l.starts_with("  "), "{l}");
        }
        assert!(wrap("", 40, 0).is_empty());
    }

    #[test]
    fn the_table_fits_100_columns_and_says_what_happened() {
        let mut s = fixture();
        // The widest group the suite declares: five parties, references and a limit.
        let wide = "case\tsum_f64_64m_tmax_widest\tstreaming\tGB/s\t1\t2\tref:rust_loop:0.95&ref:strata_1t:1\t\
                    ndarray,numpy,jax\trust_loop,strata_1t\tstream_triad\n\
                    value\tsum_f64_64m_tmax_widest\tstrata\t34567\t35000\n\
                    value\tsum_f64_64m_tmax_widest\tndarray\t17.8\t18\n\
                    value\tsum_f64_64m_tmax_widest\tnumpy\t28.4\t29\n\
                    value\tsum_f64_64m_tmax_widest\tjax\t50.4\t51\n\
                    value\tsum_f64_64m_tmax_widest\trust_loop\t41\t42\n\
                    value\tsum_f64_64m_tmax_widest\tstrata_1t\t30\t31\n\
                    done\tsum_f64_64m_tmax_widest\t1\n";
        s.absorb(Record::parse_all(wide, "wide").unwrap());
        // An einsum row: four Python peers, one of them not timed (its reason under the row).
        let einsum = "case\teinsum_mpo_env_chi96_d2_w5_c64_tmax\teinsum\tGFLOP/s\t1\t2\tbest:*:1\t\
                      numpy-einsum,numpy-einsum-opt,opt_einsum,jax\t-\t-\n\
                      value\teinsum_mpo_env_chi96_d2_w5_c64_tmax\tstrata\t25.1\t26\n\
                      value\teinsum_mpo_env_chi96_d2_w5_c64_tmax\tnumpy-einsum\t20.5\t21\n\
                      fail\teinsum_mpo_env_chi96_d2_w5_c64_tmax\tnumpy-einsum-opt\tnot timed: under numpy's \
                      default memory limit its 'optimal' path costs 912x the flops of the unbounded one (naive loops)\n\
                      value\teinsum_mpo_env_chi96_d2_w5_c64_tmax\topt_einsum\t19.2\t20\n\
                      value\teinsum_mpo_env_chi96_d2_w5_c64_tmax\tjax\t12.4\t13\n\
                      done\teinsum_mpo_env_chi96_d2_w5_c64_tmax\t3\n";
        s.absorb(Record::parse_all(einsum, "einsum").unwrap());
        let t = table(&s);
        for l in t.lines() {
            assert!(l.chars().count() <= WIDTH, "{} chars: {l}", l.chars().count());
        }
        assert!(t.contains("== GEMM: dense matrix products · GFLOP/s, higher is better =="), "{t}");
        assert!(t.contains("*76.90"), "the best peer is marked:\n{t}");
        assert!(t.contains("target: at least 0.97x the best of faer and OpenBLAS: met"), "{t}");
        assert!(t.contains("FAILED"), "{t}");
        assert!(t.contains("failed: dot_general_into: out of memory"), "{t}");
        assert!(t.contains("absent"), "the absent JAX is marked:\n{t}");
        assert!(t.contains("not run"), "{t}");
        assert!(t.contains("without a peer figure in this run: lonely_t1"), "{t}");
        assert!(t.contains("90%"), "the share of the bandwidth limit:\n{t}");
        assert!(t.contains("30.00!"), "the disagreeing peer is flagged:\n{t}");
        let head = t.lines().find(|l| l.contains("np.einopt")).unwrap_or_default();
        assert!(head.contains("np.einsum") && head.contains("opt_ein") && head.contains("jax"), "{t}");
        let row = t.lines().find(|l| l.starts_with("einsum_mpo_env")).unwrap_or_default();
        assert!(row.contains("25.10") && row.contains("failed") && row.contains("1.22x"), "{t}");
        assert!(t.contains("numpy-einsum-opt failed: not timed"), "{t}");
        assert!(t.contains("commit abc1234") && t.contains("AMD EPYC 9R14, 2 CPUs"), "{t}");
    }

    #[test]
    fn a_distributed_row_shows_its_efficiency_and_target_without_asking_for_a_peer() {
        let mut s = fixture();
        let dist = "case\tdist_gemm_f64_4096\tdistributed\tx\t1\t2\tmin:0.9\t-\t-\t-\n\
                    check\tdist_gemm_f64_4096\tstrata\t3e-15\t1e-10\n\
                    value\tdist_gemm_f64_4096\tstrata\t0.93\t0.95\n\
                    note\tdist_gemm_f64_4096: 2 ranks x 1 thread 12.1 s against 1 rank x 2 threads 11.3 s\n\
                    done\tdist_gemm_f64_4096\t80\n";
        s.absorb(Record::parse_all(dist, "dist").unwrap());
        let t = table(&s);
        assert!(
            t.contains("== Distributed (MPI): strong scaling over MPI ranks · speed-up, higher is better =="),
            "{t}"
        );
        let row = t.lines().find(|l| l.starts_with("dist_gemm_f64_4096")).unwrap();
        assert!(row.contains("0.930") && row.trim_end().ends_with('-'), "{row}");
        assert!(t.contains("target: at least 0.9: met"), "{t}");
        assert!(t.contains("note: dist_gemm_f64_4096: 2 ranks x 1 thread"), "{t}");
        let no_peer = t.lines().find(|l| l.starts_with("without a peer figure")).unwrap_or("");
        assert!(!no_peer.contains("dist_gemm"), "a peerless group by design is not listed: {no_peer}");
        for l in t.lines() {
            assert!(l.chars().count() <= WIDTH, "{l}");
        }
    }
}
