"""numpy's side of analytic_throughput.rs: the same functions, sizes and input ranges
(numpy's own generator, so other values), into a preallocated output, timed by the
thread's CPU clock; medians of 11 samples."""
import time

import numpy as np

rng = np.random.default_rng(24)
CASES = [
    ("exp", np.exp, lambda u: 5 * u),
    ("log", np.log, lambda u: 50 * (u + 1) + 1e-3),
    ("sin", np.sin, lambda u: 30 * u),
    ("tanh", np.tanh, lambda u: 4 * u),
]
for n in (1 << 16, 1 << 23):
    u = rng.uniform(-1, 1, n)
    reps = max(1, (1 << 24) // n)
    for name, f, g in CASES:
        for dtype in (np.float64, np.float32):
            a = g(u).astype(dtype)
            o = np.empty_like(a)
            samples = []
            for _ in range(11):
                start = time.thread_time()
                for _ in range(reps):
                    f(a, out=o)
                samples.append(reps * n / (time.thread_time() - start))
            rate = sorted(samples)[5]
            print(f"{name:<5} {np.dtype(dtype).name:<7} {n:>8}  {rate * 1e-9:6.3f} Gelem/s  {rate * 2 * a.itemsize * 1e-9:6.2f} GB/s")
