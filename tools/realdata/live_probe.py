#!/usr/bin/env python3
"""The live region of a forward filter over one second's evidence, on every converted real venue:
to judge a change to how seconds of evidence are combined before building it into the engine.

`evidence_probe.py` asks what one second says alone. This asks what the seconds say in sequence,
as the engine's live region does: a forward filter over the regions of the site file, with the
two-phase dwell of `MotionModel.Dwell` (a device that has just arrived leaves at one per 10 s or
settles at one per 20 s, a settled one leaves at one per 120 s) and moves only along the site's
edges, each neighbour alike. The evidence of a second is `evidence_probe.py`'s (the venue level
−59 dBm, exponent 2, each hypothesis its own common offset, Student-t σ 6 dB, ν 4; walls at 7 dB).
No absences, no self-calibration, no smoothing: only the live region (the filter's most probable
region each second) is scored, against the truth at the middle of the second.

Two ways to combine the seconds:

  tempered   each second's log-likelihood times a weight (`--weights`, the engine's 0.4 among
             them): consecutive seconds are correlated, so each counts as a share of an
             independent one (`EvidenceModel.evidenceWeight`);
  ar         the residuals as an AR(1) process with lag-1 correlation ρ (`--rhos`): the
             likelihood of a second given the one before, for a move from region i to region k
             the Student-t of r_t(k) − ρ·r_{t−1}(i) at scale σ·√(1 − ρ²) for each gateway heard in
             both seconds (the marginal for one heard in this second only). In a stay this counts
             a persistent deviation (1 − ρ)/(1 + ρ) of a second, as the tempering does; across a
             move the new region's pattern counts in full at once, so the live region might follow
             moves sooner without counting a standing device's frozen shadowing more.

Prints the live region's exact % and its number of changes (against the truth's) per venue and
variant. Reads what `evidence_probe.py` reads (the converters' folders under --build and the
accuracy suite's Kolakowski open plan). Standard library only:

    python3 tools/realdata/live_probe.py [--build .build] [--weights 0.25,0.4,0.6,1] [--rhos 0.42,0.6,0.8]

Result (2026-12-07, docs/accuracy.md, "Tried and not kept: seconds as AR(1) innovations, a known
heading, offsets in full"): the AR(1) form is worse at every ρ on the Kolakowski open plan, the
corridor and the chamber; the tempering is near its best at the engine's 0.4 on all three.
"""
import argparse
import collections
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evidence_probe as probe  # noqa: E402  (the same evidence, one place)

PASS_S, SETTLE_S, STAY_S = 10.0, 20.0, 120.0   # MotionModel.Dwell
EXPONENT = 2.0
GAP_RESTART_S = 5   # a longer silence restarts the filter from the evidence alone


def edges_of(site):
    """The `- [a, b]` items of the site file's `edges:` section."""
    out, inside = [], False
    for line in open(site):
        if re.match(r"^[a-z_]+:", line):
            inside = line.startswith("edges:")
            continue
        m = re.match(r"^\s*-\s*\[([^\]]+)\]", line)
        if inside and m:
            a, b = [x.strip().strip('"') for x in m.group(1).split(",")]
            out.append((a, b))
    return out


class Venue:
    """The site file's regions, edges and each (region, gateway)'s expected path loss and wall."""

    def __init__(self, site):
        _, regions, self.ld, self.wall = probe.site_model(site)
        self.ids = [r["id"] for r in regions]
        self.adjacent = collections.defaultdict(set)
        for a, b in edges_of(site):
            self.adjacent[a].add(b)
            self.adjacent[b].add(a)
        self.variance = probe.DEVICE_SPREAD ** 2 + probe.LEVEL_PRIOR_SD ** 2

    def residuals(self, readings):
        """Per region: each heard gateway's deviation from the model after the region's fitted
        common offset b, and b."""
        out = {}
        for k in self.ids:
            e = {g: y - (probe.LEVEL + EXPONENT * self.ld[(k, g)] - self.wall[(k, g)]) for g, y in readings.items()}
            b = sum(e.values()) / (len(e) + probe.SIGMA ** 2 / self.variance)
            out[k] = ({g: x - b for g, x in e.items()}, b)
        return out


def student_t(x, scale):
    return probe.student_t(x * probe.SIGMA / scale)


def filter_track(venue, seconds, mode, weight, rho):
    """Runs the forward filter; returns (right, scored seconds, live changes, true changes)."""
    keep = math.exp(-(1 / PASS_S + 1 / SETTLE_S))
    leave_pass = (1 / PASS_S) / (1 / PASS_S + 1 / SETTLE_S) * (1 - keep)
    settle = (1 / SETTLE_S) / (1 / PASS_S + 1 / SETTLE_S) * (1 - keep)
    leave_stay = 1 - math.exp(-1 / STAY_S)
    ar_scale = probe.SIGMA * math.sqrt(1 - rho * rho)

    def tempered(res, k):
        e, b = res[k]
        return weight * (sum(probe.student_t(x) for x in e.values()) - b * b / (2 * venue.variance))

    def innovation(res, before, i, k):
        (e, b), (e0, _) = res[k], before[i]
        total = sum(student_t(x - rho * e0[g], ar_scale) if g in e0 else probe.student_t(x) for g, x in e.items())
        return total - weight * b * b / (2 * venue.variance)

    alpha, last, before = None, None, None
    right = scored = changes = true_changes = 0
    live_before = truth_before = None
    for s, truth, readings in seconds:
        res = venue.residuals(readings)
        gap = None if last is None else s - last
        own = {k: tempered(res, k) for k in venue.ids}
        if alpha is None or gap > GAP_RESTART_S:
            top = max(own.values())
            alpha = {(k, 0): math.exp(own[k] - top) for k in venue.ids}
            alpha.update({(k, 1): 0.0 for k in venue.ids})
        else:
            # Log-likelihood per (from, to) pair: the tempered form does not depend on `from`.
            use_ar = mode == "ar" and gap == 1
            logs = {(i, k): innovation(res, before, i, k) if use_ar else own[k]
                    for k in venue.ids for i in venue.ids if i == k or k in venue.adjacent[i]}
            top = max(logs.values())
            new = {}
            for k in venue.ids:
                for phase in (0, 1):
                    total = 0.0
                    for (i, p0), a in alpha.items():
                        if a == 0 or (i, k) not in logs:
                            continue
                        if i == k:
                            p = (keep if phase == 0 else settle) if p0 == 0 else ((1 - leave_stay) if phase == 1 else 0.0)
                        else:
                            p = 0.0 if phase == 1 else (leave_pass if p0 == 0 else leave_stay) / len(venue.adjacent[i])
                        if p > 0:
                            total += a * p * math.exp(logs[(i, k)] - top)
                    new[(k, phase)] = total
            alpha = new
        z = sum(alpha.values())
        alpha = {key: v / z for key, v in alpha.items()}
        marginal = {k: alpha[(k, 0)] + alpha[(k, 1)] for k in venue.ids}
        live = max(marginal, key=marginal.get)
        if truth is not None:
            scored += 1
            right += live == truth
            if truth_before is not None and truth != truth_before:
                true_changes += 1
            truth_before = truth
        if live_before is not None and live != live_before:
            changes += 1
        live_before, last, before = live, s, res
    return right, scored, changes, true_changes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=".build")
    ap.add_argument("--weights", default="0.25,0.4,0.6,1", help="tempering weights to try (the engine's: 0.4)")
    ap.add_argument("--rhos", default="0.42,0.6,0.8", help="AR(1) correlations to try (none: '')")
    a = ap.parse_args()
    variants = [("tempered", float(w), 0.0) for w in a.weights.split(",") if w]
    variants += [("ar", 0.4, float(r)) for r in a.rhos.split(",") if r]
    found = list(probe.venue_tracks(a.build))
    if not found:
        sys.exit(f"nothing converted under {a.build}: run scripts/accuracy.sh for the Kolakowski open plan, "
                 "or a venue's converter (tools/realdata/scoreboard.py lists them)")
    print("| venue | seconds | evidence | live exact % | live changes (truth's) |")
    print("|---|---:|---|---:|---:|")
    for name, site, tracks in found:
        venue = Venue(site)
        data = [probe.all_seconds(s, v) for s, v in tracks]
        for mode, weight, rho in variants:
            right = scored = changes = true_changes = 0
            for seconds in data:
                r, n, c, t = filter_track(venue, seconds, mode, weight, rho)
                right, scored, changes, true_changes = right + r, scored + n, changes + c, true_changes + t
            label = f"tempered × {weight:g}" if mode == "tempered" else f"AR(1) ρ {rho:g}"
            print(f"| {name} | {scored} | {label} | {100 * right / max(1, scored):.1f} | {changes} ({true_changes}) |")


if __name__ == "__main__":
    main()
