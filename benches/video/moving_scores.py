#!/usr/bin/env python3
"""livecut and OpenCV grabCut propagation on seeded clips, scored by the same code.

For each clip (a folder with `frames/` and `annotations/`, as `../shared/data/video/*`;
default: car-shadow, a camera following a car), both methods start from the same seeds:
the first frame's ground truth eroded by --margin pixels (foreground) and, beyond it
dilated by as much, background (Euclidean distance, as `livecut eval --first-seeds auto`
derives them):

- livecut: `livecut eval --mode dynamic --engine cpu` (defaults otherwise), which also
  gives its milliseconds per frame (energy and cut, frames read before the timing);
- grabCut propagated, the usual way to carry a grabCut mask through a clip: the first
  frame is cut from the seeds (sure foreground and background, the band between
  probably background), every later frame from the previous frame's mask (eroded by
  --band: sure foreground; beyond it dilated by as much: sure background; between:
  probably what the previous mask said), --iterations iterations each, timed per frame.
  The band's default favours the baseline: of 3, 7, 10, 15, 20, 25 and 35 pixels, 10
  gave grabCut its best IoU on car-shadow (0.47-0.72).

Both sets of masks are scored by `livecut eval --score-masks` (frames after the first;
ground-truth pixels of 128 left out): mean IoU, F-measure and flicker, so that they are
measured alike, in one run.

    python3 benches/video/moving_scores.py --livecut target/release/livecut \\
        [--clip ../shared/data/video/car-shadow ...] [--margin 7] [--band 10] [--iterations 5]

Needs numpy and opencv-python (headless will do).
"""

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np


def frames_of(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in (".jpg", ".png"))


def beyond(mask: np.ndarray, margin: int) -> np.ndarray:
    """Pixels of `mask` (bool) farther than `margin` from every pixel outside it."""
    inside = mask.astype(np.uint8)
    if inside.all():
        return mask.copy()
    distance = cv2.distanceTransform(inside, cv2.DIST_L2, cv2.DIST_MASK_PRECISE)
    return distance > margin


def grabcut_init(previous: np.ndarray, margin: int, band: int) -> np.ndarray:
    """A grabCut mask from a foreground mask: its core sure foreground, the far
    background sure background, `band` (a GC_PR_* value, or None: the previous label)
    between."""
    init = np.where(previous, cv2.GC_PR_FGD, cv2.GC_PR_BGD).astype(np.uint8)
    if band is not None:
        init[:] = band
    init[beyond(previous, margin)] = cv2.GC_FGD
    init[beyond(~previous, margin)] = cv2.GC_BGD
    return init


def grabcut_clip(files: list[Path], first_gt: np.ndarray, margin: int, band: int,
                 iterations: int, out: Path) -> list[float]:
    """Propagates grabCut through the clip; writes masks and returns ms per frame."""
    previous = first_gt
    times = []
    for i, name in enumerate(files):
        image = cv2.imread(str(name), cv2.IMREAD_COLOR)
        if i == 0:
            init = grabcut_init(previous, margin, cv2.GC_PR_BGD)
        else:
            init = grabcut_init(previous, band, None)
        bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
        start = time.perf_counter()
        cv2.grabCut(image, init, None, bgd, fgd, iterations, cv2.GC_INIT_WITH_MASK)
        times.append((time.perf_counter() - start) * 1e3)
        previous = (init == cv2.GC_FGD) | (init == cv2.GC_PR_FGD)
        cv2.imwrite(str(out / f"{name.stem}.png"), previous.astype(np.uint8) * 255)
    return times


def livecut_eval(livecut: str, frames: Path, gt: Path, margin: int, extra: list[str]) -> dict:
    cmd = [livecut, "eval", "--frames", str(frames), "--gt", str(gt), "--engine", "cpu",
           "--mode", "dynamic", "--seed-margin", str(margin), "--json", *extra]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--livecut", default="target/release/livecut")
    parser.add_argument("--clip", type=Path, action="append",
                        help="folder with frames/ and annotations/ (repeatable)")
    parser.add_argument("--margin", type=int, default=7)
    parser.add_argument("--band", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=5)
    args = parser.parse_args()
    clips = args.clip or [Path("../shared/data/video/car-shadow")]
    print(f"seeds: first ground truth eroded/dilated by {args.margin} px; grabCut "
          f"{args.iterations} iterations a frame, later frames from the previous mask with a "
          f"{args.band} px band (OpenCV {cv2.__version__}); every set scored by "
          f"`livecut eval --score-masks`, frames after the first")
    print(f"{'clip':<14} {'method':<20} {'IoU':>7} {'F':>7} {'flicker':>9} {'ms/frame':>9}")
    for clip in clips:
        frames, gt = clip / "frames", clip / "annotations"
        files = frames_of(frames)
        first_gt = cv2.imread(str(gt / f"{files[0].stem}.png"), cv2.IMREAD_GRAYSCALE) > 128
        with tempfile.TemporaryDirectory() as tmp:
            ours, theirs = Path(tmp) / "livecut", Path(tmp) / "grabcut"
            ours.mkdir()
            theirs.mkdir()
            live = livecut_eval(args.livecut, frames, gt, args.margin,
                                ["--masks-out", str(ours)])
            times = grabcut_clip(files, first_gt, args.margin, args.band, args.iterations,
                                 theirs)
            rows = {
                "livecut": (livecut_eval(args.livecut, frames, gt, args.margin,
                                         ["--score-masks", str(ours)]), live["mean_ms"]),
                "grabCut propagated": (livecut_eval(args.livecut, frames, gt, args.margin,
                                                    ["--score-masks", str(theirs)]),
                                       statistics.mean(times[1:])),
            }
            for name, (s, ms) in rows.items():
                print(f"{clip.name:<14} {name:<20} {s['mean_iou']:>7.4f} {s['f_measure']:>7.4f} "
                      f"{s['flicker']:>9.5f} {ms:>9.1f}")


if __name__ == "__main__":
    main()
