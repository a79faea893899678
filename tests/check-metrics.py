#!/usr/bin/env python3
# The metrics endpoint (metrics-address), on the CPU backend, loopback only:
#  - two elements naming one address share one server; GET /metrics
#    mid-stream serves both, and `promtool check metrics` passes on it;
#  - other paths are 404, other methods 405; a port already taken is an
#    error at start naming the address;
#  - a Prometheus server started here scrapes it, and its HTTP API returns
#    our gauge with the value the log has.
# Exits 77 without PyGObject or promtool/prometheus.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cqcheck import check, finish, gray8_caps, import_gst  # noqa: E402

Gst = import_gst()

for tool in ("promtool", "prometheus"):
    if shutil.which(tool) is None:
        print(f"SKIP: {tool} not found (Debian: prometheus)")
        sys.exit(77)

W, H = 64, 48
CAPS = gray8_caps(W, H)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url):
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""


def start(desc):
    pipe = Gst.parse_launch(desc)
    pipe.set_state(Gst.State.PLAYING)
    return pipe


def push(src, data, i):
    buf = Gst.Buffer.new_wrapped(data)
    buf.pts = i * Gst.SECOND // 30
    buf.duration = Gst.SECOND // 30
    src.emit("push-buffer", buf)


def first_error(pipe, timeout=10):
    m = pipe.get_bus().timed_pop_filtered(
        timeout * Gst.SECOND, Gst.MessageType.ERROR | Gst.MessageType.EOS)
    if m is not None and m.type == Gst.MessageType.ERROR:
        err, debug = m.parse_error()
        return f"{err.message} ({debug})"
    return None


def main():
    Gst.init(None)
    tmp = tempfile.mkdtemp(prefix="cq-metrics-")
    port = free_port()
    addr = f"127.0.0.1:{port}"
    url = f"http://{addr}/metrics"
    frame = bytes((x * 7 + y * 3) % 256 for y in range(H) for x in range(W))
    log = f"{tmp}/sharp.jsonl"
    pipe = start(
        f"appsrc name=a format=time caps={CAPS} ! tee name=t "
        f"t. ! queue ! cudasharpness name=sharp backend=cpu "
        f"metrics=lapvar+tenengrad metrics-address={addr} location={log} "
        "log-format=jsonl alert-metric=lapvar alert-above=0 ! fakesink "
        f"t. ! queue ! cudasharpness name=other backend=cpu "
        f"metrics-address={addr} ! fakesink")
    src = pipe.get_by_name("a")
    for i in range(5):
        push(src, frame, i)
    # mid-stream: both elements have measured
    body = ""
    for _ in range(100):
        status, body = http("GET", url)
        if ('cudaquality_frames_total{element="sharp"} 5' in body
                and 'cudaquality_frames_total{element="other"} 5' in body):
            break
        time.sleep(0.1)
    check('cudaquality_frames_total{element="sharp"} 5' in body,
          f"sharp counted 5 frames: {body[:2000]}")
    check('element="other"' in body, "one server for both elements")
    check('cudaquality_alerts_total{element="sharp"} 1' in body,
          "the alert counted")
    check('cudaquality_alert_active{element="sharp"} 1' in body,
          "the alert on")
    with open(f"{tmp}/metrics.txt", "w") as f:
        f.write(body)
    r = subprocess.run(["promtool", "check", "metrics"], input=body,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"promtool check metrics: {r.stdout}{r.stderr}")
    check(http("GET", f"http://{addr}/")[0] == 404, "/ is 404")
    check(http("GET", f"http://{addr}/metricsx")[0] == 404, "/metricsx 404")
    check(http("POST", url)[0] == 405, "POST is 405")

    # an address another program holds: an error at start naming it
    # (elements of this process naming one address share its server)
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = "127.0.0.1:%d" % held.getsockname()[1]
        other = start("videotestsrc num-buffers=2 ! cudasharpness "
                      f"backend=cpu metrics-address={taken} ! fakesink")
        err = first_error(other)
        check(err is not None and taken in err, f"port taken: {err}")
        other.set_state(Gst.State.NULL)

    # Prometheus scrapes it
    prom_port = free_port()
    with open(f"{tmp}/prometheus.yml", "w") as f:
        f.write("global:\n  scrape_interval: 1s\n"
                "scrape_configs:\n  - job_name: cudaquality\n"
                f"    static_configs:\n      - targets: ['{addr}']\n")
    prom = subprocess.Popen(
        ["prometheus", f"--config.file={tmp}/prometheus.yml",
         f"--storage.tsdb.path={tmp}/data",
         f"--web.listen-address=127.0.0.1:{prom_port}"],
        stdout=subprocess.DEVNULL, stderr=open(f"{tmp}/prometheus.log", "w"))
    try:
        with open(log) as f:
            expect = json.loads(f.readline())["lapvar"]
        q = urllib.parse.quote(
            'cudaquality_score{element="sharp",measure="lapvar"}')
        got = None
        deadline = time.time() + 60
        while time.time() < deadline and got is None:
            time.sleep(1)
            try:
                status, text = http(
                    "GET", f"http://127.0.0.1:{prom_port}/api/v1/query?query={q}")
            except (urllib.error.URLError, ConnectionError):
                continue
            if status == 200:
                res = json.loads(text)["data"]["result"]
                if res:
                    got = float(res[0]["value"][1])
        check(got is not None and abs(got - expect) <= 1e-9 * abs(expect),
              f"Prometheus has the gauge: {got} (log: {expect})")
    finally:
        prom.terminate()
        prom.wait(timeout=30)
    src.emit("end-of-stream")
    check(first_error(pipe) is None, "the pipeline ends cleanly")
    pipe.set_state(Gst.State.NULL)
    # the server went with its elements
    try:
        http("GET", url)
        check(False, "the server stops with its last element")
    except (urllib.error.URLError, ConnectionError):
        pass

    return finish("metrics")


if __name__ == "__main__":
    sys.exit(main())
