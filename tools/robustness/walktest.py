#!/usr/bin/env python3
"""What a calibration written at installation buys, and what a walk test adds: the real runs crossed.

For each fault of `sweep.py` (by default a gateway read 8 dB hot or cold; --only REGEX for others),
applied alike to both Kolakowski runs, and for the run as recorded:

  alone        the scored run replayed with the geometry-only site file (the engine learns online
               from nothing, as the accuracy suite runs it);
  calibrated   `waymark site calibrate --write` on the *other* run first, then the scored run
               replayed with that site file;
  walk test    the same with `--truth` (the other run's true rooms: its places known, as in a walk
               test at installation; docs/fusion.md, "A walk test").

Each run is scored with the other one's calibration only: nothing is scored on the recording that
taught it. Prints exact % per fault and the means over the faults (docs/accuracy.md, "A walk
test").

Run `scripts/accuracy.sh` first (it converts the dataset and writes the geometry-only site file),
then:

    python3 tools/robustness/walktest.py [--waymark PATH] [--work DIR] [--out DIR] [--only REGEX]

About 3 minutes for the 13 rows in both directions.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep import perturbations, read_jsonl, write_jsonl  # noqa: E402

RUNS = ("test-robot", "calibration")


def exact(waymark, site, truth, output):
    report = json.loads(subprocess.run([waymark, "evaluate", "--site", site, "--truth", truth, "--output", output, "--json"],
                                       check=True, capture_output=True).stdout)
    return 100 * report["waymark"]["current_region_accuracy"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--waymark", default=".build/release/waymark")
    ap.add_argument("--work", default=".build/accuracy")
    ap.add_argument("--out")
    ap.add_argument("--only", default=r"\b(hot|cold)\b", help="faults whose label matches this regular expression (default: hot and cold gateways)")
    args = ap.parse_args()
    out = args.out or os.path.join(args.work, "walktest")
    os.makedirs(out, exist_ok=True)
    geometry = os.path.join(args.work, "kolakowski-flat.geometry.yaml")
    for needed in (args.waymark, geometry):
        if not os.path.exists(needed):
            sys.exit(f"walktest: {needed} is missing; run scripts/accuracy.sh first")
    truth = {r: os.path.join(args.work, f"kolakowski-{r}.visits.jsonl") for r in RUNS}
    faulted = {}
    for r in RUNS:
        sightings = os.path.join(args.work, "kolakowski", f"{r}.sightings.jsonl")
        if not (os.path.exists(sightings) and os.path.exists(truth[r])):
            sys.exit(f"walktest: no {sightings} or {truth[r]}; run scripts/accuracy.sh first")
        faulted[r] = [(label, rows) for label, rows in perturbations(read_jsonl(sightings))
                      if label == "as recorded" or re.search(args.only, label)]

    def replay(site, sightings, output):
        with open(output + ".log", "w") as log:
            subprocess.run([args.waymark, "replay", "--site", site, "--input", sightings, "--output", output], check=True, stderr=log)

    print("| scored run | fault | alone | calibrated on the other run | walk test (the other run's truth) |")
    print("|---|---|---:|---:|---:|")
    for scored, teacher in (("calibration", "test-robot"), ("test-robot", "calibration")):
        results = []
        for i, ((label, rows), (_, teaching)) in enumerate(zip(faulted[scored], faulted[teacher])):
            stem = os.path.join(out, f"{scored}.{i:02d}")
            write_jsonl(stem + ".sightings.jsonl", rows)
            write_jsonl(stem + ".teacher.jsonl", teaching)
            scores = []
            for variant, extra in (("alone", None), ("calibrated", []), ("walk", ["--truth", truth[teacher]])):
                site = geometry
                if extra is not None:
                    site = f"{stem}.{variant}.yaml"
                    shutil.copyfile(geometry, site)
                    with open(f"{stem}.{variant}.calibrate.txt", "w") as log:
                        subprocess.run([args.waymark, "site", "calibrate", "--site", site, "--input", stem + ".teacher.jsonl",
                                        "--write", *extra], check=True, stdout=log, stderr=subprocess.STDOUT)
                replay(site, stem + ".sightings.jsonl", f"{stem}.{variant}.replay.jsonl")
                scores.append(exact(args.waymark, geometry, truth[scored], f"{stem}.{variant}.replay.jsonl"))
            results.append((label, scores))
            print(f"| {scored} | {label} | {scores[0]:.1f} | {scores[1]:.1f} | {scores[2]:.1f} |", flush=True)
        faults = [s for label, s in results if label != "as recorded"]
        if faults:
            means = [statistics.mean(column) for column in zip(*faults)]
            print(f"| {scored} | **mean of {len(faults)} faults** | {means[0]:.1f} | {means[1]:.1f} | {means[2]:.1f} |", flush=True)
    print("Exact % (time-weighted current region) of the scored run, default fusion parameters.")


if __name__ == "__main__":
    main()
