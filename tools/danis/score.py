#!/usr/bin/env python3
"""Score `waymark replay` on the Daniş et al. office floor (tools/danis/convert.py's output).

For each track converted into WORK (and `all`, the tracks in sequence as one device) this runs the
built `waymark replay` with the open-plan site file as drawn (default fusion parameters: the file has
no `fusion:` section) and `waymark evaluate` against the true cells, and prints one table row per
track: Waymark / the naive rule (the cell of the receiver with the strongest reading in the last
2 s). Nothing is tuned here.

    python3 tools/danis/convert.py --dataset DATASET --out .build/danis
    python3 tools/danis/score.py [--work .build/danis] [--waymark .build/release/waymark] [--site FILE]

--site runs another site file over the same readings (e.g. one with a `fusion:` setting, to compare;
not for tuning).
"""
import argparse
import glob
import json
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", default=".build/danis")
    ap.add_argument("--waymark", default=".build/release/waymark")
    ap.add_argument("--site")
    ap.add_argument("tracks", nargs="*")
    a = ap.parse_args()
    site = a.site or os.path.join(a.work, "danis-open-plan.yaml")
    for needed in (a.waymark, site):
        if not os.path.exists(needed):
            sys.exit(f"score: {needed} is missing (build waymark in release; run tools/danis/convert.py first)")
    names = a.tracks or sorted(os.path.basename(p)[:-len(".sightings.jsonl")]
                               for p in glob.glob(os.path.join(a.work, "*.sightings.jsonl")))
    print("| track | readings | duration s | exact % | within one hop % | visit precision % | visit recall % | flaps / device-h |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in names:
        sightings = os.path.join(a.work, f"{name}.sightings.jsonl")
        truth = os.path.join(a.work, f"{name}.visits.jsonl")
        out = os.path.join(a.work, f"{name}.replay.jsonl")
        with open(os.path.join(a.work, f"{name}.replay.log"), "w") as log:
            subprocess.run([a.waymark, "replay", "--site", site, "--input", sightings, "--output", out], check=True, stderr=log)
        report = json.loads(subprocess.run(
            [a.waymark, "evaluate", "--site", site, "--truth", truth, "--output", out, "--sightings", sightings, "--json"],
            check=True, capture_output=True).stdout)
        w, n = report["waymark"], report["naive"]
        times = [json.loads(l)["t"] for l in open(sightings)]
        pct = lambda k: f"{100 * w[k]:.1f} / {100 * n[k]:.1f}"
        print(f"| {name} | {len(times)} | {max(times) - min(times):.0f} | {pct('current_region_accuracy')} | "
              f"{pct('current_region_accuracy_within_one_hop')} | {pct('visit_precision')} | {pct('visit_recall')} | "
              f"{w['flaps_per_device_hour']:.1f} / {n['flaps_per_device_hour']:.1f} |", flush=True)
    print("Each cell: Waymark / naive rule (strongest reading in the last 2 s).")


if __name__ == "__main__":
    main()
