#!/usr/bin/env python3
"""Convert the SAL Autarkic Localization RSSI BLE dataset of Karoliny et al. into Waymark input.

The dataset (github.com/juliankaroliny/SAL-Autarkic-Localization-RSSI-BLE-Dataset, CC-BY 4.0; kept
out of this repository all the same: fetch it yourself and point --dataset at its folder) records
one BLE node (the "measurement node") at an automotive test chamber of AVL List GmbH in Graz, heard
by ten fixed BLE sniffers, six inside the chamber and four outside its door. The node sends once per
100 ms TDMA superframe; every sniffer that hears that message reports its RSSI for the superframe,
-100 where it heard nothing. Photosensors at the doorstep and at the car test position label every
superframe: 0 outside the chamber, 1 inside, 2 inside at the test position. In the `walk` files a
person carries the node in and out of the chamber; in the `car` files a car carries it. It is a
venue Waymark was never tuned on: two rooms, a wall with a door, and a reading from each sniffer up to
ten times a second.

Reads, from DATASET:
  measurement_config.txt                  the sniffers: Label,Description,X,Y,Z (metres); the
                                          description says inside or outside
  Dataset/<TYPE>_sensor_<X>_measurement_<Y>.csv
                                          superframe,O-DR,…,I-T3,Label[,raw photosensors…]: one line per
                                          superframe (a few superframes have no line), one RSSI column
                                          per sniffer
Writes to OUT:
  sal.yaml                                the site file: one gateway per sniffer, two regions joined by
                                          one edge: `chamber` (the inside sniffers) and `outside` (the
                                          outside sniffers, the apron before the door), each centred on
                                          the box around its sniffers with the radius that covers it
  <track>.sightings.jsonl                 one sighting per sniffer and superframe that has a reading
                                          (not -100); t = BASE_EPOCH + superframe × 0.1 s
  <track>.visits.jsonl                    the true visits (`waymark simulate --truth` format): the region
                                          of each superframe's label (1 and 2 chamber, 0 outside), from
                                          superframe to superframe
and the same two for `all`, the walks one after another as one device (times shifted so that each
walk starts 10 s after the one before ends: a venue in operation, whose calibration carries over).

Each superframe's readings are new measurements, not values held over: a sniffer measures the one
message the node sends per superframe, and in the walks (from their 30th second on) a reading equals
the same sniffer's previous superframe's about as often (8–10 %) as the one two superframes back
(7–8 %), so every reading becomes a sighting.

Only the standard library is used. Nothing here is tuned on the data: the site file is drawn from the
sniffers' positions alone, the truth from the dataset's own labels.
"""
import argparse
import glob
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "realdata"))
import openplan  # noqa: E402  (tools/realdata/openplan.py: the open plan, `all`, JSONL)

DEVICES = {1: "mac:02-00-00-00-00-05", 2: "mac:02-00-00-00-00-06"}   # placeholder ids per measurement node
BASE_EPOCH = 1_600_000_000.0       # arbitrary: the dataset gives superframe numbers, not clock times
SUPERFRAME_S = 0.1                 # one TDMA superframe
MISSING_DBM = -100                 # the dataset's "no reading"
SESSION_GAP_S = 2.0                # a gap longer than this between superframes ends a presence
TRACK_SPACING_S = 10.0             # `all`: pause between one walk's end and the next one's start
REGION_OF_LABEL = {0: "outside", 1: "chamber", 2: "chamber"}
TRACK_NAME = re.compile(r"^(walk|car)_sensor_(\d+)_measurement_(\d+)$")


def sniffers(dataset):
    """{label: (description, x, y, z)} in file order."""
    out = {}
    for n, line in enumerate(open(os.path.join(dataset, "measurement_config.txt")), 1):
        f = [p.strip() for p in line.strip().split(",")]
        if len(f) < 5 or f[0] == "Label":
            continue
        label, description, x, y, z = f[:5]
        out[label] = (description, float(x), float(y), float(z))
    for label, (description, *_xyz) in out.items():
        side = description.split()[0]
        if side not in ("inside", "outside") or (side == "inside") != label.startswith("I-"):
            raise SystemExit(f"measurement_config.txt: cannot tell whether {label} ({description}) is inside or outside")
    return out


def read_track(path, known):
    """[(superframe, {sniffer: rssi or None}, label)] in superframe order."""
    lines = open(path).read().splitlines()
    header = lines[0].split(",")
    columns = [c for c in header[1:] if c in known]
    if header[0] != "superframe" or "Label" not in header or len(columns) != len(known):
        raise SystemExit(f"{path}: unexpected header {header}")
    rows = []
    for n, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        f = dict(zip(header, line.split(",")))
        readings = {c: (None if int(f[c]) == MISSING_DBM else int(f[c])) for c in columns}
        label = int(f["Label"])
        if label not in REGION_OF_LABEL:
            raise SystemExit(f"{path}:{n}: unknown label {label}")
        rows.append((int(f["superframe"]), readings, label))
    rows.sort(key=lambda r: r[0])
    return rows


def covering_region(points):
    """Centre of the box around the points and the radius of the circle through its corners."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    return cx, cy, math.hypot(max(xs) - cx, max(ys) - cy)


def site_yaml(sn):
    inside = [k for k, v in sn.items() if v[0].startswith("inside")]
    outside = [k for k, v in sn.items() if v[0].startswith("outside")]
    lines = [
        "# The SAL automotive test chamber (AVL List, Graz) drawn by tools/sal/convert.py from the sniffers'",
        "# positions in measurement_config.txt: the chamber and the apron outside its door, one edge through",
        "# the door. Each region is centred on the box around its sniffers, its radius the circle through",
        "# the box's corners. The sniffers' heights (z) are noted; the site file has no height.",
        "site: sal-chamber", "gateways:",
    ]
    for k, (description, x, y, z) in sn.items():
        lines.append(f"  - {{ id: {k}, position: [{x}, {y}] }}   # {description}, z {z} m")
    lines.append("regions:")
    for region, members in (("chamber", inside), ("outside", outside)):
        cx, cy, r = covering_region([sn[k][1:3] for k in members])
        lines.append(f"  - {{ id: {region}, gateways: [{', '.join(members)}], position: [{cx:.3f}, {cy:.3f}], "
                     f"radius_m: {r:.2f}, room: {region} }}")
    lines.append("edges:")
    lines.append("  - [chamber, outside]")
    macs = ", ".join(f'"{d[len("mac:"):].replace("-", ":")}"' for d in DEVICES.values())
    lines.append(f"tracking:\n  macs: [{macs}]\n")
    return "\n".join(lines)


def t_of(superframe):
    return round(BASE_EPOCH + superframe * SUPERFRAME_S, 3)


def sightings(rows, device):
    return [{"t": t_of(sf), "gateway": k, "device": device, "rssi": float(v)}
            for sf, readings, _label in rows for k, v in readings.items() if v is not None]


def visits(rows, device):
    """True visits: each superframe's labelled region holds until the next superframe; presences split at gaps."""
    out = []
    # In superframes, so that the gap is compared exactly.
    for start, stop in openplan.sessions([r[0] for r in rows], SESSION_GAP_S / SUPERFRAME_S):
        s = rows[start:stop]
        end = t_of(s[-1][0] + 1)
        out.append({"type": "presence", "device": device, "entered": t_of(s[0][0]), "exited": end})
        out += openplan.truth_runs(device, [(t_of(sf), REGION_OF_LABEL[label]) for sf, _readings, label in s], end)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", required=True, help="the dataset's folder (holding measurement_config.txt and Dataset/)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--tracks", nargs="*", help="track names (default: every Dataset/*.csv present)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    sn = sniffers(a.dataset)
    with open(os.path.join(a.out, "sal.yaml"), "w") as f:
        f.write(site_yaml(sn))
    names = a.tracks or sorted(os.path.basename(p)[:-len(".csv")]
                               for p in glob.glob(os.path.join(a.dataset, "Dataset", "*.csv")))
    walks = openplan.Sequence(TRACK_SPACING_S)
    for name in names:
        m = TRACK_NAME.match(name)
        if not m or int(m.group(2)) not in DEVICES:
            raise SystemExit(f"{name}: not a TYPE_sensor_X_measurement_Y name with a known measurement node")
        device = DEVICES[int(m.group(2))]
        rows = read_track(os.path.join(a.dataset, "Dataset", f"{name}.csv"), sn)
        if not rows:
            raise SystemExit(f"{name}: no superframes")
        s, truth = sightings(rows, device), visits(rows, device)
        openplan.write_track(a.out, name, s, truth)
        inside_s = sum(REGION_OF_LABEL[label] == "chamber" for *_r, label in rows) * SUPERFRAME_S
        print(f"{name}: {len(rows)} superframes, {len(s)} readings, {(rows[-1][0] - rows[0][0]) * SUPERFRAME_S:.0f} s, "
              f"{inside_s:.0f} s in the chamber, {sum(v['type'] == 'truth' for v in truth)} true visits")
        if m.group(1) != "walk":
            continue
        walks.add(s, truth, t_of(rows[0][0]), t_of(rows[-1][0]), digits=3)
    if walks.sightings:
        openplan.write_track(a.out, "all", walks.sightings, walks.truth)


if __name__ == "__main__":
    main()
