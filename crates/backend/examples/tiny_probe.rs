use std::time::Instant;
use strata_backend::prelude::*;
use strata_kernels::{KernelContext, elementwise};
use strata_pool::BufferPool;

fn time(name: &str, mut f: impl FnMut()) {
    for _ in 0..10000 {
        f();
    }
    let n = 200_000;
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        best = best.min(t.elapsed().as_secs_f64() / n as f64 * 1e9);
    }
    println!("{name}: {best:.0} ns");
}

fn main() {
    let a = Tensor::from_vec(vec![1.0f64], &[1]).unwrap();
    let b = Tensor::from_vec(vec![2.0f64], &[1]).unwrap();
    let ctx = KernelContext::sequential();
    time("kernel no pool", || {
        std::hint::black_box(elementwise::binary(&ctx, BinaryOp::Add, (&a).into(), (&b).into()).unwrap());
    });
    let pool = BufferPool::new(1 << 20);
    let pctx = KernelContext::sequential().with_pool(&pool);
    time("kernel pool", || {
        let t = elementwise::binary(&pctx, BinaryOp::Add, (&a).into(), (&b).into()).unwrap();
        pool.recycle_tensor(std::hint::black_box(t));
    });
    let be = CpuBackend::new().unwrap();
    time("backend", || {
        std::hint::black_box(be.binary(BinaryOp::Add, (&a).into(), (&b).into()).unwrap());
    });
    be.with_session(|s| {
        time("session", || {
            std::hint::black_box(s.binary(BinaryOp::Add, (&a).into(), (&b).into()).unwrap());
        })
    })
    .unwrap();
    let m = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let cfg = DotGeneralConfig::matmul();
    let faer = strata_provider::FaerGemmProvider;
    time("matmul2x2 kernel nocache", || {
        std::hint::black_box(
            strata_kernels::contraction::dot_general(&ctx, (&m).into(), (&m).into(), &cfg, false, false, &faer, None)
                .unwrap(),
        );
    });
    time("matmul2x2 backend", || {
        std::hint::black_box(be.dot_general((&m).into(), (&m).into(), &cfg, false, false).unwrap());
    });
}
