#!/usr/bin/env python3
"""Which recorded visits no true visit explains, and where in a stay the current region is wrong.

Reads one row of the accuracy suite's work folder (`scripts/accuracy.sh` leaves it in
.build/accuracy): the truth (`ROW.truth.jsonl` for a simulated venue, `ROW.visits.jsonl` for a
real recording) and what `waymark replay` recorded (`ROW.replay.jsonl`), and prints

  1. the recorded visits whose entry lies within no true visit of the same device and region,
     give or take --tolerance seconds (as `waymark evaluate` counts a flap), counted by their length
     (0 s, under 3, 6, 10 s, longer), whether they were inferred (a region on the shortest path of
     a move between regions that are not adjacent), and whether they sit between two visits of the
     same region (A, B, A: a detour the device did not make);
  2. the first --list of them with what the truth says around them: the device (by its order of
     appearance, never its identifier), the region, its length, the region(s) truly held at its
     entry, the recorded regions before and after it, and the true visits within a minute;
  3. the time-weighted exact accuracy of the recorded current region (the `location` lines, as
     `waymark evaluate` reads them) by the length of the true visit: passes (under 10 s), visits of
     10–60 s, stays over 60 s, and within the stays by the time since their entry.

It is how the museum's flaps were read in docs/accuracy.md ("A move needs a second's lead"; the
standing devices' long wrong stays in the `indoor` row). Only the Python standard library:

    python3 tools/flaps/explain.py museum-indoor
    python3 tools/flaps/explain.py kolakowski-calibration --list 10
"""
import argparse
import bisect
import collections
import json
import os
import signal
import sys


def read_lines(path):
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                yield json.loads(line)


def load(work, row):
    truth_path = None
    for name in (f"{row}.truth.jsonl", f"{row}.visits.jsonl"):
        if os.path.isfile(os.path.join(work, name)):
            truth_path = os.path.join(work, name)
            break
    replay_path = os.path.join(work, f"{row}.replay.jsonl")
    if truth_path is None or not os.path.isfile(replay_path):
        rows = sorted({n.split(".")[0] for n in os.listdir(work) if n.endswith(".replay.jsonl")}) if os.path.isdir(work) else []
        sys.exit(f"explain.py: no truth and replay for row {row!r} in {work} (needs {row}.truth.jsonl or "
                 f"{row}.visits.jsonl, and {row}.replay.jsonl; run scripts/accuracy.sh first). "
                 f"Rows there: {', '.join(rows) or 'none'}")
    truth = collections.defaultdict(list)
    for o in read_lines(truth_path):
        if o.get("type") == "truth":
            truth[o["device"]].append((o["entered"], o["exited"], o["region"]))
    visits = collections.defaultdict(list)
    locations = collections.defaultdict(list)
    for o in read_lines(replay_path):
        kind = o.get("type")
        if kind == "visit":
            visits[o["device"]].append(o)
        elif kind == "location":
            locations[o["device"]].append((o["t"], o.get("region")))
    return truth, visits, locations


BUCKETS = ["0 s", "< 3 s", "< 6 s", "< 10 s", ">= 10 s"]


def dwell(v):
    return v["dwell_s"] if v.get("dwell_s") is not None else v["exited"] - v["entered"]


def bucket(seconds):
    if seconds < 0.5:
        return "0 s"
    for limit in (3, 6, 10):
        if seconds < limit:
            return f"< {limit} s"
    return ">= 10 s"


def unexplained(truth, visits, tolerance):
    """The recorded visits whose entry no true visit of the same device and region explains (give or
    take `tolerance`), counted by kind, and listed with what the truth says around them."""
    order = {d: i + 1 for i, d in enumerate(sorted(set(truth) | set(visits)))}
    counts = collections.Counter()
    explained = collections.Counter()
    found = []
    for device, vs in visits.items():
        vs = sorted(vs, key=lambda v: (v["entered"], v["exited"]))
        true = truth.get(device, [])
        for i, v in enumerate(vs):
            ok = any(r == v["region"] and e - tolerance <= v["entered"] <= x + tolerance for e, x, r in true)
            detour = 0 < i < len(vs) - 1 and vs[i - 1]["region"] == vs[i + 1]["region"]
            length = dwell(v)
            key = (bucket(length), "inferred" if v.get("inferred") else "", "A-B-A" if detour else "")
            if ok:
                explained[key] += 1
                continue
            counts[key] += 1
            held = [r for e, x, r in true if e <= v["entered"] <= x]
            near = [(r, round(e - v["entered"], 1), round(x - v["entered"], 1))
                    for e, x, r in true if e - 60 <= v["entered"] <= x + 60]
            found.append({
                "device": order[device], "region": v["region"], "dwell_s": round(length, 1),
                "inferred": bool(v.get("inferred")), "truly_in": held,
                "before": vs[i - 1]["region"] if i > 0 else None, "after": vs[i + 1]["region"] if i + 1 < len(vs) else None,
                "true_visits_within_a_minute": near,
            })
    return counts, explained, found


def exact_by_length(truth, locations):
    """Seconds scored and the share right, by the true visit's length (and, in stays, by the time
    since entry): the current region holds from each `location` line to the next."""
    scored, right = collections.Counter(), collections.Counter()
    for device, vs in truth.items():
        changes = sorted(locations.get(device, []), key=lambda c: c[0])
        times = [c[0] for c in changes]
        for entered, exited, region in vs:
            length = exited - entered
            kind = "passes (< 10 s)" if length < 10 else "visits of 10-60 s" if length <= 60 else "stays (> 60 s)"
            t = entered + 0.5
            while t < exited:
                i = bisect.bisect_right(times, t) - 1
                got = changes[i][1] if i >= 0 else None
                keys = [kind]
                if length > 60:
                    since = t - entered
                    keys.append("  first 15 s" if since < 15 else "  15-60 s in" if since < 60
                                else "  60-200 s in" if since < 200 else "  over 200 s in")
                for k in keys:
                    scored[k] += 1
                    right[k] += got == region
                t += 1
    return scored, right


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("row", help="the row's file stem in the work folder, e.g. museum-indoor, open-hall-harsh, kolakowski-calibration")
    p.add_argument("--work", default=".build/accuracy", help="the accuracy suite's work folder (default %(default)s)")
    p.add_argument("--tolerance", type=float, default=10, help="seconds a recorded visit may lie from a true one (default %(default)s)")
    p.add_argument("--list", type=int, default=25, help="how many unexplained visits to list (default %(default)s)")
    a = p.parse_args()
    truth, visits, locations = load(a.work, a.row)

    counts, explained, found = unexplained(truth, visits, a.tolerance)
    total = sum(len(v) for v in visits.values())
    print(f"{a.row}: {total} recorded visits, {len(found)} that no true visit explains "
          f"(entry within a true visit of the same device and region, give or take {a.tolerance:g} s)")
    print(f"{'length':>8}  {'inferred':>8}  {'pattern':>7}  {'unexplained':>11}  {'explained':>9}")
    rank = {b: i for i, b in enumerate(BUCKETS)}
    for key in sorted(set(counts) | set(explained), key=lambda k: (rank[k[0]], k[1], k[2])):
        length, inferred, pattern = key
        print(f"{length:>8}  {inferred:>8}  {pattern:>7}  {counts[key]:>11}  {explained[key]:>9}")
    if found and a.list > 0:
        print(f"\nthe first {min(a.list, len(found))} (device by order of appearance; times relative to the visit's entry):")
        for f in found[:a.list]:
            print(json.dumps(f))

    scored, right = exact_by_length(truth, locations)
    print("\nexact accuracy of the recorded current region by the true visit's length:")
    for k in ("passes (< 10 s)", "visits of 10-60 s", "stays (> 60 s)", "  first 15 s", "  15-60 s in", "  60-200 s in", "  over 200 s in"):
        if scored[k]:
            print(f"{k:<20} {scored[k]:>8} s  {100 * right[k] / scored[k]:5.1f} %")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the listing quietly
    main()
