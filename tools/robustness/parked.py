#!/usr/bin/env python3
"""A parked tag next to a real recording: does one tag that never moves spoil what the venue learns?

Badges left on a desk, asset tags on a shelf: a venue always has tags that stay at one place for
hours. The engine learns the venue's level, the gateways' offsets and the path-loss exponent and
room loss from every device's seconds; this script checks that one parked tag does not teach them
its one place. It takes the stationary moments of the Kolakowski calibration run (10 s in which the
robot moved under 0.3 m, at least 1 m from the ones already taken), and for each plays its real
readings over and over as a second tag, parked there from an hour (or --hours) before the robot
run until its end, next to the robot run itself. It runs the built `waymark replay` with the
flat's geometry and default fusion parameters, scores the robot alone with `waymark evaluate`
(next to the robot run without a parked tag), and prints one row per place with what the
calibration learned.

Run `scripts/accuracy.sh` first (it converts the dataset and writes the geometry-only site file),
then:

    python3 tools/robustness/parked.py [--hours 1] [--open-plan] [--waymark .build/release/waymark] [--work .build/accuracy]

--open-plan runs the flat drawn as an open plan instead (one region per anchor, no walls: the
suite's `kolakowski-open-plan.yaml`), where a parked tag on a boundary flaps between two regions.

Nothing is tuned here. Standard library only. Results: docs/accuracy.md, "A parked tag teaches one
place".
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

PARKED = "mac:02-00-00-00-00-99"
WINDOW_S = 10.0     # the stretch of real readings the parked tag repeats
STILL_M = 0.3       # the robot moved less than this during it
APART_M = 1.0       # places at least this far apart


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def still_moments(truth):
    """(start time, x, y, room) of stationary WINDOW_S stretches, places APART_M apart."""
    times = [p["t"] for p in truth]
    found = []
    for i in range(0, len(truth), 30):
        j = i
        while j + 1 < len(truth) and times[j + 1] <= times[i] + WINDOW_S:
            j += 1
        if times[j] - times[i] < WINDOW_S * 0.9:
            continue  # a gap in the recording
        if max(math.hypot(truth[k]["x"] - truth[i]["x"], truth[k]["y"] - truth[i]["y"]) for k in range(i, j + 1)) >= STILL_M:
            continue
        x, y = truth[i]["x"], truth[i]["y"]
        if all(math.hypot(x - fx, y - fy) >= APART_M for _, fx, fy, _ in found):
            found.append((times[i], x, y, truth[i]["region"]))
    return found


def site_and_truth(args):
    if args.open_plan:
        return (os.path.join(args.work, "kolakowski-open-plan.yaml"),
                os.path.join(args.work, "kolakowski-test-robot-open-plan.visits.jsonl"))
    return (os.path.join(args.work, "kolakowski-flat.geometry.yaml"),
            os.path.join(args.work, "kolakowski-test-robot.visits.jsonl"))


def run(args, sightings, out_dir, name):
    site, truth = site_and_truth(args)
    inp, out, log = (os.path.join(out_dir, f"{name}.{ext}") for ext in ("sightings.jsonl", "replay.jsonl", "replay.log"))
    with open(inp, "w") as f:
        for r in sightings:
            f.write(json.dumps(r) + "\n")
    with open(log, "w") as err:
        subprocess.run([args.waymark, "replay", "--site", site, "--input", inp, "--output", out], check=True, stderr=err)
    robot = os.path.join(out_dir, f"{name}.robot.jsonl")
    stays = 0  # the parked tag's visits, counted while its lines are taken out
    with open(out) as src, open(robot, "w") as dst:
        for line in src:
            if PARKED not in line:
                dst.write(line)
            elif '"type":"visit"' in line:
                stays += 1
    report = json.loads(subprocess.run(
        [args.waymark, "evaluate", "--site", site, "--truth", truth, "--output", robot, "--json"],
        check=True, capture_output=True).stdout)["waymark"]
    with open(log) as f:
        text = f.read()
    learned = re.search(r"path-loss exponent ([0-9.]+), room loss ([0-9.]+) dB", text)
    offsets = re.search(r"gateway offsets beyond ±3 dB: (.*?), reception", text)
    return (100 * report["current_region_accuracy"], 100 * report["visit_precision"], stays,
            learned.group(1) if learned else "?", learned.group(2) if learned else "?",
            offsets.group(1) if offsets else "none")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", default=".build/accuracy")
    ap.add_argument("--waymark", default=".build/release/waymark")
    ap.add_argument("--hours", type=float, default=1.0, help="how long the tag is parked before the robot run starts")
    ap.add_argument("--open-plan", action="store_true", help="the flat drawn as an open plan (one region per anchor)")
    a = ap.parse_args()
    kola = os.path.join(a.work, "kolakowski")
    needed = [os.path.join(kola, f) for f in ("calibration.sightings.jsonl", "calibration.truth.jsonl", "test-robot.sightings.jsonl")]
    needed += list(site_and_truth(a))
    for path in needed + [a.waymark]:
        if not os.path.exists(path):
            sys.exit(f"parked: {path} is missing (run scripts/accuracy.sh first, which builds waymark and converts the dataset)")
    out_dir = os.path.join(a.work, "parked-open-plan" if a.open_plan else "parked")
    os.makedirs(out_dir, exist_ok=True)
    calibration = read_jsonl(needed[0])
    robot = read_jsonl(needed[2])
    start, end = robot[0]["t"] - a.hours * 3600, robot[-1]["t"]

    print(f"| parked tag ({a.hours:g} h before the robot run and during it{', open plan' if a.open_plan else ''}) | robot exact % | "
          "robot visit precision % | the parked tag's visits | learned exponent | learned room loss dB | offsets beyond ±3 dB |")
    print("|---|---:|---:|---:|---:|---:|---|")
    exact, precision, _, n, w, offsets = run(a, robot, out_dir, "none")
    print(f"| none | {exact:.1f} | {precision:.1f} | – | {n} | {w} | {offsets} |", flush=True)
    for t0, x, y, room in still_moments(read_jsonl(needed[1])):
        stretch = [r for r in calibration if t0 <= r["t"] < t0 + WINDOW_S]
        parked, k = [], 0
        while start + k * WINDOW_S <= end:
            base = start + k * WINDOW_S
            parked += [{"t": round(base + r["t"] - t0, 3), "gateway": r["gateway"], "device": PARKED, "rssi": r["rssi"]}
                       for r in stretch if base + r["t"] - t0 <= end]
            k += 1
        name = f"at-{x:.1f}-{y:.1f}"
        exact, precision, stays, n, w, offsets = run(a, sorted(parked + robot, key=lambda r: r["t"]), out_dir, name)
        print(f"| {room} ({x:.1f}, {y:.1f}) | {exact:.1f} | {precision:.1f} | {stays} | {n} | {w} | {offsets} |", flush=True)


if __name__ == "__main__":
    main()
