"""numpy and JAX peers for `cargo xtask bench`.

Measures the same cases as the Rust runner, with the same units, and writes one
tab-separated line per measurement: case, unit, higher_is_better, who, median, best.
Peers that do not import are skipped with a `note:` line on stderr; nothing is installed.
"""
import argparse
import os
import sys
import time


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--filter", default=None)
    p.add_argument("--threads", type=int, default=None)
    return p.parse_args()


ARGS = parse()
THREADS = ARGS.threads or len(os.sched_getaffinity(0))
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, str(THREADS))

REPS = 5 if ARGS.quick else 11
TARGET_S = 0.05 if ARGS.quick else 0.2
LINES = []


def wanted(case):
    return ARGS.filter is None or ARGS.filter in case


def measure(fn):
    """Per-call seconds: median and best over REPS batches sized to ~TARGET_S."""
    fn()
    n, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - t0
        if t >= TARGET_S / 4 or n >= 1 << 22:
            break
        n *= 4
    # Size each repetition's batch to about TARGET_S.
    n = max(1, int(n * TARGET_S / max(t, 1e-9)))
    samples = []
    for _ in range(REPS):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n)
    samples.sort()
    return samples[len(samples) // 2], samples[0]


def record(case, unit, higher, who, fn, work):
    """work converts seconds per call into the case's unit."""
    if not wanted(case):
        return
    med, best = measure(fn)
    a, b = work(med), work(best)
    if higher:
        a, b = a, max(a, b)
    else:
        a, b = a, min(a, b)
    LINES.append(f"{case}\t{unit}\t{1 if higher else 0}\t{who}\t{a}\t{b}")


def gflops(flops):
    return lambda s: flops / s / 1e9


def gbps(nbytes):
    return lambda s: nbytes / s / 1e9


def ns(s):
    return s * 1e9


def bench_numpy():
    try:
        import numpy as np
    except ImportError:
        print("note: numpy is not importable by python3; its column is empty", file=sys.stderr)
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    rng = np.random.default_rng(0)
    n = 1024
    for dt, tag, flop in ((np.float64, "f64", 2), (np.float32, "f32", 2), (np.complex128, "c64", 8)):
        a = rng.standard_normal((n, n)).astype(dt)
        b = rng.standard_normal((n, n)).astype(dt)
        if tag == "c64":
            a = a + 1j * rng.standard_normal((n, n))
            b = b + 1j * rng.standard_normal((n, n))
        record(f"gemm_{tag}_1024_tmax", "GFLOP/s", True, "numpy", lambda: a @ b, gflops(flop * n**3))
        if tag == "f64" and threadpool_limits is not None:
            with threadpool_limits(1):
                record("gemm_f64_1024_t1", "GFLOP/s", True, "numpy", lambda: a @ b, gflops(2 * n**3))
    d = 32
    x = rng.standard_normal((d, d, d, d))
    y = rng.standard_normal((d, d, d, d))
    record("einsum_abcd_cdef_f64_d32", "GFLOP/s", True, "numpy",
           lambda: np.einsum("abcd,cdef->abef", x, y, optimize=True), gflops(2 * d**6))
    for bond in (64, 128, 256):
        p = rng.standard_normal((bond, 2, bond))
        q = rng.standard_normal((bond, 2, bond))
        record(f"tn_iaj_jbk_f64_d{bond}", "GFLOP/s", True, "numpy",
               lambda: np.einsum("iaj,jbk->iabk", p, q, optimize=True), gflops(2 * bond * 2 * bond * 2 * bond))
    m = 8 * 1024 * 1024
    a = rng.standard_normal(m)
    b = rng.standard_normal(m)
    c = np.empty(m)
    record("add_f64_8m_into", "GB/s", True, "numpy", lambda: np.add(a, b, out=c), gbps(24 * m))
    record("add_f64_8m_alloc", "GB/s", True, "numpy", lambda: a + b, gbps(24 * m))
    record("sum_f64_8m", "GB/s", True, "numpy", lambda: a.sum(), gbps(8 * m))
    record("exp_f64_8m", "GB/s", True, "numpy", lambda: np.exp(a, out=c), gbps(16 * m))
    e = 64 * 64 * 64 * 32  # 64 MiB of f64
    t = rng.standard_normal(e).reshape(64, 64, 64, 32)
    t_out = np.empty(t.shape[::-1])
    record("permute_f64_64mib_3210", "GB/s", True, "numpy",
           lambda: np.copyto(t_out, t.transpose(3, 2, 1, 0)), gbps(16 * e))
    record("permute_alloc_f64_64mib_3210", "GB/s", True, "numpy",
           lambda: np.ascontiguousarray(t.transpose(3, 2, 1, 0)), gbps(16 * e))
    rows, row_len, gathered = 1 << 16, 8, 1 << 20
    table = rng.standard_normal((rows, row_len))
    idx = rng.integers(0, rows, gathered)
    record("gather_1m_rows", "GB/s", True, "numpy", lambda: np.take(table, idx, axis=0),
           gbps(gathered * row_len * 16 + gathered * 8))
    one_a, one_b = np.ones(1), np.ones(1)
    record("tiny_add_ns", "ns", False, "numpy", lambda: one_a + one_b, ns)
    m2a, m2b = rng.standard_normal((2, 2)), rng.standard_normal((2, 2))
    record("matmul_2x2_ns", "ns", False, "numpy", lambda: m2a @ m2b, ns)


def bench_jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print("note: jax is not importable by python3; its column is empty", file=sys.stderr)
        return
    jax.config.update("jax_enable_x64", True)
    key = jax.random.PRNGKey(0)
    n = 1024
    for dt, tag, flop in ((jnp.float64, "f64", 2), (jnp.float32, "f32", 2), (jnp.complex128, "c64", 8)):
        a = jax.random.normal(key, (n, n)).astype(dt)
        b = jax.random.normal(key, (n, n)).astype(dt)
        f = jax.jit(lambda a, b: a @ b)
        record(f"gemm_{tag}_1024_tmax", "GFLOP/s", True, "jax", lambda: f(a, b).block_until_ready(), gflops(flop * n**3))
    d = 32
    x = jax.random.normal(key, (d, d, d, d), dtype=jnp.float64)
    ein = jax.jit(lambda x, y: jnp.einsum("abcd,cdef->abef", x, y))
    record("einsum_abcd_cdef_f64_d32", "GFLOP/s", True, "jax", lambda: ein(x, x).block_until_ready(), gflops(2 * d**6))
    tn = jax.jit(lambda p, q: jnp.einsum("iaj,jbk->iabk", p, q))
    for bond in (64, 128, 256):
        p = jax.random.normal(key, (bond, 2, bond), dtype=jnp.float64)
        record(f"tn_iaj_jbk_f64_d{bond}", "GFLOP/s", True, "jax", lambda: tn(p, p).block_until_ready(),
               gflops(8 * bond**3))
    m = 8 * 1024 * 1024
    a = jax.random.normal(key, (m,), dtype=jnp.float64)
    add = jax.jit(lambda a, b: a + b)
    record("add_f64_8m_alloc", "GB/s", True, "jax", lambda: add(a, a).block_until_ready(), gbps(24 * m))
    s = jax.jit(jnp.sum)
    record("sum_f64_8m", "GB/s", True, "jax", lambda: s(a).block_until_ready(), gbps(8 * m))
    ex = jax.jit(jnp.exp)
    record("exp_f64_8m", "GB/s", True, "jax", lambda: ex(a).block_until_ready(), gbps(16 * m))
    e = 64 * 64 * 64 * 32
    t = jax.random.normal(key, (64, 64, 64, 32), dtype=jnp.float64)
    perm = jax.jit(lambda t: jnp.transpose(t, (3, 2, 1, 0)))
    # jax has no destination argument: its permutation always allocates.
    record("permute_alloc_f64_64mib_3210", "GB/s", True, "jax", lambda: perm(t).block_until_ready(), gbps(16 * e))
    one = jnp.ones(1, dtype=jnp.float64)
    record("tiny_add_ns", "ns", False, "jax", lambda: add(one, one).block_until_ready(), ns)
    m2 = jax.random.normal(key, (2, 2), dtype=jnp.float64)
    mm = jax.jit(lambda a, b: a @ b)
    record("matmul_2x2_ns", "ns", False, "jax", lambda: mm(m2, m2).block_until_ready(), ns)


bench_numpy()
bench_jax()
with open(ARGS.out, "w") as f:
    f.write("\n".join(LINES) + ("\n" if LINES else ""))
