#!/bin/sh
# Installs what building and testing the plugin needs on Debian 12: apt-get
# when root, otherwise prints the exact command and fails. The CUDA toolkit
# (nvcc) is optional: without it the plugin builds with the CPU backend only.
#
#   scripts/deps.sh [--tests]     (--tests: also the public references the
#                                  tests compare with: scikit-image, FFmpeg;
#                                  Prometheus and promtool for the metrics
#                                  endpoint; matplotlib for the plot example)
set -e
pkgs="meson ninja-build pkg-config gcc libc6-dev
  libglib2.0-dev libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  libgstreamer-plugins-bad1.0-dev gstreamer1.0-tools
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad python3-gi gir1.2-gstreamer-1.0 libpng-dev
  libjson-glib-dev libsoup-3.0-dev"
if [ "${1:-}" = "--tests" ]; then
  pkgs="$pkgs python3-numpy python3-skimage ffmpeg gstreamer1.0-plugins-ugly
    prometheus python3-matplotlib"
fi
missing=""
for p in $pkgs; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "missing packages; run:" >&2
    echo "  sudo apt-get install -y$missing" >&2
    exit 1
  fi
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "note: no nvcc on PATH or in /usr/local/cuda/bin: building without CUDA"
fi
