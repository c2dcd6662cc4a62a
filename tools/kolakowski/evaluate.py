#!/usr/bin/env python3
"""Current-region accuracy of `waymark replay` output against the ground truth, next to the naive
rule "the gateway with the strongest RSSI in the last 2 s".

For every ground-truth row at time t:
  waymark: the region of the device's last `location` line with line t <= t (none counts as wrong);
  naive:   the region anchored at the gateway of the strongest single reading in (t - 2 s, t]
           (no reading in the window counts as wrong).
Usage: evaluate.py --site SITE.yaml --sightings S.jsonl --truth T.jsonl --replay OUT.jsonl
"""
import argparse
import bisect
import json
import re


def gateway_regions(site_path):
    """gateway id -> region id, read from the generated site file (regions list their gateways)."""
    mapping, region = {}, None
    for line in open(site_path):
        m = re.match(r"\s*- id: (\S+)", line)
        if m:
            region = m.group(1)
        m = re.match(r"\s*gateways: \[(.*)\]", line)
        if m and region:
            for g in m.group(1).split(","):
                mapping[g.strip()] = region
    return mapping


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--site", required=True)
    p.add_argument("--sightings", required=True)
    p.add_argument("--truth", required=True)
    p.add_argument("--replay", required=True)
    p.add_argument("--window", type=float, default=2.0)
    a = p.parse_args()
    g2r = gateway_regions(a.site)
    truth = [json.loads(l) for l in open(a.truth)]
    sightings = [json.loads(l) for l in open(a.sightings)]
    sightings.sort(key=lambda s: s["t"])
    s_times = [s["t"] for s in sightings]
    locations = [json.loads(l) for l in open(a.replay)]
    locations = [o for o in locations if o["type"] == "location"]
    locations.sort(key=lambda o: o["t"])
    l_times = [o["t"] for o in locations]

    right_w = right_n = 0
    per_region = {}
    for row in truth:
        t = row["t"]
        i = bisect.bisect_right(l_times, t) - 1
        w = locations[i]["region"] if i >= 0 else None
        hi = bisect.bisect_right(s_times, t)
        lo = bisect.bisect_right(s_times, t - a.window)
        window = sightings[lo:hi]
        n = g2r[max(window, key=lambda s: s["rssi"])["gateway"]] if window else None
        right_w += w == row["region"]
        right_n += n == row["region"]
        c = per_region.setdefault(row["region"], [0, 0, 0])
        c[0] += 1
        c[1] += w == row["region"]
        c[2] += n == row["region"]
    total = len(truth)
    print(f"rows: {total}")
    print(f"waymark replay: {right_w / total:.1%} ({right_w}/{total})")
    print(f"naive strongest RSSI in {a.window:g} s: {right_n / total:.1%} ({right_n}/{total})")
    for r, (c, w, n) in sorted(per_region.items()):
        print(f"  {r:8s} rows {c:4d}  waymark {w / c:.1%}  naive {n / c:.1%}")


if __name__ == "__main__":
    main()
