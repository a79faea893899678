#!/usr/bin/env python3
"""What gauss11's passes in fp32, or its weights as integers, would do to the SSIM (issue 14).

  python3 tests/bench/gauss11-fp32-error.py [REF.gray DIST.gray]   (numpy; 1080p GRAY8 files)

gauss11 on the GPU keeps its passes in fp64, which sets its floor (docs/benchmarks.md).
This measures what the alternative would cost in accuracy: Wang's window (σ 1.5, 11 taps,
valid windows, C1 = (0.01·255)², C2 = (0.03·255)²) with the five weighted sums taken
in float32, each tap a rounded product and a rounded sum as a chain of fp32 FMAs or a
float32 convolution rounds them, then the expression in float64; against the same passes
in float64. Also with the samples shifted by -128 before the passes (variances do not move,
the sums of squares are 4x smaller). Prints the error of the frame's mean SSIM and the
largest error of one window, for flat and near-flat frames (where E[a²] - μ² cancels
most) and, given two files, a quarter of a real frame pair.

Given two files, also the weights rounded to multiples of 2^-k (the centre adjusted so
that they sum to 1), as an integer vertical pass would need (k <= 15 keeps its sums of
a² + b² in 32 bits), the passes in float64: the largest and the median change of the
frame's mean SSIM over every fifth pair of the files (thirty-seventh to thirty-ninth
sessions).
"""
import sys

import numpy as np

G = np.exp(-((np.arange(11) - 5.0) ** 2) / (2 * 1.5 ** 2))
G /= G.sum()
C1, C2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2


def passes(x, dt, g=G):
    """The vertical, then the horizontal 11-tap sums of x, every step rounded to dt."""
    w = g.astype(dt)
    x = x.astype(dt)
    h, wd = x.shape
    v = np.zeros((h - 10, wd), dt)
    for i in range(11):
        v = (v + w[i] * x[i:i + h - 10]).astype(dt)
    o = np.zeros((h - 10, wd - 10), dt)
    for i in range(11):
        o = (o + w[i] * v[:, i:i + wd - 10]).astype(dt)
    return o.astype(np.float64)


def ssim_map(a, b, dt, shift=0.0, g=G):
    a = a.astype(np.float64) - shift
    b = b.astype(np.float64) - shift
    ma, mb = passes(a, dt, g), passes(b, dt, g)
    saa, sbb, sab = (passes(a * a, dt, g), passes(b * b, dt, g),
                     passes(a * b, dt, g))
    va, vb, cov = saa - ma * ma, sbb - mb * mb, sab - ma * mb
    ma, mb = ma + shift, mb + shift
    return ((2 * ma * mb + C1) * (2 * cov + C2)) / \
        ((ma * ma + mb * mb + C1) * (va + vb + C2))


def main():
    rng = np.random.default_rng(1)
    h, w = 270, 480
    noisy = np.clip(200 + rng.normal(0, 2, (h, w)), 0, 255).round()
    cases = [
        ("flat 255 against flat 254", np.full((h, w), 255), np.full((h, w), 254)),
        ("flat 255 against 255 or 254", np.full((h, w), 255),
         255 - rng.integers(0, 2, (h, w))),
        ("flat 0 against flat 1", np.zeros((h, w)), np.ones((h, w))),
        ("200 +- 2 against itself +- 1", noisy,
         np.clip(noisy + rng.integers(-1, 2, (h, w)), 0, 255)),
    ]
    if len(sys.argv) == 3:
        ref = np.fromfile(sys.argv[1], np.uint8, 1920 * 1080).reshape(1080, 1920)
        dist = np.fromfile(sys.argv[2], np.uint8, 1920 * 1080).reshape(1080, 1920)
        cases.append(("real pair, 960x540 of the first",
                      ref[:540, :960], dist[:540, :960]))
    print("| frames | passes | mean SSIM error | largest window error |")
    print("|---|---|---|---|")
    for name, a, b in cases:
        exact = ssim_map(a, b, np.float64)
        for label, shift in (("fp32", 0.0), ("fp32, samples - 128", 128.0)):
            m = ssim_map(a, b, np.float32, shift)
            print(f"| {name} | {label} | {abs(m.mean() - exact.mean()):.1e} "
                  f"| {np.abs(m - exact).max():.1e} |")
    if len(sys.argv) == 3:
        integer_weights(sys.argv[1], sys.argv[2])


def integer_weights(ref_path, dist_path):
    ref = np.fromfile(ref_path, np.uint8).reshape(-1, 1080, 1920)
    dist = np.fromfile(dist_path, np.uint8)[:ref.size].reshape(ref.shape)
    picks = range(0, len(ref), 5)
    exact = {i: ssim_map(ref[i], dist[i], np.float64).mean() for i in picks}
    print()
    print(f"| weights (k bits), {len(exact)} pairs | largest change | median change |")
    print("|---|---|---|")
    for k in (12, 15, 16, 20):
        q = np.round(G * 2 ** k)
        q[5] += 2 ** k - q.sum()
        q /= 2 ** k
        d = [abs(ssim_map(ref[i], dist[i], np.float64, g=q).mean() - exact[i])
             for i in picks]
        print(f"| {k} | {max(d):.1e} | {np.median(d):.1e} |")


if __name__ == "__main__":
    main()
