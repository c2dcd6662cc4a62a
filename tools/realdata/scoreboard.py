#!/usr/bin/env python3
"""One table for every real venue on this machine: Waymark against the naive rule, default parameters.

The accuracy suite (`scripts/accuracy.sh`) scores the Kolakowski flat, the one real venue whose data
ships with the repository (../shared/data). Other public recordings are kept out of the repository
(their licences, or the lack of one) and converted by their own tools, each into a folder of
`<track>.sightings.jsonl` and `<track>.visits.jsonl` next to a site file drawn from the receivers'
positions alone:

    venue          converter                      work folder           site file
    office floor   tools/danis/convert.py         .build/danis          danis-open-plan.yaml
    one room       tools/girolami/convert.py      .build/girolami       girolami-open-plan.yaml
    corridor       tools/tut-corridor/convert.py  .build/tut-corridor   tut-corridor-open-plan.yaml
    chamber        tools/sal/convert.py           .build/sal            sal.yaml

This script runs the built `waymark replay` over every track of every venue it finds converted,
scores it with `waymark evaluate` next to the naive rule (the region of the strongest reading in the
last 2 s), and prints one row per venue and track group: `all` (the tracks in sequence as one
device, so that what the engine learns carries over) and the mean over the single tracks (each from
nothing), then the Kolakowski flat's walled rows from the accuracy suite's last run if it is there
(its open-plan rows are in the suite's own table). Nothing is
tuned here; it is the scoreboard to read before and after a fusion change.

    python3 tools/realdata/scoreboard.py [--waymark .build/release/waymark] [--build .build]
"""
import argparse
import glob
import json
import os
import subprocess
import sys

VENUES = [
    ("office floor (Daniş)", "danis", "danis-open-plan.yaml"),
    ("one room (Girolami)", "girolami", "girolami-open-plan.yaml"),
    ("corridor (TUT)", "tut-corridor", "tut-corridor-open-plan.yaml"),
    ("chamber (SAL)", "sal", "sal.yaml"),
]
# The suite's walled rows (its open-plan rows are scored against cells the suite computes itself).
KOLAKOWSKI = ["test-robot", "calibration", "together"]


def evaluate(waymark, site, truth, output, sightings):
    out = subprocess.run([waymark, "evaluate", "--site", site, "--truth", truth, "--output", output,
                          "--sightings", sightings, "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def run_track(waymark, work, site, name):
    stem = os.path.join(work, name)
    with open(stem + ".replay.log", "w") as log:
        subprocess.run([waymark, "replay", "--site", site, "--input", stem + ".sightings.jsonl",
                        "--output", stem + ".replay.jsonl"], check=True, stderr=log)
    report = evaluate(waymark, site, stem + ".visits.jsonl", stem + ".replay.jsonl", stem + ".sightings.jsonl")
    return report["waymark"], report["naive"]


FIELDS = [("current_region_accuracy", "exact %", 100), ("visit_precision", "visit precision %", 100),
          ("visit_recall", "visit recall %", 100), ("flaps_per_device_hour", "flaps / device-h", 1)]


def row(label, scores):
    cells = []
    for key, _title, scale in FIELDS:
        w = sum(s[0][key] for s in scores) / len(scores) * scale
        n = sum(s[1][key] for s in scores) / len(scores) * scale
        cells.append(f"{w:.1f} / {n:.1f}")
    return f"| {label} | " + " | ".join(cells) + " |"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--waymark", default=".build/release/waymark")
    ap.add_argument("--build", default=".build", help="where the converted venues and the suite's work folder are")
    a = ap.parse_args()
    if not os.path.exists(a.waymark):
        sys.exit(f"scoreboard: {a.waymark} is missing: swift build -c release --product waymark")
    print("| venue · tracks | " + " | ".join(t for _k, t, _s in FIELDS) + " |")
    print("|---|" + "---:|" * len(FIELDS))
    found = 0
    for label, folder, site_name in VENUES:
        work, site = os.path.join(a.build, folder), os.path.join(a.build, folder, site_name)
        if not os.path.exists(site):
            print(f"| {label} | not converted here ({site} missing) |" + " |" * (len(FIELDS) - 1))
            continue
        names = sorted(os.path.basename(p)[:-len(".sightings.jsonl")]
                       for p in glob.glob(os.path.join(work, "*.sightings.jsonl")))
        singles = [n for n in names if n != "all"]
        if "all" in names:
            print(row(f"{label} · all", [run_track(a.waymark, work, site, "all")]), flush=True)
        if singles:
            print(row(f"{label} · mean of {len(singles)} tracks alone",
                      [run_track(a.waymark, work, site, n) for n in singles]), flush=True)
        found += 1
    suite = os.path.join(a.build, "accuracy")
    for name in KOLAKOWSKI:
        stem = os.path.join(suite, f"kolakowski-{name}")
        site = os.path.join(suite, "kolakowski-flat.geometry.yaml")
        truth = os.path.join(suite, f"kolakowski-{name}.visits.jsonl")
        sightings = os.path.join(suite, "kolakowski", f"{name}.sightings.jsonl")
        if all(os.path.exists(p) for p in (stem + ".replay.jsonl", site, truth, sightings)):
            r = evaluate(a.waymark, site, truth, stem + ".replay.jsonl", sightings)
            print(row(f"Kolakowski flat · {name} (the suite's last run)", [(r["waymark"], r["naive"])]), flush=True)
    print("Each cell: Waymark / naive rule (strongest reading in the last 2 s); a mean is over the tracks, unweighted.")
    if found == 0:
        print("No venue converted: see each converter's README (tools/danis, tools/girolami, tools/tut-corridor, tools/sal).",
              file=sys.stderr)


if __name__ == "__main__":
    main()
