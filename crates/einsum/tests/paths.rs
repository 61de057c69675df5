//! Path costs against opt_einsum's `optimal` (fixtures from tests/data/generate.py) and
//! the inspectable report.

mod common;

use common::parse_shapes;
use strata_einsum::{EinsumOptions, PathStrategy, StepKind, einsum_path};

struct Network {
    name: String,
    spec: String,
    shapes: Vec<Vec<usize>>,
    optimal: u128,
}

fn networks() -> Vec<Network> {
    include_str!("data/paths.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            Network {
                name: f[0].to_string(),
                spec: f[1].to_string(),
                shapes: parse_shapes(f[2]),
                optimal: f[3].parse().unwrap(),
            }
        })
        .collect()
}

#[test]
fn optimal_paths_cost_what_opt_einsums_optimal_costs() {
    let nets = networks();
    assert!(nets.len() >= 25, "{} networks", nets.len());
    for net in &nets {
        let shapes: Vec<&[usize]> = net.shapes.iter().map(Vec::as_slice).collect();
        for strategy in [PathStrategy::Optimal, PathStrategy::Auto] {
            let path = einsum_path(&net.spec, &shapes, &EinsumOptions::new().strategy(strategy.clone())).unwrap();
            assert_eq!(
                path.flops(),
                net.optimal,
                "{} ({:?}): ours {}, opt_einsum {}\n{path}",
                net.name,
                strategy,
                path.flops(),
                net.optimal
            );
            assert!(path.steps().iter().all(|s| s.kind() != StepKind::Reduce), "{}: nothing to reduce alone", net.name);
        }
        let greedy = einsum_path(&net.spec, &shapes, &EinsumOptions::new().strategy(PathStrategy::Greedy)).unwrap();
        assert!(
            greedy.flops() >= net.optimal,
            "{}: greedy {} below the optimum {}",
            net.name,
            greedy.flops(),
            net.optimal
        );
        // The chosen order, given back as an explicit path, costs the same.
        let optimal = einsum_path(&net.spec, &shapes, &EinsumOptions::new()).unwrap();
        let replay = EinsumOptions::new().strategy(PathStrategy::Explicit(optimal.linear().to_vec()));
        assert_eq!(einsum_path(&net.spec, &shapes, &replay).unwrap().flops(), optimal.flops(), "{}", net.name);
    }
}

#[test]
fn summing_single_operand_labels_first_is_never_dearer() {
    // "ijk,jl->il": k only on the first operand. opt_einsum contracts it in the pair step
    // (2·i·j·k·l flops); we sum it alone first.
    let shapes: [&[usize]; 2] = [&[8, 16, 32], &[16, 8]];
    let path = einsum_path("ijk,jl->il", &shapes, &EinsumOptions::new()).unwrap();
    let kinds: Vec<StepKind> = path.steps().iter().map(|s| s.kind()).collect();
    assert_eq!(kinds, vec![StepKind::Reduce, StepKind::Contract]);
    assert_eq!(path.flops(), 2 * 8 * 16 * 32 + 2 * 8 * 16 * 8);
    assert!(path.flops() < 2 * 8 * 16 * 32 * 8);
}

#[test]
fn the_report_reads_like_numpys() {
    let shapes: [&[usize]; 3] = [&[2, 3], &[3, 4], &[4, 5]];
    let path = einsum_path("ij,jk,kl", &shapes, &EinsumOptions::new()).unwrap();
    assert_eq!(path.spec(), "ij,jk,kl->il");
    assert_eq!(path.strategy(), "auto");
    assert_eq!((path.flops(), path.naive_flops()), (128, 360));
    assert_eq!(path.largest_intermediate(), 10);
    assert_eq!(path.output_shape(), &[2, 5]);
    assert_eq!(path.input_shapes(), &[vec![2, 3], vec![3, 4], vec![4, 5]]);
    assert!((path.speedup() - 360.0 / 128.0).abs() < 1e-12);
    let steps = path.steps();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0].operands(), &[0, 1]);
    assert_eq!(steps[0].subscripts(), "ij,jk->ik");
    assert_eq!(steps[0].shape(), &[2, 4]);
    assert_eq!(steps[0].flops(), 48);
    assert_eq!(steps[1].operands(), &[3, 2]);
    assert_eq!(steps[1].subscripts(), "ik,kl->il");
    let printed = path.to_string();
    for needle in ["Complete contraction:  ij,jk,kl->il", "Optimized FLOP count:  1.280e2", "ij,jk->ik", "contract"] {
        assert!(printed.contains(needle), "{needle:?} missing from\n{printed}");
    }
}

#[test]
fn a_memory_limit_changes_the_order_or_is_refused() {
    // abc,cd,bde: contracting the first two makes a 32·32·32 intermediate; with a limit of
    // 2048 elements the search must pick another order, with 8 none exists.
    let shapes: [&[usize]; 3] = [&[32, 32, 4], &[4, 32], &[32, 32, 2]];
    let free = einsum_path("abc,cd,bde->ae", &shapes, &EinsumOptions::new()).unwrap();
    let limited = einsum_path("abc,cd,bde->ae", &shapes, &EinsumOptions::new().memory_limit(2048)).unwrap();
    assert!(limited.steps().iter().rev().skip(1).all(|s| s.shape().iter().product::<usize>() <= 2048));
    assert!(limited.flops() >= free.flops());
    let e = einsum_path("abc,cd,bde->ae", &shapes, &EinsumOptions::new().memory_limit(8)).unwrap_err();
    assert!(matches!(common::rule(&e), strata_einsum::EinsumError::MemoryLimit { limit: 8, .. }), "{e}");
}
