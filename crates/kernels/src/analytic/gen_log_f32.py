"""Fits LOG_F32_TERMS of logarithm.rs: Q of degree 8 with ln(1 + f) = f - f^2/2 + f^3 Q(f)
on f in [sqrt(2)/2 - 1, sqrt(2) - 1], for the least relative error of ln(1 + f).

Method: least squares on Chebyshev nodes, reweighted (Lawson's iteration) towards the
minimax fit, in 120-bit arithmetic; prints the worst relative error on a dense grid
(2^-30.3) and the coefficients rounded to f32, highest degree first.

Run: python3 gen_log_f32.py (needs mpmath and numpy).
"""
import mpmath as mp
import numpy as np

mp.mp.prec = 120
LO, HI = mp.sqrt(2) / 2 - 1, mp.sqrt(2) - 1
DEGREE = 8
NODES = 200


def fit():
    xs = [(LO + HI) / 2 + (HI - LO) / 2 * mp.cos(mp.pi * (i + 0.5) / NODES) for i in range(NODES)]
    target = [(mp.log1p(x) - x + x * x / 2) / x**3 for x in xs]
    # An error e in Q is an error e * x^3 / ln(1 + x) relative to the result.
    scale = [abs(x**3 / mp.log1p(x)) for x in xs]
    weights = [mp.mpf(1)] * NODES
    for _ in range(60):
        a = mp.matrix(NODES, DEGREE + 1)
        y = mp.matrix(NODES, 1)
        for i, x in enumerate(xs):
            w = mp.sqrt(weights[i]) * scale[i]
            for j in range(DEGREE + 1):
                a[i, j] = w * x**j
            y[i] = w * target[i]
        c = mp.lu_solve(a.T * a, a.T * y)
        err = [(sum(c[j] * x**j for j in range(DEGREE + 1)) - target[i]) * scale[i] for i, x in enumerate(xs)]
        total = sum(weights[i] * abs(err[i]) for i in range(NODES))
        weights = [weights[i] * abs(err[i]) / total * NODES for i in range(NODES)]
    return [c[j] for j in range(DEGREE + 1)]


def main():
    c = fit()
    grid = [LO + (HI - LO) * i / 5000 for i in range(1, 5000)]
    worst = max(
        abs((x - x * x / 2 + x**3 * sum(c[j] * x**j for j in range(DEGREE + 1))) / mp.log1p(x) - 1)
        for x in grid
        if x != 0
    )
    print(f"worst relative error before rounding: 2^{float(mp.log(worst, 2)):.1f}")
    for value in reversed(c):
        print(f"    {np.format_float_positional(np.float32(float(value)))},")


main()
