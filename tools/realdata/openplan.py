"""What the real-venue converters share (tools/danis, tools/tut-corridor, tools/girolami, tools/sal).

- `cells`: a floor drawn as an open plan from its radios' positions alone: each radio's cell is the
  floor nearer to it than to any other (on a grid over the floor's limits), its region's radius the
  distance to the cell's farthest point, and cells that touch are joined by an edge.
- `site_yaml`: that plan as a Waymark site file (one region per radio, at the radio, one room);
  `radio_plan`: the cells and the site file together, from the radios' ids and positions.
- `Sequence`: the tracks of a recording played one after another as one device, a few seconds
  apart, so that what the engine learns carries over (the converters' `all`).
- `sessions`, `truth_runs`: the true visits (`waymark simulate --truth` format) from the truth's
  samples, presences split where the readings pause.
- `write_jsonl`; `write_track`: a track's `<name>.sightings.jsonl` and `<name>.visits.jsonl`, the
  files `tools/realdata/scoreboard.py` reads.

A converter puts this folder on its import path (`sys.path`) and imports `openplan`. Standard
library only; nothing here looks at readings.
"""
import json
import math
import os

GRID_M = 0.1   # resolution of the cells' extent and adjacency


def nearest(points, x, y):
    """Index of the point nearest to (x, y)."""
    return min(range(len(points)), key=lambda k: math.hypot(x - points[k][0], y - points[k][1]))


def cells(points, limits, grid=GRID_M):
    """For radios at `points` [(x, y)] on a floor within `limits` (x0, y0, x1, y1): each cell's
    radius (the distance from its radio to its farthest grid point, at least 1 m) and the set of
    pairs (a, b), a < b, of cells that touch."""
    x0, y0, x1, y1 = limits
    # The grid's last row on the limit when the floor is a whole number of steps (28.7 m / 0.1 is
    # 286.99999… in floating point), never beyond it.
    nx = int(math.floor((x1 - x0) / grid + 1e-9)) + 1
    ny = int(math.floor((y1 - y0) / grid + 1e-9)) + 1
    owner = [[0] * ny for _ in range(nx)]
    radius = [1.0] * len(points)
    for i in range(nx):
        for j in range(ny):
            px, py = x0 + i * grid, y0 + j * grid
            k = nearest(points, px, py)
            owner[i][j] = k
            radius[k] = max(radius[k], math.hypot(px - points[k][0], py - points[k][1]))
    touching = set()
    for i in range(nx):
        for j in range(ny):
            k = owner[i][j]
            if i + 1 < nx and owner[i + 1][j] != k:
                touching.add(tuple(sorted((k, owner[i + 1][j]))))
            if j + 1 < ny and owner[i][j + 1] != k:
                touching.add(tuple(sorted((k, owner[i][j + 1]))))
    return radius, touching


def _id(text):
    """A YAML scalar for an id: quoted when it would otherwise read as a number."""
    try:
        float(text)
        return f'"{text}"'
    except ValueError:
        return text


def site_yaml(name, comment, ids, points, radius, touching, devices):
    """The site file of an open plan: one gateway per radio, one region `cell-<id>` per radio at the
    radio with its cell's radius, one room, an edge per touching pair; `comment` is the header's
    lines (without '#'), `devices` the placeholder device ids to track ("mac:02-00-…")."""
    lines = [f"# {c}" for c in comment] + [f"site: {name}", "gateways:"]
    lines += [f"  - {{ id: {_id(ids[k])}, position: [{points[k][0]}, {points[k][1]}] }}" for k in range(len(points))]
    lines.append("regions:")
    lines += [f"  - {{ id: cell-{ids[k]}, gateways: [{_id(ids[k])}], position: [{points[k][0]}, {points[k][1]}], "
              f"radius_m: {radius[k]:.2f}, room: floor }}" for k in range(len(points))]
    lines.append("edges:")
    lines += [f"  - [cell-{ids[a]}, cell-{ids[b]}]" for a, b in sorted(touching)]
    macs = ", ".join(f'"{d[len("mac:"):].replace("-", ":")}"' for d in devices)
    lines.append(f"tracking:\n  macs: [{macs}]\n")
    return "\n".join(lines)


def radio_plan(name, comment, radios, limits, devices):
    """The open plan of `radios` [(id, x, y)] on a floor within `limits`: the site file
    (`site_yaml`, named `name`, `comment` its header), the ids, the points and the cells' radii."""
    ids = [r[0] for r in radios]
    pts = [(r[1], r[2]) for r in radios]
    radius, touching = cells(pts, limits)
    return site_yaml(name, comment, ids, pts, radius, touching, devices), ids, pts, radius


def sessions(times, gap):
    """Index ranges [(start, end)) of `times` (sorted) split where consecutive times are more than
    `gap` apart: the presences of a device that was out of hearing in between."""
    out, start = [], 0
    for i in range(1, len(times) + 1):
        if i == len(times) or times[i] - times[i - 1] > gap:
            out.append((start, i))
            start = i
    return out


def truth_runs(device, samples, end):
    """The `truth` lines of one presence from its samples [(t, region)] in time order: each
    sample's region holds until the next sample of another region, the last until `end`."""
    out, i = [], 0
    while i < len(samples):
        j = i + 1
        while j < len(samples) and samples[j][1] == samples[i][1]:
            j += 1
        exited = samples[j][0] if j < len(samples) else end
        out.append({"type": "truth", "device": device, "region": samples[i][1], "entered": samples[i][0], "exited": exited})
        i = j
    return out


def visits_of_readings(device, rows, cell_of, gap):
    """The true visits of readings annotated with positions, rows [(t, …, x, y)] in time order:
    each reading's cell (`cell_of(x, y)`) holds until the next reading; presences split where the
    readings pause for more than `gap` seconds, each ending half a second after its last reading."""
    out = []
    for start, stop in sessions([r[0] for r in rows], gap):
        s = rows[start:stop]
        end = s[-1][0] + 0.5
        out.append({"type": "presence", "device": device, "entered": s[0][0], "exited": end})
        out += truth_runs(device, [(r[0], cell_of(r[-2], r[-1])) for r in s], end)
    return out


class Sequence:
    """Tracks played one after another as one device: each starts `spacing` seconds after the one
    before ends (a venue in operation, whose calibration carries over)."""

    def __init__(self, spacing):
        self.spacing = spacing
        self.sightings, self.truth = [], []
        self._next = None

    def add(self, sightings, truth, first, last, digits=None):
        """Appends one track: its sightings and true visits, its first and last reading's time;
        `digits` rounds the shifted visit times (None keeps them as they come)."""
        shift = 0.0 if self._next is None else self._next - first
        t = (lambda v: v + shift) if digits is None else (lambda v: round(v + shift, digits))
        self.sightings += [dict(s, t=round(s["t"] + shift, 3)) for s in sightings]
        self.truth += [dict(v, entered=t(v["entered"]), exited=t(v["exited"])) for v in truth]
        self._next = last + shift + self.spacing


def write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def write_track(out, name, sightings, truth):
    """A track as the scoreboard reads it: `<name>.sightings.jsonl` and `<name>.visits.jsonl` in `out`."""
    write_jsonl(os.path.join(out, f"{name}.sightings.jsonl"), sightings)
    write_jsonl(os.path.join(out, f"{name}.visits.jsonl"), truth)
