#!/usr/bin/env python3
"""Times Hochbaum's pseudoflow (HPF) on DIMACS grid instances: its own solve timer (the
minimum cut, phase one of HPF, as HPF timings are usually given), median of --runs, and
checks that the cut it returns has the capacity livecut reports as the max flow.

HPF comes from the `pseudoflow` package's C sources (BSD), built here, not vendored:
  pip download pseudoflow==2022.12.0 --no-deps -d /tmp/pf && tar xzf /tmp/pf/*.tar.gz -C /tmp/pf
  cd /tmp/pf/pseudoflow-2022.12.0/src/pseudoflow/c
  sed -i 's/t %.3lf %.3lf %.3lf/t %.6lf %.6lf %.6lf/' hpf.c   # µs, not ms, in its timings
  make                                                          # gives ./hpf
Usage: hpf_time.py --hpf /tmp/pf/pseudoflow-2022.12.0/src/pseudoflow/c/hpf [--runs 5]
       [--work DIR] FILE.max.gz ...
Each instance is converted once to HPF's input format in --work (default /tmp/lc-hpf; a
1920x1080 8C instance takes ~1 GB there). Prints one line per instance: name, W, H, C,
cut capacity, median and min solve ms (HPF's clock(), CPU time).
"""

import argparse
import statistics
import subprocess
from pathlib import Path

import numpy as np

from grid_file import STEPS, read


def arcs(w, h, c, src, snk, caps):
    """All arcs as rows (tail, head, capacity); pixel p = y*W + x, s = N, t = N + 1."""
    n = w * h
    ids = np.arange(n)
    xs, ys = ids % w, ids // w
    parts = [np.stack([np.full(n, n), ids, src]), np.stack([ids, np.full(n, n + 1), snk])]
    for d in range(c):
        sx, sy = STEPS[d]
        ok = (xs + sx >= 0) & (xs + sx < w) & (ys + sy >= 0) & (ys + sy < h) & (caps[d] > 0)
        p = ids[ok]
        parts.append(np.stack([p, p + sy * w + sx, caps[d][p]]))
    rows = np.concatenate(parts, axis=1).T
    return rows[rows[:, 2] > 0].astype(np.int64)


def convert(path, out):
    """Writes HPF's input for `path` to `out` unless it is there; returns the arrays."""
    grid = read(path)
    w, h = grid[0], grid[1]
    if not out.exists():
        rows = arcs(*grid)
        tmp = out.with_suffix(".tmp")
        with open(tmp, "w") as f:
            f.write(f"p {w * h + 2} {len(rows)} 0 0 0\nn {w * h} s\nn {w * h + 1} t\n")
            np.savetxt(f, rows, fmt="a %d %d %d 0")
        tmp.rename(out)
    return grid


def cut_capacity(grid, source_side):
    """Capacity of the cut whose source side is the boolean pixel array `source_side`."""
    w, h, c, src, snk, caps = grid
    ids = np.arange(w * h)
    xs, ys = ids % w, ids // w
    total = src[~source_side].sum() + snk[source_side].sum()
    for d in range(c):
        sx, sy = STEPS[d]
        ok = (xs + sx >= 0) & (xs + sx < w) & (ys + sy >= 0) & (ys + sy < h)
        p = ids[ok]
        q = p + sy * w + sx
        total += caps[d][p][source_side[p] & ~source_side[q]].sum()
    return int(round(total))


def run(hpf, infile, outfile, pixels):
    """One HPF run: (solve ms, source-side indicator per pixel)."""
    outfile.unlink(missing_ok=True)
    # hpf exits with status 1 after success; its output file tells.
    subprocess.run([str(hpf), str(infile), str(outfile)], stdout=subprocess.DEVNULL)
    if not outfile.exists():
        raise SystemExit(f"{hpf} wrote no result for {infile}")
    side = np.zeros(pixels + 2, dtype=bool)
    solve_ms = None
    with open(outfile) as f:
        for line in f:
            if line.startswith("t "):
                solve_ms = float(line.split()[3]) * 1e3
            elif line.startswith("n "):
                node, flag = line.split()[1:3]
                side[int(node)] = flag == "1"
    return solve_ms, side[:pixels]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--hpf", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--work", type=Path, default=Path("/tmp/lc-hpf"))
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"{'instance':<34} {'size':>10} {'C':>2} {'cut':>12} {'median ms':>10} {'min ms':>9}")
    for path in args.files:
        infile = args.work / (path.name.removesuffix(".gz") + ".hpf")
        grid = convert(path, infile)
        w, h, c = grid[:3]
        times, cut = [], None
        for _ in range(args.runs):
            ms, side = run(args.hpf, infile, args.work / "out.txt", w * h)
            times.append(ms)
            cut = cut_capacity(grid, side)
        print(f"{path.name:<34} {f'{w}x{h}':>10} {c:>2} {cut:>12} "
              f"{statistics.median(times):>10.2f} {min(times):>9.2f}", flush=True)


if __name__ == "__main__":
    main()
