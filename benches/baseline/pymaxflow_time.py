#!/usr/bin/env python3
"""Times PyMaxflow (Boykov-Kolmogorov, double capacities as in the reference data) on
DIMACS grid instances: the max-flow call only, median of --runs, a fresh graph per run.

Usage: pymaxflow_time.py [--runs 5] [--json OUT] FILE.max.gz ...
Prints one line per instance: name, W, H, C, flow, median and min wall-clock ms, and
median CPU ms (process time: robust on a machine shared with other jobs).
"""

import argparse
import json
import statistics
import time
from pathlib import Path

import maxflow
import numpy as np

from grid_file import STEPS, read


def build(w, h, c, src, snk, caps):
    n = w * h
    g = maxflow.Graph[float](n, n * c // 2)
    g.add_nodes(n)
    ids = np.arange(n)
    xs, ys = ids % w, ids // w
    for d in range(0, c, 2):
        sx, sy = STEPS[d]
        ok = (xs + sx >= 0) & (xs + sx < w) & (ys + sy >= 0) & (ys + sy < h)
        p = ids[ok]
        q = p + sy * w + sx
        fwd, back = caps[d][p], caps[d ^ 1][q]
        keep = (fwd > 0) | (back > 0)
        g.add_edges(p[keep], q[keep], fwd[keep], back[keep])
    g.add_grid_tedges(ids, src, snk)
    return g


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = []
    print(f"{'instance':<34} {'size':>10} {'C':>2} {'flow':>12} {'median ms':>10} {'min ms':>9} {'cpu ms':>9}")
    for path in args.files:
        w, h, c, src, snk, caps = read(path)
        times, cpu, flow = [], [], None
        for _ in range(args.runs):
            g = build(w, h, c, src, snk, caps)
            t0, c0 = time.perf_counter(), time.process_time()
            flow = g.maxflow()
            cpu.append((time.process_time() - c0) * 1e3)
            times.append((time.perf_counter() - t0) * 1e3)
        row = dict(instance=path.name, width=w, height=h, connectivity=c, flow=int(round(flow)),
                   median_ms=statistics.median(times), min_ms=min(times),
                   cpu_median_ms=statistics.median(cpu))
        rows.append(row)
        print(f"{path.name:<34} {f'{w}x{h}':>10} {c:>2} {row['flow']:>12} "
              f"{row['median_ms']:>10.2f} {row['min_ms']:>9.2f} {row['cpu_median_ms']:>9.2f}",
              flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
