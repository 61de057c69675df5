"""numpy and JAX peers for `cargo xtask bench`.

Measures, for the cases it is given (--only), the same work as the Rust runner in the
same units, and appends records to --out in the format of xtask/src/record.rs (one
tab-separated line each: value, check, fail, done, info, note), flushing after every
case. The tensor-network cases read benches/tn/workloads.tn (--workloads) and generate
the same inputs as the Rust runner; their results are compared with strata's, which the
runner left in --results.

With --threads 1 the process pins itself to one CPU before numpy and JAX load (what
`taskset -c` does), so OpenBLAS and XLA see one CPU; otherwise both use --threads.
--list prints which of the --only cases this script measures, without importing numpy.
"""
import argparse
import os
import sys
import time


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--out")
    p.add_argument("--only", default="")
    p.add_argument("--list", action="store_true")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--workloads", default=None)
    p.add_argument("--results", default=None)
    p.add_argument("--durations", default=None)
    p.add_argument("--self-test", action="store_true")
    return p.parse_args()


ARGS = parse_args()
THREADS = ARGS.threads or len(os.sched_getaffinity(0))
if THREADS == 1 and hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(THREADS)
# XLA's CPU client sizes its pool from the affinity mask; keep its own flags otherwise.
os.environ.setdefault("XLA_FLAGS", "")

REPS = 5 if ARGS.quick else 11
TARGET_S = 0.04 if ARGS.quick else 0.15


# ----------------------------------------------------------------- the workloads file

def read_workloads(path):
    """The workloads of benches/tn/workloads.tn (validated by the Rust side's tests)."""
    workloads = []
    with open(path) as f:
        for raw in f:
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            w = line.split()
            if w[0] == "workload":
                workloads.append({"name": w[1], "dtype": w[2], "class": w[3], "inputs": [], "steps": []})
            elif w[0] == "input":
                workloads[-1]["inputs"].append((w[1], tuple(int(d) for d in w[2:])))
            elif w[0] == "step":
                def axes(s):
                    return [] if s in ("-", "") else [int(a) for a in s.split(",")]

                def pair(s):
                    l, r = s.split(":")
                    return axes(l), axes(r)

                def operand(s):
                    if s.startswith("conj(") and s.endswith(")"):
                        return (s[5:-1], True)
                    return (s, False)

                lc, rc = pair(w[6])
                lb, rb = pair(w[8]) if len(w) > 8 else ([], [])
                workloads[-1]["steps"].append({
                    "out": w[1], "lhs": operand(w[3]), "rhs": operand(w[4]),
                    "lc": lc, "rc": rc, "lb": lb, "rb": rb,
                })
            else:
                raise ValueError(f"workloads.tn: unknown line kind {w[0]!r}")
    return workloads


def fnv1a(s):
    h = 0xCBF29CE484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def splitmix_unit(np, seed, n):
    """Values 0..n of the stream `seed` in [-1, 1), as benches/src/tn/generate.rs."""
    golden = np.uint64(0x9E3779B97F4A7C15)
    j = np.arange(1, n + 1, dtype=np.uint64)
    z = np.uint64(seed) + j * golden
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * (2.0 / 2**53) - 1.0


def workload_inputs(np, w):
    dt = {"f64": np.float64, "f32": np.float32, "c64": np.complex128}[w["dtype"]]
    out = {}
    for name, shape in w["inputs"]:
        size = int(np.prod(shape))
        seed = fnv1a(f"{w['name']}/{name}")
        if w["dtype"] == "c64":
            v = splitmix_unit(np, seed, 2 * size)
            x = (v[0::2] + 1j * v[1::2]).astype(dt)
        else:
            x = splitmix_unit(np, seed, size).astype(dt)
        out[name] = x.reshape(shape)
    return out


def step_shapes(w):
    """Shapes of every tensor of a workload, and the flops of its steps."""
    shapes = dict(w["inputs"])
    macs = 0
    for s in w["steps"]:
        l, r = shapes[s["lhs"][0]], shapes[s["rhs"][0]]
        lf = [a for a in range(len(l)) if a not in s["lc"] and a not in s["lb"]]
        rf = [a for a in range(len(r)) if a not in s["rc"] and a not in s["rb"]]
        out = tuple([l[a] for a in s["lb"]] + [l[a] for a in lf] + [r[a] for a in rf])
        k = 1
        for a in s["lc"]:
            k *= l[a]
        n = 1
        for d in out:
            n *= d
        macs += n * k
        shapes[s["out"]] = out
    per_mac = 8 if w["dtype"] == "c64" else 2
    return shapes, macs * per_mac


def einsum_spec(w):
    """The whole workload as one einsum (as Workload::einsum in benches/src/tn/mod.rs)."""
    parent = []

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    shapes = dict(w["inputs"])
    labels_of = {}
    occurrences = []
    for s in w["steps"]:
        sides = []
        for name, conj in (s["lhs"], s["rhs"]):
            if name in labels_of:
                sides.append(labels_of.pop(name))
            else:
                rank = len(shapes[name])
                l = list(range(len(parent), len(parent) + rank))
                parent.extend(l)
                occurrences.append(((name, conj), l))
                sides.append(l)
        l, r = sides
        for a, b in list(zip(s["lc"], s["rc"])) + list(zip(s["lb"], s["rb"])):
            x, y = find(l[a]), find(r[b])
            parent[y] = x
        lf = [a for a in range(len(l)) if a not in s["lc"] and a not in s["lb"]]
        rf = [a for a in range(len(r)) if a not in s["rc"] and a not in s["rb"]]
        out = [l[a] for a in s["lb"]] + [l[a] for a in lf] + [r[a] for a in rf]
        labels_of[s["out"]] = out
        shapes[s["out"]] = tuple([shapes[s["lhs"][0]][a] for a in s["lb"] + lf] + [shapes[s["rhs"][0]][a] for a in rf])
    result = labels_of[w["steps"][-1]["out"]]
    letters = {}
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def letter(x):
        root = find(x)
        if root not in letters:
            letters[root] = alphabet[len(letters)]
        return letters[root]

    terms = ["".join(letter(x) for x in l) for _, l in occurrences]
    out = "".join(letter(x) for x in result)
    return ",".join(terms) + "->" + out, [o for o, _ in occurrences]


def self_test():
    import numpy as np
    assert fnv1a("") == 0xCBF29CE484222325
    assert fnv1a("a") == 0xAF63DC4C8601EC8C
    v = splitmix_unit(np, fnv1a("mps_env_chi64_d2/A"), 3)
    want = SELF_TEST_VALUES
    assert all(abs(a - b) == 0.0 for a, b in zip(v, want)), (list(v), want)
    path = ARGS.workloads or os.path.join(os.path.dirname(__file__), "..", "..", "benches", "tn", "workloads.tn")
    ws = read_workloads(path)
    spec = {w["name"]: einsum_spec(w)[0] for w in ws}
    assert spec["mps_env_chi64_d2"] == "ab,acd,bce->de", spec["mps_env_chi64_d2"]
    assert spec["batched_b1024_n16"] == "abc,acd->abd"
    assert spec["permuted_kmb_bnk_c64"] == "abc,cda->cbd"
    names = set(cases_known(ws))
    assert all(f"einsum_{w['name']}_{t}" in names and f"{w['name']}_{t}" in names for w in ws for t in ("t1", "tmax"))
    assert path_flops("  Naive FLOP count:  1.2e+03\n  Optimized FLOP count:  4.500e+02\n") == 450.0
    print(f"peers.py self-test passed ({len(ws)} workloads)")


# The first three values of input A of mps_env_chi64_d2 (asserted on the Rust side too).
SELF_TEST_VALUES = [-0.5436707696964116, -0.8878692824834487, 0.7500244487547176]


# ------------------------------------------------------------------ measuring

class Run:
    def __init__(self, out_path):
        self.out = open(out_path, "a") if out_path else None
        self.lines = []

    def emit(self, *fields):
        self.lines.append("\t".join(str(f).replace("\t", " ").replace("\n", " ") for f in fields))

    def flush(self):
        if self.out and self.lines:
            self.out.write("\n".join(self.lines) + "\n")
            self.out.flush()
        self.lines = []


def measure(fn):
    """Seconds per call: median and best over REPS batches of about TARGET_S."""
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    if first >= TARGET_S:
        n, per = 1, first
    else:
        n = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            t = time.perf_counter() - t0
            if t >= TARGET_S / 4 or n >= 1 << 22:
                break
            n *= 4
        per = t / n
        n = max(1, int(TARGET_S / max(per, 1e-12)))
    reps = min(REPS, 3) if per > 4 * TARGET_S else REPS
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n)
    samples.sort()
    return samples[len(samples) // 2], samples[0]


class Ctx:
    """What a case function uses: records figures and checks for its case."""

    def __init__(self, run, case):
        self.run, self.case = run, case

    def time(self, who, fn, per_call):
        med, best = measure(fn)
        self.run.emit("value", self.case, who, per_call(med), per_call(best))

    def check(self, who, rel_err, tol):
        self.run.emit("check", self.case, who, rel_err, tol)

    def fail(self, who, message):
        self.run.emit("fail", self.case, who, message)


def gflops(flops):
    return lambda s: flops / s / 1e9


def gbps(nbytes):
    return lambda s: nbytes / s / 1e9


def ns(s):
    return s * 1e9


# ------------------------------------------------------------------ the cases

def load_numpy():
    import numpy as np
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(THREADS)
    except ImportError:
        pass
    return np


_JAX = None
HAVE_JAX = True
HAVE_OPT_EINSUM = True


def load_jax():
    global _JAX
    if _JAX is None:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        from jax import lax
        _JAX = (jax, jnp, lax)
    return _JAX


def rng(np, seed):
    return np.random.default_rng(seed)


ANALYTIC_INPUT = {
    "exp": lambda x: 5.0 * x,
    "log": lambda x: 50.0 * (x + 1.0) + 1e-3,
    "sin": lambda x: 30.0 * x,
    "tanh": lambda x: 4.0 * x,
}


def case_latency(ctx, name, peers):
    np = load_numpy()
    if name == "tiny_add_ns":
        a, b = np.ones(1), np.ones(1)
        ctx.time("numpy", lambda: a + b, ns)
        if HAVE_JAX and "jax" in peers:
            jax, jnp, _ = load_jax()
            add = jax.jit(lambda a, b: a + b)
            ja, jb = jnp.ones(1, dtype=jnp.float64), jnp.ones(1, dtype=jnp.float64)
            ctx.time("jax", lambda: add(ja, jb).block_until_ready(), ns)
    else:
        m = rng(np, 1).standard_normal((2, 2))
        ctx.time("numpy", lambda: m @ m, ns)
        if not HAVE_JAX:
            return
        jax, jnp, _ = load_jax()
        mm = jax.jit(lambda a, b: a @ b)
        jm = jnp.asarray(m)
        ctx.time("jax", lambda: mm(jm, jm).block_until_ready(), ns)


def parse_size(s):
    return int(s[:-1]) << (20 if s.endswith("m") else 10)


def case_flat(ctx, name):
    """add/mul into or allocating, sums, analytic functions, in the runner's units."""
    np = load_numpy()
    parts = name.split("_")
    op, dt = parts[0], {"f64": np.float64, "f32": np.float32}[parts[1]]
    n = parse_size(parts[2])
    g = rng(np, 5)
    itemsize = np.dtype(dt).itemsize
    if op == "sum":
        a = g.uniform(-1, 1, n).astype(dt)
        ctx.time("numpy", lambda: a.sum(), gbps(itemsize * n))
        if not HAVE_JAX:
            return
        jax, jnp, _ = load_jax()
        s = jax.jit(jnp.sum)
        ja = jnp.asarray(a)
        ctx.time("jax", lambda: s(ja).block_until_ready(), gbps(itemsize * n))
        return
    if op in ANALYTIC_INPUT:
        a = ANALYTIC_INPUT[op](g.uniform(-1, 1, n)).astype(dt)
        c = np.empty_like(a)
        f = getattr(np, op)
        ctx.time("numpy", lambda: f(a, out=c), gbps(2 * itemsize * n))
        if not HAVE_JAX:
            return
        jax, jnp, _ = load_jax()
        jf = jax.jit(getattr(jnp, op))
        ja = jnp.asarray(a)
        ctx.time("jax", lambda: jf(ja).block_until_ready(), gbps(2 * itemsize * n))
        return
    a = g.uniform(-1, 1, n).astype(dt)
    b = g.uniform(-1, 1, n).astype(dt)
    f = np.add if op == "add" else np.multiply
    if parts[3] == "into":
        c = np.empty_like(a)
        ctx.time("numpy", lambda: f(a, b, out=c), gbps(3 * itemsize * n))
    else:
        ctx.time("numpy", lambda: f(a, b), gbps(3 * itemsize * n))
        if not HAVE_JAX:
            return
        jax, jnp, _ = load_jax()
        jf = jax.jit(lambda x, y: x + y if op == "add" else x * y)
        ja, jb = jnp.asarray(a), jnp.asarray(b)
        ctx.time("jax", lambda: jf(ja, jb).block_until_ready(), gbps(3 * itemsize * n))


def case_movement(ctx, name):
    np = load_numpy()
    g = rng(np, 7)
    if name.startswith("permute"):
        t = g.standard_normal(64 * 64 * 64 * 32).reshape(64, 64, 64, 32)
        e = t.size
        if name == "permute_f64_64mib_3210":
            out = np.empty(t.shape[::-1])
            ctx.time("numpy", lambda: np.copyto(out, t.transpose(3, 2, 1, 0)), gbps(16 * e))
        else:
            ctx.time("numpy", lambda: np.ascontiguousarray(t.transpose(3, 2, 1, 0)), gbps(16 * e))
            if not HAVE_JAX:
                return
            jax, jnp, _ = load_jax()
            perm = jax.jit(lambda t: jnp.transpose(t, (3, 2, 1, 0)))
            jt = jnp.asarray(t)
            ctx.time("jax", lambda: perm(jt).block_until_ready(), gbps(16 * e))
    else:
        rows, row_len, gathered = 1 << 16, 8, 1 << 20
        table = g.standard_normal((rows, row_len))
        idx = g.integers(0, rows, gathered)
        ctx.time("numpy", lambda: np.take(table, idx, axis=0), gbps(gathered * row_len * 16 + gathered * 8))


def case_gemm(ctx, name):
    np = load_numpy()
    _, tag, n, _ = name.split("_")
    n = int(n)
    dt = {"f64": np.float64, "f32": np.float32, "c64": np.complex128}[tag]
    g = rng(np, 3)
    a = g.standard_normal((n, n)).astype(dt)
    b = g.standard_normal((n, n)).astype(dt)
    if tag == "c64":
        a = a + 1j * g.standard_normal((n, n))
        b = b + 1j * g.standard_normal((n, n))
    flops = (8 if tag == "c64" else 2) * n**3
    ctx.time("numpy", lambda: a @ b, gflops(flops))
    if not HAVE_JAX:
        return
    jax, jnp, _ = load_jax()
    mm = jax.jit(lambda a, b: a @ b)
    ja, jb = jnp.asarray(a), jnp.asarray(b)
    ctx.time("jax", lambda: mm(ja, jb).block_until_ready(), gflops(flops))


def case_contraction(ctx, name):
    np = load_numpy()
    jax, jnp = load_jax()[:2] if HAVE_JAX else (None, None)
    g = rng(np, 9)
    if name == "einsum_abcd_cdef_f64_d32":
        d = 32
        x, y = g.standard_normal((d,) * 4), g.standard_normal((d,) * 4)
        ctx.time("numpy", lambda: np.einsum("abcd,cdef->abef", x, y, optimize=True), gflops(2 * d**6))
        if not HAVE_JAX:
            return
        f = jax.jit(lambda x, y: jnp.einsum("abcd,cdef->abef", x, y))
        jx, jy = jnp.asarray(x), jnp.asarray(y)
        ctx.time("jax", lambda: f(jx, jy).block_until_ready(), gflops(2 * d**6))
    else:
        bond = int(name.rsplit("_d", 1)[1])
        p, q = g.standard_normal((bond, 2, bond)), g.standard_normal((bond, 2, bond))
        flops = 2 * (2 * bond) * bond * (2 * bond)
        ctx.time("numpy", lambda: np.einsum("iaj,jbk->iabk", p, q, optimize=True), gflops(flops))
        if not HAVE_JAX:
            return
        f = jax.jit(lambda p, q: jnp.einsum("iaj,jbk->iabk", p, q))
        jp, jq = jnp.asarray(p), jnp.asarray(q)
        ctx.time("jax", lambda: f(jp, jq).block_until_ready(), gflops(flops))


def check_against_strata(ctx, np, w, results):
    """Compares each party's result with strata's, which the runner left in --results."""
    strata_path = os.path.join(ARGS.results, ctx.case + ".bin") if ARGS.results else None
    tol = 2e-4 if w["dtype"] == "f32" else 1e-10
    if not (strata_path and os.path.exists(strata_path)):
        return
    dt = {"f64": np.float64, "f32": np.float32, "c64": np.complex128}[w["dtype"]]
    strata = np.fromfile(strata_path, dtype=dt)
    scale = max(float(np.max(np.abs(strata))) if strata.size else 0.0, 1e-300)
    for who, res in results.items():
        res = np.asarray(res).reshape(-1)
        if res.shape != strata.shape:
            ctx.check(who, float("inf"), tol)
            continue
        err = float(np.max(np.abs(res - strata))) / scale if res.size else 0.0
        ctx.check(who, err if np.isfinite(err) else float("inf"), tol)


def unbounded_optimal_path(np, spec, ops):
    """numpy's optimal path without its default memory limit (which, at the size of the
    largest input, forces naive loops of up to 10^6 times the flops on these networks)."""
    return np.einsum_path(spec, *ops, optimize=("optimal", float(2**62)))


def path_flops(report):
    """numpy's own flop estimate of a path, from np.einsum_path's report."""
    for line in report.splitlines():
        if "Optimized FLOP count" in line:
            return float(line.split(":", 1)[1])
    return float("nan")


# np.einsum(optimize='optimal') is timed only when numpy's estimate of the path it picks
# under its default memory limit is at most this many times that of the unbounded one:
# beyond, one call is a naive loop of minutes (10^3 times the flops on the MPO and DMRG
# workloads), and its row says so instead.
NUMPY_OPTIMAL_MAX_EXCESS = 16.0


def case_einsum(ctx, w):
    """The workload as one einsum string: np.einsum with the path precomputed, as users
    call it (optimize='optimal', path searched per call), opt_einsum's precomputed
    contract_expression, and jax.jit(jnp.einsum); GFLOP/s of the workload's steps."""
    np = load_numpy()
    _, flops = step_shapes(w)
    inputs = workload_inputs(np, w)
    complex_ = w["dtype"] == "c64"
    spec, occurrences = einsum_spec(w)

    def operands():
        # Conjugated inside every timed call, as strata's einsum case does.
        return [inputs[n].conj() if c and complex_ else inputs[n] for n, c in occurrences]

    ops_untimed = operands()
    path, free_report = unbounded_optimal_path(np, spec, ops_untimed)
    user_report = np.einsum_path(spec, *ops_untimed, optimize="optimal")[1]
    excess = path_flops(user_report) / path_flops(free_report)

    def numpy_einsum():
        return np.einsum(spec, *operands(), optimize=path)

    def numpy_optimal():
        return np.einsum(spec, *operands(), optimize="optimal")

    results = {"numpy-einsum": numpy_einsum()}
    time_optimal = excess <= NUMPY_OPTIMAL_MAX_EXCESS
    if time_optimal:
        results["numpy-einsum-opt"] = numpy_optimal()
    if HAVE_OPT_EINSUM:
        import opt_einsum
        # An exact search for the networks of the suite; dp (exact but for outer
        # products) where 'optimal' would take too long.
        strategy = "optimal" if len(ops_untimed) <= 9 else "dp"
        expr = opt_einsum.contract_expression(spec, *[x.shape for x in ops_untimed], optimize=strategy)

        def opt_einsum_call():
            return expr(*operands())

        results["opt_einsum"] = opt_einsum_call()
    if HAVE_JAX:
        jax, jnp, lax = load_jax()
        conj_flags = [c and complex_ for _, c in occurrences]

        def jax_einsum(*arrays):
            ops = [jnp.conj(x) if c else x for x, c in zip(arrays, conj_flags)]
            return jnp.einsum(spec, *ops, optimize="optimal", precision=lax.Precision.HIGHEST)

        jitted = jax.jit(jax_einsum)
        jargs = [jnp.asarray(inputs[n]) for n, _ in occurrences]
        results["jax"] = np.asarray(jitted(*jargs).block_until_ready())  # compiles here, untimed
    check_against_strata(ctx, np, w, results)
    ctx.time("numpy-einsum", numpy_einsum, gflops(flops))
    if time_optimal:
        ctx.time("numpy-einsum-opt", numpy_optimal, gflops(flops))
    else:
        ctx.fail("numpy-einsum-opt",
                 f"not timed: under numpy's default memory limit its 'optimal' path costs {excess:.0f}x "
                 "the flops of the unbounded one (naive loops)")
    if HAVE_OPT_EINSUM:
        ctx.time("opt_einsum", opt_einsum_call, gflops(flops))
    if HAVE_JAX:
        ctx.time("jax", lambda: jitted(*jargs).block_until_ready(), gflops(flops))


def case_tn(ctx, w):
    np = load_numpy()
    shapes, flops = step_shapes(w)
    inputs = workload_inputs(np, w)
    complex_ = w["dtype"] == "c64"

    def maybe_conj(x, conj):
        return x.conj() if conj and complex_ else x

    def numpy_steps():
        env = dict(inputs)
        for s in w["steps"]:
            (ln, lconj), (rn, rconj) = s["lhs"], s["rhs"]
            l, r = maybe_conj(env[ln], lconj), maybe_conj(env[rn], rconj)
            lf = [a for a in range(l.ndim) if a not in s["lc"] and a not in s["lb"]]
            rf = [a for a in range(r.ndim) if a not in s["rc"] and a not in s["rb"]]
            bshape = [l.shape[a] for a in s["lb"]]
            m = int(np.prod([l.shape[a] for a in lf], dtype=np.int64))
            k = int(np.prod([l.shape[a] for a in s["lc"]], dtype=np.int64))
            n = int(np.prod([r.shape[a] for a in rf], dtype=np.int64))
            b = int(np.prod(bshape, dtype=np.int64))
            lm = l.transpose(s["lb"] + lf + s["lc"]).reshape(b, m, k)
            rm = r.transpose(s["rb"] + s["rc"] + rf).reshape(b, k, n)
            out = np.matmul(lm, rm) if b > 1 else (lm[0] @ rm[0])[None]
            env[s["out"]] = out.reshape(bshape + [l.shape[a] for a in lf] + [r.shape[a] for a in rf])
        return env[w["steps"][-1]["out"]]

    spec, occurrences = einsum_spec(w)
    ops_untimed = [maybe_conj(inputs[n], c) for n, c in occurrences]
    path = unbounded_optimal_path(np, spec, ops_untimed)[0]

    def numpy_einsum():
        ops = [maybe_conj(inputs[n], c) for n, c in occurrences]
        return np.einsum(spec, *ops, optimize=path)

    names = [n for n, _ in w["inputs"]]
    results = {"numpy": numpy_steps(), "numpy-einsum": numpy_einsum()}
    if HAVE_JAX:
        jax, jnp, lax = load_jax()


        def jax_steps(*arrays):
            env = dict(zip(names, arrays))
            for s in w["steps"]:
                (ln, lconj), (rn, rconj) = s["lhs"], s["rhs"]
                l = jnp.conj(env[ln]) if lconj and complex_ else env[ln]
                r = jnp.conj(env[rn]) if rconj and complex_ else env[rn]
                env[s["out"]] = lax.dot_general(
                    l, r, (((tuple(s["lc"]), tuple(s["rc"])), (tuple(s["lb"]), tuple(s["rb"])))),
                    precision=lax.Precision.HIGHEST)
            return env[w["steps"][-1]["out"]]

        jitted = jax.jit(jax_steps)
        jargs = [jnp.asarray(inputs[n]) for n in names]
        results["jax"] = np.asarray(jitted(*jargs).block_until_ready())  # compiles here, untimed
    check_against_strata(ctx, np, w, results)
    ctx.time("numpy", numpy_steps, gflops(flops))
    ctx.time("numpy-einsum", numpy_einsum, gflops(flops))
    if HAVE_JAX:
        ctx.time("jax", lambda: jitted(*jargs).block_until_ready(), gflops(flops))


def cases_known(workloads):
    """Every case this script measures: name -> function(ctx)."""
    known = {}
    known["tiny_add_ns"] = lambda ctx: case_latency(ctx, "tiny_add_ns", ["numpy", "jax"])
    known["matmul_2x2_ns"] = lambda ctx: case_latency(ctx, "matmul_2x2_ns", ["numpy", "jax"])
    flat = ["add_f64_8m_into", "add_f64_8m_alloc", "mul_f64_8m_alloc", "add_f32_16m_alloc",
            "mul_f32_64k_into"]
    flat += [f"sum_f64_{s}" for s in ("1k", "64k", "1m", "8m", "64m")]
    flat += [f"add_f64_{s}_into" for s in ("4k", "16k", "64k", "256k")]
    flat += [f"{f}_{d}_8m_{t}" for f in ANALYTIC_INPUT for d in ("f64", "f32") for t in ("t1", "tmax")]
    for name in flat:
        known[name] = (lambda n: lambda ctx: case_flat(ctx, n))(name)
    for name in ("permute_f64_64mib_3210", "permute_alloc_f64_64mib_3210", "gather_1m_rows"):
        known[name] = (lambda n: lambda ctx: case_movement(ctx, n))(name)
    for tag in ("f64", "f32", "c64"):
        for n in (64, 128, 256, 512, 1024, 2048, 4096):
            for t in ("t1", "tmax"):
                name = f"gemm_{tag}_{n}_{t}"
                known[name] = (lambda nm: lambda ctx: case_gemm(ctx, nm))(name)
    for name in ["einsum_abcd_cdef_f64_d32"] + [f"tn_iaj_jbk_f64_d{b}" for b in (64, 128, 256)]:
        known[name] = (lambda n: lambda ctx: case_contraction(ctx, n))(name)
    for w in workloads:
        for t in ("t1", "tmax"):
            known[f"{w['name']}_{t}"] = (lambda wl: lambda ctx: case_tn(ctx, wl))(w)
            known[f"einsum_{w['name']}_{t}"] = (lambda wl: lambda ctx: case_einsum(ctx, wl))(w)
    return known


def clock(s):
    s = int(round(max(s, 0)))
    return f"{s // 3600}:{s // 60 % 60:02}:{s % 60:02}" if s >= 3600 else f"{s // 60}:{s % 60:02}"


def main():
    if ARGS.self_test:
        self_test()
        return
    workloads = read_workloads(ARGS.workloads) if ARGS.workloads else []
    known = cases_known(workloads)
    einsum_cases = {f"einsum_{w['name']}_{t}" for w in workloads for t in ("t1", "tmax")}
    plan = [c for c in ARGS.only.split(",") if c in known]
    if ARGS.list:
        print("\n".join(plan))
        return
    run = Run(ARGS.out)
    try:
        np = load_numpy()
        run.emit("info", "version:numpy", np.__version__)
        run.emit("info", "version:numpy-einsum", np.__version__)
        run.emit("info", "version:numpy-einsum-opt", np.__version__)
    except ImportError as e:
        run.emit("info", "absent:numpy", f"not importable ({e})")
        for who in ("numpy-einsum", "numpy-einsum-opt", "opt_einsum"):
            run.emit("info", f"absent:{who}", "numpy not importable")
        run.flush()
        return
    global HAVE_JAX, HAVE_OPT_EINSUM
    try:
        import opt_einsum
        run.emit("info", "version:opt_einsum", opt_einsum.__version__)
    except ImportError as e:
        run.emit("info", "absent:opt_einsum", f"not importable ({e})")
        HAVE_OPT_EINSUM = False
    try:
        jax, _, _ = load_jax()
        run.emit("info", "version:jax", jax.__version__)
    except ImportError as e:
        run.emit("info", "absent:jax", f"not importable ({e})")
        HAVE_JAX = False
    run.emit("info", "python", sys.version.split()[0])
    run.flush()
    prior = {}
    if ARGS.durations and os.path.exists(ARGS.durations):
        for line in open(ARGS.durations):
            try:
                name, s = line.rstrip("\n").split("\t")
                prior[name] = float(s)
            except ValueError:
                pass
    start = time.perf_counter()
    finished = []
    for k, name in enumerate(plan):
        elapsed = time.perf_counter() - start
        mean = sum(finished) / len(finished) if finished else None
        rest = [prior.get(c, mean) for c in plan[k:]]
        eta = f"ETA {clock(sum(rest))}" if all(r is not None for r in rest) else "ETA unknown"
        print(f"[{k + 1}/{len(plan)}] {name} … {clock(elapsed)} elapsed, {eta}", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        ctx = Ctx(run, name)
        try:
            known[name](ctx)
        except Exception as e:  # a peer's failure is reported in its row, the run goes on
            module = type(e).__module__
            who = ("jax" if "jax" in module else "opt_einsum" if "opt_einsum" in module
                   else "numpy-einsum" if name in einsum_cases else "numpy")
            ctx.fail(who, f"{type(e).__name__}: {e}")
        seconds = time.perf_counter() - t0
        finished.append(seconds)
        run.emit("done", name, seconds)
        run.flush()


if __name__ == "__main__":
    main()
