#!/bin/sh
# Compares an encoded video with its source through cudassim and writes
# every frame's scores to a CSV log (window=ffmpeg planes=all, the numbers
# FFmpeg's ssim filter prints). With ffmpeg on PATH, runs FFmpeg's ssim
# filter on the same pair and prints both means.
#
#   examples/cudassim-compare.sh [SOURCE ENCODED] [LOG]
#
# Without files it makes them: 150 frames of a moving zone plate as raw
# I420 in Matroska, and a VP8 copy at 300 kbit/s. Needs the plugin on
# GST_PLUGIN_PATH (build/plugin) or installed.
set -eu
out=${TMPDIR:-/tmp}/cudassim-compare
mkdir -p "$out"
if [ $# -ge 2 ]; then
  src=$1
  enc=$2
  log=${3:-$out/cudassim.csv}
else
  src=$out/source.mkv
  enc=$out/encoded.webm
  log=${1:-$out/cudassim.csv}
  gst-launch-1.0 -q videotestsrc num-buffers=150 pattern=zone-plate kx2=20 ky2=20 kt=1 \
    ! video/x-raw,format=I420,width=640,height=360,framerate=30/1 \
    ! matroskamux ! filesink location="$src"
  gst-launch-1.0 -q filesrc location="$src" ! matroskademux \
    ! vp8enc target-bitrate=300000 deadline=1 ! webmmux \
    ! filesink location="$enc"
fi

# decodebin on both inputs; cudassim needs the same size and format on both
gst-launch-1.0 -q cudassim name=q window=ffmpeg planes=all location="$log" \
  post-messages=false ! fakesink \
  filesrc location="$src" ! decodebin ! q.reference \
  filesrc location="$enc" ! decodebin ! q.distorted
echo "cudassim log: $log"
tail -n 1 "$log"

if command -v ffmpeg >/dev/null 2>&1; then
  ffmpeg -hide_banner -loglevel error -i "$enc" -i "$src" \
    -lavfi "[0:v][1:v]ssim=stats_file=$out/ffmpeg-ssim.log" -f null -
  awk -F'All:' '{ split($2, a, " "); s += a[1]; n++ }
    END { printf "ffmpeg ssim All mean over %d frames: %.6f\n", n, s / n }' \
    "$out/ffmpeg-ssim.log"
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "ssim") c = i; next }
    /^#/ { next } { s += $c; n++ }
    END { printf "cudassim ssim mean over %d frames:        %.6f\n", n, s / n }' \
    "$log"
fi
