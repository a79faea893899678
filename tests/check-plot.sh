#!/bin/sh
# examples/cudaquality-plot.py on logs a pipeline made (cudasharpness with
# an alert, cudassim with planes=all, csv and jsonl): the PNG exists and has
# the requested size. Skips (77) without matplotlib.
#   check-plot.sh PLOT.py OUTDIR
set -eu
plot=$1
out=$2
py=/usr/bin/python3
[ -x $py ] || py=python3
if ! $py -c 'import matplotlib' 2>/dev/null; then
  echo "SKIP: no matplotlib (Debian: python3-matplotlib)"
  exit 77
fi
mkdir -p "$out"
rm -f "$out"/*.csv "$out"/*.jsonl "$out"/plot.png
gst-launch-1.0 -q cudassim name=q backend=cpu planes=all \
    location="$out/ssim.jsonl" log-format=jsonl alert-below=0.9 ! fakesink \
  videotestsrc num-buffers=40 pattern=ball \
  ! video/x-raw,width=96,height=64,framerate=30/1 ! tee name=t \
  t. ! queue ! cudasharpness backend=cpu metrics=lapvar+tenengrad \
    alert-metric=lapvar alert-below=1000 alert-frames=2 \
    location="$out/sharp.csv" ! fakesink \
  t. ! queue ! q.reference \
  t. ! queue ! jpegenc quality=10 ! jpegdec ! q.distorted
$py "$plot" "$out/sharp.csv" "$out/ssim.jsonl" -o "$out/plot.png" --size 900x700
$py - "$out/plot.png" <<'PY'
import struct, sys
with open(sys.argv[1], "rb") as f:
    head = f.read(24)
assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", head[16:24])
assert (w, h) == (900, 700), f"size {w}x{h}, asked 900x700"
print(f"plot.png: {w}x{h}")
PY
