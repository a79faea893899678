#!/usr/bin/env python3
"""What gauss11's two 11-tap passes in fp32 would do to the SSIM (issue 14).

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
"""
import sys

import numpy as np

G = np.exp(-((np.arange(11) - 5.0) ** 2) / (2 * 1.5 ** 2))
G /= G.sum()
C1, C2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2


def passes(x, dt):
    """The vertical, then the horizontal 11-tap sums of x, every step rounded to dt."""
    w = G.astype(dt)
    x = x.astype(dt)
    h, wd = x.shape
    v = np.zeros((h - 10, wd), dt)
    for i in range(11):
        v = (v + w[i] * x[i:i + h - 10]).astype(dt)
    o = np.zeros((h - 10, wd - 10), dt)
    for i in range(11):
        o = (o + w[i] * v[:, i:i + wd - 10]).astype(dt)
    return o.astype(np.float64)


def ssim_map(a, b, dt, shift=0.0):
    a = a.astype(np.float64) - shift
    b = b.astype(np.float64) - shift
    ma, mb = passes(a, dt), passes(b, dt)
    saa, sbb, sab = passes(a * a, dt), passes(b * b, dt), passes(a * b, dt)
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


if __name__ == "__main__":
    main()
