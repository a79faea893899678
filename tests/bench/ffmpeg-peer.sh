#!/bin/sh
# Builds FFmpeg's ssim filter as a peer for hosts that have no FFmpeg (the
# GPU hosts): a static `ffmpeg` with only what bench-cpu-vs-ffmpeg.sh runs
# (raw frames in, the ssim filter, the null output; the MJPEG codec and
# Matroska for making its distorted frames; scale and format for its
# 10-bit copies), from Debian's source of the FFmpeg this host has, with its
# x86 asm (ssim_4x4_line, ssim_end_line) as Debian's build has it.
#
#   tests/bench/ffmpeg-peer.sh [OUT_DIR]      (default: ffmpeg-peer)
#
# Then `FFMPEG=OUT_DIR/ffmpeg` in the environment of bench-cpu-vs-ffmpeg.sh
# (or OUT_DIR first in PATH) on the host without FFmpeg. Static, so that it
# runs with no library of this host. FFMPEG_VERSION (default: the installed
# ffmpeg's upstream version) picks another release. Needs curl, a C
# compiler, make and nasm (apt-get'd when root). It prints the filter's
# score beside the system ffmpeg's on a pair of frames it makes, when there
# is one: the two must agree.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
set -e
OUT=${1:-ffmpeg-peer}
VERSION=${FFMPEG_VERSION:-$(dpkg-query -W -f '${Version}' ffmpeg 2>/dev/null |
    sed 's/^[0-9]*://; s/-.*//')}
if [ -z "$VERSION" ]; then
  echo "no ffmpeg package here: set FFMPEG_VERSION (e.g. 5.1.9)" >&2
  exit 1
fi
need=""
for tool in curl nasm make cc; do
  command -v $tool > /dev/null || need="$need $tool"
done
if [ -n "$need" ]; then
  pkgs=$(echo "$need" | sed 's/\bcc\b/gcc/')
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y --no-install-recommends $pkgs
  else
    echo "missing:$need; install with: sudo apt-get install$pkgs" >&2
    exit 1
  fi
fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
TAR=ffmpeg_$VERSION.orig.tar.xz
for pool in debian/pool/main debian-security/pool/updates/main; do
  curl -fsSL -o "$WORK/$TAR" "http://deb.debian.org/$pool/f/ffmpeg/$TAR" &&
    break
done
[ -s "$WORK/$TAR" ] || { echo "could not fetch $TAR" >&2; exit 1; }
echo "source: $TAR, sha256 $(sha256sum "$WORK/$TAR" | cut -d' ' -f1)"
tar -xJf "$WORK/$TAR" -C "$WORK"
cd "$WORK/ffmpeg-$VERSION"
./configure --disable-everything --disable-doc --disable-autodetect \
    --disable-programs --enable-ffmpeg --enable-static --disable-shared \
    --extra-ldflags=-static \
    --enable-protocol=file,pipe \
    --enable-demuxer=rawvideo,matroska --enable-muxer=null,rawvideo,matroska \
    --enable-decoder=rawvideo,mjpeg \
    --enable-encoder=wrapped_avframe,rawvideo,mjpeg \
    --enable-filter=ssim,null,format,scale,copy,anull,aformat,aresample \
    --enable-filter=setpts,trim,atrim,buffer,buffersink \
    > configure.log 2>&1 || { tail -20 configure.log >&2; exit 1; }
grep -q '^HAVE_X86ASM=yes' ffbuild/config.mak ||
  { echo "configure found no x86 assembler: the filter would be C" >&2
    exit 1; }
make -j"$(nproc)" ffmpeg > make.log 2>&1 || { tail -20 make.log >&2; exit 1; }
cp ffmpeg "$OUT/ffmpeg"
echo "built $OUT/ffmpeg ($("$OUT/ffmpeg" -version | head -1))"

# the two ffmpegs on the same pair: a gradient and its noisy copy
python3 - "$WORK/a.gray" "$WORK/b.gray" <<'EOF'
import random
import sys

random.seed(5)
w, h = 320, 240
a = bytes((x + 2 * y) % 256 for y in range(h) for x in range(w))
b = bytes(min(255, max(0, v + random.randint(-9, 9))) for v in a)
open(sys.argv[1], "wb").write(a)
open(sys.argv[2], "wb").write(b)
EOF
score () {
  "$1" -nostdin -hide_banner -loglevel info -f rawvideo -pix_fmt gray \
      -s 320x240 -i "$WORK/a.gray" -f rawvideo -pix_fmt gray -s 320x240 \
      -i "$WORK/b.gray" -lavfi "[0:v][1:v]ssim" -f null - 2>&1 |
    sed -n 's/.*SSIM Y:\([0-9.]*\) .*/\1/p'
}
echo "ssim of a test pair: peer $(score "$OUT/ffmpeg")"
if command -v ffmpeg > /dev/null; then
  echo "ssim of a test pair: system ffmpeg $(score ffmpeg)"
fi
