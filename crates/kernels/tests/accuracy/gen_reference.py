#!/usr/bin/env python3
"""Correctly rounded references for the analytic functions, from Python's `decimal` at 120
significant digits (no third-party package): the fixtures of `tests/analytic_accuracy.rs`.

    python3 crates/kernels/tests/accuracy/gen_reference.py

Inputs are adversarial: values near each function's cancellation points (the unit circle
for log, z = -1 and the circle |1 + z| = 1 for log1p, the poles of tanh, 2*pi*k*i for
expm1, the overflow thresholds of exp and of cosh/sinh, multiples of pi/2 for sin and cos,
the negative real axis for sqrt and rsqrt), huge and tiny magnitudes, and random values.
Each line is `<function> <dtype> <inputs...> <outputs...>`: the input parts exactly as
stored (shortest round-trip repr of the dtype), the exact result rounded to f64 (for f32
and c32 inputs too, so the reference is far finer than the result). Subnormal numbers are
kept out of inputs and of expected results.
"""

import functools
import math
import os
import random
import struct
from decimal import Decimal as D, getcontext, localcontext

getcontext().prec = 120
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference.txt")
SEED = 20261201

# ---------------------------------------------------------------- high-precision reals


def _pi():
    # Machin: pi = 16 atan(1/5) - 4 atan(1/239)
    with localcontext() as c:
        c.prec += 10

        def atan_inv(n):
            x = D(1) / n
            x2 = x * x
            s, t, k = x, x, 1
            while True:
                t *= -x2
                term = t / (2 * k + 1)
                if abs(term) < D(10) ** (-c.prec):
                    break
                s += term
                k += 1
            return s

        return +(16 * atan_inv(5) - 4 * atan_inv(239))


PI = _pi()
EPS = D(10) ** -(getcontext().prec - 5)


def exp(x):
    return x.exp()


def ln(x):
    return x.ln()


def ln1p(x):
    if abs(x) < D("1e-40"):
        return x - x * x / 2 + x * x * x / 3
    with localcontext() as c:
        c.prec += 60
        return +((1 + x).ln())


def expm1(x):
    if abs(x) < D("1e-40"):
        return x + x * x / 2 + x * x * x / 6
    with localcontext() as c:
        c.prec += 60
        return +(x.exp() - 1)


def _sin_cos_reduced(r):
    # Taylor series for |r| <= pi/4
    r2 = r * r
    s, t, k = r, r, 1
    while abs(t) > EPS * EPS:
        t = -t * r2 / ((2 * k) * (2 * k + 1))
        s += t
        k += 1
    c, t, k = D(1), D(1), 1
    while abs(t) > EPS * EPS:
        t = -t * r2 / ((2 * k - 1) * (2 * k))
        c += t
        k += 1
    return s, c


def sin_cos(x):
    with localcontext() as ctx:
        ctx.prec += 40 + max(0, x.adjusted())
        half_pi = PI / 2 if ctx.prec <= 160 else _pi_at(ctx.prec) / 2
        k = (x / half_pi).to_integral_value()
        r = x - k * half_pi
        s, c = _sin_cos_reduced(r)
        q = int(k % 4)
        s, c = [(s, c), (c, -s), (-s, -c), (-c, s)][q]
        return +s, +c


@functools.lru_cache(maxsize=None)
def _pi_at(prec):
    with localcontext() as c:
        c.prec = prec
        return _pi()


def atan(x):
    # reduce twice with atan(x) = 2 atan(x / (1 + sqrt(1 + x^2))), then the series
    with localcontext() as c:
        c.prec += 20
        if abs(x) > 1:
            return +((PI / 2 if x > 0 else -PI / 2) - atan(1 / x))
        for _ in range(4):
            x = x / (1 + (1 + x * x).sqrt())
        x2 = x * x
        s, t, k = x, x, 1
        while abs(t) > EPS * EPS:
            t = -t * x2
            s += t / (2 * k + 1)
            k += 1
        return +(16 * s)


def atan2(y, x):
    """C's atan2, signed zeros included (atan2(±0, -1) = ±pi, atan2(±0, ±0) = ±0 or ±pi)."""
    y_neg = y.is_signed()
    if y == 0:
        if x > 0 or (x == 0 and not x.is_signed()):
            return D(0).copy_sign(y)
        return -PI if y_neg else PI
    if x > 0:
        return atan(y / x)
    if x < 0:
        return atan(y / x) + (-PI if y_neg else PI)
    return -PI / 2 if y_neg else PI / 2


def sinh_cosh(x):
    if abs(x) < D("1e-20"):
        # e - 1/e cancels: the series
        return x + x * x * x / 6, 1 + x * x / 2
    e = exp(x)
    ei = 1 / e
    return (e - ei) / 2, (e + ei) / 2


def tanh(x):
    if abs(x) > 200:
        return D(1).copy_sign(x)
    sh, ch = sinh_cosh(x)
    return sh / ch


# ---------------------------------------------------------------- complex references


def c_exp(x, y):
    e = exp(x)
    s, c = sin_cos(y)
    return e * c, e * s


def c_log(x, y):
    m2 = x * x + y * y
    # |z|^2 - 1 rounded at this precision would lose a tiny |z|^2 entirely
    re = ln1p(m2 - 1) / 2 if D("0.5") < m2 < 2 else ln(m2) / 2
    return re, atan2(y, x)


def c_log1p(x, y):
    u = 1 + x
    m2 = u * u + y * y
    re = ln1p(2 * x + x * x + y * y) / 2 if D("0.5") < m2 < 2 else ln(m2) / 2
    return re, atan2(y, u)


def c_sqrt(x, y):
    m = (x * x + y * y).sqrt()
    t = ((abs(x) + m) / 2).sqrt()
    v = abs(y) / (2 * t)
    sign = -1 if y < 0 else 1
    return (t, sign * v) if x >= 0 else (v, sign * t)


def c_rsqrt(x, y):
    a, b = c_sqrt(x, y)
    d = a * a + b * b
    return a / d, -b / d


def c_sin(x, y):
    s, c = sin_cos(x)
    sh, ch = sinh_cosh(y)
    return s * ch, c * sh


def c_cos(x, y):
    s, c = sin_cos(x)
    sh, ch = sinh_cosh(y)
    return c * ch, -s * sh


def c_tanh(x, y):
    s, c = sin_cos(y)
    if abs(x) > 200:
        return D(1).copy_sign(x), 4 * s * c * exp(-2 * abs(x))
    sh, ch = sinh_cosh(x)
    den = sh * sh + c * c
    return sh * ch / den, s * c / den


def c_expm1(x, y):
    s, c = sin_cos(y)
    with localcontext() as ctx:
        ctx.prec = 2000
        half = y / 2  # exact
    half_s, _ = sin_cos(half)
    return expm1(x) * c - 2 * half_s * half_s, exp(x) * s


def c_pow(ar, ai, br, bi):
    """a^b = exp(b·ln a) on the principal branch."""
    lr, t = c_log(ar, ai)
    return c_exp(br * lr - bi * t, br * t + bi * lr)


REAL = {
    "exp": exp,
    "log": ln,
    "log1p": ln1p,
    "expm1": expm1,
    "sin": lambda x: sin_cos(x)[0],
    "cos": lambda x: sin_cos(x)[1],
    "tanh": tanh,
    "sqrt": lambda x: x.sqrt(),
    "rsqrt": lambda x: 1 / x.sqrt(),
}
COMPLEX = {
    "exp": c_exp,
    "log": c_log,
    "log1p": c_log1p,
    "sqrt": c_sqrt,
    "rsqrt": c_rsqrt,
    "sin": c_sin,
    "cos": c_cos,
    "tanh": c_tanh,
    "expm1": c_expm1,
}

# ---------------------------------------------------------------- inputs


def to_f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def representable(v, dtype):
    """A finite value of the dtype's normal range, or zero (not rounded to it)."""
    if not math.isfinite(v):
        return False
    tiny, big = (1.1754944e-38, 3.4028234e38) if dtype == "f32" else (2.2250738585072014e-308, 1.7976931348623157e308)
    return v == 0.0 or tiny <= abs(v) <= big


def fmt(v, dtype):
    return _short32(v) if dtype == "f32" else repr(float(v))


def _short32(v):
    v = to_f32(v)
    for digits in range(6, 10):
        s = f"{v:.{digits}g}"
        if to_f32(float(s)) == v:
            return s
    return repr(v)


def logu(rng, lo, hi):
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def complex_inputs(fn, rng, dtype, n):
    big = 1e36 if dtype == "f32" else 1e300
    tiny = 1e-36 if dtype == "f32" else 1e-300
    out = []
    for _ in range(n // 3):
        r, t = logu(rng, tiny, big), rng.uniform(-math.pi, math.pi)
        out.append((r * math.cos(t), r * math.sin(t)))
    for _ in range(n // 6):
        out.append((rng.uniform(-4, 4), rng.uniform(-4, 4)))
    k = n - len(out)
    for _ in range(k):
        if fn == "log":
            # near the unit circle
            t = rng.uniform(-math.pi, math.pi)
            r = 1 + rng.choice([-1, 1]) * 10 ** rng.uniform(-15 if dtype == "f64" else -7, -1)
            out.append((r * math.cos(t), r * math.sin(t)))
        elif fn == "log1p":
            t = rng.uniform(-math.pi, math.pi)
            pick = rng.random()
            if pick < 0.4:  # |1 + z| between 1e-3 and 0.3, the region included
                m = 10 ** rng.uniform(-3, math.log10(0.3))
                out.append((-1 + m * math.cos(t), m * math.sin(t)))
            elif pick < 0.7:  # on and near the circle |1 + z| = 1 (|1+z|^2 - 1 cancels)
                m = 1 + rng.choice([-1, 1]) * 10 ** rng.uniform(-12 if dtype == "f64" else -6, -1)
                out.append((-1 + m * math.cos(t), m * math.sin(t)))
            else:  # near 0
                m = 10 ** rng.uniform(-20, -1)
                out.append((m * math.cos(t), m * math.sin(t)))
        elif fn == "tanh":
            pole = (rng.randint(-4, 4) + 0.5) * math.pi
            out.append((rng.choice([-1, 1]) * 10 ** rng.uniform(-12, 0), pole + rng.choice([-1, 1]) * 10 ** rng.uniform(-8, -1)))
        elif fn == "expm1":
            kk = rng.randint(-2, 2) * 2 * math.pi
            out.append((rng.choice([-1, 1]) * 10 ** rng.uniform(-14, 0), kk + rng.choice([-1, 1]) * 10 ** rng.uniform(-12, 0)))
        elif fn == "exp":
            lim = 88.0 if dtype == "f32" else 709.0
            y = (rng.randint(-6, 6) + 0.5) * math.pi + rng.uniform(-1e-3, 1e-3)
            out.append((rng.uniform(-1.5 * lim, 1.5 * lim), y if rng.random() < 0.5 else rng.uniform(-30, 30)))
        elif fn in ("sin", "cos"):
            lim = 88.0 if dtype == "f32" else 709.0
            x = rng.randint(-8, 8) * math.pi / 2 + rng.choice([-1, 1]) * 10 ** rng.uniform(-8, -1)
            out.append((x, rng.uniform(-lim, lim) if rng.random() < 0.5 else rng.uniform(-1, 1) * 1e-6))
        elif fn in ("sqrt", "rsqrt"):
            out.append((-logu(rng, 1e-20, 1e20), rng.choice([-1, 1]) * logu(rng, 1e-30, 1e-3)))
    return out


def real_inputs(fn, rng, dtype, n):
    big = 3e38 if dtype == "f32" else 1e308
    out = [rng.choice([-1, 1]) * logu(rng, 1.2e-38 if dtype == "f32" else 2.3e-308, big) for _ in range(n // 3)]
    k = n - len(out)
    for _ in range(k):
        if fn in ("exp", "expm1"):
            lim = 88.0 if dtype == "f32" else 709.0
            out.append(rng.uniform(-lim, lim) if rng.random() < 0.7 else rng.choice([-1, 1]) * 10 ** rng.uniform(-12, 0))
        elif fn in ("log", "log1p"):
            if fn == "log1p" and rng.random() < 0.5:
                out.append(-1 + 10 ** rng.uniform(-7 if dtype == "f32" else -15, 0))
            else:
                out.append(1 + rng.uniform(-0.5, 0.5) * 10 ** rng.uniform(-8, 0) if fn == "log" else rng.uniform(-0.5, 0.5) * 10 ** rng.uniform(-10, 0))
        elif fn in ("sin", "cos"):
            out.append(rng.randint(-100000, 100000) * math.pi / 2 + rng.uniform(-1e-6, 1e-6) if rng.random() < 0.5 else rng.uniform(-1e5, 1e5))
        elif fn == "tanh":
            out.append(rng.choice([-1, 1]) * 10 ** rng.uniform(-12, 1.5))
        else:
            out.append(logu(rng, 1e-30, 1e30))
    return out


def in_domain(fn, x):
    if fn in ("log", "sqrt", "rsqrt"):
        return x > 0
    if fn == "log1p":
        return x > -1
    return True


def main():
    rng = random.Random(SEED)
    lines = []
    for dtype in ("f32", "f64"):
        for fn, f in REAL.items():
            for v in real_inputs(fn, rng, dtype, 160):
                v = to_f32(v) if dtype == "f32" and abs(v) < 3.4e38 else v
                if not representable(v, dtype):
                    continue
                if not in_domain(fn, v):
                    continue
                try:
                    w = float(f(D(v)))
                except (OverflowError, ArithmeticError):
                    continue
                if not representable(w, dtype):
                    continue
                lines.append(f"{fn}\t{dtype}\t{fmt(v, dtype)}\t{w!r}")
        cdt = "c32" if dtype == "f32" else "c64"
        for fn, f in COMPLEX.items():
            for x, y in complex_inputs(fn, rng, dtype, 240):
                if dtype == "f32" and max(abs(x), abs(y)) < 3.4e38:
                    x, y = to_f32(x), to_f32(y)
                if not (representable(x, dtype) and representable(y, dtype)):
                    continue
                if x == 0.0 and y == 0.0:
                    continue
                try:
                    re, im = f(D(x), D(y))
                    re, im = float(re), float(im)
                except (OverflowError, ArithmeticError, ZeroDivisionError):
                    continue
                if not (representable(re, dtype) and representable(im, dtype)):
                    continue
                lines.append(f"{fn}\t{cdt}\t{fmt(x, dtype)},{fmt(y, dtype)}\t{re!r},{im!r}")
    with open(OUT, "w") as fh:
        fh.write(f"# generated by gen_reference.py (seed {SEED}): function, dtype, input, exact result rounded to f64\n")
        fh.write("\n".join(lines) + "\n")
    print(f"{len(lines)} references, {os.path.getsize(OUT)} bytes")


if __name__ == "__main__":
    main()
