#!/bin/sh
# Frames that never leave the GPU: NVDEC decodes a reference file and a
# re-encoded copy into CUDA memory, cudassim compares them there and
# cudasharpness measures the copy, all in nvcodec's CUDA context. Needs an
# NVIDIA GPU and GStreamer's nvcodec plugin (nvh264dec).
#
#   examples/cudaquality-nvdec.sh [REFERENCE.mp4 DISTORTED.mp4]
#
# Without arguments it makes the two files with tests/make-h264.sh (x264enc).
set -e
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -ge 2 ]; then
  ref=$1
  dist=$2
else
  dir=${TMPDIR:-/tmp}/cudaquality-nvdec
  "$here/../tests/make-h264.sh" "$dir"
  ref=$dir/reference.mp4
  dist=$dir/distorted.mp4
fi
if ! gst-inspect-1.0 nvh264dec >/dev/null 2>&1; then
  echo "no nvh264dec (GStreamer nvcodec plugin and an NVIDIA GPU needed)" >&2
  exit 77
fi
exec gst-launch-1.0 -m \
  cudassim name=q window=ffmpeg planes=all ! cudasharpness ! fakesink \
  filesrc location="$ref" ! qtdemux ! h264parse ! nvh264dec ! \
    "video/x-raw(memory:CUDAMemory)" ! q.reference \
  filesrc location="$dist" ! qtdemux ! h264parse ! nvh264dec ! \
    "video/x-raw(memory:CUDAMemory)" ! q.distorted
