#!/bin/sh
# The demo: builds the plugin and runs the embedded default pipeline, a test
# pattern that is blurred more and more, through cudasharpness, printing each
# frame's scores (CUDA where a GPU is usable, else the CPU).
#
#   scripts/demo.sh ['PIPELINE']       (a gst-launch description with a
#                                       cudasharpness in it)
set -u
cd "$(dirname "$0")/.."
sh scripts/deps.sh || exit 1
export PATH="$PATH:/usr/local/cuda/bin"
if [ ! -f build/build.ninja ]; then
  meson setup build || exit 1
fi
ninja -C build || exit 1
export GST_PLUGIN_PATH="$PWD/build/plugin${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
exec build/examples/cudasharpness-print "$@"
