#!/usr/bin/env python3
"""Convert the position-annotated BLE RSSI dataset of Daniş, Naskali, Cemgil and Ersoy into Waymark input.

The dataset (github.com/philotuxo/Position-Annotated-BLE-RSSI-Dataset, no licence file: it is not
copied into this repository; fetch it yourself and point --dataset at its folder) records one BLE
beacon carried along paths through a 20.7 × 17.6 m open office floor with furniture, heard by twelve
receivers (four Raspberry Pis at 1.22 m, each with two USB dongles at 2.30 m), every reading annotated
with the beacon's position from an AR camera system (better than 5 cm). It is a venue Waymark was
never tuned on: an open floor, each receiver 4.3–6.0 m from its nearest neighbour, the case where
the naive rule is hardest to beat.

Reads, from DATASET:
  cnf/tetam.dev                    the receivers' positions (JSON after "Dongles:")
  cnf/tetam.par                    the floor's limits (metres)
  trk/<track>_all_sensors.mbd      readings: timestamp,sensor MAC,beacon MAC,RSSI,x,y,z,(orientation…)
                                   (a reduced copy with lines timestamp,sensor MAC,RSSI,x,y is read too)
Writes to OUT:
  danis-open-plan.yaml             the site file: one gateway per receiver, one region per receiver
                                   (its cell: the floor nearer to it than to any other receiver), edges
                                   between cells that touch, one room (the floor has no walls)
  <track>.sightings.jsonl          one sighting line per reading
  <track>.visits.jsonl             the true visits (`waymark simulate --truth` format): the cell of
                                   the beacon's annotated position, from reading to reading
and the same two for `all`, the tracks one after another as one device (times shifted so that each
track starts 10 s after the one before ends: a venue in operation, whose calibration carries over).

Only the standard library is used. Nothing here is tuned on the data: the site file is drawn from
the receivers' positions alone, as `KolakowskiOpenPlan` draws the Kolakowski flat.
"""
import argparse
import glob
import json
import math
import os

DEVICE = "mac:02-00-00-00-00-02"   # placeholder id for the dataset's single beacon (locally administered)
GRID_M = 0.1                       # resolution of the cells' extent and adjacency
SESSION_GAP_S = 2.0                # a gap longer than this between readings ends a presence
TRACK_SPACING_S = 10.0             # `all`: pause between one track's end and the next one's start


def receivers(dataset):
    text = open(os.path.join(dataset, "cnf", "tetam.dev")).read()
    line = next(l for l in text.splitlines() if l.startswith("Dongles:"))
    devices = json.loads(line[len("Dongles:"):])
    out = {mac: (alias, pos[0], pos[1], pos[2]) for mac, (pos, _colour, alias) in devices.items()}
    return dict(sorted(out.items(), key=lambda kv: kv[1][0]))


def floor_limits(dataset):
    par = json.load(open(os.path.join(dataset, "cnf", "tetam.par")))
    return par["limits"]


def read_track(path, known):
    """[(t, sensor MAC, rssi, x, y)] in time order."""
    rows = []
    for n, line in enumerate(open(path), 1):
        f = line.strip().split(",")
        if len(f) < 5 or not f[0]:
            continue
        if len(f) >= 7:          # the dataset's own lines
            t, mac, rssi, x, y = f[0], f[1], f[3], f[4], f[5]
        else:                    # the reduced copy
            t, mac, rssi, x, y = f[:5]
        if mac not in known:
            raise SystemExit(f"{path}:{n}: sensor {mac} is not in cnf/tetam.dev")
        rows.append((float(t), mac, float(rssi), float(x), float(y)))
    rows.sort(key=lambda r: r[0])
    return rows


def nearest(points, x, y):
    return min(range(len(points)), key=lambda k: math.hypot(x - points[k][0], y - points[k][1]))


def site_yaml(recv, limits):
    ids = [alias for alias, *_ in recv.values()]
    pts = [(x, y) for _alias, x, y, _z in recv.values()]
    x0, y0, x1, y1 = limits
    nx, ny = int((x1 - x0) / GRID_M) + 1, int((y1 - y0) / GRID_M) + 1
    owner = [[0] * ny for _ in range(nx)]
    radius = [1.0] * len(pts)
    for i in range(nx):
        for j in range(ny):
            px, py = x0 + i * GRID_M, y0 + j * GRID_M
            k = nearest(pts, px, py)
            owner[i][j] = k
            radius[k] = max(radius[k], math.hypot(px - pts[k][0], py - pts[k][1]))
    touching = set()
    for i in range(nx):
        for j in range(ny):
            k = owner[i][j]
            if i + 1 < nx and owner[i + 1][j] != k:
                touching.add(tuple(sorted((k, owner[i + 1][j]))))
            if j + 1 < ny and owner[i][j + 1] != k:
                touching.add(tuple(sorted((k, owner[i][j + 1]))))
    lines = [
        "# The Daniş et al. office floor drawn as an open plan by tools/danis/convert.py: one region per",
        "# receiver, its cell the floor nearer to it than to any other; the floor has no walls.",
        "site: danis-open-plan", "gateways:",
    ]
    lines += [f"  - {{ id: {ids[k]}, position: [{pts[k][0]}, {pts[k][1]}] }}" for k in range(len(pts))]
    lines.append("regions:")
    lines += [f"  - {{ id: cell-{ids[k]}, gateways: [{ids[k]}], position: [{pts[k][0]}, {pts[k][1]}], "
              f"radius_m: {radius[k]:.2f}, room: floor }}" for k in range(len(pts))]
    lines.append("edges:")
    lines += [f"  - [cell-{ids[a]}, cell-{ids[b]}]" for a, b in sorted(touching)]
    mac = DEVICE[len("mac:"):].replace("-", ":")
    lines.append(f"tracking:\n  macs: [\"{mac}\"]\n")
    return "\n".join(lines), ids, pts, radius


def visits(rows, cell_of):
    """True visits: each reading's cell holds until the next reading; presences split at gaps."""
    out = []
    sessions, start = [], 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or rows[i][0] - rows[i - 1][0] > SESSION_GAP_S:
            sessions.append(rows[start:i])
            start = i
    for s in sessions:
        end = s[-1][0] + 0.5
        out.append({"type": "presence", "device": DEVICE, "entered": s[0][0], "exited": end})
        i = 0
        while i < len(s):
            c = cell_of(s[i][3], s[i][4])
            j = i + 1
            while j < len(s) and cell_of(s[j][3], s[j][4]) == c:
                j += 1
            exited = s[j][0] if j < len(s) else end
            out.append({"type": "truth", "device": DEVICE, "region": c, "entered": s[i][0], "exited": exited})
            i = j
    return out


def write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", required=True, help="the dataset's folder (holding cnf/ and trk/)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--tracks", nargs="*", help="track names (default: every trk/*_all_sensors.mbd)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    recv = receivers(a.dataset)
    text, ids, pts, _radius = site_yaml(recv, floor_limits(a.dataset))
    with open(os.path.join(a.out, "danis-open-plan.yaml"), "w") as f:
        f.write(text)
    alias = {mac: v[0] for mac, v in recv.items()}
    cell_of = lambda x, y: f"cell-{ids[nearest(pts, x, y)]}"
    names = a.tracks or sorted(os.path.basename(p)[:-len("_all_sensors.mbd")]
                               for p in glob.glob(os.path.join(a.dataset, "trk", "*_all_sensors.mbd")))
    all_sightings, all_truth, shift_to = [], [], None
    for name in names:
        rows = read_track(os.path.join(a.dataset, "trk", f"{name}_all_sensors.mbd"), recv)
        if not rows:
            raise SystemExit(f"{name}: no readings")
        sightings = [{"t": round(t, 3), "gateway": alias[m], "device": DEVICE, "rssi": r} for t, m, r, _x, _y in rows]
        truth = visits(rows, cell_of)
        write_jsonl(os.path.join(a.out, f"{name}.sightings.jsonl"), sightings)
        write_jsonl(os.path.join(a.out, f"{name}.visits.jsonl"), truth)
        shift = 0.0 if shift_to is None else shift_to - rows[0][0]
        all_sightings += [dict(s, t=round(s["t"] + shift, 3)) for s in sightings]
        all_truth += [dict(v, entered=v["entered"] + shift, exited=v["exited"] + shift) for v in truth]
        shift_to = rows[-1][0] + shift + TRACK_SPACING_S
        print(f"{name}: {len(rows)} readings, {rows[-1][0] - rows[0][0]:.0f} s, "
              f"{len({cell_of(x, y) for *_r, x, y in rows})} cells visited")
    write_jsonl(os.path.join(a.out, "all.sightings.jsonl"), all_sightings)
    write_jsonl(os.path.join(a.out, "all.visits.jsonl"), all_truth)


if __name__ == "__main__":
    main()
