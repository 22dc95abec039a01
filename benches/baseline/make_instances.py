#!/usr/bin/env python3
"""Builds segmentation max-flow instances like the `image` family of the shared data
(see /work/shared/data/FORMAT.md) from the GrabCut images, for timing the CPU engine
against PyMaxflow at 640x480 and 1920x1080.

Energy, as FORMAT.md describes it:
  * colour histograms, 16^3 bins, fitted on the foreground box (the GrabCut rectangle
    trimap's inside) and on a background border strip (outer 5 % of the image);
  * t-links s->p = round(10 * -ln P(I_p | background)), p->t = round(10 * -ln P(I_p | foreground)),
    reparametrised (the smaller of the two subtracted) unless the variant keeps both;
  * hard seeds 1e9: sink seeds on the image frame (1.5 % of the smaller side), source seeds
    on a vertical stroke through the middle of the box;
  * neighbour arcs round(500 * exp(-|I_p - I_q|^2 / (2 sigma^2)) / dist(p, q)), symmetric,
    2 sigma^2 = 2 * mean |I_p - I_q|^2 over 4-neighbour pairs, zero arcs omitted.

Usage: make_instances.py [--out DIR] [--images a,b] [--sizes 1920x1080,640x480]
Writes NAME_WxH_{4c,8c,4c_both}.max.gz into DIR (default /tmp/lc-inst); never into the repo.
"""

import argparse
import gzip
import math
from pathlib import Path

import numpy as np
from PIL import Image

GRABCUT = Path("/work/shared/data/grabcut")
HARD = 1_000_000_000
# Direction order of livecut (E, W, S, N, SE, NW, SW, NE) and steps.
DIRS = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (-1, 1), (1, -1)]


def load(name, w, h):
    """A GrabCut image and its rectangle trimap; else a scikit-image sample of that name
    (chelsea, coffee, astronaut, ... as in the shared `image` family) with no rectangle,
    so the foreground box is the middle half."""
    img_path = next(GRABCUT.glob(f"images/{name}.*"), None)
    if img_path is None:
        import skimage.data

        img = Image.fromarray(getattr(skimage.data, name)()).convert("RGB").resize((w, h), Image.BILINEAR)
        return np.asarray(img, dtype=np.float64), np.zeros((h, w), np.uint8)
    img = Image.open(img_path).convert("RGB").resize((w, h), Image.BILINEAR)
    rect = Image.open(GRABCUT / "rect" / f"{name}.png").convert("L").resize((w, h), Image.NEAREST)
    return np.asarray(img, dtype=np.float64), np.asarray(rect)


def histogram_nll(img, region):
    """10 * -ln P(colour | region) per pixel from a 16^3-bin histogram (add-one smoothed)."""
    q = (img.astype(np.int64) // 16)
    bins = q[..., 0] * 256 + q[..., 1] * 16 + q[..., 2]
    counts = np.bincount(bins[region], minlength=4096).astype(np.float64) + 1.0
    p = counts / counts.sum()
    return np.rint(10.0 * -np.log(p[bins])).astype(np.int64)


def energy(img, rect, both):
    h, w, _ = img.shape
    inside = rect == 128
    ys, xs = np.nonzero(inside)
    if len(ys) == 0:
        y0, y1, x0, x1 = h // 4, 3 * h // 4, w // 4, 3 * w // 4
    else:
        y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    box = np.zeros((h, w), bool)
    box[y0:y1, x0:x1] = True
    strip = max(2, round(0.05 * min(w, h)))
    border = np.zeros((h, w), bool)
    border[:strip, :] = border[-strip:, :] = True
    border[:, :strip] = border[:, -strip:] = True
    border &= ~box
    if not border.any():
        border[:strip, :] = True
    src = histogram_nll(img, border)  # s->p: cost of calling p background
    snk = histogram_nll(img, box)  # p->t: cost of calling p foreground
    if not both:
        m = np.minimum(src, snk)
        src, snk = src - m, snk - m
    frame = max(1, round(0.015 * min(w, h)))
    sink_seed = np.zeros((h, w), bool)
    sink_seed[:frame, :] = sink_seed[-frame:, :] = True
    sink_seed[:, :frame] = sink_seed[:, -frame:] = True
    src_seed = np.zeros((h, w), bool)
    cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
    half_w, half_h = max(1, round(0.007 * w)), max(1, (y1 - y0) // 4)
    src_seed[cy - half_h:cy + half_h, cx - half_w:cx + half_w + 1] = True
    src_seed &= ~sink_seed
    src[src_seed], snk[src_seed] = HARD, (snk[src_seed] if both else 0)
    snk[sink_seed], src[sink_seed] = HARD, (src[sink_seed] if both else 0)
    # Neighbour weights.
    dx2 = ((img[:, 1:] - img[:, :-1]) ** 2).sum(-1)
    dy2 = ((img[1:, :] - img[:-1, :]) ** 2).sum(-1)
    two_sigma2 = 2.0 * np.concatenate([dx2.ravel(), dy2.ravel()]).mean()
    two_sigma2 = max(two_sigma2, 1e-9)
    return src, snk, two_sigma2


def arcs(img, two_sigma2, conn):
    """Yields (p, q, cap) arrays (0-based pixel ids, p->q) of every non-zero neighbour arc."""
    h, w, _ = img.shape
    ids = np.arange(w * h).reshape(h, w)
    for dx, dy in DIRS[:conn]:
        ys = slice(max(0, -dy), h - max(0, dy))
        xs = slice(max(0, -dx), w - max(0, dx))
        yq = slice(max(0, dy), h - max(0, -dy))
        xq = slice(max(0, dx), w - max(0, -dx))
        d2 = ((img[ys, xs] - img[yq, xq]) ** 2).sum(-1)
        cap = np.rint(500.0 * np.exp(-d2 / two_sigma2) / math.hypot(dx, dy)).astype(np.int64)
        p, q = ids[ys, xs].ravel(), ids[yq, xq].ravel()
        keep = cap.ravel() > 0
        yield p[keep], q[keep], cap.ravel()[keep]


def write(path, w, h, conn, src, snk, neighbour_arcs, description):
    n = w * h
    s, t = n + 1, n + 2
    src, snk = src.ravel(), snk.ravel()
    sp = np.nonzero(src)[0]
    tp = np.nonzero(snk)[0]
    m = len(sp) + len(tp) + sum(len(a[0]) for a in neighbour_arcs)
    with gzip.open(path, "wt", compresslevel=4) as f:
        f.write(f"c grid {w} {h} {conn}\n")
        f.write(f"c name {path.name.removesuffix('.max.gz')}\n")
        f.write(f"c family image: {description}\n")
        f.write("c generated by livecut benches/baseline/make_instances.py; pixel node = y*W + x + 1\n")
        f.write(f"p max {n + 2} {m}\nn {s} s\nn {t} t\n")
        chunk = 1 << 20

        def emit(us, vs, cs):
            for i in range(0, len(us), chunk):
                f.write("\n".join(f"a {u} {v} {c}" for u, v, c in
                                  zip(us[i:i + chunk].tolist(), vs[i:i + chunk].tolist(),
                                      cs[i:i + chunk].tolist())))
                f.write("\n")

        emit(np.full(len(sp), s), sp + 1, src[sp])
        emit(tp + 1, np.full(len(tp), t), snk[tp])
        for p, q, c in neighbour_arcs:
            emit(p + 1, q + 1, c)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="/tmp/lc-inst")
    ap.add_argument("--images", default="llama,person7",
                    help="GrabCut image stems, or scikit-image sample names (chelsea, coffee, astronaut)")
    ap.add_argument("--sizes", default="1920x1080,640x480")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in args.images.split(","):
        for size in args.sizes.split(","):
            w, h = map(int, size.split("x"))
            img, rect = load(name, w, h)
            variants = [(4, False, "4c"), (8, False, "8c")]
            if w * h > 1_000_000:
                variants.append((4, True, "4c_both"))
            for conn, both, tag in variants:
                path = out / f"{name}_{w}x{h}_{tag}.max.gz"
                if path.exists():
                    print(f"{path} exists, kept")
                    continue
                src, snk, two_sigma2 = energy(img, rect, both)
                na = list(arcs(img, two_sigma2, conn))
                desc = (f"GrabCut {name} resized to {w}x{h}, {conn}C, "
                        + ("both t-links kept" if both else "reparametrised t-links"))
                write(path, w, h, conn, src, snk, na, desc)
                print(f"wrote {path}")


if __name__ == "__main__":
    main()
