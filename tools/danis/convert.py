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
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "realdata"))
import openplan  # noqa: E402  (tools/realdata/openplan.py: the open plan, `all`, JSONL)

DEVICE = "mac:02-00-00-00-00-02"   # placeholder id for the dataset's single beacon (locally administered)
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


def site_yaml(recv, limits):
    return openplan.radio_plan("danis-open-plan", [
        "The Daniş et al. office floor drawn as an open plan by tools/danis/convert.py: one region per",
        "receiver, its cell the floor nearer to it than to any other; the floor has no walls.",
    ], [(alias, x, y) for alias, x, y, _z in recv.values()], limits, [DEVICE])


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
    cell_of = lambda x, y: f"cell-{ids[openplan.nearest(pts, x, y)]}"
    names = a.tracks or sorted(os.path.basename(p)[:-len("_all_sensors.mbd")]
                               for p in glob.glob(os.path.join(a.dataset, "trk", "*_all_sensors.mbd")))
    everything = openplan.Sequence(TRACK_SPACING_S)
    for name in names:
        rows = read_track(os.path.join(a.dataset, "trk", f"{name}_all_sensors.mbd"), recv)
        if not rows:
            raise SystemExit(f"{name}: no readings")
        sightings = [{"t": round(t, 3), "gateway": alias[m], "device": DEVICE, "rssi": r} for t, m, r, _x, _y in rows]
        truth = openplan.visits_of_readings(DEVICE, rows, cell_of, SESSION_GAP_S)
        openplan.write_track(a.out, name, sightings, truth)
        everything.add(sightings, truth, rows[0][0], rows[-1][0])
        print(f"{name}: {len(rows)} readings, {rows[-1][0] - rows[0][0]:.0f} s, "
              f"{len({cell_of(x, y) for *_r, x, y in rows})} cells visited")
    openplan.write_track(a.out, "all", everything.sightings, everything.truth)


if __name__ == "__main__":
    main()
