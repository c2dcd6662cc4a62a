#!/usr/bin/env python3
"""Grid search of fusion parameters on the *calibration* run only; the test run is never used here.

For each combination: write the site file (convert.py), run `waymark replay` on the calibration
sightings, score with evaluate.py's rule. Prints the combinations ranked by accuracy.
Usage: tune.py --waymark .build/release/waymark --out .build/kolakowski-tune
"""
import argparse
import itertools
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GRIDS = {}
GRIDS["kalman"] = {
    "smoothing": ["kalman"],
    "rssi_process_noise_db2_per_s": [3, 10, 30],
    "rssi_measurement_noise_db2": [25, 50],
    "switch_margin_db": [0.5, 1, 2, 4],
    "switch_dwell_s": [0, 0.5, 1.5],
    "radius_scale": [1.0, 1.5],
    "offsets": [True, False],
}
GRIDS["trimmed_mean"] = {
    "smoothing": ["trimmed_mean"],
    "trimmed_window_s": [1, 2, 3, 5],
    "switch_margin_db": [0.5, 1, 2, 4],
    "switch_dwell_s": [0, 0.5, 1.5],
    "radius_scale": [1.0],
    "offsets": [False],
}
FIXED = {"exit_delay_s": 30, "staleness_s": 5, "nonadjacent_margin_db": 6, "nonadjacent_dwell_s": 3}
NOT_FUSION = ("radius_scale", "offsets")


def accuracy(out, name):
    r = subprocess.run([sys.executable, os.path.join(HERE, "evaluate.py"), "--site", os.path.join(out, "kolakowski-flat.yaml"),
                        "--sightings", os.path.join(out, f"{name}.sightings.jsonl"), "--truth", os.path.join(out, f"{name}.truth.jsonl"),
                        "--replay", os.path.join(out, f"{name}.replay.jsonl")], capture_output=True, text=True, check=True)
    line = [l for l in r.stdout.splitlines() if l.startswith("waymark")][0]
    return float(line.split()[2].rstrip("%")), r.stdout


def run(waymark, out, params, name):
    fusion = {**FIXED, **{k: v for k, v in params.items() if k not in NOT_FUSION}}
    fpath = os.path.join(out, "fusion.tune.json")
    with open(fpath, "w") as f:
        json.dump(fusion, f)
    subprocess.run([sys.executable, os.path.join(HERE, "convert.py"), "--out", out, "--fusion", fpath,
                    "--radius-scale", str(params.get("radius_scale", 1.0))] + (["--offsets"] if params.get("offsets") else []),
                   check=True, capture_output=True)
    subprocess.run([waymark, "replay", "--site", os.path.join(out, "kolakowski-flat.yaml"), "--input",
                    os.path.join(out, f"{name}.sightings.jsonl"), "--output", os.path.join(out, f"{name}.replay.jsonl")],
                   check=True, capture_output=True)
    return accuracy(out, name)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--waymark", default=".build/release/waymark")
    p.add_argument("--out", default=".build/kolakowski-tune")
    p.add_argument("--grid", choices=["kalman", "trimmed_mean", "all"], default="all")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    combos = []
    for name, grid in GRIDS.items():
        if a.grid in (name, "all"):
            keys = list(grid)
            combos += [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]
    results = []
    for params in combos:
        acc, _ = run(a.waymark, a.out, params, "calibration")
        results.append((acc, params))
        print(f"{acc:5.1f}%  {params}", flush=True)
    results.sort(key=lambda r: -r[0])
    print("best on calibration:")
    for acc, params in results[:5]:
        print(f"{acc:5.1f}%  {params}")


if __name__ == "__main__":
    main()
