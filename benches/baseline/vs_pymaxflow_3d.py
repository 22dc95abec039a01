#!/usr/bin/env python3
"""Times livecut's CPU engine against PyMaxflow's grid graph on the 3D reference
instances, in alternating rounds on one pinned core, and prints each one's median
max-flow time and the ratio.

Usage: vs_pymaxflow_3d.py [--rounds 5] [--core 1] [--livecut target/release/livecut] [FILE...]

Without FILE it times every instance of ../shared/data/grids3d/manifest.csv. Each round
times PyMaxflow (Boykov-Kolmogorov, double capacities as in the reference data; the
`maxflow()` call only, a fresh graph per run, median of --runs) and then
`livecut bench --engine cpu` (its solve_ms median) on each instance, back to back, so
that drift on a shared machine stays out of the ratios; the ratio reported is the
median of the rounds' ratios. PyMaxflow's flow is checked against the manifest.
Needs PyMaxflow and numpy (`pip install PyMaxflow numpy`) and `taskset`.
"""

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import maxflow
import numpy as np

HERE = Path(__file__).resolve().parent
GRIDS3D = HERE.parents[2] / "shared" / "data" / "grids3d"

# livecut's direction order (src/grid/volume.rs, OFFSETS): pairs (d, d ^ 1), and the
# 6-, 10- and 26-connected neighbourhoods are prefixes.
OFFSETS = [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1),
           (1, 1, 0), (-1, -1, 0), (-1, 1, 0), (1, -1, 0),
           (1, 0, 1), (-1, 0, -1), (-1, 0, 1), (1, 0, -1), (0, 1, 1), (0, -1, -1),
           (0, -1, 1), (0, 1, -1), (1, 1, 1), (-1, -1, -1), (-1, 1, 1), (1, -1, -1),
           (1, -1, 1), (-1, 1, -1), (-1, -1, 1), (1, 1, -1)]


def read3d(path):
    """Returns (W, H, D, C, source caps, sink caps, per-direction caps) of a
    `c grid W H D C` instance, duplicates summed, in float64."""
    raw = path.read_bytes()
    text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    lines = text.split(b"\n")
    first = lines[0].split()
    if first[:2] != [b"c", b"grid"] or len(first) != 6:
        sys.exit(f"{path}: first line is not 'c grid W H D C'")
    w, h, d, c = map(int, first[2:6])
    n = w * h * d
    arcs = b"\n".join(l[1:] for l in lines if l.startswith(b"a"))
    nums = np.array(arcs.split(), dtype=np.int64).reshape(-1, 3)
    u, v, cap = nums[:, 0], nums[:, 1], nums[:, 2].astype(np.float64)
    src, snk = np.zeros(n), np.zeros(n)
    s_arc, t_arc = u == n + 1, v == n + 2
    np.add.at(src, v[s_arc] - 1, cap[s_arc])
    np.add.at(snk, u[t_arc] - 1, cap[t_arc])
    nb = ~(s_arc | t_arc)
    p, q, cp = u[nb] - 1, v[nb] - 1, cap[nb]
    step = (q % w - p % w, (q // w) % h - (p // w) % h, q // (w * h) - p // (w * h))
    caps = np.zeros((c, n))
    for k, (sx, sy, sz) in enumerate(OFFSETS[:c]):
        sel = (step[0] == sx) & (step[1] == sy) & (step[2] == sz)
        np.add.at(caps[k], p[sel], cp[sel])
    return w, h, d, c, src, snk, caps


def build(w, h, d, c, src, snk, caps):
    """PyMaxflow's graph of the instance: one add_edges call per neighbour pair
    direction (both capacities at once), the terminal arcs by add_grid_tedges."""
    n = w * h * d
    g = maxflow.Graph[float](n, n * c // 2)
    g.add_nodes(n)
    ids = np.arange(n)
    xs, ys, zs = ids % w, (ids // w) % h, ids // (w * h)
    for k in range(0, c, 2):
        sx, sy, sz = OFFSETS[k]
        ok = ((xs + sx >= 0) & (xs + sx < w) & (ys + sy >= 0) & (ys + sy < h)
              & (zs + sz >= 0) & (zs + sz < d))
        p = ids[ok]
        q = p + (sz * h + sy) * w + sx
        fwd, back = caps[k][p], caps[k ^ 1][q]
        keep = (fwd > 0) | (back > 0)
        g.add_edges(p[keep], q[keep], fwd[keep], back[keep])
    g.add_grid_tedges(ids, src, snk)
    return g


def pymaxflow_ms(instance, runs):
    """Median milliseconds of PyMaxflow's maxflow() over `runs` fresh graphs, and its flow."""
    times, flow = [], None
    for _ in range(runs):
        g = build(*instance)
        t0 = time.perf_counter()
        flow = g.maxflow()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), int(round(flow))


def livecut_ms(livecut, files, runs, out):
    """{instance: solve_ms median} of `livecut bench --engine cpu` on `files`."""
    cmd = [str(livecut), "bench", "--engine", "cpu", "--runs", str(runs), "--warmup", "2",
           "--json", out] + [str(f) for f in files]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"error: livecut bench failed:\n{done.stderr.strip()}")
    return {row["instance"]: row["solve_ms_median"] for row in json.loads(Path(out).read_text())}


def manifest(dir_):
    rows = (dir_ / "manifest.csv").read_text().splitlines()[1:]
    return {r.split(",")[0]: int(r.split(",")[5]) for r in rows if r.strip()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=9, help="timed runs per round and engine")
    ap.add_argument("--core", type=int, default=1)
    ap.add_argument("--livecut", type=Path, default=Path("target/release/livecut"))
    args = ap.parse_args()
    expected = manifest(GRIDS3D) if GRIDS3D.is_dir() else {}
    files = args.files or [GRIDS3D / f for f in expected]
    missing = [str(f) for f in files + [args.livecut] if not Path(f).is_file()]
    if missing:
        sys.exit(f"error: not found: {', '.join(missing)} (build with cargo build --release)")
    os.sched_setaffinity(0, {args.core})  # livecut inherits the pinning
    instances = {f.name: read3d(f) for f in files}
    py, lc = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            print(f"round {r + 1}/{args.rounds}", file=sys.stderr, flush=True)
            for f in files:
                ms, flow = pymaxflow_ms(instances[f.name], args.runs)
                if f.name in expected and flow != expected[f.name]:
                    sys.exit(f"error: PyMaxflow's flow {flow} on {f.name}, manifest {expected[f.name]}")
                py.setdefault(f.name, []).append(ms)
                for k, v in livecut_ms(args.livecut, [f], args.runs, f"{tmp}/rows.json").items():
                    lc.setdefault(k, []).append(v)
    print(f"{'instance':<36} {'voxels':>7} {'C':>2} {'PyMaxflow ms':>12} {'livecut ms':>10} {'ratio':>7}  rounds' ratios")
    for f in files:
        k = f.name
        w, h, d, c = instances[k][:4]
        ratios = [p / l if l > 0 else float("inf") for p, l in zip(py[k], lc[k])]
        print(f"{k:<36} {w * h * d:>7} {c:>2} {statistics.median(py[k]):>12.3f} "
              f"{statistics.median(lc[k]):>10.3f} {statistics.median(ratios):>7.2f}  "
              + " ".join(f"{x:.2f}" for x in ratios))


if __name__ == "__main__":
    main()
