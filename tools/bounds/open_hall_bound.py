#!/usr/bin/env python3
"""How well could any engine do in the example open hall? (docs/accuracy.md, "What the radio allows")

A device stands at a random point of a random cell of deploy/examples/open-hall.yaml (12 cells of
radius 2.5 m on a 5 m grid, two door gateways). Each gateway's reading is the fitted indoor radio
(docs/radio-model.md): the log-distance mean with n = 1.12 and the antennas 1 m above the tag, plus
shadowing (5.1 dB; it decorrelates only over 2.3 m walked, so a device that stands keeps it) and the
receiver's own offset (1.7 dB); fast fading is taken as averaged away (as many readings as one likes).
The classifier is the exact Bayes posterior over the cell, with the true model, the true parameters
and a uniform prior over positions: no engine that sees these readings can do better for a standing
device. It is compared with the naive rule (strongest gateway) on the same readings.

    python3 tools/bounds/open_hall_bound.py [--samples 20000] [--seed 0]

Needs numpy (Debian: python3-numpy).
"""
import argparse

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    cells = np.array([(2.5 + 5 * c, 2.5 + 5 * r) for r in range(3) for c in range(4)])
    gateways = np.vstack([cells, [(-3.0, 7.5), (23.0, 7.5)]])
    n_exp, height2, radius = 1.12, 1.0, 2.5

    def mean_rssi(points):
        d2 = ((points[:, None, :] - gateways[None, :, :]) ** 2).sum(-1) + height2
        return -10 * n_exp * np.log10(np.sqrt(d2))

    # Where a device can be: a fine grid of the cells' discs, each point owned by its cell.
    xs, ys = np.meshgrid(np.linspace(0, 20, 101), np.linspace(0, 15, 76))
    grid = np.stack([xs.ravel(), ys.ravel()], -1)
    dist = np.sqrt(((grid[:, None, :] - cells[None, :, :]) ** 2).sum(-1))
    keep = dist.min(1) <= radius
    grid, owner = grid[keep], dist[keep].argmin(1)
    grid_mean = mean_rssi(grid)

    n = args.samples
    truth = rng.integers(0, len(cells), n)
    angle, r = rng.uniform(0, 2 * np.pi, n), radius * np.sqrt(rng.uniform(0, 1, n))
    points = cells[truth] + np.c_[r * np.cos(angle), r * np.sin(angle)]
    print("shadowing sd | Bayes-optimal cell accuracy | naive (strongest gateway)")
    for shadow in (5.1, 7.5, 3.0, 0.0):
        offsets = rng.normal(0, 1.7, (1, len(gateways)))
        readings = mean_rssi(points) + rng.normal(0, shadow, (n, len(gateways))) + offsets
        var = shadow ** 2 + 1.7 ** 2
        loglik = -((readings[:, None, :] - grid_mean[None, :, :]) ** 2).sum(-1) / (2 * var)
        loglik -= loglik.max(1, keepdims=True)
        weight = np.exp(loglik)
        posterior = np.stack([weight[:, owner == c].sum(1) for c in range(len(cells))], 1)
        bayes = np.mean(posterior.argmax(1) == truth)
        naive = np.mean(readings[:, : len(cells)].argmax(1) == truth)
        label = {5.1: " (indoor, fitted)", 7.5: " (harsh)"}.get(shadow, "")
        print(f"{shadow:4.1f} dB{label:18s} | {100 * bayes:5.1f} % | {100 * naive:5.1f} %")


if __name__ == "__main__":
    main()
