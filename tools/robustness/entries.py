#!/usr/bin/env python3
"""How well the engine places a device that has just arrived, on real recordings.

A recording scored whole has one arrival: its first seconds decide where the device starts, and a
robot parked for minutes after an unlucky start weighs more than everything else in it. This script
cuts each Kolakowski run into many overlapping 60-s pieces (a new one every 20 s, within the
recording's sessions), gives every piece its own device identity, so that each is an arrival, and
scores them together with `waymark evaluate` (the pieces' own stretch of the ground truth). It does
that for the recording as it is and for every perturbation `sweep.py` applies (one anchor hot,
cold or dead, readings lost, extra noise, another level), for one `waymark` binary or for two side
by side (`--baseline`: what a change did to arrivals).

Nothing here tunes anything: it measures arrivals, which the whole-recording rows barely sample.

Run `scripts/accuracy.sh` first (it converts the dataset and writes the geometry-only site file),
then:

    python3 tools/robustness/entries.py                                   # this build
    python3 tools/robustness/entries.py --baseline /tmp/waymark-before    # before → after

Options: --waymark PATH (default .build/release/waymark), --baseline PATH, --work DIR (default
.build/accuracy), --out DIR (default <work>/entries), --length S (60), --every S (20).
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep import perturbations, read_jsonl, write_jsonl  # noqa: E402


def pieces(rows, truth, length, every):
    """Sightings and truth for pieces of `length` s starting every `every` s within each true
    presence, each piece a device of its own; and how many there are."""
    sightings, visits, n = [], [], 0
    for p in (v for v in truth if v["type"] == "presence"):
        start = p["entered"]
        while start + length <= p["exited"]:
            lo, hi = start, start + length
            device = "mac:02-00-00-00-%02x-%02x" % (n // 256, n % 256)
            piece = [dict(r, device=device) for r in rows if lo <= r["t"] < hi]
            if piece:
                sightings += piece
                visits.append({"type": "presence", "device": device, "entered": lo, "exited": hi})
                for v in truth:
                    if v["type"] == "truth" and v["exited"] > lo and v["entered"] < hi:
                        visits.append({"type": "truth", "device": device, "region": v["region"],
                                       "entered": max(lo, v["entered"]), "exited": min(hi, v["exited"])})
                n += 1
            start += every
    sightings.sort(key=lambda r: r["t"])
    return sightings, visits, n


def score(waymark, site, stem, tag):
    output = f"{stem}.{tag}.replay.jsonl"
    with open(f"{stem}.{tag}.replay.log", "w") as log:
        subprocess.run([waymark, "replay", "--site", site, "--input", stem + ".sightings.jsonl", "--output", output],
                       check=True, stderr=log)
    report = json.loads(subprocess.run([waymark, "evaluate", "--site", site, "--truth", stem + ".truth.jsonl",
                                        "--output", output, "--json"], check=True, capture_output=True).stdout)
    w = report["waymark"]
    return (100 * w["current_region_accuracy"], 100 * w["visit_precision"], 100 * w["visit_recall"], w["flaps"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("recordings", nargs="*", default=["test-robot", "calibration"])
    ap.add_argument("--waymark", default=".build/release/waymark")
    ap.add_argument("--baseline")
    ap.add_argument("--work", default=".build/accuracy")
    ap.add_argument("--out")
    ap.add_argument("--length", type=float, default=60)
    ap.add_argument("--every", type=float, default=20)
    args = ap.parse_args()
    out = args.out or os.path.join(args.work, "entries")
    os.makedirs(out, exist_ok=True)
    site = os.path.join(args.work, "kolakowski-flat.geometry.yaml")
    for needed in [args.waymark, site] + ([args.baseline] if args.baseline else []):
        if not os.path.exists(needed):
            sys.exit(f"entries: {needed} is missing; run scripts/accuracy.sh first (it builds waymark and writes the site's geometry)")

    arrow = " (baseline → this)" if args.baseline else ""
    print(f"| recording | perturbation | pieces | exact %{arrow} | visit precision % | visit recall % | flaps |")
    print("|---|---|---:|---:|---:|---:|---:|")
    totals = []
    for name in args.recordings:
        sightings = os.path.join(args.work, "kolakowski", f"{name}.sightings.jsonl")
        truth_path = os.path.join(args.work, f"kolakowski-{name}.visits.jsonl")
        if not (os.path.exists(sightings) and os.path.exists(truth_path)):
            sys.exit(f"entries: no {sightings} or {truth_path}; run scripts/accuracy.sh first")
        truth = read_jsonl(truth_path)
        for i, (label, rows) in enumerate(perturbations(read_jsonl(sightings))):
            stem = os.path.join(out, f"{name}.{i:02d}")
            piece_rows, piece_truth, n = pieces(rows, truth, args.length, args.every)
            write_jsonl(stem + ".sightings.jsonl", piece_rows)
            write_jsonl(stem + ".truth.jsonl", piece_truth)
            now = score(args.waymark, site, stem, "this")
            if args.baseline:
                before = score(args.baseline, site, stem, "baseline")
                totals.append((name, now[0] - before[0], now[1] - before[1], now[3] - before[3]))
                cells = [f"{b:.1f} → {a:.1f}" for b, a in zip(before[:3], now[:3])] + [f"{before[3]} → {now[3]}"]
            else:
                cells = [f"{x:.1f}" for x in now[:3]] + [str(now[3])]
            print(f"| {name} | {label} | {n} | " + " | ".join(cells) + " |", flush=True)
    for name in args.recordings:
        rows = [t for t in totals if t[0] == name]
        if rows:
            print(f"{name}: exact {sum(r[1] for r in rows) / len(rows):+.2f} points on average "
                  f"(up in {sum(r[1] > 0 for r in rows)}, down in {sum(r[1] < 0 for r in rows)} of {len(rows)}), "
                  f"precision {sum(r[2] for r in rows) / len(rows):+.2f}, flaps {sum(r[3] for r in rows):+d} in all")


if __name__ == "__main__":
    main()
