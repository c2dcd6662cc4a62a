#!/usr/bin/env python3
"""How early or late each output is against the truth on the real venues: the recorded history, the
live region and the naive rule, scored with the truth shifted in time.

An output that trails the truth by L seconds scores best against the truth delayed by L; one that
leads it, against the truth brought forward. This script replays every track of every converted
venue with the given `waymark` (as `tools/realdata/scoreboard.py` does, over the same files), reads
the Kolakowski flat's replays that `scripts/accuracy.sh` last left in `.build/accuracy`, rewrites the
truth with every time moved by d seconds (d from `--from` to `--to`), and scores each output
against it with `waymark evaluate`, the scorer of every other table. For the live region the `live` lines are scored as if they were the recorded history.
Per venue and output it prints the exact % at d = 0, the d that scores best and the exact % there
(means over the single tracks, unweighted, as the scoreboard's; the Kolakowski rows are one
recording each).

Read it as a diagnosis, never as a figure to tune on: where the readings themselves lead the truth (a
tag worn on the chest is shadowed by its wearer's body from the gateways behind, so the gateways
ahead read louder before the walker reaches the boundary) the naive rule's best d is negative, and no
engine can date a move from readings that have not yet turned.

    python3 tools/realdata/timing.py [--waymark .build/release/waymark] [--from -6 --to 6]
"""
import argparse
import glob
import json
import os
import sys
import tempfile

from scoreboard import KOLAKOWSKI, VENUES, evaluate, run_track


def shifted(truth_path, d, out_path):
    """The truth file with every entry and exit moved by d seconds."""
    with open(truth_path) as src, open(out_path, "w") as dst:
        for line in src:
            if not line.strip():
                continue
            e = json.loads(line)
            for key in ("entered", "exited"):
                if key in e:
                    e[key] += d
            dst.write(json.dumps(e) + "\n")


def live_as_history(replay_path, out_path):
    """The replay output with its `live` lines standing in for the recorded `location` lines."""
    with open(replay_path) as src, open(out_path, "w") as dst:
        for line in src:
            e = json.loads(line)
            if e["type"] == "location":
                continue
            if e["type"] == "live":
                e["type"] = "location"
            dst.write(json.dumps(e) + "\n")


def track_curves(waymark, site, truth, replay, sightings, shifts, scratch):
    """Exact % per shift for the recorded history, the live region and the naive rule."""
    live = os.path.join(scratch, "live.jsonl")
    live_as_history(replay, live)
    moved = os.path.join(scratch, "truth.jsonl")
    curves = {"recorded": [], "live": [], "naive": []}
    for d in shifts:
        shifted(truth, d, moved)
        rec = evaluate(waymark, site, moved, replay, sightings)
        liv = evaluate(waymark, site, moved, live, sightings)
        curves["recorded"].append(rec["waymark"]["current_region_accuracy"] * 100)
        curves["live"].append(liv["waymark"]["current_region_accuracy"] * 100)
        curves["naive"].append(rec["naive"]["current_region_accuracy"] * 100)
    return curves


def report(label, curves_list, shifts):
    for output in ("recorded", "live", "naive"):
        mean = [sum(c[output][i] for c in curves_list) / len(curves_list) for i in range(len(shifts))]
        zero = mean[shifts.index(0)]
        best = max(range(len(shifts)), key=lambda i: (mean[i], -abs(shifts[i])))
        print(f"| {label} | {output} | {zero:.1f} | {shifts[best]:+d} s | {mean[best]:.1f} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--waymark", default=".build/release/waymark")
    ap.add_argument("--build", default=".build")
    ap.add_argument("--from", dest="lo", type=int, default=-6)
    ap.add_argument("--to", dest="hi", type=int, default=6)
    a = ap.parse_args()
    if not os.path.exists(a.waymark):
        sys.exit(f"timing: {a.waymark} is missing: swift build -c release --product waymark")
    shifts = list(range(a.lo, a.hi + 1))
    if 0 not in shifts:
        sys.exit("timing: the range of shifts must include 0")
    print("| venue · tracks | output | exact % at 0 | best shift (+ = trails the truth) | exact % there |")
    print("|---|---|---:|---:|---:|")
    found = 0
    with tempfile.TemporaryDirectory() as scratch:
        for label, folder, site_name in VENUES:
            work, site = os.path.join(a.build, folder), os.path.join(a.build, folder, site_name)
            names = sorted(os.path.basename(p)[:-len(".sightings.jsonl")]
                           for p in glob.glob(os.path.join(work, "*.sightings.jsonl")))
            singles = [n for n in names if n != "all"]
            if not os.path.exists(site) or not singles:
                continue
            for n in singles:
                run_track(a.waymark, work, site, n)    # the replay this binary gives, not one left behind
            curves = [track_curves(a.waymark, site, os.path.join(work, n + ".visits.jsonl"),
                                   os.path.join(work, n + ".replay.jsonl"), os.path.join(work, n + ".sightings.jsonl"),
                                   shifts, scratch) for n in singles]
            report(f"{label} · {len(singles)} tracks alone", curves, shifts)
            found += 1
        suite = os.path.join(a.build, "accuracy")
        for name in KOLAKOWSKI:
            stem = os.path.join(suite, f"kolakowski-{name}")
            site = os.path.join(suite, "kolakowski-flat.geometry.yaml")
            truth = stem + ".visits.jsonl"
            sightings = os.path.join(suite, "kolakowski", f"{name}.sightings.jsonl")
            if all(os.path.exists(p) for p in (stem + ".replay.jsonl", site, truth, sightings)):
                curves = track_curves(a.waymark, site, truth, stem + ".replay.jsonl", sightings, shifts, scratch)
                report(f"Kolakowski flat · {name}", [curves], shifts)
                found += 1
    print("Shift d: the output scored against the truth moved d seconds later; the best d is how far the "
          "output trails the truth (negative: it leads).")
    if found == 0:
        print("No venue converted and no suite run found: see tools/realdata/scoreboard.py's list of converters, "
              "and scripts/accuracy.sh.", file=sys.stderr)


if __name__ == "__main__":
    main()
