#!/usr/bin/env python3
"""Regions without a gateway of their own: the example museum with every other gateway taken away.

An operator with fewer receivers than regions names a neighbour's gateway for the rest. This takes
the museum's geometry-only site file (written by `scripts/accuracy.sh`), keeps the gateways of
every `--keep-every`-th region (file order), lets each region that lost its own list the nearest
remaining gateway on its floor (keeping its drawn position), simulates both files alike on
development data (not the suite's scored seed), replays them with default fusion parameters, and
prints exact % overall (next to the naive rule) and split by regions that keep their gateway and
regions that lost it (docs/accuracy.md, "Regions without a gateway of their own").

    python3 tools/robustness/fewer_gateways.py [--waymark PATH] [--work DIR] [--out DIR]
        [--keep-every 2] [--devices 40] [--duration 30m] [--seed 2] [--radio indoor]

Needs PyYAML (Debian: python3-yaml). About a minute.
"""
import argparse
import bisect
import collections
import json
import math
import os
import subprocess
import sys

import yaml


def fewer(site, keep_every):
    """`site` (parsed) with only the gateways of every `keep_every`-th region; the names of the
    regions that lost their own gateway."""
    gateways = {g["id"]: g for g in site["gateways"]}
    kept = set()
    for i, region in enumerate(site["regions"]):
        if i % keep_every == 0:
            kept.update(region["gateways"])
    site["gateways"] = [g for g in site["gateways"] if g["id"] in kept]
    lost = set()
    for region in site["regions"]:
        floor = region.get("floor", 0)
        own = [gateways[g] for g in region["gateways"]]
        region.setdefault("position", [sum(g["position"][k] for g in own) / len(own) for k in (0, 1)])
        keep = [g for g in region["gateways"] if g in kept]
        if not keep:
            here = [g for g in site["gateways"] if g.get("floor", 0) == floor] or site["gateways"]
            keep = [min(here, key=lambda g: math.dist(g["position"], region["position"]))["id"]]
            lost.add(region["id"])
        region["gateways"] = keep
    return site, lost


def recorded_regions(output):
    """Per device, the recorded current region's changes (time, region) from replay output."""
    timeline = collections.defaultdict(list)
    with open(output) as f:
        for line in f:
            o = json.loads(line)
            if o.get("type") == "location":
                timeline[o["device"]].append((o["t"], o.get("region")))
    for changes in timeline.values():
        changes.sort(key=lambda c: c[0])
    return timeline


def split_exact(truth, output, lost):
    """Exact % over the true time in regions that lost their gateway and in the others (1-s steps)."""
    timeline = recorded_regions(output)
    times = {d: [t for t, _ in c] for d, c in timeline.items()}
    right, total = collections.Counter(), collections.Counter()
    with open(truth) as f:
        for line in f:
            v = json.loads(line)
            if v.get("type") != "truth":
                continue
            kind = "lost" if v["region"] in lost else "kept"
            t = v["entered"]
            while t < v["exited"]:
                i = bisect.bisect_right(times.get(v["device"], []), t) - 1
                total[kind] += 1
                right[kind] += i >= 0 and timeline[v["device"]][i][1] == v["region"]
                t += 1
    return {k: 100 * right[k] / total[k] for k in total}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--waymark", default=".build/release/waymark")
    ap.add_argument("--work", default=".build/accuracy")
    ap.add_argument("--out")
    ap.add_argument("--keep-every", type=int, default=2)
    ap.add_argument("--devices", default="40")
    ap.add_argument("--duration", default="30m")
    ap.add_argument("--seed", default="2")
    ap.add_argument("--radio", default="indoor")
    args = ap.parse_args()
    if args.seed == "1":
        sys.exit("fewer_gateways: seed 1 is the accuracy suite's scored seed; develop on another (default 2)")
    out = args.out or os.path.join(args.work, "fewer-gateways")
    os.makedirs(out, exist_ok=True)
    full = os.path.join(args.work, "museum.geometry.yaml")
    for needed in (args.waymark, full):
        if not os.path.exists(needed):
            sys.exit(f"fewer_gateways: {needed} is missing; run scripts/accuracy.sh first")
    with open(full) as f:
        site, lost = fewer(yaml.safe_load(f), args.keep_every)
    reduced = os.path.join(out, "museum-fewer.yaml")
    dumper = yaml.SafeDumper
    dumper.ignore_aliases = lambda *a: True
    with open(reduced, "w") as f:
        yaml.dump(site, f, Dumper=dumper, sort_keys=False)

    print(f"| site | gateways | exact % (naive) | regions keeping their gateway | regions that lost it ({len(lost)}) |")
    print("|---|---:|---:|---:|---:|")
    for name, path in (("all gateways", full), ("fewer gateways", reduced)):
        stem = os.path.join(out, name.replace(" ", "-"))
        subprocess.run([args.waymark, "simulate", "--site", path, "--devices", args.devices, "--duration", args.duration,
                        "--seed", args.seed, "--radio", args.radio, "--sightings", stem + ".sightings.jsonl",
                        "--truth", stem + ".truth.jsonl", "--quiet"], check=True, stderr=subprocess.DEVNULL)
        with open(stem + ".replay.log", "w") as log:
            subprocess.run([args.waymark, "replay", "--site", path, "--input", stem + ".sightings.jsonl",
                            "--output", stem + ".replay.jsonl"], check=True, stderr=log)
        report = json.loads(subprocess.run([args.waymark, "evaluate", "--site", path, "--truth", stem + ".truth.jsonl",
                                            "--output", stem + ".replay.jsonl", "--sightings", stem + ".sightings.jsonl", "--json"],
                                           check=True, capture_output=True).stdout)
        split = split_exact(stem + ".truth.jsonl", stem + ".replay.jsonl", lost)
        with open(path) as f:
            count = len(yaml.safe_load(f)["gateways"])
        print(f"| {name} | {count} | {100 * report['waymark']['current_region_accuracy']:.1f} "
              f"({100 * report['naive']['current_region_accuracy']:.1f}) | {split.get('kept', float('nan')):.1f} "
              f"| {split.get('lost', float('nan')):.1f} |", flush=True)


if __name__ == "__main__":
    main()
