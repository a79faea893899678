#!/usr/bin/env python3
"""Plots score logs of cudasharpness or cudassim (location=, csv or jsonl).

    cudaquality-plot.py LOG [LOG ...] -o OUT.png [--size WxH]

A panel per score kind (ssim, psnr, lapvar, ...), a line per log and plane,
over running time (seconds; frame numbers where a log has none); the alert
bounds a log's summary names as dashed lines, and the spans its alert was on
(replayed from the scores with the summary's alert-frames and
alert-clear-frames) shaded; each line's legend entry carries the summary's
mean, min and max and the alert count. Needs matplotlib (Debian:
python3-matplotlib).

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import csv
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TIME_FIELDS = ("frame", "pts", "running-time")


def number(v):
    """A log value: a number, or "nan"/"inf"/"-inf", or empty (None)."""
    if v is None or v == "":
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(v)
    except ValueError:
        return None


def read_log(path):
    """(fields, rows, summary): rows are dicts of floats."""
    with open(path, newline="") as f:
        text = f.read()
    rows, summary, fields = [], {}, []
    if text.lstrip().startswith("{"):
        for line in text.splitlines():
            if not line.strip():
                continue
            obj = json.loads(line)
            if "summary" in obj:
                summary = obj["summary"]
                continue
            if not fields:
                fields = [k for k in obj if k not in TIME_FIELDS]
            rows.append({k: number(v) for k, v in obj.items()})
    else:
        records = list(csv.reader(text.splitlines(True)))
        header = records[0]
        fields = [k for k in header if k not in TIME_FIELDS]
        for rec in records[1:]:
            if rec and rec[0] == "# summary":
                summary = dict(kv.split("=", 1) for kv in rec[1:])
            elif rec:
                rows.append({k: number(v) for k, v in zip(header, rec)})
    return fields, rows, summary


def kind_of(field):
    """("ssim", "y") for ssim-y, ("psnr", None) for psnr."""
    head, _, tail = field.rpartition("-")
    if head and len(tail) == 1:
        return head, tail
    return field, None


def alert_spans(xs, values, summary):
    """The spans the alert was on, replayed from the scores."""
    below = number(summary.get("alert-below"))
    above = number(summary.get("alert-above"))
    fire = int(number(summary.get("alert-frames")) or 1)
    clear = int(number(summary.get("alert-clear-frames")) or 1)
    spans, bad, good, start, active = [], 0, 0, None, False
    for i, v in enumerate(values):
        past = v is None or math.isnan(v) or (below is not None and v < below) \
            or (above is not None and v > above)
        if past:
            good = 0
            bad += 1
            if bad == 1 and not active:
                start = i
            if not active and bad >= fire:
                active = True
        else:
            bad = 0
            if active:
                good += 1
                if good >= clear:
                    spans.append((xs[start], xs[i - clear]))
                    active, good = False, 0
    if active:
        spans.append((xs[start], xs[-1]))
    return below, above, spans


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="+", metavar="LOG")
    ap.add_argument("-o", "--output", required=True, metavar="OUT.png")
    ap.add_argument("--size", default="1200x800", metavar="WxH",
                    help="the PNG's size in pixels (default 1200x800)")
    args = ap.parse_args()
    try:
        width, height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        ap.error(f"--size: \"{args.size}\" is not WxH")

    logs = [(os.path.basename(p), *read_log(p)) for p in args.logs]
    kinds = []
    for _, fields, _, _ in logs:
        for f in fields:
            if kind_of(f)[0] not in kinds:
                kinds.append(kind_of(f)[0])
    dpi = 100
    fig, axes = plt.subplots(len(kinds), 1, squeeze=False, sharex=True,
                             figsize=(width / dpi, height / dpi), dpi=dpi)
    use_time = all(r.get("running-time") is not None
                   for _, _, rows, _ in logs for r in rows)
    for ax, kind in zip(axes[:, 0], kinds):
        for name, fields, rows, summary in logs:
            xs = [r["running-time"] / 1e9 if use_time else r["frame"]
                  for r in rows]
            for f in fields:
                if kind_of(f)[0] != kind:
                    continue
                ys = [r.get(f) for r in rows]
                plane = kind_of(f)[1]
                label = name + (f" {plane}" if plane else "")
                mean = number(summary.get(f"{f}-mean"))
                if mean is not None:
                    label += (f" (mean {mean:.4g}, min "
                              f"{number(summary.get(f'{f}-min')):.4g}, max "
                              f"{number(summary.get(f'{f}-max')):.4g})")
                finite = [y if y is not None and math.isfinite(y) else None
                          for y in ys]
                ax.plot(xs, [float("nan") if y is None else y
                             for y in finite], label=label, linewidth=1)
                if summary.get("alert-metric") == f and rows:
                    below, above, spans = alert_spans(xs, ys, summary)
                    n = summary.get("alerts", len(spans))
                    for b, word in ((below, "below"), (above, "above")):
                        if b is not None:
                            ax.axhline(b, linestyle="--", color="red",
                                       linewidth=1,
                                       label=f"{name} alert-{word} {b:.4g} "
                                       f"({n} alert(s))")
                    for x0, x1 in spans:
                        ax.axvspan(x0, x1, color="red", alpha=0.15)
        ax.set_ylabel(kind)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", loc="best")
    axes[-1, 0].set_xlabel("running time (s)" if use_time else "frame")
    fig.tight_layout()
    fig.savefig(args.output, dpi=dpi)
    return 0


if __name__ == "__main__":
    sys.exit(main())
