//! Reading `workloads.tn`: one workload per block, validated as it is read (names defined
//! before use, axes in range and used once, paired extents equal, every intermediate
//! read exactly once, the result the last step's output).

use std::collections::HashMap;

use strata_tensor::config::DotGeneralConfig;

use super::{Operand, Step, TnDType, Workload};

fn axes(list: &str, at: &str) -> Result<Vec<usize>, String> {
    if list == "-" || list.is_empty() {
        return Ok(Vec::new());
    }
    list.split(',').map(|a| a.parse::<usize>().map_err(|_| format!("{at}: `{a}` is not an axis number"))).collect()
}

fn pair(text: &str, at: &str) -> Result<(Vec<usize>, Vec<usize>), String> {
    let (l, r) = text.split_once(':').ok_or_else(|| format!("{at}: expected L:R axis lists, got `{text}`"))?;
    Ok((axes(l, at)?, axes(r, at)?))
}

fn operand(text: &str) -> Operand {
    match text.strip_prefix("conj(").and_then(|t| t.strip_suffix(')')) {
        Some(name) => Operand { name: name.to_string(), conj: true },
        None => Operand { name: text.to_string(), conj: false },
    }
}

/// Parses and validates the text of a workloads file.
pub fn parse(text: &str) -> Result<Vec<Workload>, String> {
    let mut out: Vec<Workload> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let at = format!("workloads.tn:{}", i + 1);
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[0] {
            "workload" => {
                let [_, name, dtype, class] = words[..] else {
                    return Err(format!("{at}: expected `workload NAME DTYPE CLASS`"));
                };
                let dtype = match dtype {
                    "f32" => TnDType::F32,
                    "f64" => TnDType::F64,
                    "c64" => TnDType::C64,
                    other => return Err(format!("{at}: dtype `{other}` is not f32, f64 or c64")),
                };
                if out.iter().any(|w| w.name == name) {
                    return Err(format!("{at}: a second workload named `{name}`"));
                }
                if let Some(prev) = out.last() {
                    finish(prev)?;
                }
                out.push(Workload {
                    name: name.into(),
                    dtype,
                    class: class.into(),
                    inputs: Vec::new(),
                    steps: Vec::new(),
                    out_shapes: Vec::new(),
                });
            }
            "input" => {
                let w = out.last_mut().ok_or_else(|| format!("{at}: `input` before any `workload`"))?;
                if !w.steps.is_empty() {
                    return Err(format!("{at}: inputs come before the steps"));
                }
                let name = words.get(1).ok_or_else(|| format!("{at}: `input` needs a name"))?;
                let shape = words[2..]
                    .iter()
                    .map(|d| {
                        d.parse::<usize>().ok().filter(|&d| d > 0).ok_or_else(|| format!("{at}: bad extent `{d}`"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if w.shape(name).is_some() {
                    return Err(format!("{at}: `{name}` is defined twice"));
                }
                w.inputs.push((name.to_string(), shape));
            }
            "step" => {
                let w = out.last_mut().ok_or_else(|| format!("{at}: `step` before any `workload`"))?;
                if words.len() < 7 || words[2] != "=" || words[5] != "contract" {
                    return Err(format!("{at}: expected `step OUT = LHS RHS contract L:R [batch L:R]`"));
                }
                let (lhs_contracting, rhs_contracting) = pair(words[6], &at)?;
                let (lhs_batch, rhs_batch) = match &words[7..] {
                    [] => (Vec::new(), Vec::new()),
                    ["batch", p] => pair(p, &at)?,
                    _ => return Err(format!("{at}: only `batch L:R` may follow the contracted axes")),
                };
                let step = Step {
                    out: words[1].into(),
                    lhs: operand(words[3]),
                    rhs: operand(words[4]),
                    config: DotGeneralConfig::new(lhs_batch, rhs_batch, lhs_contracting, rhs_contracting),
                };
                if w.shape(&step.out).is_some() {
                    return Err(format!("{at}: `{}` is defined twice", step.out));
                }
                let shape_of = |o: &Operand| {
                    w.shape(&o.name)
                        .map(<[usize]>::to_vec)
                        .ok_or_else(|| format!("{at}: `{}` is not defined above", o.name))
                };
                let (l, r) = (shape_of(&step.lhs)?, shape_of(&step.rhs)?);
                let shape = step.config.output_shape(&l, &r).map_err(|e| format!("{at}: {e}"))?;
                w.steps.push(step);
                w.out_shapes.push(shape);
            }
            other => return Err(format!("{at}: unknown line kind `{other}`")),
        }
    }
    match out.last() {
        Some(w) => finish(w)?,
        None => return Err("workloads.tn: no workload".into()),
    }
    Ok(out)
}

/// Whole-workload rules: steps exist, each intermediate is read once, the result last.
fn finish(w: &Workload) -> Result<(), String> {
    if w.steps.is_empty() {
        return Err(format!("workload `{}` has no step", w.name));
    }
    let mut reads: HashMap<&str, usize> = HashMap::new();
    for s in &w.steps {
        for o in [&s.lhs, &s.rhs] {
            *reads.entry(o.name.as_str()).or_default() += 1;
        }
    }
    for (i, s) in w.steps.iter().enumerate() {
        let n = reads.get(s.out.as_str()).copied().unwrap_or(0);
        let last = i + 1 == w.steps.len();
        if last && n > 0 {
            return Err(format!("workload `{}`: the result `{}` is read by a step", w.name, s.out));
        }
        if !last && n != 1 {
            return Err(format!("workload `{}`: `{}` is read {n} times (intermediates are read once)", w.name, s.out));
        }
    }
    if let Some((name, _)) = w.inputs.iter().find(|(n, _)| !reads.contains_key(n.as_str())) {
        return Err(format!("workload `{}`: input `{name}` is never read", w.name));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str =
        "workload w f64 chain\n  input A 2 3\n  input B 3 4 # comment\n  step C = A conj(B) contract 1:0\n";

    #[test]
    fn a_workload_reads_back() {
        let w = parse(OK).unwrap();
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].out_shapes, vec![vec![2, 4]]);
        assert!(w[0].steps[0].rhs.conj && !w[0].steps[0].lhs.conj);
        let batched =
            parse("workload b f64 batched\ninput A 5 2 3\ninput B 5 3 4\nstep C = A B contract 2:1 batch 0:0\n");
        assert_eq!(batched.unwrap()[0].out_shapes, vec![vec![5, 2, 4]]);
    }

    #[test]
    fn mistakes_are_named_with_their_line() {
        let err = |t: &str| parse(t).unwrap_err();
        assert!(err("input A 2\n").contains(":1: `input` before any `workload`"));
        assert!(err("workload w f16 chain\n").contains("dtype `f16`"));
        assert!(err("workload w f64 chain\ninput A 2 0\n").contains("bad extent `0`"));
        assert!(err(&OK.replace("contract 1:0", "contract 0:0")).contains(":4: dot_general: contracting dim 0"));
        assert!(err(&OK.replace("conj(B)", "D")).contains("`D` is not defined above"));
        assert!(err(&OK.replace("contract 1:0", "contract 1;0")).contains("expected L:R"));
        assert!(err(&(OK.to_string() + "  step E = C A contract 1:1\n")).contains("dot_general"));
        let unread = "workload w f64 chain\ninput A 2 2\ninput B 2 2\ninput Z 2\nstep C = A B contract 1:0\n";
        assert!(err(unread).contains("input `Z` is never read"));
        let twice = "workload w f64 chain\ninput A 2 2\nstep C = A A contract 1:0\nstep D = C C contract 1:0\n";
        assert!(err(twice).contains("`C` is read 2 times"));
        assert!(err("").contains("no workload"));
        assert!(err(&(OK.to_string() + OK)).contains("second workload"));
    }
}
