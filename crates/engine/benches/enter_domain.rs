//! Fixed cost of entering a managed domain and running an empty job on it.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use strata_arbiter::{AdmissionRequest, ResourceArbiter};
use strata_engine::{CpuPlacement, ManagedDomainRegistry};

fn enter_domain(c: &mut Criterion) {
    let topology = Arc::new(strata_topology::discover().expect("discover the machine"));
    let budget = topology.allowed_cpus().len().min(2);
    let registry = ManagedDomainRegistry::builder(topology)
        .thread_budget(budget)
        .arbiter(Arc::new(ResourceArbiter::new()))
        .build()
        .expect("registry");
    let domain = registry.domain(&CpuPlacement::AllAllowed).expect("all-allowed domain");

    let mut group = c.benchmark_group("enter_domain");
    // Reference: the arbiter alone, for the same CPU set, so the engine's share is visible.
    let arbiter = ResourceArbiter::new();
    let request = AdmissionRequest::Cpus(domain.cpus().expect("managed domains have CPUs").clone());
    group.bench_function("arbiter_acquire_release_reference", |b| {
        b.iter(|| black_box(arbiter.acquire(&request).expect("acquire")));
    });
    group.bench_function("enter_and_drop", |b| {
        b.iter(|| black_box(domain.enter().expect("enter")));
    });
    group.bench_function("enter_run_empty_job", |b| {
        b.iter(|| {
            let entry = domain.enter().expect("enter");
            entry.executor().run(&mut || {
                black_box(());
            });
        });
    });
    group.bench_function("enter_for_each_index_empty_1", |b| {
        b.iter(|| {
            let entry = domain.enter().expect("enter");
            entry.executor().for_each_index(1, &|i| {
                black_box(i);
            });
        });
    });
    group.bench_function("enter_inline_run_empty_job", |b| {
        b.iter(|| {
            let entry = domain.enter_inline(&CpuPlacement::Auto).expect("enter inline");
            entry.executor().run(&mut || {
                black_box(());
            });
        });
    });
    group.finish();
}

criterion_group!(benches, enter_domain);
criterion_main!(benches);
