//! Tensor contractions through strata's `dot_general`: a rank-4 einsum and the bond
//! contraction of a tensor-network chain, beside faer and ndarray on the equivalent
//! matrix product (the work an einsum reduces to).

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use ndarray::ArrayView2;
use strata_tensor::config::{DotGeneral, DotGeneralConfig};
use strata_tensor::{Tensor, TypedTensor};

use super::consume;
use crate::check::close;
use crate::subject::Strata;
use crate::suite::{Suite, Unit, gflops};
use crate::{Party, random_f64};

/// One contraction viewed as a matrix product `[m, k] · [k, n]` of row-major buffers.
struct Contraction {
    case: String,
    lhs_shape: Vec<usize>,
    rhs_shape: Vec<usize>,
    config: DotGeneralConfig,
    m: usize,
    k: usize,
    n: usize,
}

/// Runs the contraction cases that pass the filter.
pub fn run(suite: &mut Suite) {
    let d = 32;
    let mut cases = vec![Contraction {
        case: "einsum_abcd_cdef_f64_d32".into(),
        lhs_shape: vec![d; 4],
        rhs_shape: vec![d; 4],
        config: DotGeneralConfig::new(vec![], vec![], vec![2, 3], vec![0, 1]),
        m: d * d,
        k: d * d,
        n: d * d,
    }];
    for bond in [64, 128, 256] {
        // iaj,jbk->iabk: the bond axis j is contracted, the physical axes a, b stay.
        cases.push(Contraction {
            case: format!("tn_iaj_jbk_f64_d{bond}"),
            lhs_shape: vec![bond, 2, bond],
            rhs_shape: vec![bond, 2, bond],
            config: DotGeneralConfig::new(vec![], vec![], vec![2], vec![0]),
            m: 2 * bond,
            k: bond,
            n: 2 * bond,
        });
    }
    for c in cases {
        if suite.wants(&c.case)
            && let Err(e) = measure(suite, &c)
        {
            suite.fail(&c.case, e);
        }
    }
}

fn measure(suite: &mut Suite, c: &Contraction) -> Result<(), String> {
    let strata = Strata::with_threads(suite.threads)?;
    let threads = strata.budget();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| format!("rayon pool: {e}"))?;
    let par = if threads == 1 { Par::Seq } else { Par::rayon(threads) };
    let a = random_f64(c.m * c.k, 11);
    let b = random_f64(c.k * c.n, 12);
    let lhs = Tensor::from(TypedTensor::from_vec(a.clone(), &c.lhs_shape).map_err(|e| e.to_string())?);
    let rhs = Tensor::from(TypedTensor::from_vec(b.clone(), &c.rhs_shape).map_err(|e| e.to_string())?);
    let (a2, b2) = (
        ArrayView2::from_shape((c.m, c.k), &a).map_err(|e| e.to_string())?,
        ArrayView2::from_shape((c.k, c.n), &b).map_err(|e| e.to_string())?,
    );
    let strata_call = || strata.backend().dot_general(&lhs, &rhs, &DotGeneral::from(&c.config));
    let mut faer_out = vec![0.0; c.m * c.n];
    let faer_call = |out: &mut [f64]| {
        let cm = MatMut::from_row_major_slice_mut(out, c.m, c.n);
        let (am, bm) = (MatRef::from_row_major_slice(&a, c.m, c.k), MatRef::from_row_major_slice(&b, c.k, c.n));
        pool.install(|| matmul(cm, Accum::Replace, am, bm, 1.0, par));
    };

    // Untimed check against faer (the matrix product is the same contraction).
    faer_call(&mut faer_out);
    let got = strata_call().map_err(|e| e.to_string())?;
    let got = got.as_typed::<f64>().map_err(|e| e.to_string())?;
    close("strata", got.data(), &faer_out, 1e-10)?;
    let nd = a2.dot(&b2);
    close("ndarray", nd.as_slice().unwrap_or(&[]), &faer_out, 1e-10)?;

    let mut failure = None;
    let mut parties = vec![
        Party::new("strata", || consume(&mut failure, strata_call())),
        Party::new("faer", || faer_call(&mut faer_out)),
        Party::new("ndarray", || drop(std::hint::black_box(a2.dot(&b2)))),
    ];
    suite.measure(&c.case, Unit::GflopPerSecond, &mut parties, gflops(2.0 * (c.m * c.k * c.n) as f64));
    drop(parties);
    failure.map_or(Ok(()), Err)
}
