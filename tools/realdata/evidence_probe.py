#!/usr/bin/env python3
"""One second's evidence alone, on every converted real venue: how often the tracker's likelihood
names the true cell, against the strongest receiver.

For each second of each track: the gateways' 1-s mean readings, scored for every region with the
evidence model of `EvidenceModel` (expected RSSI the venue level plus n·(mean −10·log10 d over the
region's core), each hypothesis its own common offset `b` shrunk by a Gaussian prior, Student-t
deviations with σ 6 dB and ν 4), and the best region compared with the true one; next to it the
region of the strongest 1-s mean. No motion model, no smoothing, no self-calibration and no
absences: this isolates what one second says through the model, so that a change to the model can
be judged on every venue in seconds, before it is built into the engine.

    python3 tools/realdata/evidence_probe.py [--build .build] [--exponent 2.0] [--body DB [--facings 4]] [--places]

--body DB: a tag worn on a body, facing one of `--facings` directions (equally likely, unknown): a
gateway in front of the wearer reads up to DB/2 louder and one behind up to DB/2 weaker,
(DB/2)·s·cos θ with θ the angle between the facing and the direction from the region to the
gateway (s < 1 for a gateway near the region's centre, which lies in every direction from some
point of the core); the second's likelihood is the mixture over the facings.
--places: a region with several gateways of its own is the mixture, in equal shares, of its core and
the places beside each of them (a disc around the gateway out to half-way to the nearest other).

Both were tried in the engine and not kept (docs/accuracy.md, "Tried and not kept: a tag worn on a
body, and a region's places beside its gateways").

Walls: a gateway that anchors a region of another room reads ROOM_LOSS weaker (the fitted radio's
7 dB; the engine learns it). Reads the open-plan venues the converters write (tools/realdata/scoreboard.py lists them) and the
Kolakowski open plan the accuracy suite leaves in .build/accuracy. Standard library only.
"""
import argparse
import collections
import json
import math
import os
import re

SIGMA, NU, DEVICE_SPREAD, LEVEL_PRIOR_SD, HEIGHT = 6.0, 4.0, 6.0, 15.0, 1.0
LEVEL = -59.0
ROOM_LOSS = 7.0   # dB through a wall (the fitted radio, docs/radio-model.md)

VENUES = [  # name, folder under --build, site file; every <track>.sightings.jsonl there but `all`
    ("office floor", "danis", "danis-open-plan.yaml"),
    ("one room", "girolami", "girolami-open-plan.yaml"),
    ("corridor", "tut-corridor", "tut-corridor-open-plan.yaml"),
    ("chamber", "sal", "sal.yaml"),
]
FLOW = re.compile(r"^\s*-\s*\{(.*)\}\s*(#.*)?$")


def flow_items(path, section):
    """The `{ … }` items of a flow-style list `section:` in a converter's site file."""
    out, inside = [], False
    for line in open(path):
        if re.match(r"^[a-z_]+:", line):
            inside = line.startswith(section + ":")
            continue
        m = FLOW.match(line)
        if inside and m:
            body = m.group(1)
            item = {"id": re.search(r'id:\s*"?([^",}]+)"?', body).group(1).strip()}
            pos = re.search(r"position:\s*\[([^\]]+)\]", body)
            if pos:
                item["position"] = [float(v) for v in pos.group(1).split(",")]
            gw = re.search(r"gateways:\s*\[([^\]]*)\]", body)
            if gw:
                item["gateways"] = [g.strip().strip('"') for g in gw.group(1).split(",") if g.strip()]
            rad = re.search(r"radius_m:\s*([0-9.]+)", body)
            if rad:
                item["radius"] = float(rad.group(1))
            room = re.search(r"room:\s*([^,}\s]+)", body)
            item["room"] = room.group(1) if room else item["id"]
            out.append(item)
    return out


def student_t(x):
    return -(NU + 1) / 2 * math.log1p(x * x / (NU * SIGMA * SIGMA))


def mean_log_distance(cx, cy, gx, gy, radius):
    total, rings, angles = 0.0, 8, 16
    for i in range(rings):
        rho = radius * math.sqrt((i + 0.5) / rings)
        for j in range(angles):
            th = 2 * math.pi * (j + 0.5) / angles
            total += math.log10((cx + rho * math.cos(th) - gx) ** 2 + (cy + rho * math.sin(th) - gy) ** 2 + HEIGHT ** 2)
    return -5 * total / (rings * angles)


def all_seconds(sightings, visits):
    """(second, true region or None, {gateway: 1-s mean}) for every second with readings, in order."""
    truth = [json.loads(l) for l in open(visits)]
    truth = [v for v in truth if v.get("type") == "truth"]
    by = collections.defaultdict(lambda: collections.defaultdict(list))
    for line in open(sightings):
        r = json.loads(line)
        by[int(math.floor(r["t"]))][r["gateway"]].append(r["rssi"])
    out = []
    for s in sorted(by):
        mid = s + 0.5
        region = next((v["region"] for v in truth if v["entered"] <= mid < v["exited"]), None)
        out.append((s, region, {g: sum(v) / len(v) for g, v in by[s].items()}))
    return out


def seconds_of(sightings, visits):
    """(true region, {gateway: 1-s mean}) for every second with readings and a true region."""
    return [(region, readings) for _, region, readings in all_seconds(sightings, visits) if region is not None]


def site_model(site):
    """The site file's gateways ({id: position}), regions (each with its `core`: out to the radius,
    or half-way to the nearest other region), and per (region, gateway) the mean −10·log10 d over
    the core and the wall loss (ROOM_LOSS when the gateway anchors a region of another room)."""
    gateways = {g["id"]: g["position"] for g in flow_items(site, "gateways")}
    regions = flow_items(site, "regions")
    for r in regions:
        r["core"] = min([r["radius"]] + [math.dist(r["position"], o["position"]) / 2 for o in regions if o is not r])
    ld = {(r["id"], g): mean_log_distance(r["position"][0], r["position"][1], p[0], p[1], r["core"])
          for r in regions for g, p in gateways.items()}
    home = {g: r["room"] for r in regions for g in r.get("gateways", [])}
    wall = {(r["id"], g): ROOM_LOSS if home.get(g, r["room"]) != r["room"] else 0.0 for r in regions for g in gateways}
    return gateways, regions, ld, wall


def venue_tracks(build):
    """(name, site file, [(sightings, visits)]) for the Kolakowski open plan the accuracy suite
    leaves in BUILD/accuracy and every converted venue under BUILD (its tracks but `all`)."""
    acc = os.path.join(build, "accuracy")
    if os.path.exists(os.path.join(acc, "kolakowski-open-plan.yaml")):
        yield ("Kolakowski open plan", os.path.join(acc, "kolakowski-open-plan.yaml"),
               [(os.path.join(acc, "kolakowski", f"{run}.sightings.jsonl"),
                 os.path.join(acc, f"kolakowski-{run}-open-plan.visits.jsonl")) for run in ("test-robot", "calibration")])
    for name, folder, site in VENUES:
        work = os.path.join(build, folder)
        if not os.path.exists(os.path.join(work, site)):
            continue
        stems = [f[:-len(".sightings.jsonl")] for f in sorted(os.listdir(work))
                 if f.endswith(".sightings.jsonl") and f != "all.sightings.jsonl"]
        yield (name, os.path.join(work, site),
               [(os.path.join(work, t + ".sightings.jsonl"), os.path.join(work, t + ".visits.jsonl")) for t in stems])


def score(site, seconds, exponent, body, facings_n, with_places):
    gateways, regions, ld, wall = site_model(site)
    # --places: a region with several gateways of its own is the mixture of its core and the
    # places beside each of them (a disc around the gateway out to half-way to the nearest other).
    comps = {}
    for r in regions:
        own = [gateways[g] for g in r.get("gateways", []) if g in gateways]
        if with_places and len(own) >= 2:
            parts = []
            for i, q in enumerate(own):
                near = min(math.dist(q, o) for j, o in enumerate(own) if j != i) / 2
                rad = min(r["core"], near)
                parts.append({g: mean_log_distance(q[0], q[1], p[0], p[1], rad) for g, p in gateways.items()})
            parts.append({g: ld[(r["id"], g)] for g in gateways})
            comps[r["id"]] = parts
        else:
            comps[r["id"]] = [{g: ld[(r["id"], g)] for g in gateways}]
    variance = DEVICE_SPREAD ** 2 + LEVEL_PRIOR_SD ** 2
    count, scale = SIGMA ** 2 / variance, 1 / (2 * variance)
    facings = [i * 2 * math.pi / facings_n for i in range(facings_n)] if body > 0 else [None]
    right = strongest = 0
    for true, readings in seconds:
        best, best_ll = None, -math.inf
        for r in regions:
            parts = []
            for f, comp in [(f, c) for f in facings for c in comps[r["id"]]]:
                e = []
                for g, y in readings.items():
                    mu = LEVEL + exponent * comp[g] - wall[(r["id"], g)]
                    if f is not None:
                        gx, gy = gateways[g]
                        dx, dy = gx - r["position"][0], gy - r["position"][1]
                        # Seen from across the core, a gateway near its centre lies in every direction.
                        sharp = math.hypot(dx, dy) / math.sqrt(dx * dx + dy * dy + r["core"] ** 2 / 2)
                        mu += body * sharp * math.cos(math.atan2(dy, dx) - f) / 2
                    e.append(y - mu)
                b = sum(e) / (len(e) + count)
                parts.append(sum(student_t(x - b) for x in e) - b * b * scale)
            top = max(parts)
            ll = top + math.log(sum(math.exp(p - top) for p in parts) / len(parts))
            if ll > best_ll:
                best, best_ll = r["id"], ll
        right += best == true
        loud = max(readings, key=readings.get)
        strongest += any(loud in r.get("gateways", []) and r["id"] == true for r in regions)
    return right, strongest, len(seconds)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=".build")
    ap.add_argument("--exponent", type=float, default=2.0)
    ap.add_argument("--body", type=float, default=0.0)
    ap.add_argument("--facings", type=int, default=4)
    ap.add_argument("--places", action="store_true")
    a = ap.parse_args()
    rows = [(name, score(site, [sec for sv in tracks for sec in seconds_of(*sv)], a.exponent, a.body, a.facings, a.places))
            for name, site, tracks in venue_tracks(a.build)]
    print(f"| venue | seconds | likelihood's best % | strongest receiver % |  (exponent {a.exponent}, body {a.body} dB"
          f"{f' over {a.facings} facings' if a.body > 0 else ''}{', places' if a.places else ''})")
    print("|---|---:|---:|---:|")
    for name, (right, strongest, n) in rows:
        print(f"| {name} | {n} | {100 * right / n:.1f} | {100 * strongest / n:.1f} |")


if __name__ == "__main__":
    main()
