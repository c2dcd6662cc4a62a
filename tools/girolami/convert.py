#!/usr/bin/env python3
"""Convert the mobility recordings of the Girolami et al. Bluetooth 5.1 AoA/RSS dataset into Waymark input.

The dataset ("A Bluetooth 5.1 Dataset Based on Angle of Arrival and RSS for Indoor Localization",
M. Girolami, F. Furfari, P. Barsocchi and F. Mavilia, Zenodo, doi:10.5281/zenodo.7759557; no licence
was found in any copy reachable from here, so it is not copied into this repository: fetch it yourself
and point --dataset at its folder) records four u-blox anchors on tripods at 2.30 m in a 12 × 6 m
room, each reporting every advertisement of a tag (NINA-B406, 50 Hz on channels 37, 38 and 39) with
its angles of arrival and the RSS of both antenna polarisations. In the MOBILITY scenario one person
wears tag 8401 round the neck (1.13 m) and walks three paths over a 120 cm grid, four runs each:
use-case 1 and 2 walk without stopping, use-case 3 walks use-case 1's path but stands about a minute
at four of its waypoints. It is a venue Waymark was never tuned on: one open room, each anchor
6.0–6.7 m from its nearest neighbour, anchor radios that are AoA locators rather than presence gateways.

Reads, from DATASET:
  mobility/gt/use-case N/gt_mobility_use-caseN_runM.txt
        the ground truth: lines StartTime,EndTime,X,Y (ms; EndTime NaN when the person did not stop;
        cm on the room's grid)
  mobility/beacons/use-case N/beacons_mobility_use-caseN_runM.txt
        readings: TimeStamp,TagID,1stP,AoA_az,AoA_el,2ndP,Channel,AnchorID (ms; dBm; degrees) — or a
        reduced copy with lines TimeStamp,1stP,2ndP,Channel,AnchorID, which may hold only the leading
        part of a run (the run then ends at its last reading, and so does its truth)
  every run whose gt and beacons files are both present is converted.
The anchors' positions (metres; the dataset's README: 6501 west (0, 3), 6502 south (6, 0), 6503 east
(12, 3), 6504 north (6, 6), all at 2.30 m) are constants below; the dataset gives no room outline, so
the floor's limits are the anchors' bounding box, 0–12 × 0–6 m (the box its users draw as the area).

Writes to OUT:
  girolami-open-plan.yaml          the site file: one gateway per anchor, one region per anchor (its
                                   cell: the floor nearer to it than to any other anchor), edges between
                                   cells that touch, one room (the room is one open space)
  <run>.sightings.jsonl            one sighting line per reading inside the truth's span (from the first
                                   waypoint's StartTime to the last one's), rssi the second
                                   polarisation's RSS (see RSSI_COLUMN)
  <run>.visits.jsonl               the true visits (`waymark simulate --truth` format): the cell of the
                                   person's position, sampled every 0.1 s along the path the dataset's
                                   users reconstruct (see path_position)
and the same two for `all`, the runs one after another as one device (times shifted so that each run
starts 10 s after the one before ends: a venue in operation, whose calibration carries over). <run>
is e.g. `uc1-run2`.

Only the standard library is used. Nothing here is tuned on the data: the site file is drawn from
the anchors' positions alone, as `KolakowskiOpenPlan` draws the Kolakowski flat.
"""
import argparse
import glob
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "realdata"))
import openplan  # noqa: E402  (tools/realdata/openplan.py: the open plan, `all`, JSONL)

DEVICE = "mac:02-00-00-00-00-03"   # placeholder id for the dataset's tag 8401 (locally administered)
TAG = "8401"                       # the tag worn in the mobility scenario
ANCHORS = {                        # id: (x, y, z) in metres, from the dataset's README
    "6501": (0.0, 3.0, 2.3),
    "6502": (6.0, 0.0, 2.3),
    "6503": (12.0, 3.0, 2.3),
    "6504": (6.0, 6.0, 2.3),
}
LIMITS = (0.0, 0.0, 12.0, 6.0)     # x0, y0, x1, y1: the anchors' bounding box (no outline is given)
# Each reading carries the RSS of the anchor array's two polarisations. A presence gateway reports
# one RSSI; the second polarisation is the one the dataset's users take for ranging in the mobility
# scenario (BLE-IPS-Sensor-Fusion's mean_mobility and its `polarization: 2ndP`), so it is used alone.
RSSI_COLUMN = "2ndP"
TRUTH_STEP_S = 0.1                 # the true position is sampled this often along the path
SESSION_GAP_S = 2.0                # a gap longer than this between readings ends a presence
RUN_SPACING_S = 10.0               # `all`: pause between one run's end and the next one's start


def runs(dataset):
    """[(name, gt path, beacons path)] in use-case, run order."""
    out = []
    for gt in glob.glob(os.path.join(dataset, "mobility", "gt", "*", "gt_mobility_use-case*_run*.txt")):
        m = re.search(r"gt_mobility_use-case(\d+)_run(\d+)\.txt$", gt)
        case, run = int(m.group(1)), int(m.group(2))
        beacons = os.path.join(dataset, "mobility", "beacons", f"use-case {case}",
                               f"beacons_mobility_use-case{case}_run{run}.txt")
        if os.path.exists(beacons):
            out.append(((case, run), f"uc{case}-run{run}", gt, beacons))
    return [(name, gt, beacons) for _key, name, gt, beacons in sorted(out)]


def read_truth(path):
    """[(start s, end s or None, x m, y m)] in time order."""
    rows = []
    for n, line in enumerate(open(path), 1):
        f = line.strip().split(",")
        if len(f) < 4 or not f[0] or not f[0][0].isdigit():
            continue                                    # blank, or a header row in some copies
        end = None if f[1].strip().lower() == "nan" or not f[1].strip() else float(f[1]) / 1000
        rows.append((float(f[0]) / 1000, end, float(f[2]) / 100, float(f[3]) / 100))
    rows.sort(key=lambda r: r[0])
    if not rows:
        raise SystemExit(f"{path}: no waypoints")
    return rows


def path_position(truth, t):
    """The person's position at time t, as BLE-IPS-Sensor-Fusion's get_trajectory reconstructs it:
    standing at a waypoint from its StartTime to its EndTime (when it has one), walking in a straight
    line at constant speed from one waypoint (from its EndTime, or StartTime when there is none) to the
    next (reached at its StartTime); before the first waypoint at it, after the last one at it."""
    if t <= truth[0][0]:
        return truth[0][2], truth[0][3]
    for (s0, e0, x0, y0), (s1, _e1, x1, y1) in zip(truth, truth[1:]):
        leave = e0 if e0 is not None else s0
        if t <= leave:
            return x0, y0
        if t < s1:
            u = (t - leave) / (s1 - leave)
            return x0 + u * (x1 - x0), y0 + u * (y1 - y0)
    return truth[-1][2], truth[-1][3]


def read_beacons(path, first, last):
    """[(t s, anchor id, rssi)] in time order, for tag 8401's readings from time first to last."""
    rows = []
    for n, line in enumerate(open(path), 1):
        f = line.strip().split(",")
        if not f[0] or not f[0][0].isdigit():
            continue
        if len(f) == 8:          # the dataset's own lines
            t, tag, p1, p2, anchor = f[0], f[1], f[2], f[5], f[7]
        elif len(f) == 5:        # the reduced copy
            t, p1, p2, anchor, tag = f[0], f[1], f[2], f[4], TAG
        else:
            raise SystemExit(f"{path}:{n}: expected 8 or 5 fields, found {len(f)}")
        if anchor not in ANCHORS:
            raise SystemExit(f"{path}:{n}: anchor {anchor} is not one of {sorted(ANCHORS)}")
        if tag != TAG:
            continue
        t = float(t) / 1000
        if first <= t <= last:
            rows.append((t, anchor, float(p2 if RSSI_COLUMN == "2ndP" else p1)))
    rows.sort(key=lambda r: r[0])
    return rows


def site_yaml():
    text, ids, pts, _radius = openplan.radio_plan("girolami-open-plan", [
        "The Girolami et al. AoA/RSS room drawn as an open plan by tools/girolami/convert.py: one region",
        "per anchor, its cell the floor nearer to it than to any other; the room has no inner walls.",
    ], [(a, ANCHORS[a][0], ANCHORS[a][1]) for a in ANCHORS], LIMITS, [DEVICE])
    return text, ids, pts


def visits(rows, truth, cell_of):
    """True visits: the cell of the position on the path, sampled every TRUTH_STEP_S within each
    presence; presences split at gaps in the readings."""
    out = []
    for start, stop in openplan.sessions([r[0] for r in rows], SESSION_GAP_S):
        begin, end = rows[start][0], rows[stop - 1][0] + 0.5
        out.append({"type": "presence", "device": DEVICE, "entered": begin, "exited": end})
        n = int(math.floor((end - begin) / TRUTH_STEP_S))
        samples = [begin + k * TRUTH_STEP_S for k in range(n + 1)]
        out += openplan.truth_runs(DEVICE, [(round(t, 3), cell_of(*path_position(truth, t))) for t in samples], end)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", required=True, help="the dataset's folder (holding mobility/)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", nargs="*", help="run names, e.g. uc1-run1 (default: every run found)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    text, ids, pts = site_yaml()
    with open(os.path.join(a.out, "girolami-open-plan.yaml"), "w") as f:
        f.write(text)
    cell_of = lambda x, y: f"cell-{ids[openplan.nearest(pts, x, y)]}"
    found = runs(a.dataset)
    if a.runs:
        found = [r for r in found if r[0] in a.runs]
    if not found:
        raise SystemExit(f"{a.dataset}: no run with both a gt and a beacons file under mobility/")
    everything = openplan.Sequence(RUN_SPACING_S)
    for name, gt, beacons in found:
        truth = read_truth(gt)
        rows = read_beacons(beacons, truth[0][0], truth[-1][0])
        if not rows:
            raise SystemExit(f"{name}: no readings within the truth's span")
        sightings = [{"t": round(t, 3), "gateway": anchor, "device": DEVICE, "rssi": r} for t, anchor, r in rows]
        true_visits = visits(rows, truth, cell_of)
        openplan.write_track(a.out, name, sightings, true_visits)
        everything.add(sightings, true_visits, rows[0][0], rows[-1][0], digits=3)
        per_anchor = {g: sum(1 for _t, a_, _r in rows if a_ == g) for g in ids}
        gaps = max((b[0] - p[0] for p, b in zip(rows, rows[1:])), default=0.0)
        span = rows[-1][0] - rows[0][0]
        cut = (f", readings end {truth[-1][0] - rows[-1][0]:.1f} s before the last waypoint (a partial file)"
               if rows[-1][0] < truth[-1][0] - SESSION_GAP_S else "")
        print(f"{name}: {len(rows)} readings in {span:.1f} s ({len(rows) / span:.0f}/s; per anchor "
              + ", ".join(f"{g} {per_anchor[g]}" for g in ids)
              + f"), longest gap {gaps:.2f} s, {len({v['region'] for v in true_visits if v['type'] == 'truth'})} cells visited"
              + cut)
    openplan.write_track(a.out, "all", everything.sightings, everything.truth)


if __name__ == "__main__":
    main()
