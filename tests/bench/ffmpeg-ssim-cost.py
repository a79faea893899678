#!/usr/bin/env python3
"""FFmpeg's ssim filter's CPU cost, for bench-cpu-vs-ffmpeg.sh.

  ffmpeg-ssim-cost.py best REPEAT THREADS N LOOPS DIR W H
      CPU seconds (user + sys) of `ffmpeg ... -lavfi ssim -f null -` and of
      the same command without the filter (reading the two raw files and the
      null output), run alternately REPEAT times over the frames read LOOPS
      times (-stream_loop); prints the filter's CPU ms a frame (the
      difference of the two minima) and the whole command's, then, when perf
      can record, the ssim command's CPU ms a frame in libavfilter (the
      filter's functions; the reading, copies and page faults are
      elsewhere), best of REPEAT.

  ffmpeg-ssim-cost.py rounds ROUNDS THREADS N LOOPS DIR W H BENCH [PIX_FMT]
      ROUNDS rounds, each of the ssim command, the command without it, the
      ssim command under perf record (when perf works) and BENCH (our
      bench-cpu-frames) once a window, frames hot; a markdown table row a
      window and reference: the median and range of the rounds' ratios
      (ours / FFmpeg's), each of runs seconds apart.

  The frames are DIR/ref.gray and DIR/dist.gray; with PIX_FMT (gray10le,
  gray12le, gray16le) DIR/ref.PIX_FMT and DIR/dist.PIX_FMT, read as raw
  frames of that format by both (bench-cpu-frames --pix-fmt).

  FFMPEG in the environment names the ffmpeg to run (default: ffmpeg from
  PATH), e.g. the static peer of tests/bench/ffmpeg-peer.sh.

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

PERF_HZ = 4999


def frame_file(d, name, pix_fmt):
    """a frame file of DIR"""
    return f"{d}/{name}.{pix_fmt}"


def commands(threads, loops, d, w, h, pix_fmt="gray"):
    """the ssim command and the same without the filter"""
    base = [os.environ.get("FFMPEG", "ffmpeg"), "-nostdin", "-hide_banner",
            "-loglevel", "error",
            "-threads", "1", "-filter_threads", threads]
    for name in ("ref", "dist"):
        base += ["-stream_loop", str(loops - 1), "-f", "rawvideo", "-pix_fmt",
                 pix_fmt, "-s", f"{w}x{h}", "-i", frame_file(d, name, pix_fmt)]
    return (base + ["-lavfi", "[0:v][1:v]ssim", "-f", "null", "-"],
            base + ["-map", "0:v", "-map", "1:v", "-f", "null", "-"])


def cpu_s(cmd):
    """CPU seconds (user + sys) of one run of cmd"""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def perf_samples(cmd, tmp):
    """cmd's cpu-clock samples in libavfilter under perf record, or None"""
    if not shutil.which("perf"):
        return None
    data = os.path.join(tmp, "perf.data")
    r = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F",
                        str(PERF_HZ), "-o", data, "--"] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        return None
    rep = subprocess.run(["perf", "report", "-i", data, "--stdio", "-n",
                          "--sort", "dso"], capture_output=True,
                         text=True).stdout
    samples = sum(int(line.split()[1]) for line in rep.splitlines()
                  if "libavfilter" in line and not line.startswith("#"))
    return samples or None


def best(repeat, threads, n, loops, d, w, h):
    ssim, none = commands(threads, loops, d, w, h)
    frames = n * loops
    fewest = {}
    for _ in range(repeat):
        for k, cmd in (("ssim", ssim), ("none", none)):
            t = cpu_s(cmd)
            fewest[k] = min(fewest.get(k, t), t)
    out = [f"{(fewest['ssim'] - fewest['none']) / frames * 1e3:.3f}",
           f"{fewest['ssim'] / frames * 1e3:.2f}"]
    with tempfile.TemporaryDirectory() as tmp:
        samples = []
        for _ in range(repeat):
            s = perf_samples(ssim, tmp)
            if s is None:
                break
            samples.append(s)
        else:
            out.append(f"{min(samples) / PERF_HZ / frames * 1e3:.3f}")
    print(" ".join(out))


def rounds(count, threads, n, loops, d, w, h, bench, pix_fmt="gray"):
    ssim, none = commands(threads, loops, d, w, h, pix_fmt)
    fmt_args = [] if pix_fmt == "gray" else ["--pix-fmt", pix_fmt]
    bits = "" if pix_fmt == "gray" else f" {pix_fmt}"
    frames = n * loops
    windows = ("ffmpeg", "box8")
    refs = {"filter": "the ssim filter",
            "functions": "its SSIM functions alone, perf"}
    ratios = {(k, r): [] for k in windows for r in refs}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(count):
            ff = {"filter": (cpu_s(ssim) - cpu_s(none)) / frames * 1e3}
            s = perf_samples(ssim, tmp)
            if s is not None:
                ff["functions"] = s / PERF_HZ / frames * 1e3
            for k in windows:
                out = subprocess.run(
                    [bench, "--size", f"{w}x{h}", "--frames", str(n),
                     "--threads", threads, "--repeat", "1", "--ssim", k,
                     "--hot"] + fmt_args + [frame_file(d, "ref", pix_fmt),
                                         frame_file(d, "dist", pix_fmt)],
                    check=True, capture_output=True, text=True).stdout
                for r, t in ff.items():
                    if t > 0:
                        ratios[k, r].append(float(out.split()[0]) / t)
    for (k, r), v in ratios.items():
        if v:
            print(f"| ssim {k}{bits}, frames hot (FFmpeg: {refs[r]}) | "
                  f"{threads} | "
                  f"{statistics.median(v):.2f} | {min(v):.2f}-{max(v):.2f} "
                  f"| {len(v)} |")


if __name__ == "__main__":
    mode, count, threads, n, loops, d, w, h = sys.argv[1:9]
    args = (int(count), threads, int(n), int(loops), d, w, h)
    if mode == "best":
        best(*args)
    elif mode == "rounds":
        rounds(*args, *sys.argv[9:11])
    else:
        sys.exit(f"unknown mode {mode}")
