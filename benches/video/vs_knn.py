#!/usr/bin/env python3
"""livecut's whole frame against OpenCV's KNN background subtractor on a still camera.

The baseline is the best classical method in F-measure on our still-camera footage:
cv2.createBackgroundSubtractorKNN (shadows on) followed by a 5x5 opening and closing of
its mask, run with --threads OpenCV threads. livecut runs `livecut bench --sequence` on
the same frames: the background learned from the first --learn frames (untimed), then
its CPU engine and CPU energy, static (every frame from scratch) and dynamic (frames
that cost what changed). Both read the very same pixels: the frames are scaled once to
each size (cv2.INTER_AREA) and written to a temporary folder that both then read.

Per size the script prints the median milliseconds per frame over the frames after the
learning ones: KNN (+ open/close), livecut static and dynamic (wall, and process CPU for
livecut), and KNN / livecut dynamic.

    python3 benches/video/vs_knn.py --livecut target/release/livecut \\
        [--frames-dir ../shared/data/video/pedestrians/frames] [--frames 60] \\
        [--learn 10] [--sizes 640x480 1280x720 1920x1080] [--threads 2]

Needs numpy and opencv-python (headless will do).
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np


def scaled_frames(src: Path, count: int, size: tuple[int, int], out: Path) -> list[np.ndarray]:
    """Scales the first `count` frames of `src` to `size`, writes them to `out` as PNG
    and returns them (BGR, as OpenCV reads them)."""
    out.mkdir(parents=True, exist_ok=True)
    names = sorted(p for p in src.iterdir() if p.suffix.lower() in (".jpg", ".png"))[:count]
    if len(names) < count:
        sys.exit(f"{src} has {len(names)} frames, fewer than --frames {count}")
    frames = []
    for i, name in enumerate(names):
        image = cv2.imread(str(name), cv2.IMREAD_COLOR)
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
        cv2.imwrite(str(out / f"{i:05d}.png"), image, [cv2.IMWRITE_PNG_COMPRESSION, 1])
        frames.append(image)
    return frames


def knn_ms(frames: list[np.ndarray], learn: int) -> float:
    """Median ms per frame of KNN + 5x5 open/close over the frames after `learn` and
    a warm-up frame (as livecut is timed)."""
    knn = cv2.createBackgroundSubtractorKNN(detectShadows=True)
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (5, 5))
    times = []
    for i, frame in enumerate(frames):
        start = time.perf_counter()
        mask = knn.apply(frame)
        mask = cv2.threshold(mask, 200, 255, cv2.THRESH_BINARY)[1]  # shadows (127) out
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, kernel)
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, kernel)
        if i > learn:  # the first cut frame is a warm-up for livecut too
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def livecut_ms(livecut: str, folder: Path, frames: int, learn: int, out: Path) -> dict:
    """livecut's static and dynamic medians (total and CPU ms) on `folder`."""
    report = out / "bench.json"
    cmd = [
        livecut, "bench", "--sequence", str(folder), "--background", str(learn),
        "--frames", str(frames - learn), "--engine", "cpu", "--json", str(report),
    ]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = json.loads(report.read_text())
    result = {}
    for row in rows:
        stages = {name: spread for name, spread in row["stages"]}
        cpu = row["cpu_ms"]["median"] if row.get("cpu_ms") else float("nan")
        result[row["mode"]] = (stages["total"]["median"], cpu, row["continued"], row["frames"])
        if not (row["same_flows"] and row["same_masks"]):
            sys.exit(f"livecut: {row['mode']} runs gave different flows or masks")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--livecut", default="target/release/livecut")
    parser.add_argument("--frames-dir", type=Path,
                        default=Path("../shared/data/video/pedestrians/frames"))
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--learn", type=int, default=10)
    parser.add_argument("--sizes", nargs="+", default=["640x480", "1280x720", "1920x1080"])
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    cv2.setNumThreads(args.threads)
    print(f"{args.frames_dir}: {args.frames} frames, background from {args.learn}; "
          f"OpenCV {cv2.__version__} with {args.threads} threads")
    print(f"{'size':>10} {'KNN+o/c':>9} {'static':>9} {'dynamic':>9} {'dyn cpu':>9} "
          f"{'continued':>10} {'KNN/dyn':>8}")
    for text in args.sizes:
        w, h = map(int, text.split("x"))
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "frames"
            frames = scaled_frames(args.frames_dir, args.frames, (w, h), folder)
            knn = knn_ms(frames, args.learn)
            lc = livecut_ms(args.livecut, folder, args.frames, args.learn, Path(tmp))
        static, dynamic = lc["static"], lc["dynamic"]
        print(f"{text:>10} {knn:>9.2f} {static[0]:>9.2f} {dynamic[0]:>9.2f} "
              f"{dynamic[1]:>9.2f} {dynamic[2]:>4}/{dynamic[3]:<5} {knn / dynamic[0]:>8.2f}")


if __name__ == "__main__":
    main()
