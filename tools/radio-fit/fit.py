#!/usr/bin/env python3
"""Fit the simulator's `indoor` radio profile to the Kolakowski calibration run.

Reads the raw dataset files (anchors.csv and calibration/calibration_df.csv of the Kolakowski BLE RSS
dataset, M. Kolakowski, Sensors 21(18):6270, 2021, CC BY 4.0) and fits, on the CALIBRATION run only:

  1. path loss     RSSI = P1m - 10 n log10(d) - W [anchor in another room]   (least squares, 3-D
                   distance, tag 1.3 m high; the tag's room is the room whose centre is nearest, as
                   the simulator decides it from the regions' positions; W is the wall loss)
  2. per-receiver  each anchor's mean residual; their standard deviation is the offset spread
  3. residuals     quantiles after removing the per-anchor offsets, and a Student-t fit (MLE over nu)
  4. correlation   of residuals between readings of the same anchor, against distance moved (robot
                   moving) and against time (robot standing still): the shadowing process
  5. split         shadowing (Gaussian, correlated) + fast fading (Student-t, independent) whose sum
                   matches the residual quantiles (Monte Carlo with a fixed seed)
  6. reception     probability that a 1/3-s slot holds a reading, against distance (logistic fit)
  7. heading       mean residual against the angle between the tag's heading and the anchor

Writes the fitted numbers as JSON (stdout, or --json FILE) and SVG figures (--figures DIR) for
docs/radio-model.md. Only the Python standard library is used, so the fit reproduces anywhere:

    python3 tools/radio-fit/fit.py --json tools/radio-fit/indoor.json --figures docs/radio-model
"""
import argparse
import csv
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kolakowski"))
from convert import ROOMS, room_of  # noqa: E402  (the room table of the flat, one place)

TAG_HEIGHT_M = 1.3  # the tag's mount on the robot (dataset description)
QUANTILES = [0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99]


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def quantile(sorted_values, p):
    """Linear interpolation between order statistics (position p*(n-1))."""
    pos = p * (len(sorted_values) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def mean(v):
    return sum(v) / len(v)


def load(dataset, run):
    anchors = {a["id"]: (float(a["x"]), float(a["y"]), float(a["z"])) for a in read_csv(os.path.join(dataset, "anchors.csv"))}
    rows = []
    for r in read_csv(os.path.join(dataset, run)):
        t = float(r["ts"]) / 1e9
        x, y = float(r["x"]), float(r["y"])
        heading = float(r["heading"]) if r.get("heading", "") != "" else None
        readings = {}
        for k in anchors:
            v = r.get(f"rssi_{k}", "")
            if v != "" and not math.isnan(float(v)):
                readings[k] = float(v)
        rows.append({"t": t, "x": x, "y": y, "heading": heading, "rssi": readings})
    # Path length travelled so far (metres), restarting at gaps between recording sessions (> 2 s).
    s = 0.0
    session = 0
    for i, r in enumerate(rows):
        if i > 0:
            if r["t"] - rows[i - 1]["t"] > 2:
                session += 1
            else:
                s += math.hypot(r["x"] - rows[i - 1]["x"], r["y"] - rows[i - 1]["y"])
        r["s"] = s
        r["session"] = session
    return anchors, rows


def distance(anchor, row):
    ax, ay, az = anchor
    return math.sqrt((row["x"] - ax) ** 2 + (row["y"] - ay) ** 2 + (TAG_HEIGHT_M - az) ** 2)


CENTRES = {name: ((x0 + x1) / 2, (y0 + y1) / 2) for name, (x0, y0, x1, y1) in ROOMS.items()}


def nearest_room(x, y):
    """The room whose centre is nearest: the simulator's notion of the room a device is in (it
    knows only the regions' positions, which are the room centres in kolakowski-flat.yaml)."""
    return min(CENTRES, key=lambda n: math.hypot(CENTRES[n][0] - x, CENTRES[n][1] - y))


def other_room(anchors, k, row):
    ax, ay, _ = anchors[k]
    return 1.0 if room_of(ax, ay) != nearest_room(row["x"], row["y"]) else 0.0


def solve3(A, B):
    M = [A[i] + [B[i]] for i in range(3)]
    for i in range(3):
        piv = M[i][i]
        M[i] = [v / piv for v in M[i]]
        for k in range(3):
            if k != i:
                f = M[k][i]
                M[k] = [a - f * b for a, b in zip(M[k], M[i])]
    return [M[i][3] for i in range(3)]


def fit_path_loss(anchors, rows):
    """Least squares RSSI = P1m - 10 n log10(d) - W other_room; returns (P1m, n, W)."""
    X, Y = [], []
    for r in rows:
        for k, v in r["rssi"].items():
            X.append((1.0, math.log10(max(distance(anchors[k], r), 0.1)), other_room(anchors, k, r)))
            Y.append(v)
    A = [[sum(x[i] * x[j] for x in X) for j in range(3)] for i in range(3)]
    B = [sum(x[i] * y for x, y in zip(X, Y)) for i in range(3)]
    a, b, c = solve3(A, B)
    return a, -b / 10, -c


def fit_path_loss_distance_only(anchors, rows):
    pts = [(math.log10(max(distance(anchors[k], r), 0.1)), v) for r in rows for k, v in r["rssi"].items()]
    mx = mean([p[0] for p in pts])
    my = mean([p[1] for p in pts])
    slope = sum((p[0] - mx) * (p[1] - my) for p in pts) / sum((p[0] - mx) ** 2 for p in pts)
    resid = [p[1] - (my + slope * (p[0] - mx)) for p in pts]
    return my - slope * mx, -slope / 10, math.sqrt(mean([v * v for v in resid]))


def student_t_logpdf(x, nu, scale):
    return (math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2) - 0.5 * math.log(nu * math.pi) - math.log(scale)
            - (nu + 1) / 2 * math.log1p((x / scale) ** 2 / nu))


def fit_student_t(values):
    """MLE of (nu, scale) for a zero-centred Student-t: EM for the scale at each nu of a grid."""
    best = None
    for nu in [1.5, 2, 2.5, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50, 100]:
        scale = math.sqrt(mean([v * v for v in values]))
        for _ in range(50):
            w = [(nu + 1) / (nu + (v / scale) ** 2) for v in values]
            scale = math.sqrt(sum(wi * v * v for wi, v in zip(w, values)) / len(values))
        ll = sum(student_t_logpdf(v, nu, scale) for v in values)
        if best is None or ll > best[0]:
            best = (ll, nu, scale)
    gauss_ll = sum(-0.5 * math.log(2 * math.pi * mean([v * v for v in values])) - v * v / (2 * mean([v * v for v in values]))
                   for v in values)
    return {"nu": best[1], "scale_db": round(best[2], 3), "loglik": round(best[0], 1), "gaussian_loglik": round(gauss_ll, 1)}


def correlations(anchors, rows, residual, max_lag=60):
    """Residual correlation of pairs of readings of the same anchor up to `max_lag` rows apart in one
    session: binned by distance moved (pairs with distance moved > 0.05 m) and by time for pairs
    where the robot stood still (moved < 0.05 m)."""
    var = mean([v * v for v in residual.values()])
    by_dist, by_time = {}, {}
    n = len(rows)
    for i in range(n):
        for j in range(i + 1, min(n, i + max_lag + 1)):
            if rows[j]["session"] != rows[i]["session"]:
                break
            ds = rows[j]["s"] - rows[i]["s"]
            dt = rows[j]["t"] - rows[i]["t"]
            for k in anchors:
                a, b = residual.get((i, k)), residual.get((j, k))
                if a is None or b is None:
                    continue
                if ds < 0.05:
                    key = round(dt * 3) / 3
                    acc = by_time.setdefault(key, [0.0, 0])
                else:
                    key = min(int(ds / 0.1), 40) * 0.1 + 0.05
                    acc = by_dist.setdefault(round(key, 2), [0.0, 0])
                acc[0] += a * b
                acc[1] += 1
    dist = sorted((k, s / c / var, c) for k, (s, c) in by_dist.items() if c >= 200)
    time = sorted((k, s / c / var, c) for k, (s, c) in by_time.items() if c >= 200)
    return dist, time


def fit_exponential(points, xmax):
    """corr(x) = a * exp(-x / L): least squares over a grid (weights = pair counts)."""
    best = None
    for a100 in range(20, 101):
        a = a100 / 100
        for L10 in range(1, 300):
            L = L10 / 10
            err = sum(c * (r - a * math.exp(-x / L)) ** 2 for x, r, c in points if x <= xmax)
            if best is None or err < best[0]:
                best = (err, a, L)
    return best[1], best[2]


def sample_t(rng, nu):
    z = rng.gauss(0, 1)
    chi2 = 2 * rng.gammavariate(nu / 2, 1)
    return z / math.sqrt(chi2 / nu)


def fit_split(residuals_sorted, shadow_fraction, samples=60000, seed=7):
    """Shadowing N(0, sigma_s), sigma_s^2 = f sigma^2, plus fast fading: N(0, sigma_f) and, with
    probability q, a deep fade of an extra Exp(mean mu) dB loss, re-centred to mean 0, with sigma_f
    chosen so the total variance is sigma^2. Grid over (q, mu) so the sum's quantiles (1 ... 99 %)
    match the residuals' (Monte Carlo with a fixed seed); max error in dB is reported."""
    var = mean([v * v for v in residuals_sorted])
    target = [quantile(residuals_sorted, p) for p in QUANTILES]
    best = None
    ss = math.sqrt(shadow_fraction * var)
    for q in [0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3]:
        for mu in [2, 3, 4, 6, 8, 10]:
            if q == 0 and mu > 2:
                continue
            fade_var = q * 2 * mu * mu - (q * mu) ** 2  # variance of the deep-fade term (Bernoulli x Exp)
            rest = (1 - shadow_fraction) * var - fade_var
            if rest <= 0:
                continue
            sf = math.sqrt(rest)
            rng = random.Random(seed)
            sim = []
            for _ in range(samples):
                v = ss * rng.gauss(0, 1) + sf * rng.gauss(0, 1) + q * mu
                if rng.random() < q:
                    v -= rng.expovariate(1 / mu)
                sim.append(v)
            sim.sort()
            qv = [quantile(sim, p) for p in QUANTILES]
            err = max(abs(a - b) for a, b in zip(qv, target))
            if best is None or err < best[0]:
                best = (err, q, mu, sf, qv)
    err, q, mu, sf, qv = best
    return {"gaussian_sigma_db": round(sf, 2), "deep_fade_probability": q, "deep_fade_mean_db": mu,
            "max_quantile_error_db": round(err, 2), "quantiles_db": [round(v, 2) for v in qv]}


def fit_reception(anchors, rows):
    """Per anchor and row: 1 if the row holds a reading. Logistic p(d) = p0 / (1 + exp((d - d50) / w))
    by maximum likelihood over a grid; also the binned empirical rate."""
    obs = [(distance(anchors[k], r), 1 if k in r["rssi"] else 0) for r in rows for k in anchors]
    bins = {}
    for d, y in obs:
        b = int(d)
        acc = bins.setdefault(b, [0, 0])
        acc[0] += y
        acc[1] += 1
    binned = sorted((b + 0.5, s / c, c) for b, (s, c) in bins.items())
    best = None
    for p0 in [0.85, 0.88, 0.9, 0.92, 0.94, 0.96, 0.98, 0.99, 1.0]:
        for d50 in [x / 2 for x in range(8, 60)]:
            for w in [0.5, 1, 1.5, 2, 3, 4, 6, 8]:
                ll = 0.0
                for b, rate, c in binned:
                    p = min(max(p0 / (1 + math.exp((b - d50) / w)), 1e-6), 1 - 1e-6)
                    ll += c * (rate * math.log(p) + (1 - rate) * math.log(1 - p))
                if best is None or ll > best[0]:
                    best = (ll, p0, d50, w)
    return {"p0": best[1], "d50_m": best[2], "width_m": best[3]}, binned


def fit_heading(anchors, rows, residual):
    """Mean residual per 45-degree sector of the angle between the tag's heading and the direction
    to the anchor (0 = facing the anchor), and the least-squares fit r = A cos(theta) + B sin(theta)."""
    pts = []
    for i, r in enumerate(rows):
        if r["heading"] is None:
            continue
        for k in anchors:
            v = residual.get((i, k))
            if v is None:
                continue
            bearing = math.atan2(anchors[k][1] - r["y"], anchors[k][0] - r["x"])
            theta = (bearing - r["heading"]) % (2 * math.pi)
            pts.append((theta, v))
    scc = sum(math.cos(t) ** 2 for t, _ in pts)
    sss = sum(math.sin(t) ** 2 for t, _ in pts)
    scs = sum(math.cos(t) * math.sin(t) for t, _ in pts)
    rc = sum(v * math.cos(t) for t, v in pts)
    rs = sum(v * math.sin(t) for t, v in pts)
    det = scc * sss - scs * scs
    A = (rc * sss - rs * scs) / det
    B = (rs * scc - rc * scs) / det
    sectors = []
    for s in range(8):
        vals = [v for t, v in pts if int(((t + math.pi / 8) % (2 * math.pi)) / (math.pi / 4)) == s]
        sectors.append((s * 45, mean(vals), len(vals)))
    return {"cos_db": round(A, 2), "sin_db": round(B, 2), "amplitude_db": round(math.hypot(A, B), 2)}, sectors


# ---- SVG figures (no plotting library needed) -------------------------------------------------

class Plot:
    def __init__(self, title, xlabel, ylabel, xr, yr, w=560, h=360):
        self.title, self.xlabel, self.ylabel = title, xlabel, ylabel
        self.xr, self.yr, self.w, self.h = xr, yr, w, h
        self.m = (60, 20, 30, 45)  # left, right, top, bottom
        self.items = []

    def X(self, x):
        l, r = self.m[0], self.w - self.m[1]
        return l + (x - self.xr[0]) / (self.xr[1] - self.xr[0]) * (r - l)

    def Y(self, y):
        t, b = self.m[2], self.h - self.m[3]
        return b - (y - self.yr[0]) / (self.yr[1] - self.yr[0]) * (b - t)

    def points(self, pts, color="#1f77b4", r=1.2, opacity=0.25):
        for x, y in pts:
            if self.xr[0] <= x <= self.xr[1] and self.yr[0] <= y <= self.yr[1]:
                self.items.append(f'<circle cx="{self.X(x):.1f}" cy="{self.Y(y):.1f}" r="{r}" fill="{color}" fill-opacity="{opacity}"/>')

    def line(self, pts, color="#d62728", width=2, dash=None, label=None):
        pts = [(x, y) for x, y in pts if self.xr[0] <= x <= self.xr[1] and self.yr[0] <= y <= self.yr[1]]
        d = " ".join(f"{self.X(x):.1f},{self.Y(y):.1f}" for x, y in pts)
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        self.items.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="{width}"{extra}/>')
        if label:
            n = sum(1 for i in self.items if "legend" in i)
            y = self.m[2] + 14 + 16 * n
            x = self.w - self.m[1] - 200
            self.items.append(f'<line class="legend" x1="{x}" y1="{y - 4}" x2="{x + 24}" y2="{y - 4}" stroke="{color}" stroke-width="{width}"{extra}/>'
                              f'<text x="{x + 30}" y="{y}" font-size="11">{label}</text>')

    def svg(self):
        l, r, t, b = self.m[0], self.w - self.m[1], self.m[2], self.h - self.m[3]
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.w}" height="{self.h}" font-family="sans-serif">',
               f'<rect width="{self.w}" height="{self.h}" fill="white"/>',
               f'<text x="{self.w / 2}" y="18" font-size="13" text-anchor="middle">{self.title}</text>',
               f'<rect x="{l}" y="{t}" width="{r - l}" height="{b - t}" fill="none" stroke="#444"/>']
        for i in range(6):
            xv = self.xr[0] + (self.xr[1] - self.xr[0]) * i / 5
            yv = self.yr[0] + (self.yr[1] - self.yr[0]) * i / 5
            out.append(f'<text x="{self.X(xv):.1f}" y="{b + 14}" font-size="10" text-anchor="middle">{xv:g}</text>')
            out.append(f'<text x="{l - 4}" y="{self.Y(yv) + 3:.1f}" font-size="10" text-anchor="end">{yv:g}</text>')
            out.append(f'<line x1="{l}" y1="{self.Y(yv):.1f}" x2="{r}" y2="{self.Y(yv):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{(l + r) / 2}" y="{self.h - 8}" font-size="11" text-anchor="middle">{self.xlabel}</text>')
        out.append(f'<text x="14" y="{(t + b) / 2}" font-size="11" text-anchor="middle" transform="rotate(-90 14 {(t + b) / 2})">{self.ylabel}</text>')
        return "\n".join(out + self.items + ["</svg>"]) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # As the accuracy suite and tools/kolakowski/convert.py: $WAYMARK_KOLAKOWSKI, else the dataset in
    # the shared/ folder beside the repository.
    default_dataset = os.environ.get("WAYMARK_KOLAKOWSKI") or os.path.normpath(os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "data",
        "kolakowski-ble-rss-fingerprints-calib2021"))
    p.add_argument("--dataset", default=default_dataset,
                   help="the dataset folder (default: $WAYMARK_KOLAKOWSKI, else "
                        "../shared/data/kolakowski-ble-rss-fingerprints-calib2021 from the repository; now %(default)s)")
    p.add_argument("--json", help="write the fitted parameters here (default: stdout)")
    p.add_argument("--figures", help="write SVG figures into this folder")
    a = p.parse_args()
    if not os.path.isfile(os.path.join(a.dataset, "anchors.csv")):
        p.error(f"{a.dataset}: the Kolakowski dataset is not there (no anchors.csv); pass --dataset or set "
                "WAYMARK_KOLAKOWSKI to the folder kolakowski-ble-rss-fingerprints-calib2021")

    anchors, rows = load(a.dataset, "calibration/calibration_df.csv")
    p1m, n, wall = fit_path_loss(anchors, rows)
    p1m_d, n_d, sd_d = fit_path_loss_distance_only(anchors, rows)
    raw = {(i, k): v - (p1m - 10 * n * math.log10(max(distance(anchors[k], r), 0.1)) - wall * other_room(anchors, k, r))
           for i, r in enumerate(rows) for k, v in r["rssi"].items()}
    offsets = {k: mean([v for (i, kk), v in raw.items() if kk == k]) for k in anchors}
    offset_sd = math.sqrt(mean([o * o for o in offsets.values()]))
    residual = {key: v - offsets[key[1]] for key, v in raw.items()}
    res_sorted = sorted(residual.values())
    sigma = math.sqrt(mean([v * v for v in res_sorted]))
    tfit = fit_student_t(res_sorted)
    dist_corr, time_corr = correlations(anchors, rows, residual)
    shadow_fraction, corr_distance = fit_exponential(dist_corr, xmax=4)
    # Time correlation while standing still, on top of the fast-fading floor: corr(t) = f exp(-t / tau).
    _, tau = fit_exponential([(x, r, c) for x, r, c in time_corr], xmax=20)
    tau_points = [(x, r, c) for x, r, c in time_corr if x <= 20]
    best_tau = min(((sum(c * (r - shadow_fraction * math.exp(-x / T)) ** 2 for x, r, c in tau_points), T)
                    for T in [t / 2 for t in range(1, 400)]))[1]
    split = fit_split(res_sorted, shadow_fraction)
    reception, rec_binned = fit_reception(anchors, rows)
    heading, sectors = fit_heading(anchors, rows, residual)
    speeds = [(rows[i + 1]["s"] - rows[i]["s"]) / (rows[i + 1]["t"] - rows[i]["t"])
              for i in range(len(rows) - 1) if rows[i + 1]["session"] == rows[i]["session"]]

    result = {
        "source": "Kolakowski BLE RSS dataset, calibration/calibration_df.csv (calibration run only)",
        "rows": len(rows),
        "readings": len(residual),
        "path_loss": {"p1m_dbm": round(p1m, 2), "exponent": round(n, 3), "wall_loss_db": round(wall, 2),
                      "tag_height_m": TAG_HEIGHT_M,
                      "room": "nearest room centre (the simulator's nearest region)"},
        "path_loss_distance_only": {"p1m_dbm": round(p1m_d, 2), "exponent": round(n_d, 3), "residual_sd_db": round(sd_d, 2)},
        "receiver_offsets_db": {k: round(v, 2) for k, v in offsets.items()},
        "receiver_offset_sd_db": round(offset_sd, 2),
        "residual_sd_db": round(sigma, 2),
        "residual_quantiles_db": {str(p): round(quantile(res_sorted, p), 2) for p in QUANTILES},
        "residual_student_t": tfit,
        "shadowing": {
            "fraction_of_variance": shadow_fraction,
            "sigma_db": round(math.sqrt(shadow_fraction) * sigma, 2),
            "correlation_distance_m": corr_distance,
            "correlation_time_s": best_tau,
        },
        "fast_fading": {"total_sigma_db": round(math.sqrt(1 - shadow_fraction) * sigma, 2), **split},
        "reception": reception,
        "heading": heading,
        "robot_speed_quantiles_m_s": {str(q): round(quantile(sorted(speeds), q), 3) for q in (0.5, 0.75, 0.95)},
        "correlation_by_distance": [(x, round(r, 3), c) for x, r, c in dist_corr],
        "correlation_by_time_standing": [(x, round(r, 3), c) for x, r, c in time_corr],
        "reception_by_distance": [(x, round(r, 3), c) for x, r, c in rec_binned],
        "heading_sectors": [(s, round(v, 2), c) for s, v, c in sectors],
    }
    text = json.dumps(result, indent=2) + "\n"
    if a.json:
        with open(a.json, "w") as f:
            f.write(text)
    else:
        print(text, end="")

    if a.figures:
        os.makedirs(a.figures, exist_ok=True)
        pl = Plot("Path loss, calibration run (blue: same room, orange: through a wall)", "log10 distance (m)", "RSSI (dBm)", (-0.2, 1.0), (-100, -30))
        # Every 8th reading (the file stays small; the fit uses all of them).
        sample = [(k, v, r) for r in rows[::8] for k, v in r["rssi"].items()]
        pl.points([(math.log10(max(distance(anchors[k], r), 0.1)), v) for k, v, r in sample if not other_room(anchors, k, r)], opacity=0.4)
        pl.points([(math.log10(max(distance(anchors[k], r), 0.1)), v) for k, v, r in sample if other_room(anchors, k, r)], color="#ff7f0e", opacity=0.4)
        pl.line([(x / 100, p1m - 10 * n * x / 100) for x in range(-20, 101)], label=f"same room: P1m {p1m:.1f}, n {n:.2f}")
        pl.line([(x / 100, p1m - wall - 10 * n * x / 100) for x in range(-20, 101)], color="#8c564b", label=f"other room: {wall:.1f} dB less")
        pl.line([(x / 100, p1m_d - 10 * n_d * x / 100) for x in range(-20, 101)], color="#888", dash="4 3", label=f"distance only: n {n_d:.2f}")
        open(os.path.join(a.figures, "path-loss.svg"), "w").write(pl.svg())

        qs = [i / 200 for i in range(1, 200)]
        pq = Plot("Residual quantiles vs Gaussian (Q-Q)", "Gaussian quantile (dB, same sd)", "residual quantile (dB)", (-25, 15), (-25, 15))
        import statistics
        nd = statistics.NormalDist(0, sigma)
        pq.points([(nd.inv_cdf(q), quantile(res_sorted, q)) for q in qs], color="#1f77b4", r=2, opacity=0.9)
        pq.line([(-25, -25), (15, 15)], color="#888", width=1, dash="4 3", label="Gaussian")
        open(os.path.join(a.figures, "residual-qq.svg"), "w").write(pq.svg())

        pc = Plot("Residual correlation (same anchor)", "distance moved (m)", "correlation", (0, 4), (-0.1, 1.0))
        pc.points([(x, r) for x, r, _ in dist_corr], r=3, opacity=0.9)
        pc.line([(x / 20, shadow_fraction * math.exp(-(x / 20) / corr_distance)) for x in range(1, 81)],
                label=f"{shadow_fraction:.2f} exp(-d/{corr_distance:g} m)")
        open(os.path.join(a.figures, "correlation-distance.svg"), "w").write(pc.svg())

        pt = Plot("Residual correlation, robot standing still", "time apart (s)", "correlation", (0, 20), (-0.1, 1.0))
        pt.points([(x, r) for x, r, _ in time_corr], r=3, opacity=0.9)
        pt.line([(x / 10, shadow_fraction * math.exp(-(x / 10) / best_tau)) for x in range(1, 201)],
                label=f"{shadow_fraction:.2f} exp(-t/{best_tau:g} s)")
        open(os.path.join(a.figures, "correlation-time.svg"), "w").write(pt.svg())

        pr = Plot("Reception: share of 1/3-s slots with a reading", "distance (m)", "probability", (0, 10), (0, 1.05))
        pr.points([(x, r) for x, r, _ in rec_binned], r=3, opacity=0.9)
        pr.line([(x / 10, reception["p0"] / (1 + math.exp((x / 10 - reception["d50_m"]) / reception["width_m"]))) for x in range(0, 101)],
                label="logistic fit")
        open(os.path.join(a.figures, "reception.svg"), "w").write(pr.svg())

        ph = Plot("Residual by heading (0 = tag faces the anchor)", "angle (degrees)", "mean residual (dB)", (0, 360), (-4, 4))
        ph.points([(s, v) for s, v, _ in sectors], r=4, opacity=0.9)
        ph.line([(x, heading["cos_db"] * math.cos(math.radians(x)) + heading["sin_db"] * math.sin(math.radians(x))) for x in range(0, 361, 5)],
                label=f"amplitude {heading['amplitude_db']} dB")
        open(os.path.join(a.figures, "heading.svg"), "w").write(ph.svg())


if __name__ == "__main__":
    main()
