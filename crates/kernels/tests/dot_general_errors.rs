//! Every bad input to dot_general / dot_general_into is a typed error raised before the
//! destination is written.

use strata_kernels::KernelContext;
use strata_kernels::contraction::{ContractionCache, PlanCache, dot_general, dot_general_into};
use strata_tensor::config::DotGeneralConfig;
use strata_tensor::{ErrorKind, Tensor, c64};

static FAER: strata_provider::FaerGemmProvider = strata_provider::FaerGemmProvider;

fn mat(rows: usize, cols: usize) -> Tensor {
    Tensor::from_vec((0..rows * cols).map(|i| i as f64).collect(), &[rows, cols]).unwrap()
}

#[test]
fn each_bad_input_is_refused_before_writing() {
    let ctx = KernelContext::sequential();
    let (a, b) = (mat(2, 3), mat(3, 4));
    let mm = DotGeneralConfig::matmul();
    let one = c64::new(1.0, 0.0);
    let sentinel = Tensor::from_vec(vec![-7.0f64; 8], &[2, 4]).unwrap();
    let slots = ContractionCache::new(2);
    let int_a = Tensor::from_vec(vec![1i64; 6], &[2, 3]).unwrap();
    let int_b = Tensor::from_vec(vec![1i64; 12], &[3, 4]).unwrap();
    let bool_a = Tensor::from_vec(vec![true; 6], &[2, 3]).unwrap();
    let f32_b = Tensor::from_vec(vec![1.0f32; 12], &[3, 4]).unwrap();
    let wrong_k = mat(4, 4);

    struct Bad<'a> {
        name: &'a str,
        lhs: &'a Tensor,
        rhs: &'a Tensor,
        config: DotGeneralConfig,
        alpha: c64,
        out: Tensor,
        slot: usize,
        kind: ErrorKind,
        message_has: &'a str,
    }
    let cases = vec![
        Bad {
            name: "integer operands",
            lhs: &int_a,
            rhs: &int_b,
            config: mm.clone(),
            alpha: one,
            out: Tensor::zeros(strata_tensor::DType::I64, &[2, 4]).unwrap(),
            slot: 0,
            kind: ErrorKind::Unsupported,
            message_has: "cast",
        },
        Bad {
            name: "bool operands",
            lhs: &bool_a,
            rhs: &bool_a,
            config: DotGeneralConfig::default(),
            alpha: one,
            out: sentinel.clone(),
            slot: 0,
            kind: ErrorKind::Unsupported,
            message_has: "cast",
        },
        Bad {
            name: "mixed dtypes",
            lhs: &a,
            rhs: &f32_b,
            config: mm.clone(),
            alpha: one,
            out: sentinel.clone(),
            slot: 0,
            kind: ErrorKind::DTypeMismatch,
            message_has: "rhs has dtype float32",
        },
        Bad {
            name: "contracting extents",
            lhs: &a,
            rhs: &wrong_k,
            config: mm.clone(),
            alpha: one,
            out: sentinel.clone(),
            slot: 0,
            kind: ErrorKind::ShapeMismatch,
            message_has: "contracting dim 1 of lhs has extent 3, rhs dim 0 has extent 4",
        },
        Bad {
            name: "axis out of range",
            lhs: &a,
            rhs: &b,
            config: DotGeneralConfig::new(vec![], vec![], vec![2], vec![0]),
            alpha: one,
            out: sentinel.clone(),
            slot: 0,
            kind: ErrorKind::InvalidArgument,
            message_has: "out of range",
        },
        Bad {
            name: "axis in two roles",
            lhs: &a,
            rhs: &b,
            config: DotGeneralConfig::new(vec![1], vec![0], vec![1], vec![0]),
            alpha: one,
            out: sentinel.clone(),
            slot: 0,
            kind: ErrorKind::InvalidArgument,
            message_has: "as batch and as contracting",
        },
        Bad {
            name: "destination shape",
            lhs: &a,
            rhs: &b,
            config: mm.clone(),
            alpha: one,
            out: Tensor::from_vec(vec![-7.0f64; 8], &[4, 2]).unwrap(),
            slot: 0,
            kind: ErrorKind::ShapeMismatch,
            message_has: "destination has shape [4, 2]",
        },
        Bad {
            name: "destination dtype",
            lhs: &a,
            rhs: &b,
            config: mm.clone(),
            alpha: one,
            out: Tensor::from_vec(vec![-7.0f32; 8], &[2, 4]).unwrap(),
            slot: 0,
            kind: ErrorKind::DTypeMismatch,
            message_has: "destination holds float32",
        },
        Bad {
            name: "complex alpha on real data",
            lhs: &a,
            rhs: &b,
            config: mm.clone(),
            alpha: c64::new(1.0, 2.0),
            out: sentinel.clone(),
            slot: 0,
            kind: ErrorKind::InvalidArgument,
            message_has: "imaginary",
        },
        Bad {
            name: "cache slot",
            lhs: &a,
            rhs: &b,
            config: mm.clone(),
            alpha: one,
            out: sentinel.clone(),
            slot: 2,
            kind: ErrorKind::InvalidArgument,
            message_has: "cache slot 2 is out of range; the cache has 2 slots",
        },
    ];
    for mut c in cases {
        let before = c.out.clone();
        let cache = PlanCache::Slot { cache: &slots, slot: c.slot };
        let e = dot_general_into(
            &ctx,
            c.lhs.into(),
            c.rhs.into(),
            &c.config,
            false,
            false,
            c.alpha,
            one,
            (&mut c.out).into(),
            &FAER,
            Some(&cache),
        )
        .expect_err(c.name);
        assert_eq!(e.kind(), c.kind, "{}: {e}", c.name);
        assert_eq!(e.op(), "dot_general", "{}", c.name);
        assert!(e.message().contains(c.message_has), "{}: {e}", c.name);
        assert_eq!(format!("{:?}", c.out), format!("{before:?}"), "{}: destination was written", c.name);
        // The fresh-output form refuses the same operands the same way (destination
        // errors aside).
        if !c.name.starts_with("destination") && c.name != "complex alpha on real data" {
            let e2 = dot_general(&ctx, c.lhs.into(), c.rhs.into(), &c.config, false, false, &FAER, Some(&cache))
                .expect_err(c.name);
            assert_eq!(e2.kind(), c.kind, "{}", c.name);
        }
    }
    // Nothing was analysed: every refusal came first.
    assert_eq!(slots.stats().lookups(), 0);
}
