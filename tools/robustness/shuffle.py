#!/usr/bin/env python3
"""Does the order of a moment's readings change what the engine records?

Readings that share a time are an accident of arrival: gateways publishing over MQTT race each
other, a recording writes one row's receivers in its own column order. The same evidence must give
the same history. This script puts a recording's readings on a time grid (so that many share a
moment, as in the Kolakowski rows), shuffles the order within each moment with a few seeds, replays
each shuffle (the gateways' readings interleaved at random, each gateway's own in its order)
with the built `waymark replay`, and counts the recorded lines (location, visit,
journey) and live lines that differ from the unshuffled replay's — as sets, since lines of one
moment may be written in another order.

    python3 tools/robustness/shuffle.py --site .build/accuracy/museum.geometry.yaml \\
        --input SIGHTINGS.jsonl [--devices 8] [--duration 600] [--grid 0.3333] [--seeds 1 2]

Without --input it simulates the museum with the fitted indoor radio (`waymark simulate`,
--devices, --duration, seed 1) into --out. Nothing here tunes anything.
"""
import argparse
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep import read_jsonl, write_jsonl  # noqa: E402

RECORDED = ("location", "visit", "journey")


def gridded(rows, grid):
    """Readings with their times rounded down to the grid, in time order (stable)."""
    out = [dict(r, t=round(int(r["t"] / grid) * grid, 3)) for r in rows if "t" in r and "gateway" in r]
    out.sort(key=lambda r: r["t"])
    return out


def shuffled(rows, seed):
    """`rows` with the gateways' readings within each moment (equal time) interleaved at random.
    Each gateway's own readings keep their order: a gateway reports them in sequence (one batch),
    and two readings of one gateway in another order are other evidence (its filter sees them in
    that order); what races is the gateways."""
    rng = random.Random(seed)
    out, i = [], 0
    while i < len(rows):
        j = i
        while j < len(rows) and rows[j]["t"] == rows[i]["t"]:
            j += 1
        queues = {}
        for r in rows[i:j]:
            queues.setdefault(r["gateway"], []).append(r)
        turns = [r["gateway"] for r in rows[i:j]]
        rng.shuffle(turns)
        for g in turns:
            out.append(queues[g].pop(0))
        i = j
    return out


def lines_by_kind(path):
    """{kind: set of canonical JSON lines} of a replay output."""
    kinds = {}
    for o in read_jsonl(path):
        kinds.setdefault(o.get("type"), set()).add(json.dumps(o, sort_keys=True))
    return kinds


def replay(waymark, site, sightings, output):
    subprocess.run([waymark, "replay", "--site", site, "--input", sightings, "--output", output],
                   check=True, stderr=subprocess.DEVNULL)
    return lines_by_kind(output)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--waymark", default=".build/release/waymark")
    ap.add_argument("--site", default=".build/accuracy/museum.geometry.yaml")
    ap.add_argument("--input", help="sightings JSONL (default: simulate the site)")
    ap.add_argument("--devices", type=int, default=8)
    ap.add_argument("--duration", type=int, default=600)
    ap.add_argument("--radio", default="indoor")
    ap.add_argument("--grid", type=float, default=1 / 3, help="moment length (s) the times are rounded down to")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--out", default=".build/accuracy/shuffle")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for needed in (args.waymark, args.site):
        if not os.path.exists(needed):
            sys.exit(f"shuffle: {needed} is missing; run scripts/accuracy.sh first")
    source = args.input
    if not source:
        source = os.path.join(args.out, "simulated.sightings.jsonl")
        subprocess.run([args.waymark, "simulate", "--site", args.site, "--devices", str(args.devices),
                        "--duration", f"{args.duration}s", "--radio", args.radio, "--seed", "1", "--sightings", source],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = gridded(read_jsonl(source), args.grid)
    base_path = os.path.join(args.out, "ordered.sightings.jsonl")
    write_jsonl(base_path, rows)
    base = replay(args.waymark, args.site, base_path, os.path.join(args.out, "ordered.replay.jsonl"))
    recorded = sum(len(base.get(k, ())) for k in RECORDED)
    print(f"{len(rows)} readings on a {args.grid:.3f}-s grid; the ordered replay recorded {recorded} lines "
          f"({', '.join(f'{len(base.get(k, ()))} {k}' for k in RECORDED)}), {len(base.get('live', ()))} live")
    print("| shuffle seed | recorded lines differing | location | visit | journey | live lines differing |")
    print("|---:|---:|---:|---:|---:|---:|")
    for seed in args.seeds:
        path = os.path.join(args.out, f"shuffle{seed}.sightings.jsonl")
        write_jsonl(path, shuffled(rows, seed))
        got = replay(args.waymark, args.site, path, os.path.join(args.out, f"shuffle{seed}.replay.jsonl"))
        diff = {k: len(base.get(k, set()) ^ got.get(k, set())) // 2 + len(base.get(k, set()) ^ got.get(k, set())) % 2
                for k in RECORDED + ("live",)}
        print(f"| {seed} | {sum(diff[k] for k in RECORDED)} | {diff['location']} | {diff['visit']} | {diff['journey']} | {diff['live']} |",
              flush=True)
    print("A differing line counts once (a changed line is one line gone and one new; unpaired ones count as one).")


if __name__ == "__main__":
    main()
