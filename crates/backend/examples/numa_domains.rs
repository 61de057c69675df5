//! One backend handle per NUMA node, each running work on its own node's pinned pool.
//! On a one-node machine this runs with the single node.
//!
//! `cargo run -p strata-backend --example numa_domains`

use strata_backend::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let backend = CpuBackend::new()?;
    let nodes: Vec<NumaNodeId> = backend.topology().nodes().iter().map(|n| n.id()).collect();
    println!("{} NUMA node(s): {nodes:?}", nodes.len());
    for node in nodes {
        let placement = CpuPlacement::NumaNode(node);
        if !backend.supports_placement(&placement) {
            println!("node {node}: placement unsupported here (compatibility mode)");
            continue;
        }
        let on_node = backend.for_placement(placement)?;
        let x = TypedTensor::from_fn(&[256, 256], |i| ((i[0] + i[1]) % 7) as f64)?;
        let y = on_node.matmul(&x, &x)?;
        let total = on_node.sum(&y, &[0, 1])?;
        let info = on_node.execution_info();
        println!(
            "node {node}: domain {} on cpus {}, {} workers, guarantee {:?}; sum(x·x) = {}",
            info.domain_id,
            info.domain_cpus.map(|c| c.to_string()).unwrap_or_default(),
            info.workers,
            info.guarantee,
            total.as_typed::<f64>()?.data()[0]
        );
    }
    Ok(())
}
