#!/usr/bin/env python3
"""Checks `livecut maxflow` on every instance of a manifest, independently of livecut's code.

For each `file,W,H,C,maxflow` line: runs the release binary with --json --mask-out, then
checks that the flow equals the manifest, that the cut capacity of the written mask
(recomputed here from the DIMACS file and the PNG) equals the flow, and, for engines that
report the reachable-from-s cut, that the mask equals the reference NAME.mask.png.
Exits 1 on any mismatch. Standard library only.
"""
import csv, gzip, json, struct, subprocess, sys, tempfile, time, zlib
from pathlib import Path


def read_png_grey(path):
    """Decodes an 8-bit greyscale, non-interlaced PNG into (w, h, bytes)."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert (depth, colour, interlace) == (8, 0, 0), f"{path}: not 8-bit grey"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, out, prev = zlib.decompress(idat), bytearray(), bytearray(w)
    for y in range(h):
        f, line = raw[y * (w + 1)], bytearray(raw[y * (w + 1) + 1:(y + 1) * (w + 1)])
        for x in range(w):
            a = line[x - 1] if x else 0
            b, c = prev[x], (prev[x - 1] if x else 0)
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out += line
        prev = line
    return w, h, bytes(out)


def cut_capacity(instance, side):
    """Sum of capacities of arcs from the source side to the sink side."""
    opener = gzip.open if instance.read_bytes()[:2] == b"\x1f\x8b" else open
    total, s, t = 0, None, None
    with opener(instance, "rt") as f:
        for line in f:
            if line[0] == "p":
                n = int(line.split()[2]) - 2
                s, t = n + 1, n + 2
            elif line[0] == "a":
                u, v, cap = map(int, line.split()[1:])
                u_src = u == s or (u != t and side[u - 1])
                v_src = v == s or (v != t and side[v - 1])
                if u_src and not v_src:
                    total += cap
    return total


def main():
    binary, manifest = Path(sys.argv[1]), Path(sys.argv[2])
    engine = sys.argv[3] if len(sys.argv) > 3 else "cpu"
    failures, rows = 0, []
    with open(manifest) as f, tempfile.TemporaryDirectory() as tmp:
        for row in csv.DictReader(f):
            inst = manifest.parent / row["file"]
            mask = Path(tmp) / (row["file"] + ".png")
            start = time.time()
            run = subprocess.run([binary, "maxflow", inst, "--engine", engine, "--json",
                                  "--mask-out", mask], capture_output=True, text=True)
            problems = []
            if run.returncode != 0:
                problems.append(f"exit {run.returncode}: {run.stderr.strip()}")
            else:
                out = json.loads(run.stdout)
                w, h, px = read_png_grey(mask)
                side = [v != 0 for v in px]
                cut = cut_capacity(inst, side)
                if out["flow"] != int(row["maxflow"]):
                    problems.append(f"flow {out['flow']} != manifest {row['maxflow']}")
                if cut != out["flow"]:
                    problems.append(f"cut capacity of the mask {cut} != flow {out['flow']}")
                if (w, h) != (int(row["W"]), int(row["H"])):
                    problems.append(f"mask is {w}x{h}")
                ref = manifest.parent / row["file"].replace(".max.gz", ".mask.png")
                if out["cut_side"] == "reachable-from-source" and ref.exists():
                    if read_png_grey(ref)[2] != px:
                        problems.append("mask differs from the reference mask")
            failures += bool(problems)
            rows.append((row["file"], "ok" if not problems else "FAIL: " + "; ".join(problems),
                         time.time() - start))
    for name, verdict, secs in rows:
        print(f"{name:<40} {secs:6.1f}s  {verdict}")
    print(f"instances: {len(rows) - failures} passed, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
