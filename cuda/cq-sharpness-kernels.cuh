/* cudaquality compute library: the fused sharpness kernel.
 *
 * One pass over the frame computes the integer sums of every enabled
 * measure. A warp spans 256 bytes of a row (8 bytes a thread: 8 pixels of
 * 8 bits or 4 of 16) and walks ROWS rows down, keeping the rows above, at and
 * below the current one in registers, so each pixel is read from memory once
 * (plus a halo row a warp); neighbours across lanes come by warp shuffle.
 * Per-thread sums are reduced per block with warp shuffles (cq-reduce.cuh)
 * and added to 128-bit global accumulators with two 64-bit atomics; the
 * last block to finish copies the totals out and zeroes the accumulators for the next
 * frame, so a frame is one kernel launch and one small copy.
 *
 * Integer sums are exact whatever the order of the additions, which is what
 * makes the result identical to the CPU backend's.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_SHARPNESS_KERNELS_CUH
#define CQ_SHARPNESS_KERNELS_CUH

#include "cq-local.h"
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
constexpr int kRows = CQ_SHARPNESS_ROWS;        /* rows a warp walks */

struct SharpnessParams
{
  const unsigned char *src;
  size_t pitch;
  int width, height;
  int tiles_x, tiles_y;         /* tiles of 32 threads x kBlockWarps walks */
  unsigned shift, mask;
  unsigned long long *accum;    /* [CQ_SUM_COUNT][lo, hi], zero between frames */
  unsigned long long *out;      /* [CQ_SUM_COUNT][lo, hi] */
  unsigned int *counter;        /* blocks finished, zero between frames */
  unsigned long long *hist;     /* used by HIST kernels (entropy) */
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

template < typename T, unsigned SUMS, bool HIST > __global__ void
__launch_bounds__ (kWarp * kBlockWarps, CQ_SHARPNESS_MIN_BLOCKS)
    sharpness_kernel (SharpnessParams p)
{
  constexpr int P = Layout < T >::kPix;
  constexpr int V = Layout < T >::kVals;
  __shared__ unsigned long long block_sums[kBlockWarps][CQ_SUM_COUNT];
  __shared__ unsigned shist[256];
  const int lane = threadIdx.x, warp = threadIdx.y;
  const int tid = warp * kWarp + lane;
  const int w = p.width, h = p.height;
  /* 8-bit histograms go through shared memory, 16-bit ones straight to global */
  const bool small_hist = HIST && sizeof (T) == 1;
  /* the block's totals; two's complement for the signed Laplacian sum */
  unsigned long long tot[CQ_SUM_COUNT] = { };

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

  /* block reduction: warp shuffles, then the warps' sums in shared memory */
#define CQ_REDUCE(slot, field)                                          \
  if (SUMS & (1u << (slot))) {                                          \
    unsigned long long v = warp_sum (tot[slot]);                        \
    if (lane == 0)                                                      \
      block_sums[warp][slot] = v;                                       \
  }
  CQ_REDUCE (CQ_SUM_VALUE, val);
  CQ_REDUCE (CQ_SUM_VALUE_SQ, sq);
  CQ_REDUCE (CQ_SUM_ROBERTS, rob);
  CQ_REDUCE (CQ_SUM_TENENGRAD, ten);
  CQ_REDUCE (CQ_SUM_LAPLACIAN, lpl);
  CQ_REDUCE (CQ_SUM_SMD, smd);
  CQ_REDUCE (CQ_SUM_SMD2, smd2);
  CQ_REDUCE (CQ_SUM_MAXMIN, mm);
  CQ_REDUCE (CQ_SUM_BRENNER, bren);
  CQ_REDUCE (CQ_SUM_LAP, lap);  /* two's complement: the sum stays exact */
  CQ_REDUCE (CQ_SUM_LAP_SQ, lsq);
#undef CQ_REDUCE
  __syncthreads ();

  if (tid < CQ_SUM_COUNT && (SUMS & (1u << tid))) {
    unsigned long long v = 0;
    for (int i = 0; i < kBlockWarps; i++)
      v += block_sums[i][tid];
    /* only the Laplacian sum is signed */
    atomic_add_128 (&p.accum[2 * tid], v, tid == CQ_SUM_LAP
        && (long long) v < 0);
  }
  if (small_hist) {
    for (int i = tid; i < 256; i += kWarp * kBlockWarps)
      if (shist[i])
        atomicAdd (&p.hist[i], (unsigned long long) shist[i]);
  }

  /* the last block to finish publishes the totals and resets for the next
   * frame */
  if (last_block (p.counter, gridDim.x)) {
    if (tid < 2 * CQ_SUM_COUNT)
      p.out[tid] = atomicExch (&p.accum[tid], 0ull);
    if (tid == 0)
      *p.counter = 0;
  }
}

/* Packed 8-bit RGB to gray, value = (299 R + 587 G + 114 B + 500) / 1000. */
__global__ void
rgb_to_gray_kernel (const unsigned char *src, size_t src_pitch,
    unsigned char *dst, size_t dst_pitch, int width, int height,
    int pixel_stride, int r, int g, int b)
{
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;

  if (x < width && y < height) {
    const unsigned char *px = src + (size_t) y * src_pitch +
        (size_t) x * pixel_stride;
    dst[(size_t) y * dst_pitch + x] =
        (unsigned char) cq_gray_rgb8 (px[r], px[g], px[b]);
  }
}

}                               /* namespace cq */

#endif /* CQ_SHARPNESS_KERNELS_CUH */
