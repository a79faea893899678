#!/usr/bin/env python3
"""MS-SSIM of the compute library against torchmetrics, on the GPU host
(python3 with torch, torchmetrics and numpy; no GStreamer needed).

    check-msssim-torchmetrics.py BUILD_DIR [--size WxH ...]

Makes 8-bit luma pairs (smooth texture plus noise, and its noisier copy;
sizes 176x176, 640x480, 1920x1080, 3840x2160 unless given), writes them
raw, runs BUILD_DIR/tests/bench/msssim-raw on them (CPU and CUDA backends)
and compares each value with torchmetrics'
multiscale_structural_similarity_index_measure in float64 on the GPU
(gaussian 11, sigma 1.5, data_range 255, the default betas and
normalize="relu": the definitions cudassim uses): |difference| <= 1e-5.
Since its PR #2721 (2024) torchmetrics averages the last scale's SSIM over
the reflect-padded image (border windows included) while the other
scales' contrast terms stay cropped to whole windows, as Wang's definition
and cudassim crop every scale; the check then compares with torchmetrics'
own scales, the last one cropped (its _ssim_update's full SSIM image), and
prints the value as shipped beside it.
Then times torchmetrics on one 4K pair in float32 on the GPU (the speed a
user of it gets, CUDA events, after warm-up) against the library's CUDA
kernels (gauss11 SSIM + MS-SSIM, and gauss11 alone) and prints the ratio
(issue 15's target: >= 20x); both with the frames already on the GPU. Exit status 1 on a mismatch, 77 without
torch/torchmetrics or a CUDA device."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    from torchmetrics.functional.image import \
        multiscale_structural_similarity_index_measure as ms_ssim
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIP: no CUDA device for torch")
    sys.exit(77)

build = sys.argv[1]
sizes = [tuple(map(int, a.split("x"))) for a in sys.argv[2:] if "x" in a] \
    or [(176, 176), (640, 480), (1920, 1080), (3840, 2160)]
prog = os.path.join(build, "tests", "bench", "msssim-raw")
rng = np.random.default_rng(15)


def pair(w, h):
    y, x = np.mgrid[0:h, 0:w]
    base = 128 + 80 * np.sin(x * 0.05 + y * 0.02) * np.cos(y * 0.03)
    a = np.clip(base + rng.normal(0, 12, (h, w)), 0, 255).round()
    b = np.clip(a + rng.normal(0, 20, (h, w)), 0, 255).round()
    return a.astype(np.uint8), b.astype(np.uint8)


def on_gpu(a, dtype):
    return torch.from_numpy(a).to("cuda", dtype)[None, None]


BETAS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def torch_msssim(ta, tb):
    return ms_ssim(tb, ta, gaussian_kernel=True, sigma=1.5, kernel_size=11,
                   data_range=255.0, k1=0.01, k2=0.03, betas=BETAS,
                   normalize="relu")


def torch_msssim_cropped(ta, tb):
    """torchmetrics' scales with the last scale's SSIM over whole windows
    only (None where its internals are not there to call)."""
    try:
        from torchmetrics.functional.image.ssim import _ssim_update
    except ImportError:
        return None
    factors = []
    p, t = tb, ta
    for s in range(len(BETAS)):
        last = s == len(BETAS) - 1
        out = _ssim_update(p, t, True, 1.5, 11, 255.0, 0.01, 0.03,
                           return_full_image=last,
                           return_contrast_sensitivity=not last)
        if not isinstance(out, tuple):
            return None
        if last:
            image = out[1]
            if image.shape[-2:] == p.shape[-2:]:    # padded: crop
                image = image[..., 5:-5, 5:-5]
            value = image.mean()
        else:
            value = out[1].mean()
        factors.append(torch.relu(value) ** BETAS[s])
        p = torch.nn.functional.avg_pool2d(p, (2, 2))
        t = torch.nn.functional.avg_pool2d(t, (2, 2))
    return float(torch.prod(torch.stack(factors)))


failures = 0
with tempfile.TemporaryDirectory() as tmp:
    for w, h in sizes:
        a, b = pair(w, h)
        ra, rb = os.path.join(tmp, "a.gray"), os.path.join(tmp, "b.gray")
        a.tofile(ra)
        b.tofile(rb)
        out = subprocess.run([prog, str(w), str(h), ra, rb, "--iterations",
                              "100"], check=True, capture_output=True,
                             text=True).stdout.split("\n")
        shipped = float(torch_msssim(on_gpu(a, torch.float64),
                                    on_gpu(b, torch.float64)))
        cropped = torch_msssim_cropped(on_gpu(a, torch.float64),
                                       on_gpu(b, torch.float64))
        want = shipped if cropped is None else cropped
        print(f"{w}x{h} torchmetrics as shipped {shipped:.12f}, last scale "
              f"cropped {'-' if cropped is None else f'{cropped:.12f}'}")
        for line in out:
            parts = line.split()
            if len(parts) == 2 and parts[0] in ("cpu", "cuda"):
                got = float(parts[1])
                ok = abs(got - want) <= 1e-5
                failures += not ok
                print(f"{'ok' if ok else 'FAIL'} {w}x{h} {parts[0]} "
                      f"{got:.12f} torchmetrics {want:.12f} "
                      f"diff {got - want:.2e}")
            elif parts and parts[0] == "kernel-us":
                ours_ms, ours_plain = float(parts[2]), float(parts[4])
        if (w, h) == (3840, 2160):
            ta, tb = on_gpu(a, torch.float32), on_gpu(b, torch.float32)
            for _ in range(3):
                torch_msssim(ta, tb)
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            n = 20
            start.record()
            for _ in range(n):
                torch_msssim(ta, tb)
            end.record()
            torch.cuda.synchronize()
            tm_us = start.elapsed_time(end) * 1e3 / n
            print(f"4K: torchmetrics float32 {tm_us:.0f} us a pair (frames "
                  f"on the GPU); ours: gauss11+MS-SSIM {ours_ms:.0f} us, "
                  f"gauss11 {ours_plain:.0f} us, MS-SSIM alone "
                  f"{ours_ms - ours_plain:.0f} us "
                  f"({(ours_ms - ours_plain) / ours_plain:.2f}x gauss11); "
                  f"torchmetrics / ours = {tm_us / ours_ms:.1f}x")
sys.exit(1 if failures else 0)
