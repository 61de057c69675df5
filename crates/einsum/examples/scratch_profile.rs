use std::time::Instant;
use strata_backend::CpuBackend;
use strata_tensor::{Tensor, TensorRead, TypedTensor, c64};

fn value(k: usize, i: usize) -> f64 {
    ((i * 7919 + k * 104729 + 13) % 1999) as f64 / 1999.0 - 0.5
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let spec = &args[1];
    let shapes: Vec<Vec<usize>> =
        args[2].split(';').map(|s| s.split(',').map(|d| d.parse().unwrap()).collect()).collect();
    let complex = args.get(3).is_some_and(|a| a == "c64");
    let threads: usize = args.get(4).map_or(1, |t| t.parse().unwrap());
    let backend = CpuBackend::with_threads(threads).unwrap();
    let tensors: Vec<Tensor> = shapes
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let n: usize = s.iter().product();
            if complex {
                TypedTensor::from_vec((0..n).map(|i| c64::new(value(k, 2 * i), value(k, 2 * i + 1))).collect(), s)
                    .unwrap()
                    .into()
            } else {
                TypedTensor::from_vec((0..n).map(|i| value(k, i)).collect(), s).unwrap().into()
            }
        })
        .collect();
    let ops: Vec<TensorRead<'_>> = tensors.iter().map(Into::into).collect();
    let sh: Vec<&[usize]> = shapes.iter().map(Vec::as_slice).collect();
    println!("{}", backend.einsum_prepare(spec, &sh).unwrap().path());
    backend.einsum(spec, &ops).unwrap();
    backend.set_profiling(true);
    let t = Instant::now();
    let reps = 20;
    for _ in 0..reps {
        backend.einsum(spec, &ops).unwrap();
    }
    println!("mean {:.3} ms", t.elapsed().as_secs_f64() * 1e3 / reps as f64);
    println!("{}", backend.profile_report());
}
