/* cudaquality compute library: the fused sharpness kernel.
 *
 * One pass over the frame computes the integer sums of every enabled
 * measure. A warp spans 256 bytes of a row (8 bytes a thread: 8 pixels of
 * 8 bits or 4 of 16) and walks ROWS rows down, keeping the rows above, at and
 * below the current one in registers, so each pixel is read from memory once
 * (plus a halo row a warp); neighbours across lanes come by warp shuffle.
 * Per-thread sums are reduced per block with warp shuffles (cq-reduce.cuh)
 * and added to 128-bit global accumulators with two 64-bit atomics, the
 * frame's set of them (kFrameSets: frames back to back do not wait for
 * each other); the last block to finish writes the totals to p.out (mapped
 * pinned host memory) and zeroes the set for a later frame, so a frame is
 * one kernel launch.
 *
 * Integer sums are exact whatever the order of the additions, which is what
 * makes the result identical to the CPU backend's. 8-bit frames run
 * sharpness8_kernel (below), which computes the same integers on the fp32
 * pipes (off the top and bottom rows in fp16 pairs, walk_half); the
 * integer kernel
 * serves 16-bit frames (and CQ_SHARPNESS_KERNEL=old).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_SHARPNESS_KERNELS_CUH
#define CQ_SHARPNESS_KERNELS_CUH

#include <cuda_fp16.h>

#include "cq-local.h"
#include "cq-grid.cuh"
#include "cq-reduce.cuh"
#include "cq-sharpness.h"

namespace cq
{

constexpr int kWarp = 32;
constexpr int kBlockWarps = 4;  /* warps stacked vertically in a block */
#ifndef CQ_SHARPNESS_ROWS
#define CQ_SHARPNESS_ROWS 8
#endif
#ifndef CQ_SHARPNESS_MIN_BLOCKS
#define CQ_SHARPNESS_MIN_BLOCKS 1
#endif
/* The 8-bit kernels' tile, their walks off the top and bottom rows in
 * fp16 pairs (walk_half): 4 pixels a thread, 4 blocks of 128 threads an
 * SM (128 registers); the default set's kernel at 4 or 8 pixels and 5
 * blocks (95 and 96 registers; at 8 pixels its float walks along the top
 * and bottom rows spill). H100, back to back: the default set at 4K, 8
 * pixels, 6.84 µs at 5 blocks against 7.75 at 3 and 8.05 at 6, 8192²
 * 45.8 against 54.9 at 3, 1080p at 4 pixels 4.06 against 4.26 at 4; all
 * measures at 4K 14.8 µs at 4 blocks against 15.9 at 3 and 16.4 at 5.
 * The walk's length is the host's choice for the frame; the one 4K frames
 * take is compiled in as well (build-time knobs to measure others). */
#ifndef CQ_SHARPNESS_ROWS8
#define CQ_SHARPNESS_ROWS8 6
#endif
#ifndef CQ_SHARPNESS8_MIN_BLOCKS
#define CQ_SHARPNESS8_MIN_BLOCKS 4
#endif
#ifndef CQ_SHARPNESS8_WIDE_MIN_BLOCKS
#define CQ_SHARPNESS8_WIDE_MIN_BLOCKS 5
#endif
#ifndef CQ_SHARPNESS8_DEFAULT_MIN_BLOCKS
#define CQ_SHARPNESS8_DEFAULT_MIN_BLOCKS 5
#endif
constexpr int kRows = CQ_SHARPNESS_ROWS;        /* rows a warp walks */

struct SharpnessParams
{
  const unsigned char *src;
  size_t pitch;
  int width, height;
  int tiles_x, tiles_y;         /* tiles of 32 threads x kBlockWarps walks */
  int rows;                     /* rows a warp walks (the 8-bit kernel) */
  unsigned shift, mask;
  /* this frame's set of accumulators (cq-reduce.cuh, kFrameSets) */
  unsigned long long *accum;    /* [CQ_SUM_COUNT][lo, hi], zero between frames */
  unsigned long long *out;      /* [CQ_SUM_COUNT][lo, hi] */
  unsigned int *counter;        /* blocks finished, zero between frames */
  unsigned int *released;       /* the set's last frame (frame_set_claim) */
  unsigned int seq;             /* this frame's number */
  unsigned long long *hist;     /* used by HIST kernels (entropy) */
  unsigned long long *hist_out; /* 8-bit: the frame's histogram (mapped) */
};

/* Which sums a metric set needs. */
__host__ __device__ constexpr unsigned
sums_needed (unsigned metrics)
{
  return ((metrics & CQ_METRIC_VARIANCE) ?
      (1u << CQ_SUM_VALUE) | (1u << CQ_SUM_VALUE_SQ) : 0) |
      ((metrics & CQ_METRIC_ROBERTS) ? 1u << CQ_SUM_ROBERTS : 0) |
      ((metrics & CQ_METRIC_TENENGRAD) ? 1u << CQ_SUM_TENENGRAD : 0) |
      ((metrics & CQ_METRIC_LAPLACIAN) ? 1u << CQ_SUM_LAPLACIAN : 0) |
      ((metrics & CQ_METRIC_SMD) ? 1u << CQ_SUM_SMD : 0) |
      ((metrics & CQ_METRIC_SMD2) ? 1u << CQ_SUM_SMD2 : 0) |
      ((metrics & CQ_METRIC_MAXMIN) ? 1u << CQ_SUM_MAXMIN : 0) |
      ((metrics & CQ_METRIC_BRENNER) ? 1u << CQ_SUM_BRENNER : 0) |
      ((metrics & CQ_METRIC_LAPVAR) ?
      (1u << CQ_SUM_LAP) | (1u << CQ_SUM_LAP_SQ) : 0);
}

/* Per-thread accumulators: 32 bits hold a thread's 64 pixels of 8-bit terms
 * (largest: Tenengrad, 2·1020² per pixel); 16-bit input needs 64 bits. */
template < typename T > struct Acc
{
  typedef unsigned int U;
  typedef int S;
};
template <> struct Acc <unsigned short >
{
  typedef unsigned long long U;
  typedef long long S;
};

template < typename T > __device__ __forceinline__ int
convert (const SharpnessParams & p, T raw)
{
  if (sizeof (T) == 1)
    return raw;
  return (raw >> p.shift) & p.mask;
}

template < typename T > struct Layout
{
  static constexpr int kPix = 8 / sizeof (T);   /* pixels a thread loads a row */
  static constexpr int kVals = kPix + 3;        /* with columns -1, +kPix, +kPix+1 */
};

/* A row as fetched: the thread's kPix stored values packed in 8 bytes, and
 * for the warp's edge lanes the neighbours no lane has (lane 0: column
 * c0 - 1; the last lane: c0 + kPix and c0 + kPix + 1, 16 bits each). Fetching
 * every row of a walk before using any keeps all its loads in flight. */
struct RawRow
{
  uint2 word;
  unsigned edge;
};

template < typename T > __device__ __forceinline__ RawRow
fetch_row (const SharpnessParams & p, int y, int c0, int lane)
{
  constexpr int P = Layout < T >::kPix;
  const int w = p.width;
  const T *row = (const T *) (p.src + (size_t) cq_reflect101 (y, p.height) *
      p.pitch);
  RawRow r;

  if (c0 + P <= w) {
    r.word = __ldg ((const uint2 *) (row + c0));
  } else {
    T *t = (T *) & r.word;
#pragma unroll
    for (int k = 0; k < P; k++)
      t[k] = __ldg (row + cq_reflect101 (c0 + k, w));
  }
  r.edge = 0;
  if (lane == 0)
    r.edge = __ldg (row + cq_reflect101 (c0 - 1, w));
  else if (lane == kWarp - 1)
    r.edge = (unsigned) __ldg (row + cq_reflect101 (c0 + P, w)) |
        ((unsigned) __ldg (row + cq_reflect101 (c0 + P + 1, w)) << 16);
  return r;
}

/* v[0] = column c0 - 1, v[1 .. kPix] = c0 .., v[kPix + 1], v[kPix + 2]. */
template < typename T > __device__ __forceinline__ void
expand_row (const SharpnessParams & p, const RawRow & r, int lane,
    int (&v)[Layout < T >::kVals])
{
  constexpr int P = Layout < T >::kPix;
  const T *t = (const T *) &r.word;

#pragma unroll
  for (int k = 0; k < P; k++)
    v[k + 1] = convert < T > (p, t[k]);
  v[0] = __shfl_up_sync (kFullMask, v[P], 1);
  v[P + 1] = __shfl_down_sync (kFullMask, v[1], 1);
  v[P + 2] = __shfl_down_sync (kFullMask, v[2], 1);
  if (lane == 0)
    v[0] = convert < T > (p, (T) r.edge);
  if (lane == kWarp - 1) {
    v[P + 1] = convert < T > (p, (T) (r.edge & 0xffff));
    v[P + 2] = convert < T > (p, (T) (r.edge >> 16));
  }
}

template < typename T > struct Sums
{
  typename Acc < T >::U val, sq, rob, ten, lpl, smd, smd2, mm, bren, lsq;
  typename Acc < T >::S lap;
};

/* Adds the terms of the kPix pixels of row y (b; a above, c below). With
 * CHECK false every pixel is known to be inside for every measure. */
template < typename T, unsigned SUMS, bool HIST, bool CHECK >
    __device__ __forceinline__ void
accumulate (const int (&a)[Layout < T >::kVals],
    const int (&b)[Layout < T >::kVals], const int (&c)[Layout < T >::kVals],
    int c0, int y, int w, int h, Sums < T > &s, unsigned *shist,
    unsigned long long *ghist)
{
  typedef typename Acc < T >::U U;
  typedef typename Acc < T >::S S;
  constexpr int P = Layout < T >::kPix;
  constexpr unsigned kSobel = (1u << CQ_SUM_TENENGRAD) |
      (1u << CQ_SUM_LAPLACIAN);
  /* per column, shared by the three pixels that use it: the vertical Sobel
   * smoothing col[j] = a + 2b + c and difference dif[j] = c - a */
  int col[P + 2], dif[P + 2];

#pragma unroll
  for (int j = 0; j < P + 2; j++) {
    if (SUMS & kSobel)
      col[j] = a[j] + c[j] + 2 * b[j];
    if (SUMS & (1u << CQ_SUM_TENENGRAD))
      dif[j] = c[j] - a[j];
  }

#pragma unroll
  for (int k = 0; k < P; k++) {
    const int i = k + 1, x = c0 + k;
    const int g = b[i];
    const bool in = !CHECK || x < w;
    const bool next = !CHECK || (x + 1 < w && y + 1 < h);
    const bool interior = !CHECK || (x >= 1 && x + 1 < w && y >= 1
        && y + 1 < h);
    const bool two = !CHECK || x + 2 < w;

    if (SUMS & (1u << CQ_SUM_VALUE))
      s.val += in ? (U) g : 0;
    if (SUMS & (1u << CQ_SUM_VALUE_SQ))
      s.sq += in ? (U) g * (U) g : 0;
    if (SUMS & ((1u << CQ_SUM_ROBERTS) | (1u << CQ_SUM_SMD) |
            (1u << CQ_SUM_SMD2))) {
      const U dx = (U) abs (g - b[i + 1]), dy = (U) abs (g - c[i]);
      if (SUMS & (1u << CQ_SUM_ROBERTS))
        s.rob += next ? (U) (abs (c[i + 1] - g) + abs (c[i] - b[i + 1])) : 0;
      if (SUMS & (1u << CQ_SUM_SMD))
        s.smd += next ? dx + dy : 0;
      if (SUMS & (1u << CQ_SUM_SMD2))
        s.smd2 += next ? dx * dy : 0;
    }
    if (SUMS & (1u << CQ_SUM_TENENGRAD)) {
      const S gx = (S) (col[i + 1] - col[i - 1]);
      const S gy = (S) (dif[i - 1] + dif[i + 1] + 2 * dif[i]);
      s.ten += interior ? (U) (gx * gx + gy * gy) : 0;
    }
    /* vertical: a + c - 2g = col - 4g */
    if (SUMS & (1u << CQ_SUM_LAPLACIAN))
      s.lpl += interior ? (U) (abs (b[i + 1] + b[i - 1] - 2 * g) +
          abs (col[i] - 4 * g)) : 0;
    if (SUMS & (1u << CQ_SUM_MAXMIN)) {
      int mx = max (max (a[i - 1], a[i]), a[i + 1]);
      int mn = min (min (a[i - 1], a[i]), a[i + 1]);
      mx = max (mx, max (max (b[i - 1], b[i]), b[i + 1]));
      mn = min (mn, min (min (b[i - 1], b[i]), b[i + 1]));
      mx = max (mx, max (max (c[i - 1], c[i]), c[i + 1]));
      mn = min (mn, min (min (c[i - 1], c[i]), c[i + 1]));
      s.mm += interior ? (U) (mx - mn) : 0;
    }
    if (SUMS & (1u << CQ_SUM_BRENNER)) {
      const S d = b[i + 2] - g;
      s.bren += (in && two) ? (U) (d * d) : 0;
    }
    if (SUMS & ((1u << CQ_SUM_LAP) | (1u << CQ_SUM_LAP_SQ))) {
      const S l = a[i] + c[i] + b[i - 1] + b[i + 1] - 4 * g;
      s.lap += in ? l : 0;
      s.lsq += in ? (U) (l * l) : 0;
    }
    if (HIST && in) {
      if (sizeof (T) == 1)
        atomicAdd (&shist[g], 1u);
      else
        atomicAdd (&ghist[g], 1ull);
    }
  }
}

/* Exact 128-bit accumulation from 64-bit atomics: the carry out of each
 * addition to the low word is added to the high word. */
__device__ __forceinline__ void
atomic_add_128 (unsigned long long *lo_hi, unsigned long long v,
    bool negative)
{
  unsigned long long old = atomicAdd (lo_hi, v);
  unsigned long long hi = (old + v < old ? 1ull : 0ull) +
      (negative ? ~0ull : 0ull);
  if (hi)
    atomicAdd (lo_hi + 1, hi);
}

/* The block's totals into the grid's 128-bit accumulators (and its shared
 * histogram into the global one); the last block to finish publishes the
 * frame's totals and resets everything for the next frame. Every thread of
 * the block calls it once. */
template < unsigned SUMS, bool SMALL_HIST > __device__ __forceinline__ void
publish_block (const SharpnessParams & p,
    const unsigned long long (&tot)[CQ_SUM_COUNT], const unsigned *shist,
    unsigned seen)
{
  __shared__ unsigned long long block_sums[kBlockWarps][CQ_SUM_COUNT];
  const int lane = threadIdx.x, warp = threadIdx.y;
  const int tid = warp * kWarp + lane;

  frame_set_claim (p.released, p.seq - kFrameSets, seen);
  /* warp shuffles, then the warps' sums in shared memory */
#pragma unroll
  for (int i = 0; i < CQ_SUM_COUNT; i++)
    if (SUMS & (1u << i)) {
      /* the Laplacian sum is two's complement: the sum stays exact */
      unsigned long long v = warp_sum (tot[i]);
      if (lane == 0)
        block_sums[warp][i] = v;
    }
  __syncthreads ();

  if (tid < CQ_SUM_COUNT && (SUMS & (1u << tid))) {
    unsigned long long v = 0;
    for (int i = 0; i < kBlockWarps; i++)
      v += block_sums[i][tid];
    /* only the Laplacian sum is signed */
    atomic_add_128 (&p.accum[2 * tid], v, tid == CQ_SUM_LAP
        && (long long) v < 0);
  }
  if (SMALL_HIST) {
    for (int i = tid; i < 256; i += kWarp * kBlockWarps)
      if (shist[i])
        atomicAdd (&p.hist[i], (unsigned long long) shist[i]);
  }

  if (last_block (p.counter, gridDim.x)) {
    constexpr int kBins = 256 / (kWarp * kBlockWarps);
    unsigned long long v = 0, bins[kBins];

    wait_for_previous_frame ();
    /* the set read and cleared (256 bins too, as the sums: no copy or
     * memset in the stream between two frames' kernels) and released
     * before the results go out to host memory, whose writes the release
     * need not wait for */
    if (tid < 2 * CQ_SUM_COUNT)
      v = atomicExch (&p.accum[tid], 0ull);
    if (SMALL_HIST)
#pragma unroll
      for (int k = 0; k < kBins; k++)
        bins[k] = atomicExch (&p.hist[tid + k * kWarp * kBlockWarps], 0ull);
    if (tid == 0)
      *p.counter = 0;
    frame_set_release (p.released, p.seq);
    if (tid < 2 * CQ_SUM_COUNT)
      p.out[tid] = v;
    if (SMALL_HIST)
#pragma unroll
      for (int k = 0; k < kBins; k++)
        p.hist_out[tid + k * kWarp * kBlockWarps] = bins[k];
  }
}

template < typename T, unsigned SUMS, bool HIST > __global__ void
__launch_bounds__ (kWarp * kBlockWarps, CQ_SHARPNESS_MIN_BLOCKS)
    sharpness_kernel (SharpnessParams p)
{
  constexpr int P = Layout < T >::kPix;
  constexpr int V = Layout < T >::kVals;
  __shared__ unsigned shist[256];
  const int lane = threadIdx.x, warp = threadIdx.y;
  const int tid = warp * kWarp + lane;
  const int w = p.width, h = p.height;
  /* 8-bit histograms go through shared memory, 16-bit ones straight to global */
  constexpr bool small_hist = HIST && sizeof (T) == 1;
  /* the block's totals; two's complement for the signed Laplacian sum */
  unsigned long long tot[CQ_SUM_COUNT] = { };
  const unsigned seen = frame_set_peek (p.released);

  if (small_hist) {
    for (int i = tid; i < 256; i += kWarp * kBlockWarps)
      shist[i] = 0;
    __syncthreads ();
  }

  /* a grid of resident blocks strides over the tiles, so the frame ends in
   * one wave instead of a tail of a second one */
  for (int tile = blockIdx.x; tile < p.tiles_x * p.tiles_y; tile += gridDim.x) {
    const int c0 = ((tile % p.tiles_x) * kWarp + lane) * P;
    const int y0 = ((tile / p.tiles_x) * kBlockWarps + warp) * kRows;
    Sums < T > s = { };

    if (y0 >= h)                /* uniform over the warp */
      continue;
    {
      int a[V], b[V], c[V];
      const bool cols_inside = c0 >= 1 && c0 + P + 1 < w;
      RawRow raw[kRows + 2];

      /* rows past the bottom reflect onto real rows: loads stay in bounds */
#pragma unroll
      for (int r = 0; r < kRows + 2; r++)
        raw[r] = fetch_row < T > (p, y0 - 1 + r, c0, lane);
      expand_row < T > (p, raw[0], lane, a);
      expand_row < T > (p, raw[1], lane, b);
#pragma unroll
      for (int r = 0; r < kRows; r++) {
        const int y = y0 + r;
        if (y >= h)
          break;
        expand_row < T > (p, raw[r + 2], lane, c);
        if (cols_inside && y >= 1 && y + 1 < h)
          accumulate < T, SUMS, HIST, false > (a, b, c, c0, y, w, h, s, shist,
              p.hist);
        else
          accumulate < T, SUMS, HIST, true > (a, b, c, c0, y, w, h, s, shist,
              p.hist);
#pragma unroll
        for (int k = 0; k < V; k++) {
          a[k] = b[k];
          b[k] = c[k];
        }
      }
    }
    /* a tile's 32-bit sums cannot overflow; the totals are 64-bit */
    tot[CQ_SUM_VALUE] += s.val;
    tot[CQ_SUM_VALUE_SQ] += s.sq;
    tot[CQ_SUM_ROBERTS] += s.rob;
    tot[CQ_SUM_TENENGRAD] += s.ten;
    tot[CQ_SUM_LAPLACIAN] += s.lpl;
    tot[CQ_SUM_SMD] += s.smd;
    tot[CQ_SUM_SMD2] += s.smd2;
    tot[CQ_SUM_MAXMIN] += s.mm;
    tot[CQ_SUM_BRENNER] += s.bren;
    tot[CQ_SUM_LAP] += (unsigned long long) (long long) s.lap;
    tot[CQ_SUM_LAP_SQ] += s.lsq;
  }

  publish_block < SUMS, small_hist > (p, tot, shist, seen);
}

/* ---- 8-bit frames: exact small integers on the fp32 pipes ----
 *
 * The kernel above spends ~46 instructions a pixel on the integer pipes,
 * which issue at half the rate of the fp32 ones. Every quantity of the
 * measures is a small integer, and fp32 holds integers below 2^24 exactly,
 * so the same sums can run on the fp32 pipes (where |x| is a free operand
 * modifier) with every operation exact:
 * - a sample enters as 2^23 + value, one byte permute (its bits are
 *   0x4B000000 + value); differences of two such samples are exact, and
 *   every measure but the variance is built from differences;
 * - per row, the differences each pixel shares with its neighbours are
 *   computed once (to the right, two apart, to the row below), and a pixel
 *   combines them;
 * - a thread's partial sums over its p.rows × PIX pixels (at most 240)
 *   stay below 2^24 (largest: 240 × 255² for the squares of differences),
 *   except Tenengrad and the squared Laplacian (up to 2 · 1020² a pixel):
 *   those add 2^23 + term, exact below 2^24, as integers through the
 *   float's bits.
 * The integer sums are then those of the kernel above, bit for bit.
 */
/* rows a warp walks (p.rows, chosen by the host for the frame): at least
 * 3 (a walk reads 5 rows before it tests its length, inside the frame off
 * its edges), at most 240 pixels a thread (the 2^24 bound above) */
constexpr int kMinRows8 = 3;
__host__ __device__ constexpr int
max_rows8 (int pix)
{
  return 240 / pix;
}

/* the walk's length compiled into an instance (4K frames walk it) */
constexpr int kRows8 = CQ_SHARPNESS_ROWS8;

/* blocks an SM an instance is built for, by its pixels a thread */
__host__ __device__ constexpr int
min_blocks8 (unsigned sums, int pix)
{
  return pix == 8 ? CQ_SHARPNESS8_WIDE_MIN_BLOCKS :
      sums == sums_needed (CQ_METRIC_DEFAULT) ?
      CQ_SHARPNESS8_DEFAULT_MIN_BLOCKS : CQ_SHARPNESS8_MIN_BLOCKS;
}
constexpr unsigned kBiasBits = 0x4B000000u;     /* bits of 2^23 */
constexpr float kBias = 8388608.0f;

/* Byte k of word as the float 2^23 + byte. */
__device__ __forceinline__ float
biased_sample (unsigned word, int k)
{
  return __uint_as_float (__byte_perm (word, kBiasBits, 0x7540 + k));
}

/* The bits of a float t = 2^23 + n (0 <= n < 2^23): kBiasBits + n. */
__device__ __forceinline__ unsigned
biased_bits (float t)
{
  return __float_as_uint (t);
}

/* A row of 8-bit samples as fetched: PIX bytes and, for the warp's edge
 * lanes, the columns no lane has (as fetch_row: lane 0 column c0 - 1, the
 * last lane c0 + PIX and c0 + PIX + 1), in the bytes expand_row8
 * names. */
template < int PIX > struct RawRow8
{
  unsigned word[PIX / 4];
  unsigned edge;
};

/* The PIX samples at row (aligned for the vector load). */
template < int PIX > __device__ __forceinline__ void
load_words8 (const unsigned char *row, RawRow8 < PIX > &r)
{
  if (PIX == 8) {
    uint2 v = __ldg ((const uint2 *) row);
    r.word[0] = v.x;
    r.word[PIX / 4 - 1] = v.y;
  } else {
    r.word[0] = __ldg ((const unsigned *) row);
  }
}

template < int PIX > __device__ __forceinline__ RawRow8 < PIX >
fetch_row8 (const SharpnessParams & p, int y, int c0, int lane)
{
  const int w = p.width;
  const unsigned char *row = p.src + (size_t) cq_reflect101 (y, p.height) *
      p.pitch;
  RawRow8 < PIX > r;

  if (c0 + PIX <= w) {
    load_words8 (row + c0, r);
  } else {
    unsigned char *t = (unsigned char *) r.word;
#pragma unroll
    for (int k = 0; k < PIX; k++)
      t[k] = __ldg (row + cq_reflect101 (c0 + k, w));
  }
  r.edge = 0;
  if (lane == 0)
    r.edge = __ldg (row + cq_reflect101 (c0 - 1, w));
  else if (lane == kWarp - 1)
    r.edge = (unsigned) __ldg (row + cq_reflect101 (c0 + PIX, w)) |
        ((unsigned) __ldg (row + cq_reflect101 (c0 + PIX + 1, w)) << 16);
  return r;
}

/* How a walk off the frame's top and bottom rows (walk_half) meets its
 * sides:
 * - kInside: not at all, for any measure (no predicates, no reflection);
 * - kSides: its tile touches the left edge (x0 = 0) and/or ends at the
 *   right one (x0 + 32 PIX = w): only lane 0's column -1 and the last
 *   lane's columns w, w + 1 reflect (from their own words), and only their
 *   outer pixels drop out of some measures. At 4K two tile columns of 15
 *   were walks testing every pixel, at 1.9x the instructions of an inside
 *   one (ncu).
 * Every other walk (walk8) tests every pixel and row and reflects every
 * load. */
enum Edges8
{ kInside, kSides };

/* The same off the frame's edges (walk_half: rows and columns need no
 * reflection): row points at column c0 of the row; the edge lanes read
 * the aligned word beside their own (lane 0: columns c0 - 4 .. c0 - 1 in
 * bytes 0..3, so c0 - 1 is byte 3; the last lane: c0 + PIX ..). */
template < int PIX > __device__ __forceinline__ RawRow8 < PIX >
fetch_row8_inside (const unsigned char *row, int edge_offset, bool edge_lane)
{
  RawRow8 < PIX > r;

  load_words8 (row, r);
  r.edge = edge_lane ? __ldg ((const unsigned *) (row + edge_offset)) : 0u;
  return r;
}

/* f[i] = 2^23 + the sample at column c0 - 1 + i, i < PIX + 3. */
template < int PIX > __device__ __forceinline__ void
expand_row8 (const RawRow8 < PIX > &r, int lane, bool right2,
    float (&f)[PIX + 3])
{
#pragma unroll
  for (int k = 0; k < PIX; k++)
    f[k + 1] = biased_sample (r.word[k / 4], k % 4);
  f[0] = __shfl_up_sync (kFullMask, f[PIX], 1);
  f[PIX + 1] = __shfl_down_sync (kFullMask, f[1], 1);
  f[PIX + 2] = right2 ? __shfl_down_sync (kFullMask, f[2], 1) :
      f[PIX + 1];
  /* fetch_row8's edge word, bytes 0 and 2 (its zero bytes cost nothing
   * to fill, the aligned words' layout measured 1 µs slower at 4K) */
  if (lane == 0)
    f[0] = biased_sample (r.edge, 0);
  if (lane == kWarp - 1) {
    f[PIX + 1] = biased_sample (r.edge, 0);
    if (right2)
      f[PIX + 2] = biased_sample (r.edge, 2);
  }
}

/* A thread's partial sums over one walk: exact fp32 (see above), and two
 * integer sums of biased floats' bits (kBiasBits each term, removed at the
 * end of the walk). */
struct Sums8
{
  float val, sq, rob, lpl, smd, smd2, mm, bren, lap;
  unsigned ten, lsq;
};

/* The walk's column predicates: bit k set where a measure
 * counts pixel c0 + k (bits, not weights: they stay live all the walk). */
struct ColMasks8
{
  unsigned in, next, interior, two;
};

__device__ __forceinline__ float
mask_weight (unsigned bits, int k)
{
  return (bits >> k) & 1u ? 1.f : 0.f;
}

/* One row y of centre samples b (a above, c below): every enabled term of
 * its PIX pixels, each weighted by the predicates of its measure. d_* are
 * the row differences shared by neighbours: drb[i] = b[i + 1] - b[i],
 * hd*[k] = row[k + 2] - row[k] (two apart, centred on pixel k), dda[i] =
 * b[i] - a[i], ddb[i] = c[i] - b[i]. */
template < unsigned SUMS, bool HIST, int PIX > __device__ __forceinline__ void
accumulate8 (const float (&fa)[PIX + 3], const float (&fb)[PIX + 3],
    const float (&fc)[PIX + 3], const float (&drb)[PIX + 1],
    const float (&hda)[PIX], const float (&hdb)[PIX],
    const float (&hdc)[PIX], const float (&dda)[PIX + 2],
    const float (&ddb)[PIX + 2], bool row_next,
    bool row_interior, const ColMasks8 & m, Sums8 & s, unsigned *shist)
{
  constexpr unsigned kTen = 1u << CQ_SUM_TENENGRAD;
  constexpr unsigned kLpl = 1u << CQ_SUM_LAPLACIAN;
  constexpr unsigned kLapVar = (1u << CQ_SUM_LAP) | (1u << CQ_SUM_LAP_SQ);
  float vd[PIX + 2], cmax[PIX + 2], cmin[PIX + 2];
  unsigned ten_even = 0;

  /* c - a per column: Tenengrad's vertical gradient */
#pragma unroll
  for (int i = 0; i < PIX + 2; i++) {
    if (SUMS & kTen)
      vd[i] = dda[i] + ddb[i];
    if (SUMS & (1u << CQ_SUM_MAXMIN)) {
      cmax[i] = fmaxf (fmaxf (fa[i], fb[i]), fc[i]);
      cmin[i] = fminf (fminf (fa[i], fb[i]), fc[i]);
    }
  }

#pragma unroll
  for (int k = 0; k < PIX; k++) {
    const int i = k + 1;
    /* weights of this pixel's predicates */
    const float w_in = mask_weight (m.in, k);
    const float w_next = row_next ? mask_weight (m.next, k) : 0.f;
    const float w_int = row_interior ? mask_weight (m.interior, k) : 0.f;
    const float w_two = mask_weight (m.two, k);
    /* the Laplacian's horizontal and vertical second differences */
    const float h = drb[i] - drb[i - 1];
    const float v = ddb[i] - dda[i];

    if (SUMS & (1u << CQ_SUM_VALUE)) {
      const float g = fb[i] - kBias;
      s.val = fmaf (g, w_in, s.val);
      s.sq = fmaf (g * w_in, g, s.sq);
    }
    if (SUMS & (1u << CQ_SUM_ROBERTS))
      s.rob = fmaf (fabsf (fc[i + 1] - fb[i]) + fabsf (fc[i] - fb[i + 1]),
          w_next, s.rob);
    if (SUMS & (1u << CQ_SUM_SMD))
      s.smd = fmaf (fabsf (drb[i]) + fabsf (ddb[i]), w_next, s.smd);
    if (SUMS & (1u << CQ_SUM_SMD2))
      s.smd2 = fmaf (fabsf (drb[i] * ddb[i]), w_next, s.smd2);
    if (SUMS & kTen) {
      const float gx = fmaf (hdb[k], 2.f, hda[k] + hdc[k]);
      const float gy = fmaf (vd[i], 2.f, vd[i - 1] + vd[i + 1]);
      const float t = fmaf (gx, gx, fmaf (gy, gy, kBias));
      const unsigned bits = w_int != 0.f ? biased_bits (t) : kBiasBits;
      /* two pixels' terms in one three-way add */
      if (k % 2 == 0)
        ten_even = bits;
      else
        s.ten += ten_even + bits;
    }
    if (SUMS & kLpl)
      s.lpl = fmaf (fabsf (h) + fabsf (v), w_int, s.lpl);
    if (SUMS & (1u << CQ_SUM_MAXMIN)) {
      const float mx = fmaxf (fmaxf (cmax[i - 1], cmax[i]), cmax[i + 1]);
      const float mn = fminf (fminf (cmin[i - 1], cmin[i]), cmin[i + 1]);
      s.mm = fmaf (mx - mn, w_int, s.mm);
    }
    if (SUMS & (1u << CQ_SUM_BRENNER)) {
      const float d = (fb[i + 2] - fb[i]) * w_two;
      s.bren = fmaf (d, d, s.bren);
    }
    if (SUMS & kLapVar) {
      const float l = (h + v) * w_in;
      s.lap += l;
      s.lsq += biased_bits (fmaf (l, l, kBias));
    }
    if (HIST && w_in != 0.f)
      atomicAdd (&shist[__float_as_uint (fb[i]) & 0xff], 1u);
  }
}

/* A row of the walk and its differences: f as expand_row8 gives it,
 * dr[i] = f[i + 1] - f[i], hd[k] = f[k + 2] - f[k] (two apart, centred on
 * pixel k), dd[i] = f[i] - the row above's f[i]. */
template < int PIX > struct Row8
{
  float f[PIX + 3];
  float dr[PIX + 1];
  float hd[PIX];
  float dd[PIX + 2];
};

template < int PIX > __device__ __forceinline__ void
enter_row8 (const RawRow8 < PIX > &raw, int lane, bool right2,
    const Row8 < PIX > &above, Row8 < PIX > &row)
{
  expand_row8 < PIX > (raw, lane, right2, row.f);
#pragma unroll
  for (int i = 0; i < PIX + 1; i++)
    row.dr[i] = row.f[i + 1] - row.f[i];
#pragma unroll
  for (int k = 0; k < PIX; k++)
    row.hd[k] = row.dr[k + 1] + row.dr[k];
#pragma unroll
  for (int i = 0; i < PIX + 2; i++)
    row.dd[i] = row.f[i] - above.f[i];
}

/* The ring of three rows a warp's walk turns (walk8, walk_half): rows
 * above, at and below the centre, the loop unrolled by three so that the
 * ring turns by renaming, not copying, and rolled beyond that: the fully
 * unrolled walk did not fit the instruction cache (ncu: warps stalled 7
 * of 12 cycles an instruction waiting for it). Walk row i (frame row
 * y0 - 1 + i, i < walk + 2) is fetched three rows ahead of its use into
 * raw<i % 3>, the slot the row it replaces has left, and entered into
 * r<i % 3>; centre row j < rows is walk row j + 1, between r<j % 3> above
 * and the entering r<(j + 2) % 3> below. FETCH (i) gives a row as
 * loaded, ENTER (raw, above, row) and CENTRE (j, above, centre, below)
 * are statements, TURNED one after every three centre rows; raw0..2 and
 * r0..2 are the caller's. A macro, not a template taking lambdas: with
 * lambdas ptxas scheduled the all-measures kernel differently, 4K 20.1 µs
 * against 19.8. Leaving by break (not skipping steps) keeps the ring's
 * dead values dead: a skipped step would leave a later one reading old
 * slots. */
#define CQ_RING_STEP(FETCH, ENTER, CENTRE, walk, j, RAW, A, B, C)         \
  ENTER (RAW, B, C);                                                      \
  if ((j) + 5 < (walk) + 2)                                               \
    RAW = FETCH ((j) + 5);                                                \
  CENTRE (j, A, B, C)
#define CQ_RING_WALK(walk, rows, FETCH, ENTER, CENTRE, TURNED)            \
  raw0 = FETCH (0);                                                       \
  raw1 = FETCH (1);                                                       \
  raw2 = FETCH (2);                                                       \
  ENTER (raw0, r0, r0);                                                   \
  raw0 = FETCH (3);                                                       \
  ENTER (raw1, r0, r1);                                                   \
  raw1 = FETCH (4);                                                       \
  _Pragma ("unroll 1")                                                    \
  for (int j = 0; j < (rows); j += 3) {                                   \
    CQ_RING_STEP (FETCH, ENTER, CENTRE, walk, j, raw2, r0, r1, r2);       \
    if (j + 1 >= (rows))                                                  \
      break;                                                              \
    CQ_RING_STEP (FETCH, ENTER, CENTRE, walk, j + 1, raw0, r1, r2, r0);   \
    if (j + 2 >= (rows))                                                  \
      break;                                                              \
    CQ_RING_STEP (FETCH, ENTER, CENTRE, walk, j + 2, raw1, r2, r0, r1);   \
    TURNED;                                                               \
  }

/* A warp's walk of `walk` rows from y0 (CQ_RING_WALK) that meets the
 * frame's top or bottom row, or a tile cut by its right edge: every
 * enabled measure in fp32, every pixel and row tested, every load
 * reflected (rows past the bottom reflect onto real rows: loads stay in
 * bounds). */
template < unsigned SUMS, bool HIST, int PIX > __device__ __forceinline__ void
walk8 (const SharpnessParams & p, int walk, int c0, int y0, int lane,
    unsigned long long (&tot)[CQ_SUM_COUNT], unsigned *shist)
{
  constexpr unsigned kTen = 1u << CQ_SUM_TENENGRAD;
  constexpr unsigned kLapSq = 1u << CQ_SUM_LAP_SQ;
  constexpr bool kRight2 = (SUMS & ((1u << CQ_SUM_BRENNER))) != 0;
  const int w = p.width, h = p.height;
  /* centre rows of the walk inside the frame */
  const int rows = min (walk, h - y0);
  Sums8 s = { };
  ColMasks8 m = { 0, 0, 0, 0 };

#pragma unroll
  for (int k = 0; k < PIX; k++) {
    const int x = c0 + k;
    m.in |= (x < w) << k;
    m.next |= (x + 1 < w) << k;
    m.interior |= (x >= 1 && x + 1 < w) << k;
    m.two |= (x + 2 < w) << k;
  }

  RawRow8 < PIX > raw0, raw1, raw2;
  Row8 < PIX > r0, r1, r2;
#define CQ_FETCH8(i) fetch_row8 < PIX > (p, y0 - 1 + (i), c0, lane)
#define CQ_ENTER8(RAW, A, B) \
  enter_row8 < PIX > (RAW, lane, kRight2, A, B)
#define CQ_CENTRE8(j, A, B, C) \
  accumulate8 < SUMS, HIST, PIX > (A.f, B.f, C.f, B.dr, A.hd, B.hd, C.hd, \
      B.dd, C.dd, y0 + (j) + 1 < h, y0 + (j) >= 1 && y0 + (j) + 1 < h, m, \
      s, shist)
  CQ_RING_WALK (walk, rows, CQ_FETCH8, CQ_ENTER8, CQ_CENTRE8, (void) 0);
#undef CQ_CENTRE8
#undef CQ_ENTER8
#undef CQ_FETCH8

  /* a walk's float sums are exact integers below 2^24 */
  tot[CQ_SUM_VALUE] += (unsigned long long) s.val;
  tot[CQ_SUM_VALUE_SQ] += (unsigned long long) s.sq;
  tot[CQ_SUM_ROBERTS] += (unsigned long long) s.rob;
  tot[CQ_SUM_LAPLACIAN] += (unsigned long long) s.lpl;
  tot[CQ_SUM_SMD] += (unsigned long long) s.smd;
  tot[CQ_SUM_SMD2] += (unsigned long long) s.smd2;
  tot[CQ_SUM_MAXMIN] += (unsigned long long) s.mm;
  tot[CQ_SUM_BRENNER] += (unsigned long long) s.bren;
  tot[CQ_SUM_LAP] += (unsigned long long) (long long) s.lap;
  /* the biased sums less their biases: below 2^32 (walk · PIX · 2 ·
   * 1020²) */
  if (SUMS & kTen)
    tot[CQ_SUM_TENENGRAD] += s.ten - (unsigned) rows * PIX * kBiasBits;
  if (SUMS & kLapSq)
    tot[CQ_SUM_LAP_SQ] += s.lsq - (unsigned) rows * PIX * kBiasBits;
}

/* ---- 8-bit walks in fp16 pairs ----
 *
 * Off the frame's top and bottom (kInside, kSides) the measures'
 * integers come from fewer instructions than accumulate8's (the default
 * set: 128 a row of 8 pixels against 157; all measures at 4K: 14.8 µs
 * against 19.8) and fewer registers:
 * - a sample enters as the fp16 whose bits are its byte (k · 2^-24, a
 *   subnormal), two pixels a register: q[j] = (f[j], f[j + 2]), so that a
 *   neighbour one column away is the next register, not a shuffle. fp16
 *   spaces its values 2^-24 apart up to 2047 · 2^-24, and every quantity
 *   the measures take from differences stays below 1021 in magnitude, so
 *   each fp16 operation (two pixels) is exact, as each fp32 one was (one
 *   pixel);
 * - below 2048 a non-negative fp16's bits are its integer, and below 256
 *   a difference's low byte is its magnitude (the sign is bit 15). So the
 *   non-negative terms below 1021 (the samples, the Laplacian's |h| + |v|,
 *   Roberts, SMD, max-min) of two pixels add into a 32-bit word as two
 *   16-bit integers, and products of magnitudes below 256 (squared
 *   samples, SMD2, Brenner) come four at a time from one dp4a of bytes;
 * - squares beyond that need fp32: Tenengrad's gx and gy, the Laplacian
 *   variance's h + v become floats (k · 2^-24, exact), and their squares
 *   add to 2^-25, whose ulp is 2^-48: the float's bits are then
 *   kBiasHalfBits + the integer, added up as in accumulate8. Σ (h + v)
 *   adds in fp32, exact below 2^24 units (a walk's 240 pixels · 1020).
 * The integers are accumulate8's, so the sums stay the CPU backend's bit
 * for bit. */
constexpr unsigned kBiasHalfBits = 0x33000000u;  /* bits of 2^-25 */

__device__ __forceinline__ __half2
half2_of (unsigned u)
{
  return *reinterpret_cast < const __half2 * >(&u);
}

__device__ __forceinline__ unsigned
bits_of (__half2 h)
{
  return *reinterpret_cast < const unsigned *>(&h);
}

__device__ __forceinline__ unsigned
hsub (unsigned x, unsigned y)
{
  return bits_of (__hsub2 (half2_of (x), half2_of (y)));
}

__device__ __forceinline__ unsigned
hadd (unsigned x, unsigned y)
{
  return bits_of (__hadd2 (half2_of (x), half2_of (y)));
}

/* 2 x + y */
__device__ __forceinline__ unsigned
htwice_plus (unsigned x, unsigned y)
{
  return bits_of (__hfma2 (half2_of (x), __float2half2_rn (2.f),
          half2_of (y)));
}

/* y - 2 x */
__device__ __forceinline__ unsigned
hminus_twice_plus (unsigned x, unsigned y)
{
  return bits_of (__hfma2 (half2_of (x), __float2half2_rn (-2.f),
          half2_of (y)));
}

/* |x| + |y| */
__device__ __forceinline__ unsigned
habs_add (unsigned x, unsigned y)
{
  return bits_of (__hadd2 (__habs2 (half2_of (x)), __habs2 (half2_of (y))));
}

/* The centre pairs: pair n (n < PIX / 2) is q[centre_pair (n)], pixels
 * (4u, 4u + 2) for n = 2u and (4u + 1, 4u + 3) for n = 2u + 1. */
__host__ __device__ constexpr int
centre_pair (int n)
{
  return (n / 2) * 4 + 1 + n % 2;
}

/* A row in pairs: q[j] = (f[j], f[j + 2]) for j < PIX (f as expand_row8's,
 * column c0 - 1 + j; with Brenner also j = PIX), and at the centre pairs
 * what the row's neighbours and the row itself (as the centre) take from
 * it. */
template < int PIX > struct RowHalf
{
  unsigned q[PIX + 1];
  unsigned hd[PIX / 2];         /* q[j + 1] - q[j - 1] */
  unsigned sm[PIX / 2];         /* q[j - 1] + 2 q[j] + q[j + 1] */
  unsigned h[PIX / 2];          /* q[j - 1] - 2 q[j] + q[j + 1] */
  unsigned dr[PIX / 2];         /* q[j + 1] - q[j] */
  unsigned dd[PIX / 2];         /* q[j] - the row above's q[j] */
  unsigned mx[PIX / 2], mn[PIX / 2];    /* of q[j - 1], q[j], q[j + 1] */
};

/* The lanes' byte permutes for q[0], q[PIX - 1] and q[PIX]: from the lane
 * beside or, at the warp's edge lanes, from the edge word (lane 0: its
 * byte 3, the last lane: its bytes 0 and 1; the zero high bytes from q[2]
 * / q[PIX - 3] / q[PIX - 2]). */
struct EdgeSelectors
{
  unsigned first, last, beyond;
};

template < unsigned SUMS, int E, int PIX > __device__ __forceinline__ void
enter_row_half (const RawRow8 < PIX > &raw, int lane, bool left, bool right,
    const EdgeSelectors & sel, const RowHalf < PIX > &above,
    RowHalf < PIX > &row)
{
  unsigned *q = row.q;

#pragma unroll
  for (int u = 0; u < PIX / 4; u++) {
    q[4 * u + 1] = __byte_perm (raw.word[u], 0, 0x4240);
    q[4 * u + 2] = __byte_perm (raw.word[u], 0, 0x4341);
  }
#pragma unroll
  for (int u = 0; u + 1 < PIX / 4; u++) {
    q[4 * u + 3] = __byte_perm (q[4 * u + 1], q[4 * u + 5], 0x5432);
    q[4 * u + 4] = __byte_perm (q[4 * u + 2], q[4 * u + 6], 0x5432);
  }
  {
    const unsigned up = __shfl_up_sync (kFullMask, q[PIX - 2], 1);
    const unsigned down = __shfl_down_sync (kFullMask, q[1], 1);
    unsigned edge = raw.edge;

    /* kSides: column -1 reflects to 1 (f[2]), column w to w - 2; column
     * w + 1 (Brenner's, at a pixel it leaves out) takes any sample */
    if (E == kSides && left)
      edge = raw.word[0] << 16;
    if (E == kSides && right)
      edge = raw.word[PIX / 4 - 1] >> 16;
    q[0] = __byte_perm (lane == 0 ? edge : up, q[2], sel.first);
    q[PIX - 1] = __byte_perm (q[PIX - 3], lane == kWarp - 1 ? edge : down,
        sel.last);
    if (SUMS & (1u << CQ_SUM_BRENNER)) {
      const unsigned down2 = __shfl_down_sync (kFullMask, q[2], 1);

      q[PIX] = __byte_perm (q[PIX - 2], lane == kWarp - 1 ? edge : down2,
          sel.beyond);
    }
  }
#pragma unroll
  for (int n = 0; n < PIX / 2; n++) {
    const int j = centre_pair (n);
    const unsigned sides = hadd (q[j - 1], q[j + 1]);

    row.hd[n] = hsub (q[j + 1], q[j - 1]);
    row.sm[n] = htwice_plus (q[j], sides);
    row.h[n] = hminus_twice_plus (q[j], sides);
    row.dr[n] = hsub (q[j + 1], q[j]);
    row.dd[n] = hsub (q[j], above.q[j]);
    if (SUMS & (1u << CQ_SUM_MAXMIN)) {
      row.mx[n] = bits_of (__hmax2 (__hmax2 (half2_of (q[j - 1]),
                  half2_of (q[j])), half2_of (q[j + 1])));
      row.mn[n] = bits_of (__hmin2 (__hmin2 (half2_of (q[j - 1]),
                  half2_of (q[j])), half2_of (q[j + 1])));
    }
  }
}

/* A walk's sums. The *_pairs words add non-negative terms below 1021 of
 * two pixels as two 16-bit integers (the terms' fp16 bits), emptied into
 * the 32-bit totals every 3 rows: at most 3 · PIX / 2 · 1020 < 2^16. */
struct SumsHalf
{
  unsigned ten, lsq, sq, smd2, bren;    /* integers */
  float lap;                    /* Σ L · 2^-24, exact: below 2^24 units */
  unsigned val_pairs, rob_pairs, lpl_pairs, smd_pairs, mm_pairs;
  unsigned val, rob, lpl, smd, mm;
};

/* kSides: the lane's pixels that drop out, as masks of the pairs' bits
 * (all ones elsewhere): pixel 0 at x = 0 (no interior: Tenengrad, the
 * Laplacian, max-min), pixel PIX - 1 at x = w - 1 (no interior, no next:
 * Roberts, SMD, SMD2; no two: Brenner), pixel PIX - 2 at x = w - 2 (no
 * two). The bytes' masks are for the last word of four magnitudes
 * (pixels PIX - 4, PIX - 2, PIX - 3, PIX - 1). */
struct SideMasks
{
  unsigned first, last, bytes_last, bytes_last_two;
};

/* the magnitudes' bytes of centre pairs 2u and 2u + 1: pixels 4u, 4u + 2,
 * 4u + 1, 4u + 3 (below 256 a difference's low byte is its magnitude) */
__device__ __forceinline__ unsigned
magnitude_bytes (unsigned even, unsigned odd)
{
  return __byte_perm (even, odd, 0x6420);
}

/* Centre row b between a and c: every enabled term of its PIX pixels. */
template < unsigned SUMS, bool HIST, int E, int PIX >
    __device__ __forceinline__ void
accumulate_half (const RowHalf < PIX > &a, const RowHalf < PIX > &b,
    const RowHalf < PIX > &c, const SideMasks & m, SumsHalf & s,
    unsigned *shist)
{
  constexpr bool SIDES = E == kSides;
  const float bias = __uint_as_float (kBiasHalfBits);
  unsigned lpl[PIX / 2], rob[PIX / 2], smd[PIX / 2], mm[PIX / 2];

#pragma unroll
  for (int n = 0; n < PIX / 2; n++) {
    const int j = centre_pair (n);
    /* the Laplacian's second differences along the row and down */
    const unsigned v = hsub (c.dd[n], b.dd[n]);
    /* all ones but the pixels at the frame's sides that drop out of the
     * measures of interior pixels (Tenengrad, Laplacian, max-min) and of
     * those with a right neighbour (Roberts, SMD) */
    const unsigned interior = !SIDES ? ~0u : n == 0 ? m.first :
        n == PIX / 2 - 1 ? m.last : ~0u;
    const unsigned next = !SIDES || n != PIX / 2 - 1 ? ~0u : m.last;

    if (SUMS & (1u << CQ_SUM_TENENGRAD)) {
      /* Sobel: the rows' differences two apart smoothed down, the rows'
       * smoothed samples differenced down */
      const unsigned gx = htwice_plus (b.hd[n], hadd (a.hd[n], c.hd[n])) &
          interior;
      const unsigned gy = hsub (c.sm[n], a.sm[n]) & interior;
      const __half2 hx = half2_of (gx), hy = half2_of (gy);
      const float x0 = __low2float (hx), x1 = __high2float (hx);
      const float y0 = __low2float (hy), y1 = __high2float (hy);

      s.ten += __float_as_uint (fmaf (x0, x0, fmaf (y0, y0, bias))) +
          __float_as_uint (fmaf (x1, x1, fmaf (y1, y1, bias)));
    }
    if (SUMS & (1u << CQ_SUM_LAPLACIAN))
      lpl[n] = habs_add (b.h[n], v) & interior;
    if (SUMS & (1u << CQ_SUM_LAP)) {
      /* the signed Laplacian h + v of every pixel, and its square */
      const __half2 l = __hadd2 (half2_of (b.h[n]), half2_of (v));
      const float l0 = __low2float (l), l1 = __high2float (l);

      s.lap += l0 + l1;
      s.lsq += __float_as_uint (fmaf (l0, l0, bias)) +
          __float_as_uint (fmaf (l1, l1, bias));
    }
    if (SUMS & (1u << CQ_SUM_ROBERTS))
      rob[n] = habs_add (hsub (c.q[j + 1], b.q[j]), hsub (c.q[j],
              b.q[j + 1])) & next;
    if (SUMS & (1u << CQ_SUM_SMD))
      smd[n] = habs_add (b.dr[n], c.dd[n]) & next;
    if (SUMS & (1u << CQ_SUM_MAXMIN)) {
      const __half2 mx = __hmax2 (__hmax2 (half2_of (a.mx[n]),
              half2_of (b.mx[n])), half2_of (c.mx[n]));
      const __half2 mn = __hmin2 (__hmin2 (half2_of (a.mn[n]),
              half2_of (b.mn[n])), half2_of (c.mn[n]));

      mm[n] = bits_of (__hsub2 (mx, mn)) & interior;
    }
    if (HIST) {
      atomicAdd (&shist[b.q[j] & 0xffu], 1u);
      atomicAdd (&shist[b.q[j] >> 16], 1u);
    }
  }
#pragma unroll
  for (int n = 0; n < PIX / 2; n += 2) {
    if (SUMS & (1u << CQ_SUM_VALUE))
      s.val_pairs += b.q[centre_pair (n)] + b.q[centre_pair (n + 1)];
    if (SUMS & (1u << CQ_SUM_LAPLACIAN))
      s.lpl_pairs += lpl[n] + lpl[n + 1];
    if (SUMS & (1u << CQ_SUM_ROBERTS))
      s.rob_pairs += rob[n] + rob[n + 1];
    if (SUMS & (1u << CQ_SUM_SMD))
      s.smd_pairs += smd[n] + smd[n + 1];
    if (SUMS & (1u << CQ_SUM_MAXMIN))
      s.mm_pairs += mm[n] + mm[n + 1];
  }
  /* products of magnitudes below 256, four a dp4a */
#pragma unroll
  for (int u = 0; u < PIX / 4; u++) {
    const bool last = SIDES && u == PIX / 4 - 1;

    if (SUMS & (1u << CQ_SUM_VALUE_SQ)) {
      const unsigned f = magnitude_bytes (b.q[4 * u + 1], b.q[4 * u + 2]);

      s.sq = __dp4a (f, f, s.sq);
    }
    if (SUMS & (1u << CQ_SUM_SMD2)) {
      unsigned mag_dr = magnitude_bytes (b.dr[2 * u], b.dr[2 * u + 1]);

      if (last)
        mag_dr &= m.bytes_last;
      s.smd2 = __dp4a (mag_dr, magnitude_bytes (c.dd[2 * u],
              c.dd[2 * u + 1]), s.smd2);
    }
    if (SUMS & (1u << CQ_SUM_BRENNER)) {
      /* f[i + 2] - f[i]: q[j + 2] - q[j] */
      unsigned d = magnitude_bytes (hsub (b.q[4 * u + 3], b.q[4 * u + 1]),
          hsub (b.q[4 * u + 4], b.q[4 * u + 2]));

      if (last)
        d &= m.bytes_last_two;
      s.bren = __dp4a (d, d, s.bren);
    }
  }
}

/* A *_pairs word's two 16-bit sums into its total. */
__device__ __forceinline__ void
empty_pairs (unsigned &pairs, unsigned &total)
{
  total += (pairs & 0xffffu) + (pairs >> 16);
  pairs = 0;
}

__device__ __forceinline__ void
empty_all_pairs (SumsHalf & s)
{
  empty_pairs (s.val_pairs, s.val);
  empty_pairs (s.rob_pairs, s.rob);
  empty_pairs (s.lpl_pairs, s.lpl);
  empty_pairs (s.smd_pairs, s.smd);
  empty_pairs (s.mm_pairs, s.mm);
}

/* walk8 off the frame's top and bottom (E kInside or kSides), in pairs. */
template < unsigned SUMS, bool HIST, int E, int PIX >
    __device__ __forceinline__ void
walk_half (const SharpnessParams & p, int walk, int c0, int y0, int lane,
    unsigned long long (&tot)[CQ_SUM_COUNT], unsigned *shist)
{
  const int w = p.width;
  const unsigned char *row = p.src + (size_t) (y0 - 1) * p.pitch + c0;
  const bool left = E == kSides && c0 == 0;
  const bool right = E == kSides && c0 + PIX == w;
  const bool edge_lane = (lane == 0 && !left) || (lane == kWarp - 1
      && !right);
  const int edge_offset = lane == 0 ? -4 : PIX;
  const EdgeSelectors sel = { lane == 0 ? 0x5453u : 0x5432u,
    lane == kWarp - 1 ? 0x1432u : 0x5432u,
    lane == kWarp - 1 ? 0x1532u : 0x5432u
  };
  const SideMasks m = { left ? 0xffff0000u : ~0u, right ? 0x0000ffffu : ~0u,
    right ? 0x00ffffffu : ~0u, right ? 0x00ff00ffu : ~0u
  };
  SumsHalf s = { };
  RawRow8 < PIX > raw0, raw1, raw2;
  RowHalf < PIX > r0, r1, r2;

#define CQ_FETCH_HALF(i) fetch_row8_inside < PIX > (row + (size_t) (i) * \
      p.pitch, edge_offset, edge_lane)
#define CQ_ENTER_HALF(RAW, A, B) \
  enter_row_half < SUMS, E, PIX > (RAW, lane, left, right, sel, A, B)
#define CQ_CENTRE_HALF(j, A, B, C) \
  accumulate_half < SUMS, HIST, E, PIX > (A, B, C, m, s, shist)
  CQ_RING_WALK (walk, walk, CQ_FETCH_HALF, CQ_ENTER_HALF, CQ_CENTRE_HALF,
      empty_all_pairs (s));
#undef CQ_CENTRE_HALF
#undef CQ_ENTER_HALF
#undef CQ_FETCH_HALF
  empty_all_pairs (s);

  const unsigned biases = (unsigned) walk * PIX * kBiasHalfBits;

  tot[CQ_SUM_VALUE] += s.val;
  tot[CQ_SUM_VALUE_SQ] += s.sq;
  tot[CQ_SUM_ROBERTS] += s.rob;
  if (SUMS & (1u << CQ_SUM_TENENGRAD))
    tot[CQ_SUM_TENENGRAD] += s.ten - biases;
  tot[CQ_SUM_LAPLACIAN] += s.lpl;
  tot[CQ_SUM_SMD] += s.smd;
  tot[CQ_SUM_SMD2] += s.smd2;
  tot[CQ_SUM_MAXMIN] += s.mm;
  tot[CQ_SUM_BRENNER] += s.bren;
  tot[CQ_SUM_LAP] += (unsigned long long) (long long) (s.lap * 16777216.f);
  if (SUMS & (1u << CQ_SUM_LAP_SQ))
    tot[CQ_SUM_LAP_SQ] += s.lsq - biases;
}

/* ROWS: the walk's length at compile time (kRows8: 4K frames walk it,
 * and knowing it saves 3 % there), 0 for p.rows; PIX: pixels a thread. */
template < unsigned SUMS, bool HIST, int ROWS, int PIX > __global__ void
__launch_bounds__ (kWarp * kBlockWarps, min_blocks8 (SUMS, PIX))
    sharpness8_kernel (SharpnessParams p)
{
  const int walk = ROWS ? ROWS : p.rows;

  static_assert (ROWS <= max_rows8 (PIX), "fp32 sums must stay exact");
  let_next_frame_start ();
  const unsigned seen = frame_set_peek (p.released);
  __shared__ unsigned shist[256];
  const int lane = threadIdx.x;
  /* threadIdx.y read through a shuffle: the compiler then knows every
   * branch on the warp's tile to be uniform and lowers the walk's shuffles
   * as plain ones, not divergence-safe collectives (101 WARPSYNC and
   * ENDCOLLECTIVE instructions fewer; 6 % at 4K) */
  const int warp = __shfl_sync (kFullMask, (int) threadIdx.y, 0);
  const int tid = warp * kWarp + lane;
  const int w = p.width, h = p.height;
  unsigned long long tot[CQ_SUM_COUNT] = { };

  if (HIST) {
    for (int i = tid; i < 256; i += kWarp * kBlockWarps)
      shist[i] = 0;
    __syncthreads ();
  }
  for (int tile = blockIdx.x; tile < p.tiles_x * p.tiles_y; tile += gridDim.x) {
    const int x0 = (tile % p.tiles_x) * kWarp * PIX;
    const int c0 = x0 + lane * PIX;
    const int y0 = ((tile / p.tiles_x) * kBlockWarps + warp) * walk;

    if (y0 >= h)                /* uniform over the warp */
      continue;
    /* the edges it meets (Edges8; uniform): off every edge with the edge
     * lanes' words inside the row, or at the sides only, or any */
    const int x1 = x0 + kWarp * PIX;
    const bool rows_inside = y0 >= 1 && y0 + walk + 1 < h;
    const bool left_inside = x0 >= 4, right_inside = x1 + 4 <= w;

    if (rows_inside && left_inside && right_inside)
      walk_half < SUMS, HIST, kInside, PIX > (p, walk, c0, y0, lane, tot,
          shist);
    else if (rows_inside && (left_inside || x0 == 0)
        && (right_inside || x1 == w))
      walk_half < SUMS, HIST, kSides, PIX > (p, walk, c0, y0, lane, tot,
          shist);
    else
      walk8 < SUMS, HIST, PIX > (p, walk, c0, y0, lane, tot, shist);
  }
  publish_block < SUMS, HIST > (p, tot, shist, seen);
}

/* Packed 8-bit RGB to gray, value = (299 R + 587 G + 114 B + 500) / 1000. */
__global__ void
rgb_to_gray_kernel (const unsigned char *src, size_t src_pitch,
    unsigned char *dst, size_t dst_pitch, int width, int height,
    int pixel_stride, int r, int g, int b)
{
  int x, y;

  if (grid_xy (width, height, x, y)) {
    const unsigned char *px = src + (size_t) y * src_pitch +
        (size_t) x * pixel_stride;
    dst[(size_t) y * dst_pitch + x] =
        (unsigned char) cq_gray_rgb8 (px[r], px[g], px[b]);
  }
}

}                               /* namespace cq */

#endif /* CQ_SHARPNESS_KERNELS_CUH */
