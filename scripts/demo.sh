#!/bin/sh
# The demo: builds the plugin and runs the embedded default pipeline: a test
# pattern and a blurred copy through cudasharpness, and the copy against the
# original through cudassim, printing each frame's scores (CUDA where a GPU
# is usable, else the CPU), then each element's summary as a report (which
# backend and device measured, the scores' mean, min and max, the alerts).
# The default pipeline also logs its scores to build/demo/*.jsonl (an alert
# on the blurred copy's SSIM below 0.9) and, where matplotlib is installed,
# plots them with examples/cudaquality-plot.py to build/demo/scores.png.
#
#   scripts/demo.sh ['PIPELINE']       (a gst-launch description with
#                                       cudasharpness and/or cudassim)
set -u
cd "$(dirname "$0")/.."
sh scripts/deps.sh || exit 1
export PATH="$PATH:/usr/local/cuda/bin"
if [ ! -f build/build.ninja ]; then
  meson setup build || exit 1
fi
ninja -C build || exit 1
export GST_PLUGIN_PATH="$PWD/build/plugin${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
if [ $# -gt 0 ]; then
  exec build/examples/cudaquality-print "$@"
fi
mkdir -p build/demo
build/examples/cudaquality-print "videotestsrc num-buffers=30 pattern=smpte ! \
  video/x-raw,format=I420,width=1280,height=720,framerate=30/1 ! tee name=t \
  t. ! queue ! cudasharpness name=sharp metrics=tenengrad+laplacian+smd2+lapvar \
    location=build/demo/sharp.jsonl log-format=jsonl ! ssim.reference \
  t. ! queue ! videoconvert ! gaussianblur sigma=2.0 ! videoconvert ! \
    video/x-raw,format=I420 ! cudasharpness name=blurred \
    metrics=tenengrad+laplacian+smd2+lapvar location=build/demo/blurred.jsonl \
    log-format=jsonl ! ssim.distorted \
  cudassim name=ssim planes=all location=build/demo/ssim.jsonl log-format=jsonl \
    alert-below=0.9 ! fakesink" || exit 1
if python3 -c 'import matplotlib' 2>/dev/null; then
  python3 examples/cudaquality-plot.py build/demo/ssim.jsonl \
    build/demo/sharp.jsonl build/demo/blurred.jsonl -o build/demo/scores.png \
    --size 1000x900 && echo "plot: build/demo/scores.png"
fi
