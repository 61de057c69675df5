//! The golden case files: one case per line, `op \t key=value ...`; tensors written in
//! full (`dtype;shape;values`), as patterns (`@dtype;shape;seed;values`: element i is
//! `values[mix(seed + i·GOLDEN) % len]`) or, for large outputs of ops that only move
//! values, as a digest of their bits (`#dtype;shape;hex`). `gen_edge.py` defines the same
//! `mix` and digest.

use std::collections::HashMap;

use strata_tensor::{DType, Tensor, c32, c64, dispatch_dtype};

/// One golden case: the op name and its `key=value` fields.
pub struct Case {
    pub file: &'static str,
    pub line: usize,
    pub op: String,
    fields: HashMap<String, String>,
}

pub fn load(file: &'static str, text: &'static str) -> Vec<Case> {
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.split('\t');
        let op = parts.next().expect("case line has an op").to_string();
        let fields = parts
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or_else(|| panic!("{file}:{}: field without '='", i + 1));
                (k.to_string(), v.to_string())
            })
            .collect();
        cases.push(Case { file, line: i + 1, op, fields });
    }
    assert!(!cases.is_empty(), "{file} holds no cases");
    cases
}

/// The cases of `tests/lax/<name>`, compiled into the test binary (the path is relative to
/// the invoking file, `tests/lax_conformance.rs`).
#[macro_export]
macro_rules! cases {
    ($name:literal) => {
        $crate::lax_support::data::load($name, include_str!(concat!("lax/", $name)))
    };
}

/// What a case expects: a tensor, or the digest of one.
pub enum Want {
    Tensor(Tensor),
    Digest { dtype: DType, shape: Vec<usize>, digest: u64 },
}

impl Case {
    pub fn has(&self, key: &str) -> bool {
        self.fields.contains_key(key)
    }

    pub fn field(&self, key: &str) -> &str {
        self.fields.get(key).unwrap_or_else(|| panic!("{}:{}: missing field {key}", self.file, self.line))
    }

    pub fn tensor(&self, key: &str) -> Tensor {
        parse_tensor(self.field(key)).unwrap_or_else(|e| panic!("{}:{}: field {key}: {e}", self.file, self.line))
    }

    pub fn want(&self) -> Want {
        let s = self.field("out");
        match s.strip_prefix('#') {
            Some(d) => {
                let mut p = d.split(';');
                let (dtype, shape, hex) = (p.next(), p.next(), p.next());
                Want::Digest {
                    dtype: parse_dtype(dtype.expect("digest dtype")),
                    shape: parse_shape(shape.expect("digest shape")),
                    digest: u64::from_str_radix(hex.expect("digest value"), 16).expect("hex digest"),
                }
            }
            None => Want::Tensor(self.tensor("out")),
        }
    }

    pub fn ints(&self, key: &str) -> Vec<i64> {
        let s = self.field(key);
        if s.is_empty() {
            return Vec::new();
        }
        s.split(',').map(|v| v.parse().expect("integer list")).collect()
    }

    pub fn usizes(&self, key: &str) -> Vec<usize> {
        self.ints(key).into_iter().map(|v| usize::try_from(v).expect("non-negative")).collect()
    }

    pub fn usize(&self, key: &str) -> usize {
        self.field(key).parse().expect("non-negative integer")
    }

    pub fn at(&self) -> String {
        format!("{}:{} ({})", self.file, self.line, self.op)
    }
}

pub fn parse_dtype(s: &str) -> DType {
    match s {
        "f32" => DType::F32,
        "f64" => DType::F64,
        "i32" => DType::I32,
        "i64" => DType::I64,
        "bool" => DType::Bool,
        "c32" => DType::C32,
        "c64" => DType::C64,
        other => panic!("unknown dtype {other}"),
    }
}

fn parse_shape(s: &str) -> Vec<usize> {
    if s.is_empty() { Vec::new() } else { s.split('x').map(|d| d.parse().expect("dim")).collect() }
}

/// The values of a list in `dtype` (complex as re,im pairs), as a rank-1 tensor.
fn parse_values(dtype: DType, values: &str) -> Result<Tensor, String> {
    let raw: Vec<&str> = if values.is_empty() { Vec::new() } else { values.split(',').collect() };
    fn all<T: std::str::FromStr>(raw: &[&str]) -> Result<Vec<T>, String> {
        raw.iter().map(|v| v.parse::<T>().map_err(|_| format!("bad value {v:?}"))).collect()
    }
    let t = match dtype {
        DType::F32 => Tensor::from_vec(all::<f32>(&raw)?, &[raw.len()]),
        DType::F64 => Tensor::from_vec(all::<f64>(&raw)?, &[raw.len()]),
        DType::I32 => Tensor::from_vec(all::<i32>(&raw)?, &[raw.len()]),
        DType::I64 => Tensor::from_vec(all::<i64>(&raw)?, &[raw.len()]),
        DType::Bool => Tensor::from_vec(raw.iter().map(|v| *v == "1").collect::<Vec<bool>>(), &[raw.len()]),
        DType::C32 => {
            let p = all::<f32>(&raw)?;
            Tensor::from_vec(p.chunks(2).map(|c| c32::new(c[0], c[1])).collect::<Vec<_>>(), &[p.len() / 2])
        }
        DType::C64 => {
            let p = all::<f64>(&raw)?;
            Tensor::from_vec(p.chunks(2).map(|c| c64::new(c[0], c[1])).collect::<Vec<_>>(), &[p.len() / 2])
        }
    };
    t.map_err(|e| e.to_string())
}

pub fn parse_tensor(s: &str) -> Result<Tensor, String> {
    if let Some(p) = s.strip_prefix('@') {
        let mut parts = p.splitn(4, ';');
        let (dtype, shape, seed, values) = match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some(d), Some(sh), Some(seed), Some(v)) => (parse_dtype(d), parse_shape(sh), seed, v),
            _ => return Err(format!("malformed pattern {s:?}")),
        };
        let seed: u64 = seed.parse().map_err(|_| format!("bad seed {seed:?}"))?;
        let palette = parse_values(dtype, values)?;
        return Ok(pattern(&palette, &shape, seed));
    }
    let mut parts = s.splitn(3, ';');
    let (dtype, shape, values) = match (parts.next(), parts.next(), parts.next()) {
        (Some(d), Some(sh), Some(v)) => (parse_dtype(d), parse_shape(sh), v),
        _ => return Err(format!("malformed tensor {s:?}")),
    };
    let flat = parse_values(dtype, values)?;
    flat.reshape(&shape).map_err(|e| e.to_string())
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// splitmix64's finaliser (gen_edge.py's `mix`).
pub fn mix(z: u64) -> u64 {
    let mut z = z.wrapping_add(GOLDEN);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The pattern tensor of `shape` over `palette` (rank 1).
pub fn pattern(palette: &Tensor, shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    dispatch_dtype!(palette.dtype(), T => {
        let pal = palette.as_typed::<T>().expect("dtype").data();
        let k = pal.len() as u64;
        let data: Vec<T> = (0..n).map(|i| pal[(mix(seed.wrapping_add((i as u64).wrapping_mul(GOLDEN))) % k) as usize]).collect();
        Tensor::from_vec(data, shape).expect("pattern shape")
    })
}

/// Each element's bits as u64 (two per complex element), NaN made canonical.
fn canonical_bits(t: &Tensor) -> Vec<u64> {
    fn f32_bits(v: f32) -> u64 {
        if v.is_nan() { 0x7FC0_0000 } else { u64::from(v.to_bits()) }
    }
    fn f64_bits(v: f64) -> u64 {
        if v.is_nan() { 0x7FF8_0000_0000_0000 } else { v.to_bits() }
    }
    fn data<T: strata_tensor::Scalar>(t: &Tensor) -> &[T] {
        t.as_typed::<T>().expect("dtype").data()
    }
    match t.dtype() {
        DType::F32 => data::<f32>(t).iter().map(|&v| f32_bits(v)).collect(),
        DType::F64 => data::<f64>(t).iter().map(|&v| f64_bits(v)).collect(),
        DType::I32 => data::<i32>(t).iter().map(|&v| i64::from(v) as u64).collect(),
        DType::I64 => data::<i64>(t).iter().map(|&v| v as u64).collect(),
        DType::Bool => data::<bool>(t).iter().map(|&v| u64::from(v)).collect(),
        DType::C32 => data::<c32>(t).iter().flat_map(|v| [f32_bits(v.re), f32_bits(v.im)]).collect(),
        DType::C64 => data::<c64>(t).iter().flat_map(|v| [f64_bits(v.re), f64_bits(v.im)]).collect(),
    }
}

/// gen_edge.py's `digest`: Σ mix(bits_i ^ mix(i)), wrapping.
pub fn digest(t: &Tensor) -> u64 {
    canonical_bits(t).iter().enumerate().fold(0u64, |acc, (i, &b)| acc.wrapping_add(mix(b ^ mix(i as u64))))
}
