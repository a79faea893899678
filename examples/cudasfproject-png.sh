#!/bin/sh
# Writes one rotation of simulated cone-beam CT detector frames (the 3D
# Shepp-Logan phantom through the SF projector) to 8-bit PNG files.
#
#   examples/cudasfproject-png.sh [VIEWS] [DIR]      (defaults: 360, /tmp/sfproject)
#
# Needs the plugin on GST_PLUGIN_PATH (build/plugin) or installed.
set -eu
views=${1:-360}
dir=${2:-${TMPDIR:-/tmp}/sfproject}
mkdir -p "$dir"
gst-launch-1.0 -q cudasfproject views="$views" num-buffers="$views" \
  ! video/x-raw,format=GRAY8 ! pngenc ! multifilesink location="$dir/view-%03d.png"
echo "$(ls "$dir"/view-*.png | wc -l) frames in $dir"
