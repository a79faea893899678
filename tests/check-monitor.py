#!/usr/bin/env python3
# Live QA monitoring, on the CPU backend:
#  - alerts with hysteresis: a stream that blurs for a stretch and recovers
#    gives exactly one <element>-alert and one <element>-alert-cleared, for
#    cudasharpness and cudassim, live and not live, and the summary counts
#    them;
#  - the logs: every line of every log (csv and jsonl, every element, planes
#    luma and all, inf scores, the summary with its alert and unpaired
#    counts) parses back with Python's json / csv;
#  - a log that cannot be written (/dev/full, a missing directory) is an
#    error naming the path.
# Exits 77 without PyGObject or numpy.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import csv
import json
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cqcheck import check, finish, gray8_caps, import_gst  # noqa: E402

Gst = import_gst()

try:
    import numpy as np
except (ImportError, ValueError) as e:
    print(f"SKIP: {e}")
    sys.exit(77)

W, H, N = 64, 48, 30
BLUR = range(10, 18)            # the frames blurred
CAPS = gray8_caps(W, H)


def frames():
    rng = np.random.default_rng(7)
    sharp = rng.integers(0, 256, (H, W)).astype(np.float64)
    k = 5
    pad = np.pad(sharp, k // 2, mode="edge")
    blurred = sum(pad[y:y + H, x:x + W] for y in range(k)
                  for x in range(k)) / (k * k)
    sharp = sharp.astype(np.uint8).tobytes()
    blurred = blurred.astype(np.uint8).tobytes()
    return [(sharp, blurred if i in BLUR else sharp) for i in range(N)]


def run(desc, pushes, live):
    """desc names appsrcs ref/dist; pushes: (src name, [bytes]) pairs."""
    pipe = Gst.parse_launch(desc)
    srcs = {n: pipe.get_by_name(n) for n, _ in pushes}
    for s in srcs.values():
        s.set_property("is-live", live)
        s.set_property("format", Gst.Format.TIME)
        s.set_property("caps", Gst.Caps.from_string(CAPS))
    pipe.set_state(Gst.State.PLAYING)
    for i in range(N):
        for name, datas in pushes:
            buf = Gst.Buffer.new_wrapped(datas[i])
            buf.pts = i * Gst.SECOND // 30
            buf.duration = Gst.SECOND // 30
            srcs[name].emit("push-buffer", buf)
    for s in srcs.values():
        s.emit("end-of-stream")
    msgs = []
    bus = pipe.get_bus()
    while True:
        m = bus.timed_pop(30 * Gst.SECOND)
        if m is None:
            msgs.append(("error", "timeout"))
            break
        if m.type == Gst.MessageType.ELEMENT:
            msgs.append((m.get_structure().get_name(), m.get_structure()))
        elif m.type == Gst.MessageType.ERROR:
            err, debug = m.parse_error()
            msgs.append(("error", f"{err.message} ({debug})"))
            break
        elif m.type == Gst.MessageType.EOS:
            break
    pipe.set_state(Gst.State.NULL)
    return msgs


def sharpness_desc(props, live):
    sync = "true" if live else "false"
    return (f"appsrc name=dist ! cudasharpness name=m backend=cpu {props} ! "
            f"fakesink sync={sync}")


def ssim_desc(props, live):
    sync = "true" if live else "false"
    # live: 200 ms of aggregator latency, so that a loaded machine does
    # not time a pair out
    latency = "latency=200000000" if live else ""
    return (f"cudassim name=m backend=cpu {latency} {props} ! "
            f"fakesink sync={sync} "
            "appsrc name=ref ! m.reference appsrc name=dist ! m.distorted")


def check_log(path, fmt, what):
    with open(path, newline="") as f:
        text = f.read()
    check(text.endswith("\n"), f"{what}: the log ends with a whole line")
    lines = text.splitlines()
    if fmt == "jsonl":
        objs = []
        for n, line in enumerate(lines):
            try:
                objs.append(json.loads(line))
            except ValueError as e:
                check(False, f"{what}: line {n + 1} is not JSON: {e}: {line}")
        check(bool(objs) and "summary" in objs[-1],
              f"{what}: summary last")
        return objs[:-1], objs[-1]["summary"] if objs else {}
    rows = list(csv.reader(text.splitlines(True)))
    check(all(len(r) == len(rows[0]) for r in rows[1:-1]),
          f"{what}: every row has the header's columns")
    check(rows[-1][0] == "# summary", f"{what}: summary last")
    summary = dict(kv.split("=", 1) for kv in rows[-1][1:])
    frames = [dict(zip(rows[0], r)) for r in rows[1:-1]]
    return frames, summary


def main():
    Gst.init(None)
    pairs = frames()
    ref = [a for a, _ in pairs]
    dist = [b for _, b in pairs]
    tmp = tempfile.mkdtemp(prefix="cq-monitor-")

    # the bound: halfway between the sharp and blurred frames' scores
    cases = [
        ("cudasharpness", sharpness_desc, [("dist", dist)], "lapvar",
         "metrics=lapvar+tenengrad"),
        ("cudassim", ssim_desc, [("ref", ref), ("dist", dist)], "ssim",
         "planes=all"),
    ]
    for name, desc, pushes, metric, extra in cases:
        msgs = run(desc(f"{extra} location={tmp}/probe.jsonl "
                        "log-format=jsonl", False), pushes, False)
        objs, _ = check_log(f"{tmp}/probe.jsonl", "jsonl", f"{name} probe")
        good = objs[0][metric]
        bad = objs[BLUR[0]][metric]
        bound = (good + bad) / 2
        for live in (False, True):
            for fmt in ("csv", "jsonl"):
                what = f"{name} live={live} {fmt}"
                path = f"{tmp}/{name}-{live}.{fmt}"
                props = (f"{extra} alert-metric={metric} "
                         f"alert-below={bound!r} alert-frames=2 "
                         f"alert-clear-frames=3 location={path} "
                         f"log-format={fmt}")
                msgs = run(desc(props, live), pushes, live)
                errors = [s for n, s in msgs if n == "error"]
                check(not errors, f"{what}: no error: {errors}")
                alerts = [s for n, s in msgs if n == f"{name}-alert"]
                clears = [s for n, s in msgs if n == f"{name}-alert-cleared"]
                check(len(alerts) == 1, f"{what}: one alert ({len(alerts)})")
                check(len(clears) == 1, f"{what}: one clear ({len(clears)})")
                if alerts:
                    a = alerts[0]
                    check(a.get_value("frame") == BLUR[0] + 1,
                          f"{what}: fires on the second blurred frame")
                    check(a.get_value("bound") == bound, f"{what}: bound")
                    check(a.get_value("value") < bound, f"{what}: value")
                    check(a.get_value("running-time") ==
                          (BLUR[0] + 1) * Gst.SECOND // 30,
                          f"{what}: running time")
                if clears:
                    c = clears[0]
                    check(c.get_value("frames") == len(BLUR),
                          f"{what}: frames affected "
                          f"{c.get_value('frames')}")
                    check(c.get_value("frame") == BLUR[-1] + 3,
                          f"{what}: clears on the third good frame")
                    check(c.get_value("worst") < bound, f"{what}: worst")
                summ = [s for n, s in msgs if n == f"{name}-summary"]
                check(len(summ) == 1 and summ[0].get_value("alerts") == 1
                      and summ[0].get_value("alert-active") is False,
                      f"{what}: summary counts")
                rows, summary = check_log(path, fmt, what)
                check(len(rows) == N, f"{what}: {len(rows)} rows")
                check(str(summary.get("alerts")) == "1",
                      f"{what}: log summary alerts")
                if name == "cudassim":
                    # identical frames: psnr is inf, written as "inf"
                    check(str(rows[0]["psnr"]) == "inf"
                          and math.isinf(float(rows[0]["psnr"])),
                          f"{what}: inf psnr")
                    check("unpaired-frames" in summary,
                          f"{what}: unpaired counts")
                    check(summary.get("window") == "box8",
                          f"{what}: window")

    # unwritable logs: an error naming the path
    for loc in ("/dev/full", f"{tmp}/no/such/dir/x.csv"):
        for fmt in ("csv", "jsonl"):
            msgs = run(sharpness_desc(f"location={loc} log-format={fmt}",
                                      False), [("dist", dist)], False)
            errors = [s for n, s in msgs if n == "error"]
            check(len(errors) == 1 and loc in errors[0],
                  f"{loc} {fmt}: an error naming the path: {errors}")

    return finish("monitor")


if __name__ == "__main__":
    sys.exit(main())
