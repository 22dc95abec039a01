#!/usr/bin/env python3
"""A video cut as volumes against frame by frame, scored and timed by the same code.

For each clip (a folder with `frames/` and `annotations/`, as `../shared/data/video/*`),
`livecut eval --engine E` (default cpu) runs frame by frame (the defaults: dynamic cuts, temporal
prior, noise gate) and with `--volume N` for every N of --volumes, one after the other
on the same frames, and the table gives mean IoU, F-measure, flicker (frames after the
seeded or learning ones, ground truth 128 left out) and milliseconds per frame (energy
and cut; a volume's cut shared out over its frames).

Clips: `pedestrians` (a still camera; the background learned from its first 10 frames,
no seeds) and `car-shadow` (a camera following a car; seeds from the first ground truth
eroded and dilated by 7 pixels) by default; --size WxH also runs every clip scaled to
that size (frames with area interpolation, truth with nearest neighbour).

    python3 benches/video/volume_scores.py --livecut target/release/livecut \\
        [--clip DIR --learn N ...] [--volumes 4,8] [--size 854x480] [--engine cpu|cuda]

Needs numpy and opencv-python (headless will do).
"""

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import cv2

DATA = Path("../shared/data/video")
DEFAULT_CLIPS = [(DATA / "pedestrians", 10), (DATA / "car-shadow", 0)]


def images(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in (".jpg", ".png"))


def scaled(clip: Path, size: tuple[int, int], into: Path) -> Path:
    """The clip's frames and truths scaled to `size`, written under `into`."""
    out = into / f"{clip.name}-{size[0]}x{size[1]}"
    for sub, read, interp in [("frames", cv2.IMREAD_COLOR, cv2.INTER_AREA),
                              ("annotations", cv2.IMREAD_GRAYSCALE, cv2.INTER_NEAREST)]:
        (out / sub).mkdir(parents=True)
        for path in images(clip / sub):
            image = cv2.resize(cv2.imread(str(path), read), size, interpolation=interp)
            cv2.imwrite(str(out / sub / f"{path.stem}.png"), image)
    return out


def evaluate(livecut: str, engine: str, clip: Path, learn: int, volume: int | None) -> dict:
    cmd = [livecut, "eval", "--frames", str(clip / "frames"), "--gt", str(clip / "annotations"),
           "--engine", engine, "--json"]
    if learn:
        cmd += ["--background", str(learn)]
    if volume:
        cmd += ["--volume", str(volume)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--livecut", default="target/release/livecut")
    parser.add_argument("--clip", type=Path, action="append",
                        help="folder with frames/ and annotations/ (repeatable)")
    parser.add_argument("--learn", type=int, action="append",
                        help="background frames of the --clip at the same place (0: seeds)")
    parser.add_argument("--volumes", default="4,8")
    parser.add_argument("--engine", default="cpu", help="cpu or cuda, for every row")
    parser.add_argument("--size", help="also run every clip scaled to WxH")
    args = parser.parse_args()
    clips = list(zip(args.clip, args.learn or [0] * len(args.clip))) if args.clip else DEFAULT_CLIPS
    volumes = [int(v) for v in args.volumes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        runs = [(clip, learn, clip.name) for clip, learn in clips]
        if args.size:
            w, h = (int(v) for v in args.size.lower().split("x"))
            runs += [(scaled(clip, (w, h), Path(tmp)), learn, f"{clip.name} {w}x{h}")
                     for clip, learn in clips]
        print(f"{'clip':<24} {'cut':<14} {'IoU':>7} {'F':>7} {'flicker':>9} {'ms/frame':>9}")
        for clip, learn, name in runs:
            for volume in [None, *volumes]:
                r = evaluate(args.livecut, args.engine, clip, learn, volume)
                how = f"volumes of {volume}" if volume else "frame by frame"
                print(f"{name:<24} {how:<14} {r['mean_iou']:>7.4f} {r['f_measure']:>7.4f} "
                      f"{r['flicker']:>9.5f} {r['mean_ms']:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
