#!/bin/sh
# Makes the H.264 files the NVDEC tests and examples decode: a reference
# (x264, near-lossless) and a re-encoded copy of it (decoded, then x264 at a
# low bitrate).
#   tests/make-h264.sh OUT_DIR [WIDTHxHEIGHT] [FRAMES]
set -e
out=$1
size=${2:-1280x720}
frames=${3:-60}
w=${size%x*}
h=${size#*x}
mkdir -p "$out"
for e in x264enc mp4mux qtdemux h264parse openh264dec; do
  if ! gst-inspect-1.0 "$e" >/dev/null 2>&1; then
    echo "make-h264.sh: GStreamer element $e missing (gstreamer1.0-plugins-ugly/-bad)" >&2
    exit 1
  fi
done
gst-launch-1.0 -q videotestsrc pattern=ball motion=sweep animation-mode=frames \
    num-buffers="$frames" \
  ! "video/x-raw,format=I420,width=$w,height=$h,framerate=30/1" \
  ! x264enc quantizer=8 pass=quant speed-preset=veryfast tune=zerolatency \
  ! mp4mux ! filesink location="$out/reference.mp4"
gst-launch-1.0 -q filesrc location="$out/reference.mp4" ! qtdemux ! h264parse \
  ! openh264dec ! videoconvert ! "video/x-raw,format=I420" \
  ! x264enc bitrate=300 speed-preset=veryfast tune=zerolatency \
  ! mp4mux ! filesink location="$out/distorted.mp4"
