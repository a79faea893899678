#!/bin/sh
# The demo: builds the plugin and runs the embedded default pipeline: a test
# pattern and a blurred copy through cudasharpness, and the copy against the
# original through cudassim, printing each frame's scores (CUDA where a GPU
# is usable, else the CPU).
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
exec build/examples/cudaquality-print "$@"
