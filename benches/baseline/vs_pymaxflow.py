#!/usr/bin/env python3
"""Times livecut's CPU engine against PyMaxflow on the same instances, in alternating
rounds on one pinned core, and prints each one's median solve time and the ratio.

Usage: vs_pymaxflow.py [--rounds 3] [--core 1] [--livecut target/release/livecut] FILE...

On a shared machine both move by tens of percent from minute to minute; timing the two
back to back on each instance in every round and taking the median of the rounds'
ratios keeps such drift out of the ratio. Without FILE it times the public image and seed instances of
../shared/data/grids. Needs PyMaxflow (`pip install PyMaxflow`) and `taskset`.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
GRIDS = HERE.parents[2] / "shared" / "data" / "grids"
PUBLIC = ["coins_384x303_4c", "rocket_640x480_4c", "seeds_disk_320x240_4c",
          "camera_320x240_8c", "chelsea_451x300_8c", "seeds_astronaut_400x300_8c"]


def run_json(what, cmd, out):
    """Runs `cmd` (which writes JSON rows to `out`) and returns {instance: row}; exits
    with its error output, naming `what` ran, where it fails."""
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"error: {what} failed:\n{done.stderr.strip()}")
    return {row["instance"]: row for row in json.loads(Path(out).read_text())}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--core", type=int, default=1)
    ap.add_argument("--livecut", type=Path, default=Path("target/release/livecut"))
    args = ap.parse_args()
    files = [str(f) for f in args.files] or [str(GRIDS / f"{n}.max.gz") for n in PUBLIC]
    missing = [f for f in files + [str(args.livecut)] if not Path(f).is_file()]
    if missing:
        sys.exit(f"error: not found: {', '.join(missing)} (build with cargo build --release)")
    pin = ["taskset", "-c", str(args.core)]
    py, lc = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        out = f"{tmp}/rows.json"
        for r in range(args.rounds):
            print(f"round {r + 1}/{args.rounds}", file=sys.stderr, flush=True)
            for f in files:
                rows = run_json("PyMaxflow", pin + [sys.executable, str(HERE / "pymaxflow_time.py"),
                                       "--runs", "5", "--json", out, f], out)
                for k, row in rows.items():
                    py.setdefault(k, []).append(row["median_ms"])
                rows = run_json("livecut bench", pin + [str(args.livecut), "bench", "--engine", "cpu",
                                       "--runs", "9", "--warmup", "2", "--json", out, f], out)
                for k, row in rows.items():
                    lc.setdefault(k, []).append(row["solve_ms_median"])
    print(f"{'instance':<34} {'PyMaxflow ms':>12} {'livecut ms':>10} {'ratio':>6}  rounds' ratios")
    for k in sorted(py):
        ratios = [p / l if l > 0 else float("inf") for p, l in zip(py[k], lc[k])]
        print(f"{k:<34} {statistics.median(py[k]):>12.2f} {statistics.median(lc[k]):>10.2f} "
              f"{statistics.median(ratios):>6.2f}  " + " ".join(f"{x:.2f}" for x in ratios))


if __name__ == "__main__":
    main()
