#!/usr/bin/env python3
"""Static vs dynamic cut time on frames from a still camera.

car-shadow (../shared/data/video) is a camera pan: nearly every capacity changes
between frames, so `update` solves afresh and dynamic cuts cannot pay there. This
script makes the case they are for: the first car-shadow frame repeated with one
60x60 patch moving over the background (a still camera, little motion) and Gaussian
sensor noise of `--noise` grey levels (0 = none), plus seeds from its ground truth as
`livecut eval` makes them (eroded / dilated by 7 px). It then runs `livecut segment`
with `--dynamic off` and `--dynamic on`, alternated, and prints the median cut
milliseconds of the frames after the second (the first frame is solved afresh either
way, the second adds the temporal prior). Arguments after `--` go to `livecut
segment` (e.g. `-- --noise-gate 0`).

    python3 benches/video/still_camera.py --livecut target/release/livecut \\
        [--shared ../shared] [--frames 20] [--rounds 2] [--engine cpu] [--noise 2]

Needs numpy and Pillow.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image, ImageFilter


def make_frames(shared: Path, out: Path, frames: int, noise: float) -> Path:
    """Writes the frames into `out/frames` and returns the seeds file."""
    rng = np.random.default_rng(1)
    video = shared / "data" / "video" / "car-shadow"
    first = np.asarray(Image.open(video / "frames" / "00000.jpg").convert("RGB"))
    h = first.shape[0]
    folder = out / "frames"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(frames):
        f = first.copy()
        x, y = 40 + 6 * i, h - 120
        f[y : y + 60, x : x + 60] = first[y - 70 : y - 10, x + 200 : x + 260]
        if noise > 0:
            f = np.clip(f + rng.normal(0, noise, f.shape), 0, 255).astype(np.uint8)
        Image.fromarray(f).save(folder / f"{i:05d}.png")
    gt = Image.open(video / "annotations" / "00000.png").convert("L")
    fg = Image.fromarray(((np.asarray(gt) > 127) * 255).astype(np.uint8))
    inner = np.asarray(fg.filter(ImageFilter.MinFilter(15))) > 127
    outer = np.asarray(fg.filter(ImageFilter.MaxFilter(15))) > 127
    seeds = np.full(inner.shape, 128, np.uint8)
    seeds[inner] = 255
    seeds[~outer] = 0
    path = out / "seeds.png"
    Image.fromarray(seeds).save(path)
    return path


def cut_ms(livecut: str, out: Path, seeds: Path, engine: str, dynamic: str,
           extra: list) -> tuple:
    """Median cut ms of frames 2.. and how many of them were dynamic."""
    log = out / f"{dynamic}.jsonl"
    subprocess.run(
        [livecut, "segment", "--input", str(out / "frames"), "--seeds", str(seeds),
         "--out", str(out / f"masks-{dynamic}"), "--engine", engine,
         "--dynamic", dynamic, "--json", str(log), *extra],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    rows = [json.loads(line) for line in log.read_text().splitlines()][2:]
    return statistics.median(r["cut_ms"] for r in rows), sum(r["dynamic"] for r in rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--livecut", required=True)
    ap.add_argument("--shared", default="../shared", type=Path)
    ap.add_argument("--frames", default=20, type=int)
    ap.add_argument("--rounds", default=2, type=int)
    ap.add_argument("--engine", default="cpu")
    ap.add_argument("--noise", default=2.0, type=float)
    ap.add_argument("extra", nargs="*", help="arguments for livecut segment (after --)")
    args = ap.parse_args()
    if args.frames < 3:
        sys.exit("error: --frames must be at least 3")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        seeds = make_frames(args.shared, out, args.frames, args.noise)
        print(f"{'round':>5}  {'static ms':>10}  {'dynamic ms':>10}  {'dynamic frames':>14}  ratio")
        for r in range(1, args.rounds + 1):
            static, _ = cut_ms(args.livecut, out, seeds, args.engine, "off", args.extra)
            dynamic, count = cut_ms(args.livecut, out, seeds, args.engine, "on", args.extra)
            print(f"{r:>5}  {static:>10.2f}  {dynamic:>10.2f}  "
                  f"{count:>7}/{args.frames - 2:<6}  {static / dynamic:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
