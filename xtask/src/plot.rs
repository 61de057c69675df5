//! The plot: one horizontal bar per case, grouped like the table, on a log scale of
//! strata's ratio to its best peer with a line at 1.00x; each bar is labelled with that
//! peer and both absolute figures, a whisker spans the ratio of medians to the ratio of
//! best repetitions, bars beyond 1/8x or 8x end in an arrow and say "clamped". The
//! subtitle names the commit, date, machine, threads and peers; cases without a peer and
//! failed cases are listed, not dropped.

use std::fmt::Write as _;

use crate::groups::{self, GROUPS};
use crate::summary::{CaseResult, CaseStatus, Summary};
use crate::table::{fmt_value, wrap};

/// The narrowest plot; wider when a row's label needs it.
const MIN_WIDTH: f64 = 1180.0;
/// Average advance of one character of the 11.5 px label font.
const CHAR_W: f64 = 6.3;
const LABEL_RIGHT: f64 = 270.0;
const PLOT_LEFT: f64 = 285.0;
const PLOT_W: f64 = 420.0;
const TEXT_LEFT: f64 = PLOT_LEFT + PLOT_W + 12.0;
const ROW_H: f64 = 21.0;
/// The scale spans 2^-CLAMP .. 2^CLAMP.
const CLAMP: f64 = 3.0;
const GOOD: &str = "#2a9d8f";
const BAD: &str = "#e76f51";
const INK: &str = "#222";
const GREY: &str = "#666";
const FONT: &str = "DejaVu Sans, Verdana, Arial, sans-serif";

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// x position of a ratio, and whether it had to be clamped.
fn x_of(ratio: f64) -> (f64, bool) {
    let l = ratio.log2();
    let clamped = !(-CLAMP..=CLAMP).contains(&l);
    (PLOT_LEFT + PLOT_W * (l.clamp(-CLAMP, CLAMP) + CLAMP) / (2.0 * CLAMP), clamped)
}

fn text(s: &mut String, x: f64, y: f64, size: f64, attrs: &str, body: &str) {
    let _ = writeln!(s, r#"<text x="{x:.1}" y="{y:.1}" font-size="{size}" {attrs}>{}</text>"#, esc(body));
}

fn tick_label(r: f64) -> String {
    if r < 1.0 { format!("1/{}x", (1.0 / r).round()) } else { format!("{r}x") }
}

/// The subtitle lines.
fn subtitle(s: &Summary) -> Vec<String> {
    let m = |k: &str| s.meta.get(k).cloned();
    let mut facts = Vec::new();
    facts.extend(m("commit").map(|c| format!("commit {c}")));
    facts.extend(m("date"));
    match (m("cpu_model"), m("allowed_cpus")) {
        (Some(cpu), Some(n)) => facts.push(format!("{cpu} ({n} CPUs)")),
        (Some(cpu), None) => facts.push(cpu),
        _ => {}
    }
    facts.extend(m("threads").map(|t| format!("multi-threaded cases at {t} threads")));
    if m("quick").as_deref() == Some("true") {
        facts.push("--quick run".into());
    }
    let mut lines = vec![facts.join(" · ")];
    let present = s.present_peers();
    lines.push(format!("peers present: {}", if present.is_empty() { "none".into() } else { present.join(", ") }));
    let absent = s.absent_peers();
    if !absent.is_empty() {
        lines.push(format!("absent: {}", absent.join("; ")));
    }
    lines
}

/// Draws the summary as an SVG document.
pub fn svg(s: &Summary) -> String {
    let longest = s.cases.iter().filter_map(|c| c.comparison().map(|_| row_label(s, c).chars().count())).max();
    let width = longest.map_or(MIN_WIDTH, |n| (TEXT_LEFT + CHAR_W * n as f64 + 20.0).max(MIN_WIDTH));
    // 12 px DejaVu Sans advances about 7 px per character.
    let chars_per_line = ((width - 40.0) / 7.0) as usize;
    let mut body = String::new();
    let mut y = 30.0;
    text(&mut body, 20.0, y, 19.0, r#"font-weight="bold""#, "strata against its best peer, case by case");
    y += 20.0;
    for line in subtitle(s) {
        for l in wrap(&line, chars_per_line, 0) {
            text(&mut body, 20.0, y, 12.0, &format!(r#"fill="{GREY}""#), &l);
            y += 15.0;
        }
    }
    y += 4.0;
    // Legend.
    let lx = 20.0;
    let _ = writeln!(body, r#"<rect x="{lx}" y="{:.1}" width="14" height="10" fill="{GOOD}"/>"#, y - 9.0);
    text(&mut body, lx + 18.0, y, 12.0, "", "strata faster");
    let _ = writeln!(body, r#"<rect x="{:.1}" y="{:.1}" width="14" height="10" fill="{BAD}"/>"#, lx + 120.0, y - 9.0);
    text(&mut body, lx + 138.0, y, 12.0, "", "strata slower");
    let wx = lx + 250.0;
    let _ = writeln!(
        body,
        r#"<line x1="{wx}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{INK}" stroke-width="1.5"/>"#,
        y - 4.0,
        wx + 24.0,
        y - 4.0
    );
    text(
        &mut body,
        wx + 30.0,
        y,
        12.0,
        "",
        "whisker: ratio of medians to ratio of best repetitions · bar length: ratio of medians (log scale) · \
         ▶ clamped at 1/8x or 8x",
    );
    y += 22.0;

    let axis_top = y;
    draw_ticks(&mut body, y);
    y += 10.0;

    let mut no_peer: Vec<String> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    let mut rows_drawn = 0usize;
    for g in GROUPS.iter() {
        let cases: Vec<&CaseResult> = s.group_cases(g.id).collect();
        if cases.is_empty() {
            continue;
        }
        let drawn: Vec<&CaseResult> = cases
            .iter()
            .copied()
            .filter(|c| {
                let keep = c.comparison().is_some() || c.status() == CaseStatus::Failed;
                if !keep && c.status() == CaseStatus::Ok && c.decl.group != "bandwidth" {
                    no_peer.push(no_peer_entry(s, c));
                }
                if c.status() == CaseStatus::NotRun {
                    failed.push(format!("{} (not run)", c.decl.name));
                }
                keep
            })
            .collect();
        if drawn.is_empty() {
            continue;
        }
        y += 8.0;
        let mut units: Vec<String> = Vec::new();
        for c in &drawn {
            let u = groups::unit_words(&c.decl.unit, c.decl.higher_is_better);
            if !units.contains(&u) {
                units.push(u);
            }
        }
        let _ = writeln!(
            body,
            r##"<rect x="10" y="{:.1}" width="{:.1}" height="20" fill="#eef2f5"/>"##,
            y - 14.0,
            width - 20.0
        );
        text(&mut body, 16.0, y, 13.0, r#"font-weight="bold""#, g.title);
        text(
            &mut body,
            16.0 + 9.5 * g.title.chars().count() as f64 + 12.0,
            y,
            12.0,
            &format!(r#"fill="{GREY}""#),
            &format!("{} · {}", g.about, units.join("; ")),
        );
        y += 14.0;
        for c in drawn {
            draw_row(&mut body, s, c, y, &mut failed);
            y += ROW_H;
            rows_drawn += 1;
        }
    }
    let axis_bottom = y;
    if rows_drawn == 0 {
        text(&mut body, PLOT_LEFT, y + 10.0, 13.0, "", "no case has a peer figure in this run");
        y += 20.0;
    }
    y += 4.0;
    draw_ticks(&mut body, y + 10.0);
    y += 34.0;

    let mut footer: Vec<(String, &str)> = Vec::new();
    if !failed.is_empty() {
        footer.push((format!("Failed or not run ({}): {}", failed.len(), failed.join("; ")), BAD));
    }
    if !no_peer.is_empty() {
        footer.push((format!("Without a peer figure in this run ({}): {}", no_peer.len(), no_peer.join("; ")), INK));
    }
    let refs: Vec<String> = s
        .group_cases("bandwidth")
        .filter_map(|c| {
            Summary::reference_figure(c).map(|f| format!("{} {} {}", c.decl.name, fmt_value(f.median), c.decl.unit))
        })
        .collect();
    if !refs.is_empty() {
        footer.push((format!("Bandwidth references measured in this run: {}", refs.join(", ")), INK));
    }
    for n in &s.notes {
        footer.push((format!("Note: {n}"), GREY));
    }
    for (line, color) in footer {
        for l in wrap(&line, chars_per_line, 0) {
            text(&mut body, 20.0, y, 12.0, &format!(r#"fill="{color}""#), &l);
            y += 15.0;
        }
        y += 4.0;
    }
    let height = y + 10.0;

    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="{FONT}" fill="{INK}">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    // Grid lines first, under the bars.
    for k in -3..=3 {
        let (x, _) = x_of(2f64.powi(k));
        let (stroke, w) = if k == 0 { (INK, 1.6) } else { ("#d0d0d0", 1.0) };
        let _ = writeln!(
            out,
            r#"<line x1="{x:.1}" y1="{axis_top:.1}" x2="{x:.1}" y2="{:.1}" stroke="{stroke}" stroke-width="{w}"/>"#,
            axis_bottom + 4.0
        );
    }
    out.push_str(&body);
    out.push_str("</svg>\n");
    out
}

fn draw_ticks(body: &mut String, y: f64) {
    for k in -3..=3 {
        let r = 2f64.powi(k);
        let (x, _) = x_of(r);
        let label = if k == 0 { "1.00x (parity)".to_string() } else { tick_label(r) };
        let weight = if k == 0 { r#"font-weight="bold""# } else { "" };
        text(body, x, y, 11.0, &format!(r#"text-anchor="middle" {weight}"#), &label);
    }
}

fn no_peer_entry(s: &Summary, c: &CaseResult) -> String {
    let absent: Vec<&str> = c.decl.peers.iter().filter(|p| s.absent(p)).map(|p| groups::spoken(p)).collect();
    let fig = c.strata().map(|f| format!(" {} {}", fmt_value(f.median), c.decl.unit)).unwrap_or_default();
    if c.decl.peers.is_empty() {
        format!("{}{fig} (no peer does this)", c.decl.name)
    } else if !absent.is_empty() {
        format!("{}{fig} ({} absent)", c.decl.name, absent.join(", "))
    } else {
        format!("{}{fig} (peers not measured)", c.decl.name)
    }
}

/// The text right of a bar: ratio, peer, both figures, and what else the row must say.
fn row_label(s: &Summary, c: &CaseResult) -> String {
    let Some(cmp) = c.comparison() else {
        return String::new();
    };
    let fig = |f: Option<&crate::summary::Figure>| {
        f.map_or(String::new(), |f| format!("{} (best {})", fmt_value(f.median), fmt_value(f.best)))
    };
    let mut label = format!(
        "{:.2}x vs {}: {} vs {} {}",
        cmp.ratio,
        groups::spoken(&cmp.peer),
        fig(c.figures.get("strata")),
        fig(c.figures.get(&cmp.peer)),
        c.decl.unit
    );
    if x_of(cmp.ratio).1 {
        label.push_str(" · clamped");
    }
    if let Some((_, st)) = c.target() {
        label.push_str(&format!(" · target {}", if st == crate::target::Status::Unknown { "n/a" } else { st.word() }));
    }
    if let Some(f) = s.fraction_of_limit(c) {
        label.push_str(&format!(" · {:.0}% of bandwidth", 100.0 * f));
    }
    if c.status() == CaseStatus::Failed {
        label.push_str(" · FAILED (see below)");
    }
    label
}

fn draw_row(body: &mut String, s: &Summary, c: &CaseResult, y: f64, failed: &mut Vec<String>) {
    let label = format!("{} · {}T", c.decl.name, c.decl.threads);
    let mid = y - 4.0;
    if c.status() == CaseStatus::Failed {
        failed.push(format!("{}: {}", c.decl.name, c.failure_text()));
    }
    let Some(cmp) = c.comparison() else {
        text(body, LABEL_RIGHT, y, 12.0, &format!(r#"text-anchor="end" fill="{BAD}""#), &label);
        let mut msg = format!("FAILED: {}", c.failure_text());
        if msg.chars().count() > 110 {
            msg = msg.chars().take(108).collect::<String>() + "…";
        }
        text(body, PLOT_LEFT + 4.0, y, 12.0, &format!(r#"fill="{BAD}""#), &msg);
        return;
    };
    let color_label = if c.status() == CaseStatus::Failed { BAD } else { INK };
    text(body, LABEL_RIGHT, y, 12.0, &format!(r#"text-anchor="end" fill="{color_label}""#), &label);
    let (x1, _) = x_of(1.0);
    let (xr, clamped) = x_of(cmp.ratio);
    let color = if cmp.ratio >= 1.0 { GOOD } else { BAD };
    let (left, w) = if xr >= x1 { (x1, xr - x1) } else { (xr, x1 - xr) };
    let _ = writeln!(
        body,
        r#"<rect x="{left:.1}" y="{:.1}" width="{:.1}" height="13" fill="{color}" fill-opacity="0.85"/>"#,
        mid - 6.5,
        w.max(1.0)
    );
    if clamped {
        let dir = if cmp.ratio >= 1.0 { 1.0 } else { -1.0 };
        let tip = xr + dir * 9.0;
        let _ = writeln!(
            body,
            r#"<polygon points="{xr:.1},{:.1} {tip:.1},{mid:.1} {xr:.1},{:.1}" fill="{color}"/>"#,
            mid - 7.0,
            mid + 7.0
        );
    }
    // Whisker: from the ratio of medians to the ratio of bests.
    let (xb, _) = x_of(cmp.ratio_best);
    let (a, b) = if xb < xr { (xb, xr) } else { (xr, xb) };
    if b - a >= 1.0 {
        let _ = writeln!(
            body,
            r#"<path d="M{a:.1},{mid:.1} H{b:.1} M{a:.1},{:.1} V{:.1} M{b:.1},{:.1} V{:.1}" stroke="{INK}" stroke-width="1.3" fill="none"/>"#,
            mid - 4.0,
            mid + 4.0,
            mid - 4.0,
            mid + 4.0
        );
    }
    let label = row_label(s, c);
    text(body, TEXT_LEFT, y, 11.5, "", &label);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::tests::fixture;

    #[test]
    fn the_plot_labels_bars_and_lists_what_it_cannot_draw() {
        let s = fixture();
        let svg = svg(&s);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("commit abc1234") && svg.contains("AMD EPYC 9R14 (2 CPUs)"), "subtitle");
        assert!(svg.contains("multi-threaded cases at 2 threads"));
        assert!(svg.contains("peers present: faer 0.24.0, numpy 2.4.6"));
        assert!(svg.contains("absent: JAX (not importable)"));
        assert!(svg.contains("1.00x (parity)"));
        assert!(svg.contains("0.93x vs numpy: 71.70 (best 74.00) vs 76.90 (best 78.00) GFLOP/s"), "{svg}");
        assert!(svg.contains("target met"));
        assert!(svg.contains("90% of bandwidth"));
        assert!(svg.contains("Without a peer figure in this run (1): lonely_t1 5.000 GFLOP/s (JAX absent)"), "{svg}");
        assert!(svg.contains("gemm_c64_1024_tmax: dot_general_into: out of memory"));
        assert!(svg.contains("never_ran (not run)"));
        assert!(svg.contains("Bandwidth references measured in this run: stream_triad 30.00 GB/s"));
        // Every text is escaped: the document parses as XML-ish text without raw '&'.
        assert!(!svg.contains("& "));
    }

    #[test]
    fn ratios_beyond_the_scale_are_clamped_and_marked() {
        assert_eq!(x_of(1.0), (PLOT_LEFT + PLOT_W / 2.0, false));
        let (x, c) = x_of(100.0);
        assert!(c && (x - (PLOT_LEFT + PLOT_W)).abs() < 1e-9);
        let (x, c) = x_of(0.01);
        assert!(c && (x - PLOT_LEFT).abs() < 1e-9);
        assert!(!x_of(7.9).1 && !x_of(0.13).1);
        let mut s = fixture();
        let tiny = s.cases.iter_mut().find(|c| c.decl.name == "tiny_add_ns").unwrap();
        tiny.figures.get_mut("numpy").unwrap().median = 90_000.0;
        let svg = svg(&s);
        assert!(svg.contains("1000.00x vs numpy") && svg.contains("· clamped"), "{svg}");
        assert!(svg.contains("<polygon"));
    }
}
