//! The table and the plot drawn from a real run's summary (a `--quick` run on the
//! development machine, cut to a few cases per group): everything fits, every case is
//! accounted for, and the file reads back unchanged.

use xtask::groups::GROUPS;
use xtask::json::Json;
use xtask::summary::{CaseStatus, Summary};
use xtask::{plot, table};

fn fixture() -> Summary {
    let text = include_str!("fixtures/summary-quick.json");
    Summary::from_json(&Json::parse(text).expect("the fixture is JSON")).expect("the fixture is a summary")
}

#[test]
fn the_table_of_a_real_run_fits_and_names_every_case() {
    let s = fixture();
    assert!(s.cases.len() >= 30);
    let t = table::table(&s);
    for line in t.lines() {
        assert!(line.chars().count() <= table::WIDTH, "{} chars: {line}", line.chars().count());
    }
    for c in &s.cases {
        let shown = c.decl.name.chars().take(20).collect::<String>();
        assert!(t.contains(&shown), "{} is missing from the table", c.decl.name);
    }
    for g in GROUPS.iter().filter(|g| s.cases.iter().any(|c| c.decl.group == g.id)) {
        assert!(t.contains(&format!("== {}: ", g.title)), "group {} has no heading", g.id);
    }
    assert!(t.contains("commit ") && t.contains("tmax = 2 threads"), "{t}");
}

#[test]
fn the_plot_of_a_real_run_draws_or_lists_every_case() {
    let s = fixture();
    let svg = plot::svg(&s);
    for c in &s.cases {
        assert!(svg.contains(&c.decl.name), "{} is neither drawn nor listed", c.decl.name);
        if c.comparison().is_some() && c.status() == CaseStatus::Ok {
            assert!(svg.contains(&format!("{} · {}T", c.decl.name, c.decl.threads)), "{} has no bar", c.decl.name);
        }
    }
    assert!(svg.contains("1.00x (parity)") && svg.contains("peers present: "));
    // Every element closes: a crude well-formedness check without an XML parser.
    assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
    assert!(!svg.contains("NaN") && !svg.contains("inf"), "no unprintable figure reaches the plot");
}

#[test]
fn the_summary_reads_back_as_it_was_written() {
    let s = fixture();
    let again = Summary::from_json(&Json::parse(&s.to_json().pretty()).unwrap()).unwrap();
    assert_eq!(again, s);
}
