#!/bin/sh
# The CPU backend against FFmpeg's `ssim` filter (and the sharpness measures
# against OpenCV's Laplacian().var()) on the same real-ish frames: prints
# figures, asserts nothing. Run from the build directory:
#
#   ../tests/bench/bench-cpu-vs-ffmpeg.sh [FRAME_DIR]
#
# Frames (made once, kept in FRAME_DIR, default $TMPDIR/cq-bench-frames):
# 60 8-bit 1920x1080 luma frames cut from 12 scikit-image sample photos
# (5 crops of each, bilinear-scaled to 1080p), and their MJPEG-distorted copies
# (FFmpeg's mjpeg encoder at -q:v 10, decoded back to gray).
#
# Per frame, in milliseconds of CPU time (user + sys, every thread), best of
# REPEAT (default 5) passes over the 60 frames:
#  - ours: tests/bench/bench-cpu-frames, only the cq_ssim_cpu_measure /
#    cq_sharpness_cpu_measure calls timed; against FFmpeg with --hot (each
#    pair copied, untimed, to a staging buffer just before it is measured:
#    in the caches, as FFmpeg's read leaves a frame before its filter runs),
#    and also without (the 60 pairs read from memory, 4 MB each);
#  - FFmpeg: `ffmpeg ... -lavfi ssim -f null -` minus the same command
#    without the filter (reading the two raw files and the null output), the
#    frames read LOOPS (default 3) times, the two run alternately, best of
#    REPEAT each; the filter uses FFmpeg's x86 SIMD (ssim_4x4_line,
#    ssim_end_line) where the CPU has them;
#  - FFmpeg's SSIM arithmetic alone, when `perf record` works: the ssim
#    command's CPU samples in libavfilter (the filter's functions; the
#    reading, copies and page faults are elsewhere), best of REPEAT. A
#    stricter reference than the filter's whole cost above;
#  - scikit-image (when there): structural_similarity with Gaussian weights
#    (sigma 1.5, population covariance: our gauss11 window) on the first 12
#    frames, process CPU time, against our gauss11;
#  - OpenCV (when python3-opencv is there): cv2.Laplacian(f, cv2.CV_64F).var()
#    per frame, process CPU time;
#  - the ssim ratios again round by round: ROUNDS (default 7) rounds, each
#    running FFmpeg's ssim command, the command without the filter, the ssim
#    command under perf record (when perf works), then ours on the same
#    frames hot (one pass each); the median and range of the rounds' ratios.
#    On a host whose speed drifts from minute to minute (a VM with
#    neighbours), the best-of figures above come from different minutes and
#    their ratio moves with the drift; each round's ratio compares runs
#    seconds apart;
#  - the same rounds on 10-bit frames: the 60 pairs as gray10le (FFmpeg's
#    own conversion, made once, kept in FRAME_DIR), which FFmpeg's filter
#    runs in C (its x86 SIMD is 8-bit only) and ours reads with
#    bench-cpu-frames --pix-fmt gray10le (GRAY16, 10 bits).
# FFMPEG (default: ffmpeg from PATH) names the ffmpeg to run: on a host
# without FFmpeg, the static peer that tests/bench/ffmpeg-peer.sh builds. PY
# (default: Debian's /usr/bin/python3) the Python with numpy, scikit-image
# and OpenCV.
# One thread (-filter_threads 1, --threads 1, cv2.setNumThreads(1)) and all
# (the host's online CPUs). CQ_CPU_SIMD=none in the environment forces our
# plain C, CQ_CPU_SIMD=avx2 caps our kernels at AVX2, for comparison.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
set -e
BENCH=${BENCH:-tests/bench/bench-cpu-frames}
HERE=$(dirname "$0")
PY=${PY:-/usr/bin/python3}
[ -x "$PY" ] || PY=python3
DIR=${1:-${TMPDIR:-/tmp}/cq-bench-frames}
REPEAT=${REPEAT:-5}
ROUNDS=${ROUNDS:-7}
LOOPS=${LOOPS:-3}
W=1920
H=1080
N=60
NPROC=$(nproc)
FFMPEG=${FFMPEG:-ffmpeg}
export FFMPEG

if [ ! -x "$BENCH" ]; then
  echo "no $BENCH: run this from the build directory" >&2
  exit 1
fi
mkdir -p "$DIR"
if [ ! -s "$DIR/ref.gray" ] || [ ! -s "$DIR/dist.gray" ]; then
  echo "making $N frame pairs in $DIR ..." >&2
  "$PY" - "$DIR/ref.gray" "$W" "$H" <<'EOF'
import sys
import numpy as np
from skimage import color, data

out, W, H = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
names = ["astronaut", "camera", "coffee", "chelsea", "rocket", "coins",
         "moon", "clock", "immunohistochemistry", "hubble_deep_field",
         "retina", "gravel"]


def gray(im):
    if im.ndim == 3:
        im = color.rgb2gray(im[..., :3]) * 255.0
    return im.astype(np.float64)


def crop_resize(g, frac, fx, fy):
    """A 16:9 crop of frac of the largest one, at (fx, fy) of the free
    room, scaled bilinearly to W x H."""
    ih, iw = g.shape
    cw = min(iw, ih * W / H) * frac
    ch = cw * H / W
    x0 = (iw - cw) * fx
    y0 = (ih - ch) * fy
    xs = x0 + (np.arange(W) + 0.5) * cw / W - 0.5
    ys = y0 + (np.arange(H) + 0.5) * ch / H - 0.5
    xs = np.clip(xs, 0, iw - 1)
    ys = np.clip(ys, 0, ih - 1)
    xi = np.minimum(xs.astype(int), iw - 2)
    yi = np.minimum(ys.astype(int), ih - 2)
    ax = (xs - xi)[None, :]
    ay = (ys - yi)[:, None]
    top = g[yi][:, xi] * (1 - ax) + g[yi][:, xi + 1] * ax
    bot = g[yi + 1][:, xi] * (1 - ax) + g[yi + 1][:, xi + 1] * ax
    return np.clip(np.rint(top * (1 - ay) + bot * ay), 0, 255).astype(np.uint8)


crops = [(1.0, 0.5, 0.5), (0.8, 0.2, 0.3), (0.65, 0.8, 0.6),
         (0.5, 0.4, 0.8), (0.4, 0.6, 0.2)]
with open(out, "wb") as f:
    for n in names:
        g = gray(getattr(data, n)())
        for c in crops:
            f.write(crop_resize(g, *c).tobytes())
EOF
  "$FFMPEG" -nostdin -hide_banner -loglevel error -y -f rawvideo \
      -pix_fmt gray -s ${W}x${H} -i "$DIR/ref.gray" -c:v mjpeg -q:v 10 "$DIR/dist.mkv"
  "$FFMPEG" -nostdin -hide_banner -loglevel error -y -i "$DIR/dist.mkv" \
      -pix_fmt gray -f rawvideo "$DIR/dist.gray"
  rm -f "$DIR/dist.mkv"
fi

# FFmpeg's cost (ffmpeg-ssim-cost.py): "best" prints the filter's CPU ms a
# frame, its whole command's and, when perf can record, its SSIM functions';
# "rounds" prints ours against those round by round, a table row each.
ffmpeg_ms () {
  "$PY" "$HERE/ffmpeg-ssim-cost.py" best "$REPEAT" "$1" "$N" "$LOOPS" "$DIR" \
      "$W" "$H"
}

# ratio_rounds THREADS [PIX_FMT]
ratio_rounds () {
  "$PY" "$HERE/ffmpeg-ssim-cost.py" rounds "$ROUNDS" "$1" "$N" "$LOOPS" \
      "$DIR" "$W" "$H" "$BENCH" ${2:-gray}
}

# ffmpeg_ssim_mean [PIX_FMT]
ffmpeg_ssim_mean () {
  fmt=${1:-gray}
  "$FFMPEG" -nostdin -hide_banner -loglevel info -f rawvideo -pix_fmt $fmt \
      -s ${W}x${H} -i "$DIR/ref.$fmt" -f rawvideo -pix_fmt $fmt \
      -s ${W}x${H} -i "$DIR/dist.$fmt" -lavfi "[0:v][1:v]ssim" -f null - 2>&1 |
    sed -n 's/.*SSIM Y:\([0-9.]*\) .*/\1/p'
}

echo "host: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $NPROC online CPUs"
echo "frames: $N pairs of ${W}x${H} 8-bit luma in $DIR; best of $REPEAT"
echo "CQ_CPU_SIMD=${CQ_CPU_SIMD:-(unset)}"
echo
echo "| measure | threads | ours CPU ms/frame | ours wall ms/frame | reference CPU ms/frame | ours / reference |"
echo "|---|---|---|---|---|---|"
for threads in 1 "$NPROC"; do
  set -- $(ffmpeg_ms "$threads")
  ff=$1
  ff_total=$2
  ffp=${3:-}
  for window in ffmpeg box8 gauss11; do
    set -- $("$BENCH" --size ${W}x${H} --frames $N --threads "$threads" \
        --repeat "$REPEAT" --ssim $window --hot "$DIR/ref.gray" \
        "$DIR/dist.gray")
    hot_cpu=$1
    ratio=$("$PY" -c "print(f'{$1 / $ff:.2f}')")
    echo "| ssim $window, frames hot (FFmpeg: the ssim filter; its whole command $ff_total) | $threads | $1 | $2 | $ff | $ratio |"
    if [ -n "$ffp" ]; then
      ratio=$("$PY" -c "print(f'{$hot_cpu / $ffp:.2f}')")
      echo "| ssim $window, frames hot (FFmpeg: its SSIM functions alone, perf) | $threads | $hot_cpu | | $ffp | $ratio |"
    fi
    set -- $("$BENCH" --size ${W}x${H} --frames $N --threads "$threads" \
        --repeat "$REPEAT" --ssim $window "$DIR/ref.gray" "$DIR/dist.gray")
    ratio=$("$PY" -c "print(f'{$1 / $ff:.2f}')")
    echo "| ssim $window, frames from memory (FFmpeg: the ssim filter) | $threads | $1 | $2 | $ff | $ratio |"
  done
done
if "$PY" -c 'import skimage.metrics' 2>/dev/null; then
  sk=$("$PY" - "$DIR/ref.gray" "$DIR/dist.gray" $W $H $N "$REPEAT" <<'EOF'
import sys, time
import numpy as np
from skimage.metrics import structural_similarity

ref, dist, W, H, N, repeat = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
a = np.fromfile(ref, dtype=np.uint8).reshape(N, H, W)
b = np.fromfile(dist, dtype=np.uint8).reshape(N, H, W)
n = min(N, 12)
best = None
for _ in range(min(repeat, 2)):
    t0 = time.process_time()
    for i in range(n):
        structural_similarity(a[i], b[i], gaussian_weights=True, sigma=1.5,
                              use_sample_covariance=False, data_range=255)
    t = time.process_time() - t0
    best = t if best is None else min(best, t)
print(f"{best / n * 1e3:.3f}")
EOF
  )
  for threads in 1 "$NPROC"; do
    set -- $("$BENCH" --size ${W}x${H} --frames $N --threads "$threads" \
        --repeat "$REPEAT" --ssim gauss11 "$DIR/ref.gray" "$DIR/dist.gray")
    ratio=$("$PY" -c "print(f'{$1 / $sk:.3f}')")
    echo "| ssim gauss11 (scikit-image structural_similarity, Gaussian σ 1.5, first 12 frames, one thread) | $threads | $1 | $2 | $sk | $ratio |"
  done
else
  echo "(no scikit-image: gauss11 against it skipped)"
fi
if "$PY" -c 'import cv2' 2>/dev/null; then
  for threads in 1 "$NPROC"; do
    cv=$("$PY" - "$DIR/ref.gray" $W $H $N "$threads" "$REPEAT" <<'EOF'
import sys, time
import cv2
import numpy as np

path, W, H, N, threads, repeat = sys.argv[1], *map(int, sys.argv[2:])
cv2.setNumThreads(threads)
frames = np.fromfile(path, dtype=np.uint8).reshape(N, H, W)
best = None
for _ in range(repeat):
    t0 = time.process_time()
    for f in frames:
        cv2.Laplacian(f, cv2.CV_64F).var()
    t = time.process_time() - t0
    best = t if best is None else min(best, t)
print(f"{best / N * 1e3:.3f}")
EOF
    )
    for set_name in default all; do
      set -- $("$BENCH" --size ${W}x${H} --frames $N --threads "$threads" \
          --repeat "$REPEAT" --sharpness $set_name "$DIR/ref.gray")
      ratio=$("$PY" -c "print(f'{$1 / $cv:.2f}')")
      echo "| sharpness $set_name (OpenCV Laplacian().var()) | $threads | $1 | $2 | $cv | $ratio |"
    done
  done
else
  echo "(no python3-opencv: sharpness against OpenCV skipped)"
fi
echo
echo "ours (frames hot) / FFmpeg, each round's ratio of runs seconds apart:"
echo
echo "| measure | threads | median ratio | range | rounds |"
echo "|---|---|---|---|---|"
for threads in 1 "$NPROC"; do
  ratio_rounds "$threads"
done
echo
set -- $("$BENCH" --size ${W}x${H} --frames $N --threads 0 --repeat 1 \
    --ssim ffmpeg "$DIR/ref.gray" "$DIR/dist.gray")
echo "mean SSIM Y over the frames: ours (window=ffmpeg) $3, FFmpeg $(ffmpeg_ssim_mean)"

for name in ref dist; do
  if [ ! -s "$DIR/$name.gray10le" ]; then
    "$FFMPEG" -nostdin -hide_banner -loglevel error -y -f rawvideo \
        -pix_fmt gray -s ${W}x${H} -i "$DIR/$name.gray" -f rawvideo -pix_fmt gray10le \
        "$DIR/$name.gray10le"
  fi
done
echo
echo "10-bit frames (gray10le, FFmpeg's conversion of the same frames; its filter in C):"
echo "ours (frames hot) / FFmpeg, each round's ratio of runs seconds apart:"
echo
echo "| measure | threads | median ratio | range | rounds |"
echo "|---|---|---|---|---|"
for threads in 1 "$NPROC"; do
  ratio_rounds "$threads" gray10le
done
echo
set -- $("$BENCH" --size ${W}x${H} --frames $N --threads 0 --repeat 1 \
    --ssim ffmpeg --pix-fmt gray10le "$DIR/ref.gray10le" "$DIR/dist.gray10le")
echo "mean SSIM Y over the 10-bit frames: ours (window=ffmpeg) $3, FFmpeg $(ffmpeg_ssim_mean gray10le)"
