#!/usr/bin/env python3
"""livecut and the classical still-camera baselines, scored by the same code.

On a folder of still-camera frames with ground truth (default: `pedestrians`), the
script makes three sets of masks, the background learned from the first --learn
frames in each:

- livecut: `livecut segment --background N --engine cpu` (defaults otherwise);
- mean + threshold: the mean of the first N frames as the background, a pixel is
  foreground where its channels' absolute differences from it sum to more than
  --threshold, then a 5x5 opening and closing;
- KNN: OpenCV's createBackgroundSubtractorKNN (shadows on, shadows counted as
  background), fed every frame, then a 5x5 opening and closing.

and scores every set with `livecut eval --score-masks` (frames after the learning ones;
ground-truth pixels of 128 left out): mean IoU, F-measure, precision, recall and flicker
(of the pixels whose truth keeps its label between consecutive frames, the share whose
mask label flips), so that the baselines and livecut are measured alike, in one run.

    python3 benches/video/still_scores.py --livecut target/release/livecut \\
        [--frames-dir ../shared/data/video/pedestrians/frames] \\
        [--gt-dir ../shared/data/video/pedestrians/annotations] [--learn 10] [--threshold 45]

Arguments after `--` go to `livecut segment` (e.g. `-- --min-area 50`). Needs numpy and
opencv-python (headless will do).
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import cv2
import numpy as np

KERNEL = cv2.getStructuringElement(cv2.MORPH_RECT, (5, 5))


def frames_of(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in (".jpg", ".png"))


def open_close(mask: np.ndarray) -> np.ndarray:
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, KERNEL)
    return cv2.morphologyEx(mask, cv2.MORPH_CLOSE, KERNEL)


def write(out: Path, name: Path, mask: np.ndarray) -> None:
    cv2.imwrite(str(out / f"{name.stem}.png"), mask)


def mean_threshold(files: list[Path], learn: int, threshold: int, out: Path) -> None:
    frames = [cv2.imread(str(f), cv2.IMREAD_COLOR).astype(np.int16) for f in files]
    mean = np.mean(frames[:learn], axis=0).round().astype(np.int16)
    for name, frame in zip(files, frames):
        moved = np.abs(frame - mean).sum(axis=2) > threshold
        write(out, name, open_close(moved.astype(np.uint8) * 255))


def knn(files: list[Path], out: Path) -> None:
    subtractor = cv2.createBackgroundSubtractorKNN(detectShadows=True)
    for name in files:
        mask = subtractor.apply(cv2.imread(str(name), cv2.IMREAD_COLOR))
        mask = cv2.threshold(mask, 200, 255, cv2.THRESH_BINARY)[1]  # shadows (127) out
        write(out, name, open_close(mask))


def score(livecut: str, frames: Path, gt: Path, masks: Path, learn: int) -> dict:
    cmd = [
        livecut, "eval", "--frames", str(frames), "--gt", str(gt),
        "--background", str(learn), "--score-masks", str(masks), "--json",
    ]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--livecut", default="target/release/livecut")
    parser.add_argument("--frames-dir", type=Path,
                        default=Path("../shared/data/video/pedestrians/frames"))
    parser.add_argument("--gt-dir", type=Path,
                        default=Path("../shared/data/video/pedestrians/annotations"))
    parser.add_argument("--learn", type=int, default=10)
    parser.add_argument("--threshold", type=int, default=45)
    parser.add_argument("segment_args", nargs="*")
    args = parser.parse_args()
    files = frames_of(args.frames_dir)
    if len(files) <= args.learn:
        sys.exit(f"{args.frames_dir} has {len(files)} frames, not more than --learn")
    with tempfile.TemporaryDirectory() as tmp:
        sets = {name: Path(tmp) / name for name in ("livecut", "mean+threshold", "knn")}
        for folder in sets.values():
            folder.mkdir()
        subprocess.run(
            [args.livecut, "segment", "--input", str(args.frames_dir), "--background",
             str(args.learn), "--engine", "cpu", "--out", str(sets["livecut"]),
             *args.segment_args],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        mean_threshold(files, args.learn, args.threshold, sets["mean+threshold"])
        knn(files, sets["knn"])
        print(f"{args.frames_dir}: {len(files)} frames, background from {args.learn}, "
              f"scored by `livecut eval --score-masks` (OpenCV {cv2.__version__})")
        print(f"{'method':<16} {'IoU':>7} {'F':>7} {'prec':>7} {'recall':>7} {'flicker':>9}")
        for name, folder in sets.items():
            s = score(args.livecut, args.frames_dir, args.gt_dir, folder, args.learn)
            print(f"{name:<16} {s['mean_iou']:>7.4f} {s['f_measure']:>7.4f} "
                  f"{s['precision']:>7.4f} {s['recall']:>7.4f} {s['flicker']:>9.5f}")


if __name__ == "__main__":
    main()
