#!/usr/bin/env python3
"""The workloads of benches/workloads.txt in numpy, opt_einsum and JAX: median seconds
per call as JSON lines, the same format as the tn_medians bench.

    taskset -c 0 python peers.py --threads 1      # one core, BLAS and XLA on one thread
    python peers.py --threads 2

Peers: np.einsum with the optimal path precomputed (np_path), np.einsum(optimize=
'optimal') as users call it (np_optimal: path search on every call), an opt_einsum
contract_expression on numpy (opt_einsum), and jax.jit(jnp.einsum) (jax, compile
excluded).
"""
import argparse
import json
import os
import statistics
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--threads", type=int, default=1)
parser.add_argument("--filter", default="")
parser.add_argument("--peers", default="np_path,np_optimal,opt_einsum,jax")
args = parser.parse_args()

# Thread counts must be fixed before numpy and jax load their libraries.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(args.threads)
if args.threads == 1:
    os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"

import numpy as np  # noqa: E402
import opt_einsum as oe  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MIN_CALLS = 7
MIN_TIME = 0.4
NAIVE_LIMIT = 2e9


def value(k, n):
    i = np.arange(n, dtype=np.int64)
    return ((i * 7919 + k * 104729 + 13) % 1999) / 1999.0 - 0.5


def operands(shapes, dtype):
    ops = []
    for k, s in enumerate(shapes):
        n = int(np.prod(s))
        if dtype == "c64":
            v = value(k, 2 * n)
            ops.append((v[0::2] + 1j * v[1::2]).reshape(s))
        else:
            ops.append(value(k, n).reshape(s))
    return ops


def median_time(fn):
    t = time.perf_counter()
    fn()
    first = time.perf_counter() - t
    if first > 2.0:
        # numpy's memory-limited paths can take seconds per call: one more call decides.
        t = time.perf_counter()
        fn()
        return min(first, time.perf_counter() - t)
    times = []
    start = time.perf_counter()
    while len(times) < MIN_CALLS or time.perf_counter() - start < MIN_TIME:
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    peers = args.peers.split(",")
    jax = None
    if "jax" in peers:
        import jax as jax_module
        import jax.numpy as jnp

        jax_module.config.update("jax_enable_x64", True)
        jax = (jax_module, jnp)
    with open(os.path.join(HERE, "workloads.txt")) as f:
        lines = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    with threadpool_limits(limits=args.threads):
        for line in lines:
            name, spec, shapes, dtype = line.split("|")
            if args.filter not in name:
                continue
            shapes = [tuple(int(d) for d in s.split(",")) for s in shapes.split(";")]
            ops = operands(shapes, dtype)
            results = {}
            path, report = np.einsum_path(spec, *ops, optimize="optimal")
            # numpy's default memory limit can leave a naive loop over many operands in
            # its "optimal" path; past NAIVE_LIMIT flops one call takes minutes, so those
            # are reported as skipped with numpy's own flop count.
            np_flops = float(report.split("Optimized FLOP count:")[1].split()[0])
            numpy_runs = np_flops <= NAIVE_LIMIT
            if "np_path" in peers and numpy_runs:
                results["np_path"] = median_time(lambda: np.einsum(spec, *ops, optimize=path))
            if "np_optimal" in peers and numpy_runs:
                results["np_optimal"] = median_time(lambda: np.einsum(spec, *ops, optimize="optimal"))
            if not numpy_runs:
                for peer in ("np_path", "np_optimal"):
                    if peer in peers:
                        print(json.dumps({"name": name, "threads": args.threads, "peer": peer, "skipped": True,
                                          "numpy_flops": np_flops}))
            if "opt_einsum" in peers:
                expr = oe.contract_expression(spec, *shapes, optimize="optimal")
                results["opt_einsum"] = median_time(lambda: expr(*ops))
            if jax is not None:
                jax_module, jnp = jax
                f = jax_module.jit(lambda *x: jnp.einsum(spec, *x, optimize="optimal"))
                dev = [jax_module.device_put(o) for o in ops]
                f(*dev).block_until_ready()
                results["jax"] = median_time(lambda: f(*dev).block_until_ready())
            for peer, t in results.items():
                print(json.dumps({"name": name, "threads": args.threads, "peer": peer, "median_s": t}))
            sys.stdout.flush()


main()
