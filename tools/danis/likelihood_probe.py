#!/usr/bin/env python3
"""The tracker's per-second likelihood on the Daniş et al. office floor, without the tracker.

For every second of every track: the receivers' 1-s mean readings, scored for each cell with the
evidence model of `EvidenceModel` (log-distance path loss from the cell's typical point, each
hypothesis its own common offset `b` shrunk by a Gaussian prior, Student-t deviations with σ 6 dB
and ν 4; no absences: every receiver hears the beacon here), and the best cell compared with the
true one. Next to it, the receiver with the strongest 1-s mean. No motion model, no smoothing and
no self-calibration: this isolates what one second's readings say through the model, to tell a
model problem from a learning or tracking one (docs/accuracy.md, "A venue never seen").

    python3 tools/danis/likelihood_probe.py --dataset DIR [--exponent 2.0] [--level-known] [--mixture | --disc-mean] [--offsets]

--level-known: the venue's level as configured (prior on `b` of the device spread alone, as after the
self-calibration has learned it), else unknown (±15 dB, as before it has); --mixture: each cell the
mixture over seven positions (its centre for the inner third of the disc, six points at √(2/3) of the
radius for a ninth each) instead of one typical point; --disc-mean: each cell's expected path loss the
mean of −10·log10 d over its disc (8 × 16 equal-area points), as the engine has had it since 2026-12-07
(`TrackerTables.meanLogDistance`), instead of the typical point's; --offsets: every receiver's deviation fitted
from the true positions taken out first (an oracle: what a perfect calibration would give).
Standard library only.
"""
import argparse
import collections
import glob
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import convert  # noqa: E402  (the dataset reader and the cells)

SIGMA, NU, DEVICE_SPREAD, LEVEL_PRIOR_SD, HEIGHT = 6.0, 4.0, 6.0, 15.0, 1.0
MEASURED_POWER = -59.0


def student_t(x):
    return -(NU + 1) / 2 * math.log1p(x * x / (NU * SIGMA * SIGMA))


def log_distance(px, py, gx, gy, spread2):
    return -5 * math.log10((px - gx) ** 2 + (py - gy) ** 2 + HEIGHT ** 2 + spread2)


def disc_mean(cx, cy, gx, gy, radius):
    """The mean of -10 log10 d over a disc of `radius` at (cx, cy), the gateway HEIGHT above the tag."""
    total, rings, angles = 0.0, 8, 16
    for i in range(rings):
        rho = radius * math.sqrt((i + 0.5) / rings)
        for j in range(angles):
            theta = 2 * math.pi * (j + 0.5) / angles
            total += math.log10((cx + rho * math.cos(theta) - gx) ** 2 + (cy + rho * math.sin(theta) - gy) ** 2 + HEIGHT ** 2)
    return -5 * total / (rings * angles)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--exponent", type=float, default=2.0)
    ap.add_argument("--level-known", action="store_true")
    ap.add_argument("--mixture", action="store_true")
    ap.add_argument("--disc-mean", action="store_true")
    ap.add_argument("--offsets", action="store_true")
    a = ap.parse_args()
    recv = convert.receivers(a.dataset)
    _text, _ids, pts, radius = convert.site_yaml(recv, convert.floor_limits(a.dataset))
    macs = list(recv)
    G = len(macs)
    index = {m: i for i, m in enumerate(macs)}
    tracks = sorted(glob.glob(os.path.join(a.dataset, "trk", "*_all_sensors.mbd")))
    seconds = []  # (true cell, {receiver: mean reading})
    for path in tracks:
        by_second, where = collections.defaultdict(lambda: collections.defaultdict(list)), {}
        for t, mac, rssi, x, y in convert.read_track(path, recv):
            if rssi >= 0:
                continue  # an impossible reading (the engine refuses it too)
            by_second[int(t)][index[mac]].append(rssi)
            where[int(t)] = (x, y)
        for s, readings in by_second.items():
            x, y = where[s]
            seconds.append((convert.openplan.nearest(pts, x, y), {g: sum(v) / len(v) for g, v in readings.items()}, (x, y)))
    offsets = [0.0] * G
    if a.offsets:
        # Each receiver's mean deviation from the model at the true positions, the median one as 0.
        dev = collections.defaultdict(list)
        for _c, readings, (x, y) in seconds:
            for g, r in readings.items():
                z = recv[macs[g]][3]
                d = math.sqrt((x - pts[g][0]) ** 2 + (y - pts[g][1]) ** 2 + (1.8 - z) ** 2)
                dev[g].append(r - (MEASURED_POWER - 10 * a.exponent * math.log10(max(d, 0.1))))
        means = [sum(dev[g]) / len(dev[g]) for g in range(G)]
        mid = sorted(means)[G // 2]
        offsets = [m - mid for m in means]
    variance = DEVICE_SPREAD ** 2 + (0 if a.level_known else LEVEL_PRIOR_SD ** 2)
    count, scale = SIGMA ** 2 / variance, 1 / (2 * variance)
    positions = []
    for k in range(G):
        r = radius[k]
        if a.mixture:
            ring = math.sqrt(2 / 3) * r
            pts_k = [(pts[k][0], pts[k][1], r * r / 18, 1 / 3)] + [
                (pts[k][0] + ring * math.cos(i * math.pi / 3), pts[k][1] + ring * math.sin(i * math.pi / 3), r * r / 36, 1 / 9)
                for i in range(6)]
        else:
            pts_k = [(pts[k][0], pts[k][1], r * r / 2, 1.0)]
        if a.disc_mean:
            positions.append([([disc_mean(pts[k][0], pts[k][1], pts[g][0], pts[g][1], r) for g in range(G)], 1.0)])
            continue
        positions.append([([log_distance(px, py, pts[g][0], pts[g][1], s2) for g in range(G)], w) for px, py, s2, w in pts_k])
    right = strongest_right = 0
    for cell, readings, _xy in seconds:
        best, best_ll = None, -math.inf
        for k in range(G):
            parts = []
            for ld, w in positions[k]:
                e = [r - offsets[g] - (MEASURED_POWER + a.exponent * ld[g]) for g, r in readings.items()]
                b = sum(e) / (len(e) + count)
                parts.append(math.log(w) + sum(student_t(x - b) for x in e) - b * b * scale)
            top = max(parts)
            ll = top + math.log(sum(math.exp(p - top) for p in parts))
            if ll > best_ll:
                best, best_ll = k, ll
        right += best == cell
        strongest_right += max(readings, key=readings.get) == cell
    n = len(seconds)
    print(f"{n} seconds: the likelihood's best cell {100 * right / n:.1f} % right, the strongest receiver's "
          f"{100 * strongest_right / n:.1f} % (exponent {a.exponent}, level {'known' if a.level_known else 'unknown'}, "
          f"{'mixture over 7 positions' if a.mixture else 'mean over the disc' if a.disc_mean else 'typical point'}{', oracle offsets' if a.offsets else ''})")


if __name__ == "__main__":
    main()
