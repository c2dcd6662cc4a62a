#!/usr/bin/env python3
"""Convert the "TUT Corridor" walks of the BLE–ArUco positioning library into Waymark input.

The dataset (github.com/bertoferrero-research/ble-aruco-positioning-library, folder `location 2 - tut
corridor/fingerprint/`; its README names no licence yet, only a placeholder: it is not copied into
this repository; fetch it yourself and point --dataset at its folder) records an Android phone in a
chest harness walking the "TUT corridor", 2.02 × 28.7 m (take 2, December 2025), scanning five fixed
BLE beacons on the corridor's two long walls at 2.0–2.1 m (two at x = 0, three at x = 2.02), every
reading annotated with the phone's position from the ArUco markers its camera saw (one image every
250 ms; ArUco and laser positions 2–5 cm apart on the static points). By reciprocity it is the problem
of fixed gateways hearing one moving tag: each beacon stands for a gateway, the phone for the device.
It is a venue Waymark was never tuned on: a corridor, each beacon 2.5–5.2 m from its nearest
neighbour, walks straight down the corridor near either wall or the middle, in either direction, and
zigzagging from wall to wall.

Reads, from DATASET:
  settings/beacon_position.csv     the beacons: mac,name,pos_x,pos_y,pos_z (metres)
  settings/room_settings.json      the corridor's size ("size": [x, y], metres, from the origin corner)
  online/trajectories/take2/processed_13cm_fixed/<track>/all.csv
                                   readings: timestamp (ms),time,mac_address,rssi,tx_power,pos_x,pos_y,
                                   pos_z,position_calculation_timestamp,position_calculation_status
                                   (columns found by the header's names, so a reduced copy holding only
                                   timestamp,mac_address,rssi,pos_x,pos_y,position_calculation_status
                                   is read too; --folder reads another take or processing)
Writes to OUT:
  tut-corridor-open-plan.yaml      the site file: one gateway per beacon, one region per beacon (its
                                   cell: the corridor nearer to it than to any other beacon), edges
                                   between cells that touch, one room (the corridor has no walls across)
  <track>.sightings.jsonl          one sighting line per reading, whatever its position status
  <track>.visits.jsonl             the true visits (`waymark simulate --truth` format): the cell of the
                                   phone's position, from reading to reading
and the same two for `all`, the tracks one after another as one device (times shifted so that each
track starts 10 s after the one before ends: a venue in operation, whose calibration carries over).

Positions: every line carries one, but only a `calculated` line's is a fix made at that line's time
(its position_calculation_timestamp is its own timestamp); `cached`, `no_images` and `no_calculated`
lines repeat the last fix (or 0,0 before the first one). The radio reading is real whatever the
status, so every line is a sighting; the phone's position at a reading's time is interpolated
linearly between the fixes before and after it, and held at the first (last) fix before (after) them.

Only the standard library is used. Nothing here is tuned on the data: the site file is drawn from
the beacons' positions alone, as `KolakowskiOpenPlan` draws the Kolakowski flat.
"""
import argparse
import bisect
import csv
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "realdata"))
import openplan  # noqa: E402  (tools/realdata/openplan.py: the open plan, `all`, JSONL)

DEVICE = "mac:02-00-00-00-00-04"   # placeholder id for the dataset's phone (locally administered)
FOLDER = os.path.join("online", "trajectories", "take2", "processed_13cm_fixed")
FIX = "calculated"                 # the status of a line whose position was measured at its own time
SESSION_GAP_S = 2.0                # a gap longer than this between readings ends a presence
TRACK_SPACING_S = 10.0             # `all`: pause between one track's end and the next one's start


def beacons(dataset):
    """{MAC: (name, x, y, z)}, in the file's order."""
    out = {}
    with open(os.path.join(dataset, "settings", "beacon_position.csv"), newline="") as f:
        for r in csv.DictReader(f):
            out[r["mac"].strip().upper()] = (r["name"].strip(), float(r["pos_x"]), float(r["pos_y"]), float(r["pos_z"]))
    return out


def floor_limits(dataset):
    size = json.load(open(os.path.join(dataset, "settings", "room_settings.json")))["size"]
    return [0.0, 0.0, float(size[0]), float(size[1])]


def read_track(path, known):
    """[(t, beacon MAC, rssi, x, y)] in time order, x, y the phone's position interpolated between fixes."""
    rows, fixes = [], {}
    with open(path, newline="") as f:
        for n, r in enumerate(csv.DictReader(f), 2):
            mac = r["mac_address"].strip().upper()
            if mac not in known:
                raise SystemExit(f"{path}:{n}: beacon {mac} is not in settings/beacon_position.csv")
            t = int(r["timestamp"]) / 1000.0
            rows.append((t, mac, int(r["rssi"])))
            if r["position_calculation_status"].strip() == FIX:
                fixes[t] = (float(r["pos_x"]), float(r["pos_y"]))
    if not fixes:
        raise SystemExit(f"{path}: no `{FIX}` line: the phone's position is unknown")
    rows.sort(key=lambda r: r[0])
    ft = sorted(fixes)

    def at(t):
        k = bisect.bisect_left(ft, t)
        if k < len(ft) and ft[k] == t:
            return fixes[t]
        if k == 0:
            return fixes[ft[0]]
        if k == len(ft):
            return fixes[ft[-1]]
        (t0, (x0, y0)), (t1, (x1, y1)) = (ft[k - 1], fixes[ft[k - 1]]), (ft[k], fixes[ft[k]])
        w = (t - t0) / (t1 - t0)
        return x0 + w * (x1 - x0), y0 + w * (y1 - y0)

    return [(t, mac, rssi, *at(t)) for t, mac, rssi in rows], len(ft)


def site_yaml(recv, limits):
    return openplan.radio_plan("tut-corridor-open-plan", [
        "The TUT corridor drawn as an open plan by tools/tut-corridor/convert.py: one region per",
        "beacon, its cell the corridor nearer to it than to any other; nothing walls the cells off.",
    ], [(name, x, y) for name, x, y, _z in recv.values()], limits, [DEVICE])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", required=True, help="the dataset's folder (holding settings/ and online/)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--folder", default=FOLDER, help=f"the tracks' folder inside DATASET (default {FOLDER})")
    ap.add_argument("--tracks", nargs="*", help="track names (default: every FOLDER/*/all.csv)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    recv = beacons(a.dataset)
    text, ids, pts, _radius = site_yaml(recv, floor_limits(a.dataset))
    with open(os.path.join(a.out, "tut-corridor-open-plan.yaml"), "w") as f:
        f.write(text)
    name_of = {mac: v[0] for mac, v in recv.items()}
    cell_of = lambda x, y: f"cell-{ids[openplan.nearest(pts, x, y)]}"
    folder = os.path.join(a.dataset, a.folder)
    names = a.tracks or sorted(os.path.basename(os.path.dirname(p))
                               for p in glob.glob(os.path.join(folder, "*", "all.csv")))
    if not names:
        raise SystemExit(f"no {folder}/*/all.csv")
    everything = openplan.Sequence(TRACK_SPACING_S)
    for name in names:
        rows, n_fixes = read_track(os.path.join(folder, name, "all.csv"), recv)
        if not rows:
            raise SystemExit(f"{name}: no readings")
        sightings = [{"t": round(t, 3), "gateway": name_of[m], "device": DEVICE, "rssi": r} for t, m, r, _x, _y in rows]
        truth = openplan.visits_of_readings(DEVICE, rows, cell_of, SESSION_GAP_S)
        openplan.write_track(a.out, name, sightings, truth)
        everything.add(sightings, truth, rows[0][0], rows[-1][0])
        print(f"{name}: {len(rows)} readings, {n_fixes} position fixes, {rows[-1][0] - rows[0][0]:.0f} s, "
              f"{len({cell_of(x, y) for *_r, x, y in rows})} cells visited")
    openplan.write_track(a.out, "all", everything.sightings, everything.truth)


if __name__ == "__main__":
    main()
