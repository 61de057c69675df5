"""The tensor-network workloads of workloads.txt on numpy and JAX, for comparison with
`cargo bench -p strata-kernels --bench tn_workloads`.

    taskset -c 0 python3 peers.py --threads 1     # one core (JAX follows the affinity)
    python3 peers.py --threads 2

`--cpu` times by the process's CPU time instead of the wall clock (use it with
`taskset -c 0` and one thread, beside `tn_workloads -- --cpu`): time slices other
processes take on a shared machine then do not count.

Parties per workload, alternated within each repetition: numpy transpose + matmul per
step, numpy einsum of the whole network with a precomputed optimal path, and jax.jit of
the same lax.dot_general steps (compile excluded). Prints the median time and GFLOP/s
(real flops: 2 per real multiply-add, 8 per complex one).
"""

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = {"f32": np.float32, "f64": np.float64, "c32": np.complex64, "c64": np.complex128}


def parse(path):
    workloads, cur = [], None
    for raw in open(path):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if words[0] == "workload":
            cur = {"name": words[1], "dtype": words[2], "dims": {}, "tensors": [], "steps": []}
            workloads.append(cur)
        elif words[0] == "dims":
            for w in words[1:]:
                k, v = w.split("=")
                cur["dims"][k] = int(v)
        elif words[0] == "tensor":
            stored = words[3].split("=")[1] if len(words) > 3 else words[2]
            cur["tensors"].append((words[1], words[2], stored))
        elif words[0] == "step":
            out, lhs, rhs = words[1], words[3], words[4]
            conj = rhs.endswith("*")
            batch = words[5].split("=")[1] if len(words) > 5 else ""
            cur["steps"].append((out, lhs, rhs.rstrip("*"), conj, batch))
    return workloads


def plan(w):
    """Labels of every tensor and, per step, the dot_general numbers and flops."""
    labels = {name: lab for name, lab, _ in w["tensors"]}
    steps, flops = [], 0
    cplx = w["dtype"].startswith("c")
    for out, lhs, rhs, conj, batch in w["steps"]:
        ll, rl = labels[lhs], labels[rhs]
        contract = [c for c in ll if c in rl and c not in batch]
        bat = [c for c in ll if c in batch]
        lfree = [c for c in ll if c not in rl]
        rfree = [c for c in rl if c not in ll]
        labels[out] = "".join(bat + lfree + rfree)
        macs = 1
        for c in bat + lfree + rfree + contract:
            macs *= w["dims"][c]
        flops += macs * (8 if cplx else 2)
        steps.append((out, lhs, rhs, conj, bat, contract, lfree, rfree))
    return labels, steps, flops


def inputs(w, rng):
    dt = DTYPES[w["dtype"]]
    out = {}
    for name, lab, stored in w["tensors"]:
        shape = [w["dims"][c] for c in stored]
        x = rng.standard_normal(shape)
        if np.issubdtype(dt, np.complexfloating):
            x = x + 1j * rng.standard_normal(shape)
        x = x.astype(dt)
        # The logical tensor is a permuted view of the stored buffer.
        out[name] = np.transpose(x, [stored.index(c) for c in lab])
    return out


def numpy_steps(w, labels, steps):
    def run(t):
        t = dict(t)
        for out, lhs, rhs, conj, bat, contract, lfree, rfree in steps:
            a, b = t[lhs], t[rhs]
            if conj:
                b = np.conj(b)
            la, lb = labels[lhs], labels[rhs]
            d = w["dims"]
            nb = int(np.prod([d[c] for c in bat])) if bat else 1
            m = int(np.prod([d[c] for c in lfree])) if lfree else 1
            n = int(np.prod([d[c] for c in rfree])) if rfree else 1
            k = int(np.prod([d[c] for c in contract])) if contract else 1
            a = np.transpose(a, [la.index(c) for c in bat + lfree + contract]).reshape(nb, m, k)
            b = np.transpose(b, [lb.index(c) for c in bat + contract + rfree]).reshape(nb, k, n)
            t[out] = np.matmul(a, b).reshape([d[c] for c in bat + lfree + rfree])
        return t[steps[-1][0]]

    return run


def einsum_whole(w, labels, steps):
    names = [name for name, _, _ in w["tensors"]]
    conj = {rhs for _, _, rhs, c, _, _, _, _ in steps if c}
    final = labels[steps[-1][0]]
    batch = set("".join("".join(s[4]) for s in steps))
    spec = ",".join(labels[n] for n in names) + "->" + final
    # Batch labels appear in two inputs and the output: einsum handles that natively.
    del batch
    path = None

    def run(t):
        nonlocal path
        ops = [np.conj(t[n]) if n in conj else t[n] for n in names]
        if path is None:
            path = np.einsum_path(spec, *ops, optimize="optimal")[0]
        return np.einsum(spec, *ops, optimize=path)

    return run


def jax_steps(w, labels, steps):
    import jax
    from jax import lax

    jax.config.update("jax_enable_x64", True)
    names = [name for name, _, _ in w["tensors"]]

    def f(*xs):
        t = dict(zip(names, xs))
        for out, lhs, rhs, conj, bat, contract, lfree, rfree in steps:
            a, b = t[lhs], t[rhs]
            if conj:
                b = jax.numpy.conj(b)
            la, lb = labels[lhs], labels[rhs]
            dn = (([la.index(c) for c in contract], [lb.index(c) for c in contract]),
                  ([la.index(c) for c in bat], [lb.index(c) for c in bat]))
            t[out] = lax.dot_general(a, b, dn, precision=lax.Precision.HIGHEST)
        return t[steps[-1][0]]

    jf = jax.jit(f)

    def run(t, cache={}):
        key = id(t)
        if key not in cache:
            cache.clear()
            cache[key] = [jax.device_put(np.asarray(t[n])) for n in names]
        return jf(*cache[key]).block_until_ready()

    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--filter", default="")
    ap.add_argument("--no-jax", action="store_true")
    ap.add_argument("--cpu", action="store_true")
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    print(f"{'workload':<32} {'dtype':>5} {'GFLOP':>8} {'numpy_mm':>9} {'einsum':>9} {'jax':>9}   (GFLOP/s, median of {args.reps})")
    with threadpool_limits(args.threads):
        for w in parse(os.path.join(HERE, "workloads.txt")):
            if args.filter not in w["name"]:
                continue
            labels, steps, flops = plan(w)
            t = inputs(w, rng)
            parties = [("numpy_mm", numpy_steps(w, labels, steps)), ("einsum", einsum_whole(w, labels, steps))]
            if not args.no_jax:
                parties.append(("jax", jax_steps(w, labels, steps)))
            ref = parties[0][1](t)
            slow = set()
            for name, run in parties[1:]:
                run(t)  # JAX compiles here
                s = time.perf_counter()
                got = np.asarray(run(t))
                if time.perf_counter() - s > 1.0:
                    slow.add(name)  # not repeated: reported as below 1 s per run
                scale = np.abs(ref).max()
                assert np.allclose(got, ref, rtol=1e-3, atol=1e-3 * scale), (w["name"], name)
            parties = [(n, r) for n, r in parties if n not in slow]
            times = {name: [] for name, _ in parties}
            for _ in range(args.reps):
                clock = time.process_time if args.cpu else time.perf_counter
                for name, run in parties:
                    s = clock()
                    run(t)
                    times[name].append(clock() - s)
            cells = []
            for name in ["numpy_mm", "einsum", "jax"]:
                if name in times:
                    cells.append(f"{flops / np.median(times[name]) / 1e9:9.2f}")
                else:
                    cells.append("   <1/s  " if name in slow else "        -")
            print(f"{w['name']:<32} {w['dtype']:>5} {flops / 1e9:8.3f} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()
