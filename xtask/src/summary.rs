//! One bench run as data: every case with every party's figures, failures and result
//! checks, the peers present (with versions), the machine and the run. Built from the
//! measuring processes' records, written as `summary.json`, read back by
//! `cargo xtask report`; the table and the plot are drawn from it alone.

use std::collections::BTreeMap;

use crate::groups;
use crate::json::Json;
use crate::record::{CaseDecl, Record};
use crate::target::{self, Status};

/// A party's median and best figure in the case's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figure {
    /// Median over the repetitions.
    pub median: f64,
    /// The best repetition.
    pub best: f64,
}

/// The untimed result check of one party.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Check {
    /// Largest difference relative to the reference's largest magnitude.
    pub rel_err: f64,
    /// Its tolerance.
    pub tol: f64,
}

impl Check {
    /// Whether the result agrees (NaN never does).
    pub fn ok(&self) -> bool {
        self.rel_err <= self.tol
    }
}

/// A peer of the run: present (with its version) or absent (with the reason).
#[derive(Clone, Debug, PartialEq)]
pub struct PeerInfo {
    /// Whether it was measured in this run.
    pub present: bool,
    /// Its version, when known.
    pub version: Option<String>,
    /// Why it is absent, or how it was found.
    pub note: Option<String>,
}

/// One case: its declaration and everything measured for it.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseResult {
    /// What the case is.
    pub decl: CaseDecl,
    /// Figures by party (`strata` included).
    pub figures: BTreeMap<String, Figure>,
    /// Failures by party (`strata`: the case itself failed).
    pub failures: BTreeMap<String, String>,
    /// Result checks by party.
    pub checks: BTreeMap<String, Check>,
    /// Wall time of the case, when it finished.
    pub seconds: Option<f64>,
}

/// How a case came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseStatus {
    /// strata was measured and its result agrees with every check.
    Ok,
    /// strata could not be measured, or its result or a peer's disagrees.
    Failed,
    /// It never ran (the run stopped before it).
    NotRun,
}

/// The comparison of strata with its best peer.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The peer with the best median.
    pub peer: String,
    /// strata against it on medians (> 1: strata better).
    pub ratio: f64,
    /// The same on the best repetitions.
    pub ratio_best: f64,
}

impl CaseResult {
    /// A case with nothing measured yet.
    pub fn new(decl: CaseDecl) -> Self {
        CaseResult { decl, figures: BTreeMap::new(), failures: BTreeMap::new(), checks: BTreeMap::new(), seconds: None }
    }

    /// strata's figure.
    pub fn strata(&self) -> Option<Figure> {
        self.figures.get("strata").copied()
    }

    /// Parties whose check failed.
    pub fn disagreeing(&self) -> Vec<&str> {
        self.checks.iter().filter(|(_, c)| !c.ok()).map(|(w, _)| w.as_str()).collect()
    }

    /// How the case came out.
    pub fn status(&self) -> CaseStatus {
        if self.failures.contains_key("strata")
            || self.checks.get("strata").is_some_and(|c| !c.ok())
            || (!self.disagreeing().is_empty())
        {
            CaseStatus::Failed
        } else if self.strata().is_some() || (self.decl.peers.is_empty() && !self.figures.is_empty()) {
            // A reference case (no peers) is measured when its reference is.
            CaseStatus::Ok
        } else if self.seconds.is_some() {
            CaseStatus::Failed
        } else {
            CaseStatus::NotRun
        }
    }

    /// Why the case failed, in one sentence (empty when it did not).
    pub fn failure_text(&self) -> String {
        let mut parts = Vec::new();
        if let Some(m) = self.failures.get("strata") {
            parts.push(m.clone());
        }
        for who in self.disagreeing() {
            let c = self.checks[who];
            let (whose, reference) = if who == "strata" {
                ("strata's result".to_string(), "the reference")
            } else {
                (format!("{who}'s result"), "strata's")
            };
            parts.push(format!("{whose} differs from {reference} by {:.1e} (tolerance {:.0e})", c.rel_err, c.tol));
        }
        if parts.is_empty() && self.status() == CaseStatus::Failed {
            parts.push("finished without a strata figure".into());
        }
        parts.join("; ")
    }

    /// Peers' medians that count for the ratio (measured, result not disagreeing).
    fn peer_medians(&self) -> impl Iterator<Item = (&str, Figure)> {
        self.decl
            .peers
            .iter()
            .filter(|p| self.checks.get(p.as_str()).is_none_or(|c| c.ok()))
            .filter_map(|p| self.figures.get(p).map(|f| (p.as_str(), *f)))
    }

    /// strata against its best peer, when both were measured.
    pub fn comparison(&self) -> Option<Comparison> {
        let s = self.strata()?;
        let hib = self.decl.higher_is_better;
        let (peer, f) = self.peer_medians().fold(None, |best: Option<(&str, Figure)>, (p, f)| match best {
            Some((_, b)) if (hib && b.median >= f.median) || (!hib && b.median <= f.median) => best,
            _ => Some((p, f)),
        })?;
        let r = |a: f64, b: f64| if hib { a / b } else { b / a };
        let (ratio, ratio_best) = (r(s.median, f.median), r(s.best, f.best));
        (ratio.is_finite() && ratio > 0.0).then(|| Comparison {
            peer: peer.to_string(),
            ratio,
            ratio_best: if ratio_best.is_finite() { ratio_best } else { ratio },
        })
    }

    /// Medians of every party but strata.
    pub fn other_medians(&self) -> BTreeMap<String, f64> {
        self.figures.iter().filter(|(w, _)| *w != "strata").map(|(w, f)| (w.clone(), f.median)).collect()
    }

    /// The target in words and how it stands, when the case has one.
    pub fn target(&self) -> Option<(String, Status)> {
        let spec = self.decl.target.as_deref()?;
        let clauses = match target::parse(spec) {
            Ok(c) => c,
            Err(e) => return Some((e, Status::Unknown)),
        };
        let others = self.other_medians();
        let fig = target::Figures {
            strata: self.strata().map(|f| f.median),
            others: &others,
            peers: &self.decl.peers,
            higher_is_better: self.decl.higher_is_better,
        };
        Some((target::words(&clauses, &self.decl.unit), target::judge(&clauses, &fig)))
    }
}

/// A whole run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Facts about the run: `commit`, `date`, `cpu_model`, `allowed_cpus`, `threads`,
    /// `quick`, `command`.
    pub meta: BTreeMap<String, String>,
    /// Every peer the bench knows, present or not.
    pub peers: BTreeMap<String, PeerInfo>,
    /// The cases, in the order they were declared.
    pub cases: Vec<CaseResult>,
    /// Notes for the reader.
    pub notes: Vec<String>,
}

impl Summary {
    /// Folds records into the summary: declarations add cases, the rest attach to them.
    /// Records for undeclared cases are kept as a note (a peer script out of step).
    pub fn absorb(&mut self, records: Vec<Record>) {
        for r in records {
            match r {
                Record::Case(d) => {
                    if !self.cases.iter().any(|c| c.decl.name == d.name) {
                        self.cases.push(CaseResult::new(d));
                    }
                }
                Record::Info { key, value } => {
                    if let Some(who) = key.strip_prefix("version:") {
                        let p = self.peer(who);
                        p.present = true;
                        p.version = Some(value);
                    } else if let Some(who) = key.strip_prefix("absent:") {
                        let p = self.peer(who);
                        p.present = false;
                        p.note = Some(value);
                    } else {
                        self.meta.insert(key, value);
                    }
                }
                Record::Note(n) => {
                    if !self.notes.contains(&n) {
                        self.notes.push(n)
                    }
                }
                Record::Value { case, who, median, best } => self.with_case(&case, |c| {
                    c.figures.insert(who, Figure { median, best });
                }),
                Record::Fail { case, who, message } => self.with_case(&case, |c| drop(c.failures.insert(who, message))),
                Record::Check { case, who, rel_err, tol } => self.with_case(&case, |c| {
                    c.checks.insert(who, Check { rel_err, tol });
                }),
                Record::Done { case, seconds } => self.with_case(&case, |c| c.seconds = Some(seconds)),
            }
        }
    }

    fn peer(&mut self, who: &str) -> &mut PeerInfo {
        self.peers.entry(who.to_string()).or_insert(PeerInfo { present: false, version: None, note: None })
    }

    fn with_case(&mut self, name: &str, f: impl FnOnce(&mut CaseResult)) {
        match self.cases.iter_mut().find(|c| c.decl.name == name) {
            Some(c) => f(c),
            None => {
                let n = format!("records for `{name}`, which no runner declared, were ignored");
                if !self.notes.contains(&n) {
                    self.notes.push(n);
                }
            }
        }
    }

    /// The case with this name.
    pub fn case(&self, name: &str) -> Option<&CaseResult> {
        self.cases.iter().find(|c| c.decl.name == name)
    }

    /// The figure of a reference case: strata's, or else its first reference's.
    pub fn reference_figure(c: &CaseResult) -> Option<Figure> {
        c.strata().or_else(|| c.decl.references.first().and_then(|r| c.figures.get(r).copied()))
    }

    /// strata's median as a fraction of its limit case's figure (memory-bound cases).
    pub fn fraction_of_limit(&self, c: &CaseResult) -> Option<f64> {
        let limit = Summary::reference_figure(self.case(c.decl.limit.as_deref()?)?)?.median;
        let s = c.strata()?.median;
        (limit > 0.0).then_some(s / limit)
    }

    /// Whether a peer is known to be absent in this run.
    pub fn absent(&self, who: &str) -> bool {
        self.peers.get(who).is_some_and(|p| !p.present)
    }

    /// The cases of a group, in declaration order.
    pub fn group_cases<'a>(&'a self, group: &'a str) -> impl Iterator<Item = &'a CaseResult> + 'a {
        self.cases.iter().filter(move |c| c.decl.group == group)
    }

    /// Cases that failed or never ran.
    pub fn failed(&self) -> Vec<&CaseResult> {
        self.cases.iter().filter(|c| c.status() != CaseStatus::Ok).collect()
    }

    /// As `summary.json`.
    pub fn to_json(&self) -> Json {
        let mut root = BTreeMap::new();
        root.insert(
            "meta".into(),
            Json::Object(self.meta.iter().map(|(k, v)| (k.clone(), Json::String(v.clone()))).collect()),
        );
        let peers = self
            .peers
            .iter()
            .map(|(k, p)| {
                let mut m = BTreeMap::new();
                m.insert("present".to_string(), Json::Bool(p.present));
                m.insert("version".to_string(), p.version.clone().map_or(Json::Null, Json::String));
                m.insert("note".to_string(), p.note.clone().map_or(Json::Null, Json::String));
                (k.clone(), Json::Object(m))
            })
            .collect();
        root.insert("peers".into(), Json::Object(peers));
        root.insert("notes".into(), Json::Array(self.notes.iter().cloned().map(Json::String).collect()));
        root.insert("cases".into(), Json::Array(self.cases.iter().map(|c| self.case_json(c)).collect()));
        Json::Object(root)
    }

    fn case_json(&self, c: &CaseResult) -> Json {
        let d = &c.decl;
        let mut m = BTreeMap::new();
        let s = |v: &str| Json::String(v.to_string());
        let list = |v: &[String]| Json::Array(v.iter().cloned().map(Json::String).collect());
        let fig = |f: &Figure| {
            let mut o = BTreeMap::new();
            o.insert("median".to_string(), Json::number(Some(f.median)));
            o.insert("best".to_string(), Json::number(Some(f.best)));
            Json::Object(o)
        };
        m.insert("case".into(), s(&d.name));
        m.insert("group".into(), s(&d.group));
        m.insert("unit".into(), s(&d.unit));
        m.insert("higher_is_better".into(), Json::Bool(d.higher_is_better));
        m.insert("threads".into(), Json::Number(d.threads as f64));
        m.insert("peers".into(), list(&d.peers));
        m.insert("references".into(), list(&d.references));
        m.insert("limit".into(), d.limit.as_deref().map_or(Json::Null, s));
        m.insert("target_spec".into(), d.target.as_deref().map_or(Json::Null, s));
        m.insert("figures".into(), Json::Object(c.figures.iter().map(|(k, f)| (k.clone(), fig(f))).collect()));
        m.insert("failures".into(), Json::Object(c.failures.iter().map(|(k, v)| (k.clone(), s(v))).collect()));
        let checks = c
            .checks
            .iter()
            .map(|(k, ch)| {
                let mut o = BTreeMap::new();
                o.insert("rel_err".to_string(), Json::number(Some(ch.rel_err)));
                o.insert("tol".to_string(), Json::number(Some(ch.tol)));
                o.insert("ok".to_string(), Json::Bool(ch.ok()));
                (k.clone(), Json::Object(o))
            })
            .collect();
        m.insert("checks".into(), Json::Object(checks));
        m.insert("seconds".into(), Json::number(c.seconds));
        // Derived, for readers of the file; recomputed when it is read back.
        let status = match c.status() {
            CaseStatus::Ok => "ok",
            CaseStatus::Failed => "failed",
            CaseStatus::NotRun => "not run",
        };
        m.insert("status".into(), s(status));
        m.insert("error".into(), if c.status() == CaseStatus::Ok { Json::Null } else { s(&c.failure_text()) });
        let cmp = c.comparison();
        m.insert("ratio".into(), Json::number(cmp.as_ref().map(|x| x.ratio)));
        m.insert("ratio_best".into(), Json::number(cmp.as_ref().map(|x| x.ratio_best)));
        m.insert("best_peer".into(), cmp.as_ref().map_or(Json::Null, |x| s(&x.peer)));
        let (target, met) = match c.target() {
            Some((w, st)) => (s(&w), if st == Status::Unknown { Json::Null } else { Json::Bool(st == Status::Met) }),
            None => (Json::Null, Json::Null),
        };
        m.insert("target".into(), target);
        m.insert("target_met".into(), met);
        m.insert("fraction_of_limit".into(), Json::number(self.fraction_of_limit(c)));
        Json::Object(m)
    }

    /// Reads a `summary.json` back.
    pub fn from_json(v: &Json) -> Result<Summary, String> {
        let strings = |v: Option<&Json>| -> BTreeMap<String, String> {
            v.and_then(Json::as_object)
                .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string()))).collect())
                .unwrap_or_default()
        };
        let mut s = Summary { meta: strings(v.get("meta")), ..Summary::default() };
        if let Some(peers) = v.get("peers").and_then(Json::as_object) {
            for (k, p) in peers {
                s.peers.insert(
                    k.clone(),
                    PeerInfo {
                        present: p.get("present").and_then(Json::as_bool).unwrap_or(false),
                        version: p.get("version").and_then(Json::as_str).map(str::to_string),
                        note: p.get("note").and_then(Json::as_str).map(str::to_string),
                    },
                );
            }
        }
        s.notes = v
            .get("notes")
            .and_then(Json::as_array)
            .map(|a| a.iter().filter_map(Json::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        let cases = v.get("cases").and_then(Json::as_array).ok_or("summary.json: no `cases` array")?;
        for (i, c) in cases.iter().enumerate() {
            let text = |k: &str| -> Result<String, String> {
                c.get(k)
                    .and_then(Json::as_str)
                    .map(str::to_string)
                    .ok_or_else(|| format!("summary.json: case {i} has no `{k}`"))
            };
            let opt_text = |k: &str| c.get(k).and_then(Json::as_str).map(str::to_string);
            let list = |k: &str| -> Vec<String> {
                c.get(k)
                    .and_then(Json::as_array)
                    .map(|a| a.iter().filter_map(Json::as_str).map(str::to_string).collect())
                    .unwrap_or_default()
            };
            let decl = CaseDecl {
                name: text("case")?,
                group: text("group")?,
                unit: text("unit")?,
                higher_is_better: c.get("higher_is_better").and_then(Json::as_bool).unwrap_or(true),
                threads: c.get("threads").and_then(Json::as_f64).unwrap_or(1.0) as usize,
                target: opt_text("target_spec"),
                peers: list("peers"),
                references: list("references"),
                limit: opt_text("limit"),
            };
            let mut r = CaseResult::new(decl);
            if let Some(figs) = c.get("figures").and_then(Json::as_object) {
                for (who, f) in figs {
                    if let (Some(median), Some(best)) =
                        (f.get("median").and_then(Json::as_f64), f.get("best").and_then(Json::as_f64))
                    {
                        r.figures.insert(who.clone(), Figure { median, best });
                    }
                }
            }
            r.failures = strings(c.get("failures"));
            if let Some(checks) = c.get("checks").and_then(Json::as_object) {
                for (who, ch) in checks {
                    // A NaN error was written as null: keep it failing.
                    let rel_err = ch.get("rel_err").and_then(Json::as_f64).unwrap_or(f64::NAN);
                    let tol = ch.get("tol").and_then(Json::as_f64).unwrap_or(0.0);
                    r.checks.insert(who.clone(), Check { rel_err, tol });
                }
            }
            r.seconds = c.get("seconds").and_then(Json::as_f64);
            s.cases.push(r);
        }
        Ok(s)
    }

    /// The peers present, as `name version` for the subtitle.
    pub fn present_peers(&self) -> Vec<String> {
        let mut v: Vec<(&String, &PeerInfo)> = self.peers.iter().filter(|(_, p)| p.present).collect();
        v.sort_by_key(|(k, _)| groups::order(k));
        v.into_iter()
            .map(|(k, p)| match &p.version {
                Some(ver) => format!("{} {ver}", groups::spoken(k)),
                None => groups::spoken(k).to_string(),
            })
            .collect()
    }

    /// The peers absent, as `name (why)`.
    pub fn absent_peers(&self) -> Vec<String> {
        let mut v: Vec<(&String, &PeerInfo)> = self.peers.iter().filter(|(_, p)| !p.present).collect();
        v.sort_by_key(|(k, _)| groups::order(k));
        v.into_iter()
            .map(|(k, p)| match &p.note {
                Some(n) => format!("{} ({n})", groups::spoken(k)),
                None => groups::spoken(k).to_string(),
            })
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small run: a GEMM case with peers, a failed case, a case whose peer disagrees,
    /// a memory-bound case with a limit, and a case no peer measured.
    pub(crate) fn fixture() -> Summary {
        let text = "\
info\tcommit\tabc1234
info\tdate\t2026-12-01 10:00 UTC
info\tcpu_model\tAMD EPYC 9R14
info\tallowed_cpus\t2
info\tthreads\t2
info\tversion:faer\t0.24.0
info\tversion:numpy\t2.4.6
info\tabsent:jax\tnot importable
case\tgemm_f64_1024_t1\tgemm\tGFLOP/s\t1\t1\tbest:faer+openblas:0.97\tfaer,openblas,numpy,jax\t-\t-
value\tgemm_f64_1024_t1\tstrata\t71.7\t74.0
value\tgemm_f64_1024_t1\tfaer\t72.6\t73.1
value\tgemm_f64_1024_t1\tnumpy\t76.9\t78.0
done\tgemm_f64_1024_t1\t2.5
case\tstream_triad\tbandwidth\tGB/s\t1\t2\t-\t-\tstream\t-
value\tstream_triad\tstream\t30\t32
done\tstream_triad\t1
case\tadd_f64_8m_into\tstreaming\tGB/s\t1\t2\tref:rust_loop:0.9\tndarray,numpy\trust_loop\tstream_triad
value\tadd_f64_8m_into\tstrata\t27\t28
value\tadd_f64_8m_into\trust_loop\t20\t21
value\tadd_f64_8m_into\tnumpy\t12\t12.5
done\tadd_f64_8m_into\t1
case\ttiny_add_ns\tlatency\tns\t0\t1\tmax:250\tndarray,numpy,jax\t-\t-
value\ttiny_add_ns\tstrata\t90\t85
value\ttiny_add_ns\tnumpy\t376\t370
done\ttiny_add_ns\t1
case\tmps_env_chi64_d2_t1\ttn\tGFLOP/s\t1\t1\t-\tfaer,numpy,numpy-einsum,jax\t-\t-
value\tmps_env_chi64_d2_t1\tstrata\t40\t44
value\tmps_env_chi64_d2_t1\tnumpy\t20\t21
value\tmps_env_chi64_d2_t1\tnumpy-einsum\t30\t30
check\tmps_env_chi64_d2_t1\tnumpy\t1e-15\t1e-10
check\tmps_env_chi64_d2_t1\tnumpy-einsum\t0.5\t1e-10
done\tmps_env_chi64_d2_t1\t1
case\tgemm_c64_1024_tmax\tgemm\tGFLOP/s\t1\t2\t-\tfaer,numpy\t-\t-
fail\tgemm_c64_1024_tmax\tstrata\tdot_general_into: out of memory
done\tgemm_c64_1024_tmax\t0.1
case\tlonely_t1\ttn\tGFLOP/s\t1\t1\t-\tjax\t-\t-
value\tlonely_t1\tstrata\t5\t6
done\tlonely_t1\t0.2
case\tnever_ran\tgemm\tGFLOP/s\t1\t1\t-\tfaer\t-\t-
note\tjax: not importable
";
        let mut s = Summary::default();
        s.absorb(Record::parse_all(text, "fixture").unwrap());
        s
    }

    #[test]
    fn records_fold_into_cases_with_derived_figures() {
        let s = fixture();
        assert_eq!(s.cases.len(), 8);
        let g = s.case("gemm_f64_1024_t1").unwrap();
        let cmp = g.comparison().unwrap();
        assert_eq!(cmp.peer, "numpy");
        assert!((cmp.ratio - 71.7 / 76.9).abs() < 1e-12 && (cmp.ratio_best - 74.0 / 78.0).abs() < 1e-12);
        assert_eq!(g.target().unwrap(), ("at least 0.97x the best of faer and OpenBLAS".into(), Status::Met));
        let t = s.case("tiny_add_ns").unwrap();
        assert!((t.comparison().unwrap().ratio - 376.0 / 90.0).abs() < 1e-12);
        let a = s.case("add_f64_8m_into").unwrap();
        assert_eq!(s.fraction_of_limit(a), Some(0.9));
        // The disagreeing einsum is left out of the ratio and fails the case.
        let m = s.case("mps_env_chi64_d2_t1").unwrap();
        assert_eq!(m.comparison().unwrap().peer, "numpy");
        assert_eq!(m.status(), CaseStatus::Failed);
        assert!(m.failure_text().contains("numpy-einsum's result differs from strata's"), "{}", m.failure_text());
        let f = s.case("gemm_c64_1024_tmax").unwrap();
        assert_eq!(f.status(), CaseStatus::Failed);
        assert_eq!(f.failure_text(), "dot_general_into: out of memory");
        assert_eq!(s.case("never_ran").unwrap().status(), CaseStatus::NotRun);
        assert_eq!(s.case("lonely_t1").unwrap().comparison(), None);
        assert!(s.absent("jax") && !s.absent("numpy") && !s.absent("openblas"));
        assert_eq!(s.present_peers(), ["faer 0.24.0", "numpy 2.4.6"]);
        assert_eq!(s.failed().len(), 3);
    }

    #[test]
    fn the_json_file_reads_back_to_the_same_run() {
        let s = fixture();
        let text = s.to_json().pretty();
        let back = Summary::from_json(&Json::parse(&text).unwrap()).unwrap();
        assert_eq!(back, s);
        assert!(text.contains("\"status\": \"failed\""));
        assert!(text.contains("\"target\": \"at most 250 ns per call\""));
        assert!(Summary::from_json(&Json::parse("{}").unwrap()).is_err());
    }

    #[test]
    fn records_of_undeclared_cases_become_a_note() {
        let mut s = Summary::default();
        s.absorb(vec![Record::Value { case: "ghost".into(), who: "numpy".into(), median: 1.0, best: 1.0 }]);
        assert!(s.cases.is_empty());
        assert!(s.notes[0].contains("`ghost`"));
    }
}
