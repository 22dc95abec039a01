#!/usr/bin/env python3
"""Two or more livecut builds timed on the same frames, alternated round by round.

A 2-core machine's speed drifts by tens of percent within minutes, so builds timed one
after the other are not comparable: this runs `livecut bench --sequence` for each build
in turn, round after round, and reports for each build and mode (static, dynamic) the
median over rounds of each stage's median milliseconds, the smallest of them, the share
of frames that continued, and the whole frame's static/dynamic ratio, all read from the
bench's own JSON so every build is scored the same way.

    python3 benches/video/ab_builds.py --sequence demo --size 640x480 --rounds 7 \\
        base=/tmp/livecut-base new=target/release/livecut
    python3 benches/video/ab_builds.py --sequence ../shared/data/video/pedestrians/frames \\
        --background 10 --size 1280x720 --rounds 3 base=... new=...
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

STAGES = ("energy", "upload", "cut", "engine", "total")


def one_run(binary, args, out):
    """Runs one bench of `binary`; returns {mode: {stage: median ms, ...}}."""
    command = [binary, "bench", "--sequence", args.sequence, "--size", args.size,
               "--frames", str(args.frames), "--engine", args.engine,
               "--background", str(args.background), "--json", str(out)]
    try:
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
    except OSError as e:
        sys.exit(f"cannot run {binary}: {e}")
    if done.returncode != 0:
        sys.exit(f"{binary} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    runs = {}
    for run in json.loads(out.read_text()):
        stages = dict(run["stages"])
        figures = {s: stages[s]["median"] for s in STAGES if s in stages}
        figures["cpu"] = run["cpu_ms"]["median"]
        figures["continued"] = run["continued"] / max(run["frames"], 1)
        runs[run["mode"]] = figures
    return runs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("builds", nargs="+", metavar="NAME=BINARY")
    parser.add_argument("--sequence", default="demo")
    parser.add_argument("--size", default="640x480")
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--background", type=int, default=0)
    parser.add_argument("--engine", default="cpu")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    builds = [b.split("=", 1) for b in args.builds]
    if any(len(b) != 2 for b in builds):
        parser.error("builds are NAME=BINARY")
    # figures[name][mode][stage] = one median per round
    figures = {name: {} for name, _ in builds}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.json"
        for r in range(args.rounds):
            for name, binary in builds:
                for mode, stages in one_run(binary, args, out).items():
                    for stage, ms in stages.items():
                        figures[name].setdefault(mode, {}).setdefault(stage, []).append(ms)
            print(f"round {r + 1} of {args.rounds} done", file=sys.stderr)
    print(f"{args.sequence} at {args.size}, {args.frames} frames, {args.rounds} rounds, "
          f"engine {args.engine}: median of the rounds' medians (smallest) in ms")
    for name, _ in builds:
        for mode, stages in figures[name].items():
            cells = [f"{s} {statistics.median(v):.2f} ({min(v):.2f})"
                     for s, v in stages.items() if s != "continued"]
            share = statistics.median(stages["continued"])
            print(f"{name:>8} {mode:>8}: " + ", ".join(cells) + f", continued {share:.0%}")
        modes = figures[name]
        if "static" in modes and "dynamic" in modes:
            ratios = [s / d for s, d in zip(modes["static"]["total"], modes["dynamic"]["total"])]
            print(f"{name:>8} static/dynamic whole frame: median {statistics.median(ratios):.2f}"
                  f" (rounds: {' '.join(f'{x:.2f}' for x in ratios)})")


if __name__ == "__main__":
    main()
