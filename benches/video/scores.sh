#!/usr/bin/env bash
# The README's quality table in one run: still cameras (livecut, mean + threshold and
# OpenCV KNN on pedestrians, background learned from 10 frames) and seeded clips with a
# moving camera (livecut and grabCut propagated on car-shadow), every set of masks scored
# by `livecut eval --score-masks`. Run from the repository root after
# `cargo build --release`; needs python3 with numpy and opencv-python.
set -euo pipefail
livecut=${LIVECUT:-target/release/livecut}
python3 benches/video/still_scores.py --livecut "$livecut"
echo
python3 benches/video/moving_scores.py --livecut "$livecut" "$@"
