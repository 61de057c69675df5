#!/usr/bin/env python3
"""Side-by-side runs of the tensor-network einsum workloads: strata (the tn_medians
bench) and numpy / opt_einsum / JAX (peers.py), alternated round by round so load on a
shared machine hits both alike; prints, per workload and thread count, the median over
rounds of each party's median time and strata's ratio to the best peer (> 1: faster).

    /tmp/pyenv/bin/python crates/einsum/benches/compare.py --rounds 3 [--threads 1,2]

One-thread runs are pinned to CPU 0 (taskset), BLAS and XLA limited to one thread.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

parser = argparse.ArgumentParser()
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--threads", default="1,2")
parser.add_argument("--filter", default="")
parser.add_argument("--json", help="also write the table rows here")
args = parser.parse_args()


def run(cmd, threads):
    if threads == 1:
        cmd = ["taskset", "-c", "0"] + cmd
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [json.loads(l) for l in out.splitlines() if l.startswith("{")]


def strata(threads):
    cmd = ["cargo", "bench", "-q", "-p", "strata-einsum", "--bench", "tn_medians", "--",
           "--threads", str(threads), "--filter", args.filter]
    return run(cmd, threads)


def peers(threads):
    cmd = [sys.executable, os.path.join(HERE, "peers.py"), "--threads", str(threads), "--filter", args.filter]
    return run(cmd, threads)


samples = {}
for r in range(args.rounds):
    for t in [int(x) for x in args.threads.split(",")]:
        for party in (strata, peers):
            for row in party(t):
                if row.get("skipped"):
                    samples.setdefault((row["name"], t, row["peer"]), [])
                    continue
                samples.setdefault((row["name"], t, row["peer"]), []).append(row["median_s"])
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)

names = sorted({k[0] for k in samples}, key=lambda n: [k[0] for k in samples].index(n))
rows = []
print(f"{'workload':26s} {'T':>2s} {'strata ms':>10s} {'best peer':>12s} {'peer ms':>10s} {'ratio':>6s}   others (ms)")
for t in [int(x) for x in args.threads.split(",")]:
    for n in names:
        ours = samples.get((n, t, "strata"))
        if not ours:
            continue
        ours = statistics.median(ours)
        others = {p: statistics.median(v) for (m, tt, p), v in samples.items() if m == n and tt == t and p != "strata" and v}
        skipped = [p for (m, tt, p), v in samples.items() if m == n and tt == t and p != "strata" and not v]
        best = min(others, key=others.get) if others else None
        ratio = others[best] / ours if best else float("nan")
        rest = " ".join(f"{p}={v * 1e3:.3f}" for p, v in others.items()) + "".join(f" {p}=skipped" for p in skipped)
        print(f"{n:26s} {t:>2d} {ours * 1e3:10.3f} {best or '-':>12s} {others.get(best, float('nan')) * 1e3:10.3f} {ratio:6.2f}   {rest}")
        rows.append({"name": n, "threads": t, "strata_s": ours, "best_peer": best, "ratio": ratio, "peers_s": others,
                     "skipped": skipped})
if args.json:
    with open(args.json, "w") as f:
        json.dump(rows, f, indent=1)
