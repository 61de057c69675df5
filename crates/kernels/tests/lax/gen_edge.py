#!/usr/bin/env python3
"""Edge-value, large-tensor, error and second-draw families of the lax golden cases.

Run through gen_cases.py (which imports this module):

    python3 crates/kernels/tests/lax/gen_cases.py                 # all families
    python3 crates/kernels/tests/lax/gen_cases.py special large   # just these

Each family here seeds its own generator (from SEED and the family name), so each one can
be regenerated alone and adding one changes no other file.

Families:
- special:  every elementwise op and cast on every dtype it is defined for, over dense sets
            of edge values (signed zeros, infinities, NaN, extremes of each dtype, values at
            the functions' overflow and cancellation points), as 1-D tensors of many values;
- domain:   the analytic functions on wide random ranges (log-uniform magnitudes, random
            angles) and on the regions where a careless formula loses accuracy (near the
            unit circle for log, near -1 for log1p, near the poles of tanh, near 2*pi*k*i for
            expm1, where e^x overflows for exp);
- reduce_special: reductions over edge values (NaN, infinities, signed zeros, extremes);
- large:    tensors of 33K-300K elements (past the kernels' parallel, SIMD and block
            thresholds), written as patterns, outputs as patterns, digests or in full;
- errors:   inputs jax.lax rejects, with the error kind strata gives;
- *_b:      second draws of the random families of gen_cases.py, and broadcast_in_dim with
            dimensions in any order.

Subnormal numbers are kept out of every input: XLA on CPU flushes subnormal inputs and
results to zero (FTZ/DAZ), strata computes IEEE gradual underflow, and the Rust suite
accepts a subnormal result where jax gives a zero of the same sign.
"""

import math
import sys
import zlib

import numpy as np

import gen_cases as g
from gen_cases import ALL, COMPLEX, DTYPES, FLOATS, INTS, Family, enc, host, jax, jnp, lax

inf, nan = np.inf, np.nan


def _load_reference_module():
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "accuracy", "gen_reference.py")
    spec = importlib.util.spec_from_file_location("gen_reference", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


hp = _load_reference_module()

# ---------------------------------------------------------------- patterns and digests

U64 = np.uint64
GOLDEN = U64(0x9E3779B97F4A7C15)


def mix(z):
    """splitmix64's finaliser on a uint64 array (wrapping arithmetic)."""
    z = z + GOLDEN
    z = (z ^ (z >> U64(30))) * U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> U64(27))) * U64(0x94D049BB133111EB)
    return z ^ (z >> U64(31))


def pattern_index(seed, n, k):
    """Element i of a pattern is palette[mix(seed + i * GOLDEN) % k]."""
    i = np.arange(n, dtype=np.uint64)
    return (mix(U64(seed) + i * GOLDEN) % U64(k)).astype(np.int64)


class Pattern:
    """A large tensor: a palette and a seed; materialised by `values`."""

    def __init__(self, palette, shape, seed):
        self.palette = np.asarray(palette)
        self.shape = tuple(shape)
        self.seed = int(seed)

    def values(self):
        n = int(np.prod(self.shape, dtype=np.int64))
        return self.palette[pattern_index(self.seed, n, len(self.palette))].reshape(self.shape)

    def encode(self):
        body = enc(self.palette)  # dtype;k;values
        dtype, _, vals = body.split(";", 2)
        shape = "x".join(str(d) for d in self.shape)
        return f"@{dtype};{shape};{self.seed};{vals}"


def canonical_bits(arr):
    """Each element's bits as uint64 (two per complex element), NaN made canonical."""
    a = np.asarray(arr)
    if a.dtype == np.complex64:
        a = np.stack([a.real, a.imag], axis=-1).astype(np.float32)
    elif a.dtype == np.complex128:
        a = np.stack([a.real, a.imag], axis=-1).astype(np.float64)
    flat = a.reshape(-1)
    if flat.dtype == np.float32:
        bits = flat.view(np.uint32).astype(np.uint64)
        bits[np.isnan(flat)] = U64(0x7FC00000)
    elif flat.dtype == np.float64:
        bits = flat.view(np.uint64).copy()
        bits[np.isnan(flat)] = U64(0x7FF8000000000000)
    elif flat.dtype == np.bool_:
        bits = flat.astype(np.uint64)
    else:
        bits = flat.astype(np.int64).view(np.uint64)
    return bits


def digest(arr):
    bits = canonical_bits(arr)
    i = np.arange(len(bits), dtype=np.uint64)
    return int(mix(bits ^ mix(i)).sum(dtype=np.uint64))


def enc_digest(arr):
    a = np.asarray(arr)
    name = g.NAME[a.dtype]
    shape = "x".join(str(d) for d in a.shape)
    return f"#{name};{shape};{digest(a):016x}"


class Raw(str):
    """A field value written as it is."""


class EdgeFamily(Family):
    """A family with its own generator, seeded from the family name."""

    def __init__(self, name):
        super().__init__(name)
        self.rng = np.random.default_rng([g.SEED, zlib.crc32(name.encode())])

    def add(self, op, **fields):
        out = {}
        for k, v in fields.items():
            if isinstance(v, Pattern):
                v = Raw(v.encode())
            out[k] = v
        super().add(op, **out)


# ---------------------------------------------------------------- edge values

F32_MAX, F64_MAX = float(np.finfo(np.float32).max), float(np.finfo(np.float64).max)
F32_TINY, F64_TINY = float(np.finfo(np.float32).tiny), float(np.finfo(np.float64).tiny)

EDGE = {
    "f32": [0.0, -0.0, inf, -inf, nan, 1.0, -1.0, 0.5, -0.5, 2.0, -3.0, 7.0, -100.0, 0.1, 1e-30, -1e-30,
            1e30, -1e30, F32_MAX, -F32_MAX, F32_TINY, -F32_TINY, 1 + 2**-23, 1 - 2**-24, 3.1415927,
            1.5707964, 88.7, -87.5, 1e6, 16777217.0, 2.5, -2.5],
    "f64": [0.0, -0.0, inf, -inf, nan, 1.0, -1.0, 0.5, -0.5, 2.0, -3.0, 7.0, -100.0, 0.1, 1e-300, -1e-300,
            1e300, -1e300, F64_MAX, -F64_MAX, F64_TINY, -F64_TINY, 1 + 2**-52, 1 - 2**-53, np.pi,
            np.pi / 2, 709.7, -708.0, 1e15, 2.0**53 + 2, 2.5, -2.5],
    "i32": [0, 1, -1, 2, -2, 3, -7, 31, 32, 100, -100, 2**31 - 1, -(2**31), -(2**31) + 1, 2**16, 65535],
    "i64": [0, 1, -1, 2, -2, 3, -7, 63, 64, 100, -100, 2**63 - 1, -(2**63), -(2**63) + 1, 2**32, 2**31],
}
# Complex parts: the real edge values that keep every part of the results away from
# formula-dependent territory (products of infinities and zeros are covered separately).
PARTS = {
    "c32": [0.0, -0.0, 1.0, -1.0, 0.5, -2.0, inf, -inf, nan, 1e30, -1e-20, 1.5707964, 90.0],
    "c64": [0.0, -0.0, 1.0, -1.0, 0.5, -2.0, inf, -inf, nan, 1e300, -1e-200, np.pi / 2, 710.0],
}


def edge_values(dt):
    if dt in FLOATS:
        return np.array(EDGE[dt], dtype=DTYPES[dt])
    if dt in INTS:
        return np.array(EDGE[dt], dtype=DTYPES[dt])
    if dt == "bool":
        return np.array([False, True])
    parts = PARTS[dt]
    return np.array([complex(a, b) for a in parts for b in parts], dtype=DTYPES[dt])


def pairs(a, b):
    """Every (a[i], b[j]) pair as two 1-D arrays."""
    return np.repeat(a, len(b)), np.tile(b, len(a))


def sample_pairs(fam, vals, n):
    i = fam.rng.integers(0, len(vals), size=n)
    j = fam.rng.integers(0, len(vals), size=n)
    return vals[i], vals[j]


BINARY = {"add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "rem": lax.rem, "pow": lax.pow,
          "max": lax.max, "min": lax.min}
UNARY = {"neg": lax.neg, "abs": lax.abs, "sign": lax.sign, "conj": lax.conj, "exp": lax.exp, "log": lax.log,
         "sin": lax.sin, "cos": lax.cos, "tanh": lax.tanh, "sqrt": lax.sqrt, "rsqrt": lax.rsqrt,
         "expm1": lax.expm1, "log1p": lax.log1p}
ANALYTIC = ["exp", "log", "sin", "cos", "tanh", "sqrt", "rsqrt", "expm1", "log1p"]
COMPARE = {"eq": lax.eq, "ne": lax.ne, "lt": lax.lt, "le": lax.le, "gt": lax.gt, "ge": lax.ge}


def binary_defined(op, dt):
    if dt == "bool":
        return op in ("max", "min")
    if dt in COMPLEX:
        return op != "rem"
    if dt in INTS:
        return op != "pow"
    return True


def unary_defined(op, dt):
    if dt == "bool":
        return False
    if dt in INTS:
        return op in ("neg", "abs", "sign")
    return True


# Values at each real function's interesting points, beyond the shared edge values.
REAL_EXTRA = {
    "exp": [709.78, 709.79, -745.0, -744.4, 88.72, 88.73, -103.0, -87.3, 1e-10, -1e-10, 20.0, 50.0],
    "log": [1.0000001, 0.9999999, 1e-5, 2.718281828459045, 1e10, 1e-30, 0.75, 1.25],
    "sin": [1e22, 1e10, 3e5, 2**30, 6.283185307179586, 3.141592653589793, 1e-8, 100.0, -1e7],
    "cos": [1e22, 1e10, 3e5, 2**30, 6.283185307179586, 3.141592653589793, 1e-8, 100.0, -1e7],
    "tanh": [20.0, -20.0, 9.0, 0.55, -0.55, 1e-9, 19.06, 44.0, 355.0],
    "sqrt": [4.0, 1e-20, 2.0, 1e20],
    "rsqrt": [4.0, 1e-20, 2.0, 1e20, 0.25],
    "expm1": [1e-10, -1e-10, 0.3, -0.3, 709.78, -40.0, 88.7, -1e-5],
    "log1p": [-0.999, -0.99999, -1.0 + 2**-20, 1e-10, -1e-10, -0.5, 1e10, -0.3, 0.41],
}


# ---------------------------------------------------------------- where jax itself is inaccurate
#
# The golden data holds jax's results where they are accurate. An element of an inexact
# op is kept when jax's result is within the suite's tolerance (lax_support/ops.rs) of a
# reference: the exact value (120-digit decimal arithmetic, or exact rationals for complex
# mul and div) for finite inputs; for inputs with infinite or NaN parts of a complex64 op,
# jax's own complex128 result on the same values (a special value jax produces only in
# single precision is a rounding artifact of its float32 arithmetic). Dropped elements go
# to the `xla_inaccurate` family with the reference, where the Rust suite checks that
# strata meets the reference instead.

TOL_ULPS = {"exp": 16, "log": 64, "sin": 16, "cos": 16, "tanh": 16, "sqrt": 16, "rsqrt": 16, "expm1": 16,
            "log1p": 16, "pow": 64, "mul": 4, "div": 8}
REAL_TOL_ULPS = {"pow": 4, "log1p": 4}


def tol_of(op, dt):
    if dt in COMPLEX:
        return TOL_ULPS[op], 0.0
    if op in ("sin", "cos"):
        return 4, 1.0  # relative to max(|result|, 1)
    if op == "log1p" and dt == "f64":
        return 128, 0.0
    return REAL_TOL_ULPS.get(op, 4), 0.0


def _eps_tiny(dt):
    return (2.0**-23, F32_TINY) if dt in ("f32", "c32") else (2.0**-52, F64_TINY)


def close_py(got, want, dt, ulps, floor):
    """lax_support::compare::close with jax's result as `got` and the reference as `want`;
    a subnormal reference matches a jax zero (XLA flushes subnormals)."""
    eps, tiny = _eps_tiny(dt)
    g, w = complex(got), complex(want)
    if dt in ("f32", "c32"):
        # the reference rounded to the result's precision (so an overflow is infinite)
        with np.errstate(over="ignore"):
            w = complex(float(np.float32(w.real)), float(np.float32(w.imag)))
    wr = 0.0 if (g.real == 0 and abs(w.real) < tiny) else w.real
    wi = 0.0 if (g.imag == 0 and abs(w.imag) < tiny) else w.imag

    def same(a, b):
        return (math.isnan(a) and math.isnan(b)) or a == b

    if same(g.real, wr) and same(g.imag, wi):
        return True
    lim = lambda m: ulps * eps * max(m, floor, F32_TINY)
    if not (math.isfinite(wr) and math.isfinite(wi)):
        part = lambda a, b: same(a, b) or (math.isfinite(b) and abs(a - b) <= lim(abs(b)))
        return part(g.real, wr) and part(g.imag, wi)
    if not (math.isfinite(g.real) and math.isfinite(g.imag)):
        return False
    return abs(g - complex(wr, wi)) <= lim(abs(complex(wr, wi)))


def exact_ref(op, dt, args):
    """The exact result of op at finite args (complex parts or reals), as a Python complex
    rounded to f64 per part; None where it cannot be computed here."""
    D = hp.D
    try:
        if dt in COMPLEX:
            parts = []
            for a in args:
                parts += [D(float(a.real)), D(float(a.imag))]
            if op == "mul":
                from fractions import Fraction as F
                ar, ai, br, bi = (F(float(v)) for v in parts)
                return complex(float(ar * br - ai * bi), float(ar * bi + ai * br))
            if op == "div":
                from fractions import Fraction as F
                ar, ai, br, bi = (F(float(v)) for v in parts)
                d = br * br + bi * bi
                if d == 0:
                    return None
                return complex(float((ar * br + ai * bi) / d), float((ai * br - ar * bi) / d))
            if op == "pow":
                if parts[0] == 0 and parts[1] == 0:
                    return None
                re, im = hp.c_pow(*parts)
            else:
                if parts[0] == 0 and parts[1] == 0:
                    return None
                f = hp.COMPLEX[op]
                re, im = f(parts[0], parts[1])
                if op == "rsqrt" and parts[1] == 0 and parts[1].is_signed() and parts[0] < 0:
                    im = -im  # rsqrt takes the side of the cut from the sign bit (atan2's rule)
            return complex(float(re), float(im))
        x = D(float(args[0]))
        if op == "pow":
            b = D(float(args[1]))
            if x <= 0:
                return None
            return complex(float((b * x.ln()).exp()), 0.0)
        if op in ("log", "sqrt", "rsqrt") and x <= 0:
            return None
        if op == "log1p" and x <= -1:
            return None
        return complex(float(hp.REAL[op](x)), 0.0)
    except (OverflowError, ArithmeticError, ZeroDivisionError, ValueError):
        return None


def is_special(dt, args):
    for a in args:
        c = complex(a)
        if not (math.isfinite(c.real) and math.isfinite(c.imag)):
            return True
    return False


INEXACT_OPS = set(ANALYTIC) | {"pow", "mul", "div"}


def reference_mask(op, dt, args, out, f):
    """Per element: (keep, reference, basis) for the inexact ops; keep everything else."""
    n = out.size
    keep = np.ones(n, dtype=bool)
    refs = [None] * n
    if op not in INEXACT_OPS or (op in ("mul", "div") and dt not in COMPLEX):
        return keep, refs, None
    ulps, floor = tol_of(op, dt)
    flat_args = [np.asarray(a).reshape(-1) for a in args]
    wide = None
    if dt == "c32":
        wide = np.asarray(f(*[a.astype(np.complex128) for a in flat_args])).reshape(-1)
    for i in range(n):
        el = [a[i] for a in flat_args]
        if op == "pow" and dt in COMPLEX and not is_special(dt, el):
            a, b = complex(el[0]), complex(el[1])
            if a != 0:
                # a^b = e^E (cos q + i sin q) with E = Re(b)·ln|a| - Im(b)·arg(a) and
                # q = Re(b)·arg(a) + Im(b)·ln|a|: rounding E or q in double precision moves the
                # result by |E| or |q| units of 2^-53, so past 16 (a quarter of the 64-ulp
                # tolerance, as in the exact check below) any double-precision formula may miss
                # the tolerance, and XLA's does (e.g. (-1+0.5i)^(710+i): jax is 340 ulps from
                # the exact value): ill-conditioned, no golden data there.
                t, la = math.atan2(a.imag, a.real), math.log(abs(a))
                angle = abs(b.real * t + b.imag * la)
                exponent = abs(b.real * la - b.imag * t)
                if max(angle, exponent) > 16.0:
                    keep[i] = False
                    continue
        if op in ("mul", "div") and dt in COMPLEX:
            # Past the square root of the largest value an intermediate product overflows,
            # and the textbook evaluation (strata) and XLA's compiled one (fused
            # multiply-adds) overflow differently: no golden data there.
            finite = [abs(v) for a in el for v in (complex(a).real, complex(a).imag) if math.isfinite(v)]
            if max(finite, default=0.0) > (1e18 if dt == "c32" else 1e150):
                keep[i] = False
                continue
        if is_special(dt, el):
            if dt == "c64" and op in ("mul", "div"):
                continue
            if wide is None:
                continue
            ref = complex(wide[i])
            basis = "xla_c64"
        else:
            if op == "pow" and dt in ("c64", "f64"):
                a, b = complex(el[0]), complex(el[1])
                # Past a condition of 16 (|b|·(|ln|a|| + |arg a|)), computing a^b from a
                # double-precision log loses more than the tolerance: jax and strata run
                # the same formula there and agree, but neither meets the exact value.
                if a != 0 and abs(b) * (abs(math.log(abs(a))) + abs(math.atan2(a.imag, a.real))) > 16:
                    continue
            ref = exact_ref(op, dt, el)
            basis = "exact"
            if ref is None or math.isnan(ref.real) or math.isnan(ref.imag):
                if wide is None:
                    continue
                ref, basis = complex(wide[i]), "xla_c64"  # e.g. the exact value overflows
        if not close_py(complex(out.reshape(-1)[i]), ref, dt, ulps, floor):
            keep[i] = False
            refs[i] = (ref, basis)
    return keep, refs, ulps


INACCURATE = []  # (op, dt, args, xla, ref, basis) of every dropped element


def filtered(op, dt, f, *args):
    """jax's result of f on 1-D args, without the elements where it is inaccurate."""
    out = np.asarray(f(*args))
    keep, refs, _ = reference_mask(op, dt, args, out, f)
    if keep.all():
        return args, out
    for i in np.flatnonzero(~keep):
        if refs[i] is not None:
            INACCURATE.append((op, dt, [np.asarray(a).reshape(-1)[i] for a in args], out.reshape(-1)[i], *refs[i]))
    return tuple(np.asarray(a)[keep] for a in args), out[keep]


def gen_special():
    fam = EdgeFamily("special")
    for dt in ALL:
        vals = edge_values(dt)
        for op, f in BINARY.items():
            if not binary_defined(op, dt):
                continue
            if dt in COMPLEX:
                a, b = sample_pairs(fam, vals, 200)
            else:
                # every pair of the first 14 edge values, and random pairs of all of them
                a, b = pairs(vals[:14], vals[:14])
                ra, rb = sample_pairs(fam, vals, 100)
                a, b = np.concatenate([a, ra]), np.concatenate([b, rb])
            (a, b), out = filtered(op, dt, f, a, b)
            fam.add(op, a=a, b=b, out=out)
        for op, f in UNARY.items():
            if not unary_defined(op, dt):
                continue
            x = vals
            if dt in FLOATS and op in REAL_EXTRA:
                extra = np.array(REAL_EXTRA[op], dtype=np.float64)
                extra = extra[np.abs(extra) < (F32_MAX if dt == "f32" else F64_MAX)]
                x = np.concatenate([vals, extra.astype(DTYPES[dt]), -extra.astype(DTYPES[dt])])
            (x,), out = filtered(op, dt, f, x)
            fam.add(op, x=x, out=out)
        for d, f in COMPARE.items():
            if dt in COMPLEX and d not in ("eq", "ne"):
                continue
            small = vals[:12] if dt not in COMPLEX else vals[:: max(1, len(vals) // 12)]
            a, b = pairs(small, small)
            fam.add("compare", dir=d, a=a, b=b, out=host(f(a, b)))
        n = 100
        t, fv = sample_pairs(fam, vals, n)
        p = fam.rng.random(n) < 0.5
        fam.add("select", pred=p, a=t, b=fv, out=host(lax.select(p, t, fv)))
        # clamp with every bound pair (lo > hi and NaN bounds included), rank-0 bounds
        # (complex too: XLA compares complex bounds by real part only)
        bounds = vals if dt not in COMPLEX else vals[:: max(1, len(vals) // 12)]
        xs = vals if dt not in COMPLEX else vals[::4]
        for lo in bounds[:: max(1, len(bounds) // 4)]:
            for hi in bounds[1 :: max(1, len(bounds) // 4)]:
                lo0, hi0 = np.asarray(lo, DTYPES[dt]), np.asarray(hi, DTYPES[dt])
                fam.add("clamp", lo=lo0, x=xs, hi=hi0, out=host(lax.clamp(lo0, xs, hi0)))
        lo_a, hi_a = sample_pairs(fam, vals, len(vals))
        fam.add("clamp", lo=lo_a, x=vals, hi=hi_a, out=host(lax.clamp(lo_a, vals, hi_a)))
        for dst in ALL:
            x = vals
            if dt in FLOATS and dst in INTS + FLOATS:
                # float -> int saturation boundaries and float narrowing
                b = [2.0**31, -(2.0**31), 2.0**31 - 128, 2.0**63, -(2.0**63), 2.0**62, 2147483647.5, -2147483648.5,
                     3.5e38, 1e39, 0.99999, -0.99999]
                b = np.array([v for v in b if abs(v) < (F32_MAX if dt == "f32" else F64_MAX)], DTYPES[dt])
                x = np.concatenate([vals, b])
            fam.add("convert", x=x, to=dst, out=host(lax.convert_element_type(x, DTYPES[dst])))
    fam.write()


# ---------------------------------------------------------------- analytic domains


def log_uniform(rng, n, lo, hi):
    return np.exp(rng.uniform(np.log(lo), np.log(hi), size=n))


def complex_domain(fam, op, dt, n):
    """Random complex inputs for `op`: wide magnitudes, and the op's delicate regions."""
    rng = fam.rng
    big = 1e30 if dt == "c32" else 1e300
    r = log_uniform(rng, n, 1e-30 if dt == "c32" else 1e-300, big)
    th = rng.uniform(-np.pi, np.pi, size=n)
    wide = r * np.exp(1j * th)
    eps = 2.0**-23 if dt == "c32" else 2.0**-52
    k = n // 4
    if op == "log":
        near = np.exp(rng.uniform(-0.3, 0.3, k) * 10.0 ** rng.uniform(-12, 0, k) + 1j * rng.uniform(-np.pi, np.pi, k))
    elif op == "log1p":
        # |1 + z| from 1e-8 to 3, plus the region near 0
        m = log_uniform(rng, k, 1e-8, 3.0)
        near = -1 + m * np.exp(1j * rng.uniform(-np.pi, np.pi, k))
        near = np.concatenate([near, log_uniform(rng, k, 1e-12, 1e-1) * np.exp(1j * rng.uniform(-np.pi, np.pi, k))])
    elif op == "tanh":
        poles = (rng.integers(-5, 6, k) + 0.5) * np.pi
        near = rng.uniform(-1, 1, k) * 10.0 ** rng.uniform(-10, 0, k) + 1j * (poles + rng.uniform(-1, 1, k) * 10.0 ** rng.uniform(-9, -1, k))
        near = np.concatenate([near, rng.uniform(-30, 30, k) + 1j * rng.uniform(-10, 10, k)])
    elif op == "expm1":
        kk = rng.integers(-3, 4, k) * 2 * np.pi
        near = rng.uniform(-1, 1, k) * 10.0 ** rng.uniform(-10, -1, k) + 1j * (kk + rng.uniform(-1, 1, k) * 10.0 ** rng.uniform(-10, -1, k))
        near = np.concatenate([near, rng.uniform(-3, 3, k) * 10.0 ** rng.uniform(-12, 0, k) + 1j * rng.uniform(-3, 3, k) * 10.0 ** rng.uniform(-12, 0, k)])
    elif op in ("exp", "sin", "cos"):
        lim = 88.0 if dt == "c32" else 709.0
        near = rng.uniform(-1.9 * lim, 1.9 * lim, k) + 1j * rng.uniform(-50, 50, k)
        if op != "exp":
            near = near.imag + 1j * near.real  # cosh/sinh overflow lives on the imaginary axis
    elif op in ("sqrt", "rsqrt"):
        # along the negative real axis (the branch cut) and close to it
        near = -log_uniform(rng, k, 1e-10, 1e10) + 1j * rng.choice([-1, 1], k) * log_uniform(rng, k, 1e-30, 1e-5)
    else:
        near = np.zeros(0)
    z = np.concatenate([wide, near])
    z = z[np.isfinite(z)]
    out = z.astype(DTYPES[dt])
    # keep subnormal parts out of the inputs (XLA flushes them)
    tiny = F32_TINY if dt == "c32" else F64_TINY
    re, im = out.real.copy(), out.imag.copy()
    re[np.abs(re) < tiny] = 0.0
    im[np.abs(im) < tiny] = 0.0
    return (re + 1j * im).astype(DTYPES[dt])


def real_domain(fam, op, dt, n):
    rng = fam.rng
    hi = 3e38 if dt == "f32" else 1e308
    lo = 1.2e-38 if dt == "f32" else 2.3e-308
    x = log_uniform(rng, n, lo, hi) * rng.choice([-1, 1], n)
    lim = {"exp": 100.0 if dt == "f32" else 720.0, "expm1": 100.0 if dt == "f32" else 720.0, "tanh": 25.0,
           "sin": 1e6, "cos": 1e6}.get(op)
    if lim:
        x = np.concatenate([x, rng.uniform(-lim, lim, n)])
    if op == "log1p":
        x = np.concatenate([x, -1 + log_uniform(rng, n // 2, 1e-7 if dt == "f32" else 1e-15, 1.0), rng.uniform(-0.5, 0.5, n // 2)])
    if op == "log":
        x = np.concatenate([x, 1 + rng.uniform(-0.5, 0.5, n // 2)])
    return x.astype(DTYPES[dt])


def gen_domain():
    fam = EdgeFamily("domain")
    for op in ANALYTIC:
        f = UNARY[op]
        for dt in FLOATS:
            (x,), out = filtered(op, dt, f, real_domain(fam, op, dt, 80))
            fam.add(op, x=x, out=out)
        for dt in COMPLEX:
            (z,), out = filtered(op, dt, f, complex_domain(fam, op, dt, 100))
            fam.add(op, x=z, out=out)
    for dt in FLOATS:
        # pow over wide magnitudes, negative bases with integral exponents
        a = log_uniform(fam.rng, 200, 1e-10, 1e10).astype(DTYPES[dt])
        b = fam.rng.uniform(-30, 30, 200).astype(DTYPES[dt])
        b[::3] = np.round(b[::3])
        a[::5] = -a[::5]
        b[::5] = np.round(b[::5])
        (a, b), out = filtered("pow", dt, lax.pow, a, b)
        fam.add("pow", a=a, b=b, out=out)
    for dt in COMPLEX:
        a = complex_domain(fam, "log", dt, 80)
        b = (fam.rng.uniform(-4, 4, len(a)) + 1j * fam.rng.uniform(-4, 4, len(a))).astype(DTYPES[dt])
        keep = np.abs(np.log(np.abs(a.astype(np.complex128)))) < 20  # keep |a^b| representable
        (a, b), out = filtered("pow", dt, lax.pow, a[keep], b[keep])
        fam.add("pow", a=a, b=b, out=out)
    fam.write()
    write_inaccurate()


def write_inaccurate():
    """The elements the filter dropped, for the Rust suite to hold strata to the reference."""
    fam = EdgeFamily("xla_inaccurate")
    for op, dt, args, xla, ref, basis in INACCURATE:
        npdt = DTYPES[dt]
        fields = {"x": np.asarray([args[0]], npdt)} if len(args) == 1 else {"a": np.asarray([args[0]], npdt), "b": np.asarray([args[1]], npdt)}
        want = np.asarray([ref], np.complex128) if dt in COMPLEX else np.asarray([complex(ref).real], np.float64)
        fam.add(op, **fields, xla=np.asarray([xla], npdt), want=want, basis=basis)
    fam.write()


# ---------------------------------------------------------------- reductions over edge values


def gen_reduce_special():
    fam = EdgeFamily("reduce_special")
    rng = fam.rng
    reducers = {"sum": lax.reduce_sum, "prod": lax.reduce_prod, "max": lax.reduce_max, "min": lax.reduce_min}
    for op, f in reducers.items():
        for dt in ALL:
            if dt == "bool" and op in ("sum", "prod"):
                continue
            vals = edge_values(dt)
            if dt in FLOATS and op in ("sum", "prod"):
                # sums and products of the extremes overflow or underflow in an order-dependent way
                keep_vals = np.abs(vals.astype(np.float64)) <= (1e6 if op == "prod" else 1e30)
                keep_vals &= (np.abs(vals.astype(np.float64)) >= 1e-6) | (vals == 0) | np.isnan(vals)
                vals = vals[keep_vals | np.isinf(vals) | np.isnan(vals)]
            if dt in COMPLEX:
                if op == "prod":
                    continue  # complex products of infinities depend on the multiplication order
                # XLA's complex max/min select depends on the order when a part is NaN
                vals = vals[~np.isnan(vals.real) & ~np.isnan(vals.imag)] if op in ("max", "min") else vals
            for k in range(8):
                shape = tuple(int(rng.integers(1, 5)) for _ in range(int(rng.integers(1, 4))))
                x = vals[rng.integers(0, len(vals), size=shape)]
                r = len(shape)
                axes = tuple(sorted(int(a) for a in rng.choice(r, size=int(rng.integers(1, r + 1)), replace=False)))
                if k == 0:
                    axes = tuple(range(r))
                fam.add(f"reduce_{op}", x=x, axes=list(axes), out=host(f(x, axes)))
    fam.write()


# ---------------------------------------------------------------- large tensors


def palette_for(fam, dt, k=31, lo=-3.0, hi=3.0, specials=0.1):
    rng = fam.rng
    if dt in FLOATS:
        v = rng.uniform(lo, hi, k)
        m = rng.random(k) < specials
        v[m] = rng.choice(np.array(EDGE[dt], dtype=np.float64), size=int(m.sum()))
        return v.astype(DTYPES[dt])
    if dt in INTS:
        v = rng.integers(-1000, 1000, k)
        m = rng.random(k) < specials
        v[m] = rng.choice(np.array(EDGE[dt], dtype=np.int64), size=int(m.sum()))
        return v.astype(DTYPES[dt])
    if dt == "bool":
        return rng.random(k) < 0.5
    re = rng.uniform(lo, hi, k)
    im = rng.uniform(lo, hi, k)
    return (re + 1j * im).astype(DTYPES[dt])


LARGE_SHAPES = [(70001,), (251, 263), (3, 11, 1031), (129, 2, 130)]
ANALYTIC_RANGE = {"exp": (-30, 30), "log": (0, 60), "sin": (-60, 60), "cos": (-60, 60), "tanh": (-10, 10),
                  "sqrt": (0, 60), "rsqrt": (0, 60), "expm1": (-3, 3), "log1p": (-0.99, 6)}


def elementwise_out(fam, op, f, inputs, shape, seed, **extra):
    """Adds an elementwise case on patterns: all inputs share `seed`, so element i of every
    tensor is palette[mix(seed, i) % k]; the output is the pattern of f over the palettes,
    checked here against jax's result on the full tensors. Palette entries where jax is
    inaccurate are dropped first."""
    dt = g.NAME[np.asarray(next(iter(inputs.values()))).dtype] if op != "select" else g.NAME[np.asarray(inputs["a"]).dtype]
    names = list(inputs)
    pal_out = np.asarray(f(**inputs))
    keep, _, _ = reference_mask(op, dt, [inputs[k] for k in names], pal_out, lambda *a: f(**dict(zip(names, a))))
    inputs = {k: np.asarray(v)[keep] for k, v in inputs.items()}
    full = {name: Pattern(p, shape, seed).values() for name, p in inputs.items()}
    out_full = np.asarray(f(**full))
    out_pal = np.asarray(f(**{name: p for name, p in inputs.items()}))
    want = out_pal[pattern_index(seed, out_full.size, len(out_pal))].reshape(shape)
    if not np.array_equal(canonical_bits(out_full), canonical_bits(want)):
        raise AssertionError(f"{op}: jax's result on the large tensor is not elementwise in the palette")
    fields = {name: Pattern(p, shape, seed) for name, p in inputs.items()}
    fam.add(op, **extra, **fields, out=Pattern(out_pal, shape, seed))


def gen_large():
    fam = EdgeFamily("large")
    rng = fam.rng

    def shape_seed():
        return LARGE_SHAPES[int(rng.integers(0, len(LARGE_SHAPES)))], int(rng.integers(0, 2**62))

    # elementwise (pattern -> pattern)
    for dt in ALL:
        for op, f in UNARY.items():
            if not unary_defined(op, dt):
                continue
            lo, hi = ANALYTIC_RANGE.get(op, (-3, 3))
            if dt in COMPLEX:
                lo, hi = (-2.0, 2.0) if op not in ("log", "sqrt", "rsqrt") else (-6.0, 6.0)
            pal = palette_for(fam, dt, lo=lo, hi=hi, specials=0.05 if dt in FLOATS else 0.1)
            shape, seed = shape_seed()
            elementwise_out(fam, op, lambda x, f=f: f(x), {"x": pal}, shape, seed)
        for op, f in BINARY.items():
            if not binary_defined(op, dt):
                continue
            a = palette_for(fam, dt, specials=0.05)
            b = palette_for(fam, dt, specials=0.05)
            if op == "pow":
                a = np.abs(a) if dt in FLOATS else a
            shape, seed = shape_seed()
            elementwise_out(fam, op, lambda a, b, f=f: f(a, b), {"a": a, "b": b}, shape, seed)
        for d, f in COMPARE.items():
            if dt in COMPLEX and d not in ("eq", "ne"):
                continue
            a = palette_for(fam, dt, k=13)
            b = palette_for(fam, dt, k=13)
            b[:5] = a[:5]
            shape, seed = shape_seed()
            elementwise_out(fam, "compare", lambda a, b, f=f: f(a, b), {"a": a, "b": b}, shape, seed, dir=d)
        shape, seed = shape_seed()
        pred = rng.random(31) < 0.5
        elementwise_out(fam, "select", lambda pred, a, b: lax.select(pred, a, b),
                        {"pred": pred, "a": palette_for(fam, dt), "b": palette_for(fam, dt)}, shape, seed)
        lo_p = palette_for(fam, dt, specials=0.0)
        hi_p = palette_for(fam, dt, specials=0.0)
        if dt != "bool" and dt not in COMPLEX:
            lo_p, hi_p = np.minimum(lo_p, hi_p), np.maximum(lo_p, hi_p)
        shape, seed = shape_seed()
        elementwise_out(fam, "clamp", lambda lo, x, hi: lax.clamp(lo, x, hi),
                        {"lo": lo_p, "x": palette_for(fam, dt), "hi": hi_p}, shape, seed)
        for dst in ALL:
            shape, seed = shape_seed()
            pal = palette_for(fam, dt, lo=-3e9, hi=3e9) if dt in FLOATS else palette_for(fam, dt)
            elementwise_out(fam, "convert", lambda x, dst=dst: lax.convert_element_type(x, DTYPES[dst]),
                            {"x": pal}, shape, seed, to=dst)

    # reductions (pattern -> full output)
    # few long reductions (split by blocks), strided ones, several axes, and many short
    # ones (split by outputs; exact results only, compared by digest)
    red_shapes = [((3, 40000), [1]), ((40000, 3), [0]), ((200, 300), [0, 1]), ((64, 33, 20), [0, 2]),
                  ((30000, 3), [1]), ((130000,), [0])]
    for op, f in {"sum": lax.reduce_sum, "prod": lax.reduce_prod, "max": lax.reduce_max, "min": lax.reduce_min}.items():
        for dt in ALL:
            if dt == "bool" and op in ("sum", "prod"):
                continue
            for shape, axes in red_shapes[:: 2 if dt in INTS + ["bool"] else 1]:
                seed = int(rng.integers(0, 2**62))
                if op == "prod":
                    # products of values near 1 stay in range
                    pal = (1 + palette_for(fam, dt, lo=-1e-3, hi=1e-3, specials=0.0)) if dt not in INTS else palette_for(fam, dt, lo=-1, hi=1, specials=0.0)
                    if dt in INTS:
                        pal = rng.choice(np.array([1, -1, 1, 1, 3], dtype=DTYPES[dt]), 31)
                else:
                    pal = palette_for(fam, dt, specials=0.0 if (dt in COMPLEX or op == "sum") else 0.02)
                pal = np.asarray(pal).astype(DTYPES[dt])
                x = Pattern(pal, shape, seed)
                out = host(f(x.values(), tuple(axes)))
                if out.size > 100:
                    exact = dt in INTS or dt == "bool" or op in ("max", "min")
                    if not exact:
                        continue
                    out = Raw(enc_digest(out))
                fam.add(f"reduce_{op}", x=x, axes=axes, out=out)
    for dt in FLOATS + COMPLEX:
        shape, axes = red_shapes[int(rng.integers(0, 4))]
        x = Pattern(palette_for(fam, dt, specials=0.0), shape, int(rng.integers(0, 2**62)))
        xv = x.values()
        y = lax.mul(xv, lax.conj(xv)) if dt in COMPLEX else lax.mul(xv, xv)
        out = lax.reduce_sum(y, tuple(axes))
        fam.add("reduce_sumsq", x=x, axes=axes, out=host(lax.real(out) if dt in COMPLEX else out))

    # moves (pattern -> digest)
    def moved(op, x, out, **fields):
        fam.add(op, x=x, **fields, out=Raw(enc_digest(out)))

    for dt in ALL:
        pal = palette_for(fam, dt)
        seed = lambda: int(rng.integers(0, 2**62))
        x = Pattern(pal, (64, 48, 33), seed())
        for perm in [(2, 0, 1), (1, 2, 0), (2, 1, 0)]:
            moved("transpose", x, lax.transpose(x.values(), perm), perm=list(perm))
        x4 = Pattern(pal, (9, 8, 7, 66), seed())
        moved("transpose", x4, lax.transpose(x4.values(), (3, 2, 1, 0)), perm=[3, 2, 1, 0])
        moved("rev", x, lax.rev(x.values(), (0, 2)), axes=[0, 2])
        moved("reshape", x, lax.reshape(x.values(), (33, 3072)), shape=[33, 3072])
        small = Pattern(pal, (300, 1), seed())
        moved("broadcast_in_dim", small, lax.broadcast_in_dim(small.values(), (4, 300, 40), (1, 0)),
              shape=[4, 300, 40], dims=[1, 0])
        moved("broadcast_in_dim", small, lax.broadcast_in_dim(small.values(), (40, 2, 300), (2, 1)),
              shape=[40, 2, 300], dims=[2, 1])
        sq = Pattern(pal, (5, 190, 180), seed())
        moved("diagonal", sq, jnp.diagonal(sq.values(), 0, 1, 2), axis1=1, axis2=2)
        moved("diagonal", sq, jnp.diagonal(sq.values(), 0, 2, 0), axis1=2, axis2=0)
        for op, ff in (("tril", jnp.tril), ("triu", jnp.triu)):
            kk = int(rng.integers(-20, 21))
            moved(op, sq, ff(sq.values(), kk), k=kk)
        moved("slice", x, lax.slice(x.values(), (3, 0, 1), (64, 47, 33), (2, 3, 1)), start=[3, 0, 1],
              limit=[64, 47, 33], strides=[2, 3, 1])
        pv = palette_for(fam, dt, k=1)[0]
        cfg = [(2, -3, 1), (-1, 4, 0), (0, 0, 2)]
        fam.add("pad", x=x, pv=np.asarray(pv), low=[c[0] for c in cfg], high=[c[1] for c in cfg],
                interior=[c[2] for c in cfg], out=Raw(enc_digest(lax.pad(x.values(), pv, cfg))))
        parts = [Pattern(pal, (64, n, 33), seed()) for n in (5, 30, 0, 17)]
        fields = {f"x{i}": p for i, p in enumerate(parts)}
        fam.add("concatenate", n=len(parts), axis=1, **fields,
                out=Raw(enc_digest(lax.concatenate([p.values() for p in parts], 1))))
        starts, sizes = [10, -5, 40], [50, 48, 20]
        ds = jax.jit(lambda v, s: lax.dynamic_slice(v, s, sizes, allow_negative_indices=False))
        moved("dynamic_slice", x, ds(x.values(), [np.int64(s) for s in starts]), starts=starts, sizes=sizes)
        u = Pattern(pal, (50, 40, 20), seed())
        dus = jax.jit(lambda v, w, s: lax.dynamic_update_slice(v, w, s, allow_negative_indices=False))
        fam.add("dynamic_update_slice", x=x, u=u, starts=[20, 3, 30],
                out=Raw(enc_digest(dus(x.values(), u.values(), [np.int64(s) for s in (20, 3, 30)]))))
        # gather: rows of a table, and 2-D windows with clamped starts
        table = Pattern(pal, (3000, 24), seed())
        idx = Pattern(np.array(rng.integers(-50, 3050, 113), dtype=np.int32), (40000, 1), seed())
        dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
        out = lax.gather(table.values(), idx.values(), dn, (1, 24), mode=lax.GatherScatterMode.CLIP)
        fam.add("gather", x=table, idx=idx, offset_dims=[1], collapsed=[0], obatch=[], ibatch=[],
                start_index_map=[0], ivd=1, slice_sizes=[1, 24], out=Raw(enc_digest(out)))
        idx2 = Pattern(np.array(rng.integers(-3, 70, 61), dtype=np.int64), (2, 3000), seed())
        dn2 = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(1, 0))
        xs = Pattern(pal, (64, 48), seed())
        out2 = lax.gather(xs.values(), jnp.transpose(idx2.values()), dn2, (6, 5), mode=lax.GatherScatterMode.CLIP)
        fam.add("gather", x=xs, idx=idx2, offset_dims=[1, 2], collapsed=[], obatch=[], ibatch=[],
                start_index_map=[1, 0], ivd=0, slice_sizes=[6, 5], out=Raw(enc_digest(out2)))
        if dt != "bool":
            # scatter-add of small integers (exact in any order) and scatter-max
            ipal = palette_for(fam, dt, k=31, lo=-4, hi=4, specials=0.0)
            if dt in FLOATS + COMPLEX:
                ipal = np.round(ipal.real).astype(DTYPES[dt]) if dt in FLOATS else (np.round(ipal.real) + 1j * np.round(ipal.imag)).astype(DTYPES[dt])
            base = Pattern(ipal, (3000, 24), seed())
            upd = Pattern(ipal, (40000, 24), seed())
            sidx = Pattern(np.array(rng.integers(-2, 3003, 113), dtype=np.int32), (40000, 1), seed())
            sdn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
            for comb, sf in (("add", lax.scatter_add), ("max", lax.scatter_max)):
                if comb == "max" and dt in COMPLEX:
                    continue
                out = sf(base.values(), sidx.values(), upd.values(), sdn, mode=lax.GatherScatterMode.FILL_OR_DROP)
                fam.add("scatter", combiner=comb, x=base, idx=sidx, u=upd, update_window_dims=[1], inserted=[0],
                        obatch=[], ibatch=[], sdod=[0], ivd=1, out=Raw(enc_digest(out)))
    fam.write()


# ---------------------------------------------------------------- errors


def expect_error(f):
    try:
        f()
    except Exception:  # noqa: BLE001 -- any rejection by jax counts
        return True
    return False


def gen_errors():
    fam = EdgeFamily("errors")

    def err(op, kind, call, **fields):
        if not expect_error(call):
            raise AssertionError(f"jax accepted {op} {fields}")
        fam.add(op, kind=kind, **fields)

    f32 = np.array([1.0, 2.0], np.float32)
    for dt in ALL:
        x = g.rand_of(dt, (2,), specials=False)
        for op, f in UNARY.items():
            if not unary_defined(op, dt):
                err(op, "unsupported", lambda f=f: f(x), x=x)
        for op, f in BINARY.items():
            if not binary_defined(op, dt):
                err(op, "unsupported", lambda f=f: f(x, x), a=x, b=x)
        if dt in COMPLEX:
            for d in ("lt", "le", "gt", "ge"):
                err("compare", "unsupported", lambda d=d: COMPARE[d](x, x), dir=d, a=x, b=x)
        if dt == "bool":
            for op in ("sum", "prod"):
                err(f"reduce_{op}", "unsupported", lambda op=op: getattr(lax, f"reduce_{op}")(x, (0,)), x=x, axes=[0])
    # operands of different dtypes or shapes
    f64 = np.array([1.0, 2.0], np.float64)
    err("add", "dtype_mismatch", lambda: lax.add(f32, f64), a=f32, b=f64)
    f3 = np.array([1.0, 2.0, 3.0], np.float32)
    err("add", "shape_mismatch", lambda: lax.add(f32, f3), a=f32, b=f3)
    err("max", "shape_mismatch", lambda: lax.max(f32, f32.reshape(2, 1)), a=f32, b=f32.reshape(2, 1))
    err("compare", "dtype_mismatch", lambda: lax.eq(f32, f64), dir="eq", a=f32, b=f64)
    p = np.array([True, False])
    i32 = np.array([1, 2], np.int32)
    err("select", "dtype_mismatch", lambda: lax.select(p, f32, f64), pred=p, a=f32, b=f64)
    err("select", "shape_mismatch", lambda: lax.select(p, f3, f3), pred=p, a=f3, b=f3)
    err("clamp", "dtype_mismatch", lambda: lax.clamp(np.float64(0), f32, np.float32(1)), lo=np.float64(0), x=f32, hi=np.float32(1))
    err("clamp", "shape_mismatch", lambda: lax.clamp(f3, f32, np.float32(1)), lo=f3, x=f32, hi=np.float32(1))
    # structural and indexing configs
    m = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    err("transpose", "invalid_argument", lambda: lax.transpose(m, (0, 0)), x=m, perm=[0, 0])
    err("transpose", "invalid_argument", lambda: lax.transpose(m, (0,)), x=m, perm=[0])
    err("reshape", "shape_mismatch", lambda: jax.jit(lambda v: lax.reshape(v, (4,)))(m), x=m, shape=[4])
    err("broadcast_in_dim", "shape_mismatch", lambda: lax.broadcast_in_dim(m, (2, 4), (0, 1)), x=m, shape=[2, 4], dims=[0, 1])
    err("broadcast_in_dim", "invalid_argument", lambda: lax.broadcast_in_dim(m, (3, 3, 2), (1, 1)), x=m, shape=[3, 3, 2], dims=[1, 1])
    err("broadcast_in_dim", "invalid_argument", lambda: lax.broadcast_in_dim(m, (2, 3), (0, 2)), x=m, shape=[2, 3], dims=[0, 2])
    err("rev", "invalid_argument", lambda: lax.rev(m, (0, 0)), x=m, axes=[0, 0])
    err("rev", "invalid_argument", lambda: lax.rev(m, (2,)), x=m, axes=[2])
    err("slice", "invalid_argument", lambda: lax.slice(m, (0, 2), (2, 1)), x=m, start=[0, 2], limit=[2, 1], strides=[1, 1])
    err("slice", "invalid_argument", lambda: lax.slice(m, (0, 0), (3, 3)), x=m, start=[0, 0], limit=[3, 3], strides=[1, 1])
    err("pad", "invalid_argument", lambda: lax.pad(m, np.float32(0), [(0, 0, 0), (0, 0, -1)]), x=m, pv=np.float32(0), low=[0, 0], high=[0, 0], interior=[0, -1])
    err("pad", "invalid_argument", lambda: lax.pad(m, np.float32(0), [(-2, -1, 0), (0, 0, 0)]), x=m, pv=np.float32(0), low=[-2, 0], high=[-1, 0], interior=[0, 0])
    err("pad", "dtype_mismatch", lambda: lax.pad(m, np.float64(0), [(0, 0, 0), (0, 0, 0)]), x=m, pv=np.float64(0), low=[0, 0], high=[0, 0], interior=[0, 0])
    m2 = np.zeros((2, 2), np.float32)
    err("concatenate", "shape_mismatch", lambda: lax.concatenate([m, m2], 0), n=2, axis=0, x0=m, x1=m2)
    err("concatenate", "dtype_mismatch", lambda: lax.concatenate([m, m.astype(np.float64)], 0), n=2, axis=0, x0=m, x1=m.astype(np.float64))
    err("concatenate", "invalid_argument", lambda: lax.concatenate([m, m], 2), n=2, axis=2, x0=m, x1=m)
    err("dynamic_slice", "invalid_argument", lambda: lax.dynamic_slice(m, (0, 0), (3, 1)), x=m, starts=[0, 0], sizes=[3, 1])
    u = np.zeros((3, 1), np.float32)
    err("dynamic_update_slice", "shape_mismatch", lambda: lax.dynamic_update_slice(m, u, (0, 0)), x=m, u=u, starts=[0, 0])
    for op, f, axes in (("reduce_sum", lax.reduce_sum, [0, 0]), ("reduce_max", lax.reduce_max, [2])):
        err(op, "invalid_argument", lambda f=f, axes=axes: f(m, tuple(axes)), x=m, axes=axes)
    # gather / scatter index-vector length against start_index_map (lax: a shape error)
    t = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    idx = np.zeros((5, 2), np.int32)
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    err("gather", "shape_mismatch", lambda: lax.gather(t, idx, dn, (1, 3), mode=lax.GatherScatterMode.CLIP),
        x=t, idx=idx, offset_dims=[1], collapsed=[0], obatch=[], ibatch=[], start_index_map=[0], ivd=1, slice_sizes=[1, 3])
    fidx = np.zeros((5, 1), np.float32)
    err("gather", "dtype_mismatch", lambda: lax.gather(t, fidx, dn, (1, 3), mode=lax.GatherScatterMode.CLIP),
        x=t, idx=fidx, offset_dims=[1], collapsed=[0], obatch=[], ibatch=[], start_index_map=[0], ivd=1, slice_sizes=[1, 3])
    err("gather", "invalid_argument", lambda: lax.gather(t, idx[:, :1], dn, (1, 4), mode=lax.GatherScatterMode.CLIP),
        x=t, idx=idx[:, :1], offset_dims=[1], collapsed=[0], obatch=[], ibatch=[], start_index_map=[0], ivd=1, slice_sizes=[1, 4])
    sdn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    upd = np.zeros((5, 3), np.float32)
    err("scatter", "shape_mismatch", lambda: lax.scatter_add(t, idx, upd, sdn, mode=lax.GatherScatterMode.FILL_OR_DROP),
        combiner="add", x=t, idx=idx, u=upd, update_window_dims=[1], inserted=[0], obatch=[], ibatch=[], sdod=[0], ivd=1)
    bt, bu = t > 3, upd > 0
    for comb, sf in (("add", lax.scatter_add), ("mul", lax.scatter_mul)):
        err("scatter", "unsupported", lambda sf=sf: sf(bt, idx[:, :1], bu, sdn, mode=lax.GatherScatterMode.FILL_OR_DROP),
            combiner=comb, x=bt, idx=idx[:, :1], u=bu, update_window_dims=[1], inserted=[0], obatch=[], ibatch=[], sdod=[0], ivd=1)
    err("scatter", "dtype_mismatch", lambda: lax.scatter_add(t, idx[:, :1], upd.astype(np.float64), sdn, mode=lax.GatherScatterMode.FILL_OR_DROP),
        combiner="add", x=t, idx=idx[:, :1], u=upd.astype(np.float64), update_window_dims=[1], inserted=[0], obatch=[], ibatch=[], sdod=[0], ivd=1)
    # dot_general
    a, b = np.zeros((2, 3), np.float32), np.zeros((4, 2), np.float32)
    err("dot_general", "shape_mismatch", lambda: lax.dot_general(a, b, (((1,), (0,)), ((), ()))), a=a, b=b, lb=[], rb=[], lc=[1], rc=[0])
    fam.write()


# ---------------------------------------------------------------- second draws


def gen_second_draws():
    """The random families of gen_cases.py drawn again from another seed, plus
    broadcast_in_dim with its dimensions in any order (lax accepts that)."""
    for name, fn in (("binary_b", g.gen_binary), ("unary_b", g.gen_unary), ("compare_b", g.gen_compare_select_clamp),
                     ("reduce_b", g.gen_reduce), ("structural_b", g.gen_structural), ("indexing_b", g.gen_indexing),
                     ("gather_scatter_b", g.gen_gather_scatter)):
        g.rng = np.random.default_rng([g.SEED, zlib.crc32(name.encode())])
        fn(name)
    fam = EdgeFamily("broadcast_b")
    rng = fam.rng
    for dt in ALL:
        for _ in range(10):
            r = int(rng.integers(0, 4))
            out_rank = r + int(rng.integers(0, 3))
            dims = [int(d) for d in rng.permutation(out_rank)[:r]]
            out_shape = [int(rng.integers(0, 4)) if rng.random() < 0.1 else int(rng.integers(1, 5)) for _ in range(out_rank)]
            in_shape = [out_shape[d] if rng.random() < 0.7 else 1 for d in dims]
            x = g.rand_of(dt, tuple(in_shape))
            fam.add("broadcast_in_dim", x=x, shape=out_shape, dims=dims, out=host(lax.broadcast_in_dim(x, out_shape, dims)))
    fam.write()


FAMILIES = {
    "special": gen_special,
    "domain": gen_domain,
    "reduce_special": gen_reduce_special,
    "large": gen_large,
    "errors": gen_errors,
    "second_draws": gen_second_draws,
}

if __name__ == "__main__":
    for name in sys.argv[1:] or FAMILIES:
        FAMILIES[name]()
