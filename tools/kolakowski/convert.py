#!/usr/bin/env python3
"""Convert the Kolakowski BLE RSS dataset (Sensors 21(18):6270, 2021; CC BY 4.0) into Waymark input.

Writes, from DATASET (the folder holding anchors.csv, layout.csv, tests/, calibration/):
  OUT/kolakowski-flat.yaml       the site file: one gateway per anchor, one region per room that
                                 holds an anchor, edges between rooms that share an opening
  OUT/<name>.sightings.jsonl     one sighting line per (row, anchor) with an RSSI reading
  OUT/<name>.truth.jsonl         one line per row: {"t", "x", "y", "region"} (ground truth)
for <name> in test-robot (tests/test_robot_df.csv) and calibration (calibration/calibration_df.csv), and
  OUT/test-walk.sightings.jsonl  the walking-person test (tests/test_walk_df.csv), which has no positions
  OUT/test-walk.route.json       its true route: the rooms in the order the person walked through them

Only the standard library is used. See README.md next to this script for the room derivation.
"""
import argparse
import csv
import json
import math
import os

# Rooms, read off the wall polyline in layout.csv (vertex coordinates in metres). The polyline is
# the outer wall with door jambs drawn as short stubs; each rectangle below spans the wall segments
# that bound one room, split at the stubs:
#   bedroom  x 0–2.58,    y 2.18–7.1   walls (0,2.18)…(0,7.1)…(2.58,7.1)…(2.58,2.18); door between
#                                      the stubs at x 0.73 and 1.52 (y 2.07–2.18)
#   hall     x 0–3.96,    y 0–2.12     the corridor along the bottom wall; the stub (1.93–2.04, 0–0.64)
#                                      only narrows it, so its west end (no anchor) is part of it
#   kitchen  x 3.96–6.22, y 0–1.93     behind the stubs at x 3.88–4.05 (y 0–0.6 and 1.42–2.12)
#   living   x 2.7–6.27,  y 2.12–7.1   open to the hall along y 2.12 between x 2.7 and 3.88
#   east     x 6.27–9.07, y 4.19–7.1   open to the living room along x 6.27 above y 4.82
# Room names are descriptive only; the dataset does not name the rooms.
ROOMS = {
    "bedroom": (0.0, 2.18, 2.58, 7.1),
    "hall": (0.0, 0.0, 3.96, 2.12),
    "kitchen": (3.96, 0.0, 6.22, 1.93),
    "living": (2.7, 2.12, 6.27, 7.1),
    "east": (6.27, 4.19, 9.07, 7.1),
}
# Openings a person walks through (from the stubs above).
EDGES = [("bedroom", "hall"), ("hall", "kitchen"), ("hall", "living"), ("living", "east")]

# The walking-person test (tests/test_walk_df.csv) has no per-row position: the dataset gives only
# the reference trajectory the person followed (tests/path_reference.csv, straight segments). Its
# RSSI shows the person walking it out and back WALK_LAPS times, starting and ending in the bedroom
# where the trajectory starts: four passes through the east room at its end (the east anchor,
# anchor-6, strongest in 10-s means near 45, 110, 190 and 250 s) and the bedroom anchor strongest
# at the start, near 75, 145, 215 and 275 s, and at the end. The lap count is not in the dataset;
# it is read off the recording in that coarse way (every lap is unmistakable there), which is why
# only the route, not its timing, is scored (docs/accuracy.md, "Routes without timing").
WALK_LAPS = 4

DEVICE = "mac:02-00-00-00-00-01"  # placeholder id for the dataset's single tag (locally administered)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def room_of(x, y):
    """The room containing (x, y); a point in a doorway or wall gap goes to the nearest room."""
    best, best_d = None, math.inf
    for name, (x0, y0, x1, y1) in ROOMS.items():
        dx = max(x0 - x, 0.0, x - x1)
        dy = max(y0 - y, 0.0, y - y1)
        d = math.hypot(dx, dy)
        if d < best_d:
            best, best_d = name, d
    return best


def point_in_polygon(x, y, poly):
    inside = False
    for (x0, y0), (x1, y1) in zip(poly, poly[1:] + poly[:1]):
        if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
            inside = not inside
    return inside


def calibrate(anchors, rows, tag_height=1.3):
    """Least-squares fit of RSSI = P1m - 10 n log10(d) over the calibration run (3-D distance from
    each anchor to the tag at `tag_height`), then each anchor's mean residual as its offset.
    Returns (P1m, n, {anchor id: rssi_offset_db}); the offset is added to that anchor's RSSI."""
    pos = {a["id"]: (float(a["x"]), float(a["y"]), float(a["z"])) for a in anchors}
    pts = []
    for row in rows:
        for k in pos:
            v = row.get(f"rssi_{k}", "")
            if v == "" or math.isnan(float(v)):
                continue
            ax, ay, az = pos[k]
            d = math.sqrt((float(row["x"]) - ax) ** 2 + (float(row["y"]) - ay) ** 2 + (tag_height - az) ** 2)
            pts.append((k, math.log10(max(d, 0.1)), float(v)))
    mx = sum(p[1] for p in pts) / len(pts)
    my = sum(p[2] for p in pts) / len(pts)
    slope = sum((p[1] - mx) * (p[2] - my) for p in pts) / sum((p[1] - mx) ** 2 for p in pts)
    p1m = my - slope * mx
    offsets = {}
    for k in pos:
        res = [p[2] - (p1m + slope * p[1]) for p in pts if p[0] == k]
        offsets[k] = -sum(res) / len(res)
    return p1m, -slope / 10, offsets


def site_yaml(anchors, layout, fusion, radius_scale, offsets):
    # Sanity check of the room table against the layout: every room centre lies inside the walls.
    poly = [(float(r["x"]), float(r["y"])) for r in layout]
    for name, (x0, y0, x1, y1) in ROOMS.items():
        if not point_in_polygon((x0 + x1) / 2, (y0 + y1) / 2, poly):
            raise SystemExit(f"room {name} is not inside the layout polygon; fix ROOMS")
    by_room = {name: [] for name in ROOMS}
    for a in anchors:
        by_room[room_of(float(a["x"]), float(a["y"]))].append(a)
    regions = {name: a for name, a in by_room.items() if a}
    missing = [n for n in ROOMS if n not in regions]
    if missing:
        raise SystemExit(f"rooms without an anchor: {missing}; merge them into a neighbour in ROOMS")
    lines = [
        "# Generated by tools/kolakowski/convert.py from the Kolakowski BLE RSS dataset",
        "# (github.com/marckolak/ble-rss-fingerprints-calib2021, CC BY 4.0; M. Kolakowski, Sensors 21(18):6270, 2021).",
        "# A furnished flat of about 9.1 x 7.1 m: six anchors (gateways), five rooms (regions).",
        "site: kolakowski-flat",
        "gateways:",
    ]
    for a in anchors:
        lines.append(f"  - id: anchor-{a['id']}")
        lines.append(f"    position: [{float(a['x'])}, {float(a['y'])}]")
        lines.append(f"    rssi_offset_db: {offsets.get(a['id'], 0.0):.2f}")
    lines.append("regions:")
    for name, members in regions.items():
        x0, y0, x1, y1 = ROOMS[name]
        # Radius: the farthest room corner from its nearest anchor, so the whole room is "inside",
        # times --radius-scale to allow for the error of RSSI distance estimates (chosen on the
        # calibration run, see README.md).
        corners = [(x0, y0), (x0, y1), (x1, y0), (x1, y1)]
        radius = max(min(math.hypot(cx - float(a["x"]), cy - float(a["y"])) for a in members) for cx, cy in corners)
        radius *= radius_scale
        gws = ", ".join(f"anchor-{a['id']}" for a in members)
        lines.append(f"  - id: {name}")
        lines.append(f"    gateways: [{gws}]")
        lines.append(f"    position: [{(x0 + x1) / 2:.2f}, {(y0 + y1) / 2:.2f}]")
        lines.append(f"    radius_m: {radius:.2f}")
    lines.append("edges:")
    for a, b in EDGES:
        lines.append(f"  - [{a}, {b}]")
    lines.append("tracking:")
    lines.append(f"  macs: [\"{DEVICE[4:].replace('-', ':')}\"]")
    lines.append("fusion:")
    for key, value in fusion.items():
        lines.append(f"  {key}: {value}")
    return "\n".join(lines) + "\n"


def convert_run(rows, out_prefix, positions=True):
    """Writes the run's sightings and, when its rows carry positions, the per-row truth."""
    n_sightings = 0
    with open(out_prefix + ".sightings.jsonl", "w") as s, open(out_prefix + ".truth.jsonl" if positions else os.devnull, "w") as t:
        for row in rows:
            ts = round(float(row["ts"]) / 1e9, 3)
            for k in range(1, 7):
                v = row.get(f"rssi_{k}", "")
                if v == "" or math.isnan(float(v)):
                    continue
                s.write(json.dumps({"t": ts, "gateway": f"anchor-{k}", "device": DEVICE, "rssi": round(float(v), 2)}) + "\n")
                n_sightings += 1
            if not positions:
                continue
            x, y = float(row["x"]), float(row["y"])
            t.write(json.dumps({"t": ts, "x": round(x, 3), "y": round(y, 3), "region": room_of(x, y)}) + "\n")
    return n_sightings


def walk_route(segments, laps):
    """The rooms in the order a person walking `segments` (x0, y0, x1, y1 in metres) passes them,
    out along the segments and back to the start by the fewest rooms of EDGES, `laps` times,
    consecutive repeats merged. A segment that does not start where the previous one ended starts
    from a point walked through before: the person went back along the path to it (a spur walked
    out and back, like the kitchen's in path_reference.csv)."""
    points = [(segments[0][0], segments[0][1])]
    for x0, y0, x1, y1 in segments:
        if (x0, y0) != points[-1]:
            back = points.index((x0, y0)) if (x0, y0) in points else None
            if back is None:
                raise SystemExit(f"path segment starting at ({x0}, {y0}) does not join the path walked so far")
            points += list(reversed(points[back:-1]))
        points.append((x1, y1))
    rooms = []
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        steps = max(1, int(math.hypot(x1 - x0, y1 - y0) / 0.05))
        for i in range(steps + 1):
            r = room_of(x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps)
            if not rooms or rooms[-1] != r:
                rooms.append(r)
    # Back to the start through the fewest rooms (breadth-first over EDGES).
    neighbours = {}
    for a, b in EDGES:
        neighbours.setdefault(a, []).append(b)
        neighbours.setdefault(b, []).append(a)
    came = {rooms[-1]: None}
    queue = [rooms[-1]]
    while queue:
        r = queue.pop(0)
        for n in neighbours.get(r, []):
            if n not in came:
                came[n] = r
                queue.append(n)
    back, r = [], rooms[0]
    while r is not None:
        back.append(r)
        r = came[r]
    lap = rooms + list(reversed(back))[1:]   # out, then back (ends where it started)
    route = [lap[0]]
    for _ in range(laps):
        route += lap[1:]
    return route


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # The same default as the accuracy suite: $WAYMARK_KOLAKOWSKI, else the dataset in the shared/
    # folder beside the repository.
    default_dataset = os.environ.get("WAYMARK_KOLAKOWSKI") or os.path.normpath(
        os.path.join(here, "..", "..", "..", "shared", "data", "kolakowski-ble-rss-fingerprints-calib2021"))
    p.add_argument("--dataset", default=default_dataset,
                   help="the dataset folder (default: $WAYMARK_KOLAKOWSKI, else "
                        "../shared/data/kolakowski-ble-rss-fingerprints-calib2021 from the repository; now %(default)s)")
    p.add_argument("--out", default=".build/kolakowski")
    p.add_argument("--fusion", default=os.path.join(here, "fusion.json"),
                   help="JSON object of fusion parameters written into the site file")
    p.add_argument("--radius-scale", type=float, default=1.0,
                   help="multiply each room's geometric radius by this (distance estimates are noisy)")
    p.add_argument("--offsets", action="store_true",
                   help="also write per-anchor rssi_offset_db fitted on the calibration run (lowered "
                        "calibration-run accuracy in tune.py, so off by default)")
    a = p.parse_args()
    if not os.path.isfile(os.path.join(a.dataset, "anchors.csv")):
        p.error(f"{a.dataset}: the Kolakowski dataset is not there (no anchors.csv); pass --dataset or set "
                "WAYMARK_KOLAKOWSKI to the folder kolakowski-ble-rss-fingerprints-calib2021")
    os.makedirs(a.out, exist_ok=True)
    anchors = read_csv(os.path.join(a.dataset, "anchors.csv"))
    layout = read_csv(os.path.join(a.dataset, "layout.csv"))
    with open(a.fusion) as f:
        fusion = json.load(f)
    # Radio calibration from the calibration run only (never from the test runs).
    p1m, n, offsets = calibrate(anchors, read_csv(os.path.join(a.dataset, "calibration/calibration_df.csv")))
    print(f"calibration fit: P1m {p1m:.1f} dBm, n {n:.2f}, offsets " + ", ".join(f"{k}: {v:+.1f}" for k, v in offsets.items()))
    if not a.offsets:
        offsets = {}
    fusion = {"default_measured_power_dbm": round(p1m, 1), "path_loss_exponent": round(max(1.5, n), 2), **fusion}
    with open(os.path.join(a.out, "kolakowski-flat.yaml"), "w") as f:
        f.write(site_yaml(anchors, layout, fusion, a.radius_scale, offsets))
    for name, path in [("test-robot", "tests/test_robot_df.csv"), ("calibration", "calibration/calibration_df.csv")]:
        rows = read_csv(os.path.join(a.dataset, path))
        n = convert_run(rows, os.path.join(a.out, name))
        print(f"{name}: {len(rows)} rows -> {n} sightings")
    # The walking-person test: sightings, and the true route without times.
    rows = read_csv(os.path.join(a.dataset, "tests/test_walk_df.csv"))
    n = convert_run(rows, os.path.join(a.out, "test-walk"), positions=False)
    with open(os.path.join(a.dataset, "tests/path_reference.csv"), newline="") as f:
        segments = [tuple(float(v) for v in (r["x0"], r["y0"], r["x1"], r["y1"])) for r in csv.DictReader(f, skipinitialspace=True)]
    route = walk_route(segments, WALK_LAPS)
    with open(os.path.join(a.out, "test-walk.route.json"), "w") as f:
        json.dump({"device": DEVICE, "laps": WALK_LAPS, "route": route}, f)
        f.write("\n")
    print(f"test-walk: {len(rows)} rows -> {n} sightings; route of {len(route)} rooms ({WALK_LAPS} laps)")
    print(f"site: {os.path.join(a.out, 'kolakowski-flat.yaml')}")


if __name__ == "__main__":
    main()
