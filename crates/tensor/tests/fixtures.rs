//! Reading the numpy-made fixture files of `data/` (written by `data/make_fixtures.py`).

#![allow(dead_code)]

use strata_tensor::{Tensor, c32, c64};

/// One record of a fixture file: `key value` lines up to `end` (an `expect` line starts
/// a verbatim block that runs to the `end` line).
pub struct Record {
    pub fields: Vec<(String, String)>,
    pub expect: String,
}

impl Record {
    pub fn get(&self, key: &str) -> &str {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str()).unwrap_or("")
    }

    /// The tensor the record describes (`dtype`, `shape`, `data` in row-major order).
    pub fn tensor(&self) -> Tensor {
        let shape: Vec<usize> = self.get("shape").split_whitespace().map(|d| d.parse().unwrap()).collect();
        let words: Vec<&str> = self.get("data").split_whitespace().collect();
        let reals = |w: &[&str]| w.iter().map(|v| v.parse::<f64>().unwrap()).collect::<Vec<f64>>();
        let complexes = || {
            words
                .iter()
                .map(|v| {
                    let (re, im) = v.split_once(',').unwrap();
                    c64::new(re.parse().unwrap(), im.parse().unwrap())
                })
                .collect::<Vec<c64>>()
        };
        match self.get("dtype") {
            "float64" => Tensor::from_vec(reals(&words), &shape),
            "float32" => Tensor::from_vec(reals(&words).into_iter().map(|v| v as f32).collect::<Vec<_>>(), &shape),
            "int32" => Tensor::from_vec(words.iter().map(|v| v.parse::<i32>().unwrap()).collect::<Vec<_>>(), &shape),
            "int64" => Tensor::from_vec(words.iter().map(|v| v.parse::<i64>().unwrap()).collect::<Vec<_>>(), &shape),
            "bool" => Tensor::from_vec(words.iter().map(|v| *v == "1").collect::<Vec<_>>(), &shape),
            "complex128" => Tensor::from_vec(complexes(), &shape),
            "complex64" => Tensor::from_vec(
                complexes().into_iter().map(|c| c32::new(c.re as f32, c.im as f32)).collect::<Vec<_>>(),
                &shape,
            ),
            other => panic!("fixture dtype {other}"),
        }
        .unwrap()
    }
}

pub fn records(text: &str) -> Vec<Record> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    let mut current = Record { fields: Vec::new(), expect: String::new() };
    while let Some(line) = lines.next() {
        if line == "end" {
            out.push(std::mem::replace(&mut current, Record { fields: Vec::new(), expect: String::new() }));
        } else if line == "expect" {
            let block: Vec<&str> = lines.by_ref().take_while(|l| *l != "end").collect();
            current.expect = block.join("\n");
            out.push(std::mem::replace(&mut current, Record { fields: Vec::new(), expect: String::new() }));
        } else {
            let (k, v) = line.split_once(' ').unwrap_or((line, ""));
            current.fields.push((k.to_string(), v.to_string()));
        }
    }
    out
}
