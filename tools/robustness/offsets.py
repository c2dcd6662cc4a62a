#!/usr/bin/env python3
"""How well the self-calibration finds a gateway that reads hot or cold, where the truth is known.

A venue's gateways differ: another radio, a metal case, a mount behind a pillar. The engine learns
each gateway's deviation from the radio model and corrects the part beyond a few dB
(docs/fusion.md "Self-calibration"). On a real recording the true deviation is unknown; here it is
made known. The script simulates a venue (a development seed, never the accuracy suite's scored
seed 1), then adds a known shift to one gateway's readings at a time, replays each version with
default fusion parameters, and prints per row

- the shift the calibration learned for that gateway: the change in its learned offset against the
  unshifted run (`waymark site calibrate`), beside the shift injected — a ratio below 1 is an
  estimate pulled towards "nothing is wrong", the bias that leaves a hot gateway partly uncorrected;
- the current-region accuracy (`waymark evaluate` against the simulation's truth), beside the naive
  rule's.

Nothing here tunes anything: it measures one estimator against a known answer.

Run `scripts/accuracy.sh` first (it builds waymark and writes the geometry-only site files), then:

    python3 tools/robustness/offsets.py
    python3 tools/robustness/offsets.py --site .build/accuracy/open-hall.geometry.yaml --devices 20

Options: --waymark PATH, --site FILE, --devices N, --duration S, --radio PROFILE, --seed N (not 1),
--shift DB (default 8), --gateways N (how many gateways to shift, one at a time; default 4, spread
over the site's list), --out DIR.
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep import read_jsonl, write_jsonl  # noqa: E402


def learned_offsets(waymark, site, sightings):
    """Gateway id → learned offset (dB) from `waymark site calibrate`'s table."""
    out = subprocess.run([waymark, "site", "calibrate", "--site", site, "--input", sightings],
                         check=True, capture_output=True, text=True).stdout
    offsets = {}
    for line in out.splitlines():
        # Rows of the per-gateway table: "gw-id    +4.2 dB ± 0.3    1234   …"
        m = re.match(r"(\S+)\s+([+-]\d+\.\d) dB ±", line)
        if m:
            offsets[m.group(1)] = float(m.group(2))
    if not offsets:
        sys.exit(f"offsets: could not read the gateway offsets from `waymark site calibrate`:\n{out}")
    return offsets


def scored(waymark, site, truth, sightings, output):
    subprocess.run([waymark, "replay", "--site", site, "--input", sightings, "--output", output],
                   check=True, stderr=subprocess.DEVNULL)
    report = json.loads(subprocess.run([waymark, "evaluate", "--site", site, "--truth", truth, "--output", output,
                                        "--sightings", sightings, "--json"], check=True, capture_output=True).stdout)
    return 100 * report["waymark"]["current_region_accuracy"], 100 * report["naive"]["current_region_accuracy"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--waymark", default=".build/release/waymark")
    ap.add_argument("--site", default=".build/accuracy/museum.geometry.yaml")
    ap.add_argument("--devices", type=int, default=30)
    ap.add_argument("--duration", type=int, default=1800)
    ap.add_argument("--radio", default="indoor")
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--shift", type=float, default=8.0)
    ap.add_argument("--gateways", type=int, default=4)
    ap.add_argument("--out", default=".build/accuracy/offsets")
    args = ap.parse_args()
    if args.seed == 1:
        sys.exit("offsets: seed 1 is the accuracy suite's scored seed; measure on another")
    for needed in (args.waymark, args.site):
        if not os.path.exists(needed):
            sys.exit(f"offsets: {needed} is missing; run scripts/accuracy.sh first")
    os.makedirs(args.out, exist_ok=True)
    source = os.path.join(args.out, "simulated.sightings.jsonl")
    truth = os.path.join(args.out, "simulated.truth.jsonl")
    subprocess.run([args.waymark, "simulate", "--site", args.site, "--devices", str(args.devices),
                    "--duration", f"{args.duration}s", "--radio", args.radio, "--seed", str(args.seed),
                    "--sightings", source, "--truth", truth],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = read_jsonl(source)
    gateways = sorted({r["gateway"] for r in rows})
    picks = [gateways[round(i * (len(gateways) - 1) / max(1, args.gateways - 1))] for i in range(min(args.gateways, len(gateways)))]
    base = learned_offsets(args.waymark, args.site, source)
    exact, naive = scored(args.waymark, args.site, truth, source, os.path.join(args.out, "simulated.replay.jsonl"))
    print(f"{len(rows)} readings, {args.devices} devices × {args.duration} s, radio {args.radio}, seed {args.seed}")
    print("| gateway | shift injected dB | shift learned dB | learned / injected | exact % Waymark / naive |")
    print("|---|---:|---:|---:|---:|")
    print(f"| (none) | 0 | – | – | {exact:.1f} / {naive:.1f} |", flush=True)
    ratios = []
    for g in picks:
        for shift in (args.shift, -args.shift):
            stem = os.path.join(args.out, f"{g}{shift:+.0f}")
            shifted = [dict(r, rssi=min(0.0, r["rssi"] + shift)) if r["gateway"] == g else r for r in rows]
            write_jsonl(stem + ".sightings.jsonl", shifted)
            got = learned_offsets(args.waymark, args.site, stem + ".sightings.jsonl")
            change = got.get(g, float("nan")) - base.get(g, float("nan"))
            ratios.append(change / shift)
            exact, naive = scored(args.waymark, args.site, truth, stem + ".sightings.jsonl", stem + ".replay.jsonl")
            print(f"| {g} | {shift:+.0f} | {change:+.1f} | {change / shift:.2f} | {exact:.1f} / {naive:.1f} |", flush=True)
    print(f"Mean learned / injected: {sum(ratios) / len(ratios):.2f} over {len(ratios)} rows "
          "(1 is an unbiased estimate; the engine applies only the part beyond its dead zone).")


if __name__ == "__main__":
    main()
