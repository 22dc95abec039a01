"""Reads the DIMACS grid instances of the shared data (FORMAT.md: a `c grid W H C` line,
then arcs in any order, duplicates summed) into per-pixel arrays, for the baseline
timing scripts."""

import gzip
import re
import sys

import numpy as np

# livecut direction order: E, W, S, N, SE, NW, SW, NE; forward ones are E, S, SE, SW.
STEPS = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (-1, 1), (1, -1)]
NON_ARC = re.compile(rb"(?m)^[^a\n].*$")


def read(path):
    """Returns (W, H, C, source caps, sink caps, per-direction caps) in float64."""
    opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        first = f.readline().split()
        if first[:2] != [b"c", b"grid"]:
            sys.exit(f"{path}: first line is not 'c grid W H C'")
        w, h, c = map(int, first[2:5])
        n = w * h
        src = np.zeros(n)
        snk = np.zeros(n)
        caps = np.zeros((8, n))
        carry = b""
        while True:
            block = f.read(64 << 20)
            if not block and not carry:
                break
            block = carry + block
            cut = block.rfind(b"\n") + 1 if block else 0
            if not cut:
                cut = len(block)
            carry, block = block[cut:], block[:cut]
            if not block:
                carry = b""
                continue
            block = NON_ARC.sub(b"", block).replace(b"a", b" ")
            nums = np.array(block.split(), dtype=np.int64).reshape(-1, 3)
            u, v, cap = nums[:, 0], nums[:, 1], nums[:, 2].astype(np.float64)
            s_arc = u == n + 1
            t_arc = v == n + 2
            np.add.at(src, v[s_arc] - 1, cap[s_arc])
            np.add.at(snk, u[t_arc] - 1, cap[t_arc])
            nb = ~(s_arc | t_arc)
            p, q, cp = u[nb] - 1, v[nb] - 1, cap[nb]
            dx, dy = q % w - p % w, q // w - p // w
            for d, (sx, sy) in enumerate(STEPS):
                sel = (dx == sx) & (dy == sy)
                if sel.any():
                    np.add.at(caps[d], p[sel], cp[sel])
    return w, h, c, src, snk, caps
