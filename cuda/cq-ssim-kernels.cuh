/* cudaquality compute library: the SSIM kernels.
 *
 * Each kernel walks columns down the frame pair, the seed's pipelined
 * design: a warp keeps running window sums for its columns in registers, so
 * every sample is read from memory once (plus a few halo rows a tile), and
 * horizontal window sums come from the neighbouring lanes by shuffle (box8,
 * ffmpeg) or from a row in shared memory (gauss11). The squared differences
 * for MSE/PSNR are summed in the same pass.
 *
 * Reduction: each block writes its double SSIM sum to its own slot and adds
 * its 64-bit SSE with an integer atomic (exact in any order); the last
 * block to finish adds the slots in index order, so the result does not
 * depend on scheduling, and resets the accumulators for the next frame. A
 * frame may be launched in several bands of tile rows (as its rows arrive
 * from the host): slots and the block count span all of them.
 *
 * The local expressions mirror cq-ssim-local.h operation for operation,
 * except gauss11's FMA and tensor-core kernels (g2_windows4: the same
 * factors in fewer operations, within a few units in the last place).
 *
 * Two modules include this header: cq-ssim-cuda.cu and gauss2ws's
 * (cq-ssim-ws-cuda.cu), so kernels that are not templates are static.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_SSIM_KERNELS_CUH
#define CQ_SSIM_KERNELS_CUH

#include <type_traits>

#include "cq-reduce.cuh"
#include "cq-grid.cuh"
#include "cq-ssim.h"
#include "cq-ssim-local.h"

namespace cq
{

constexpr int kSsimThreads = 128;       /* 4 warps a block */
constexpr int kBox8Strip = 120;         /* window columns a warp owns */
constexpr int kFfmpegStrip = 31;        /* window block columns a warp owns */
constexpr int kGaussCols = 118;         /* window columns a block owns */
/* Default rows a tile walks (block rows for ffmpeg): more rows spread the
 * halo over more windows, fewer give more tiles to hide latency with. */
constexpr int kBox8Rows = 16;           /* 16-bit; 8-bit: default_tile_rows */
/* 8-bit box8 blocks an SM holds: 78 registers a thread, no spill. H100,
 * 4K back to back: 6 blocks 19.9 µs; 7 (72 registers, 32 bytes of spill)
 * and 5 were slower in each design tried (docs/benchmarks.md). */
#ifndef CQ_SSIM_BOX8P_MIN_BLOCKS
#define CQ_SSIM_BOX8P_MIN_BLOCKS 6
#endif
constexpr int kBox8pBlocks = CQ_SSIM_BOX8P_MIN_BLOCKS;
constexpr int kFfmpegBlockRows = 4;     /* at least; see default_tile_rows */
constexpr int kGaussRows = 64;

__constant__ double c_gauss[11];
/* the paired g2_vertical_sums' offsets (set in gauss2ws's module, the one
 * that pairs: cq_ssim_ws_set_weights) */
__constant__ double c_g2_offset[2];
/* and the second moments' weights there, 4 w[0..5] */
__constant__ double c_g2_moment_w[6];
/* and the centre taps' weights (scaled for the half-biased quantities) */
__constant__ double c_g2_center_w[2];

struct SsimPlaneOut
{
  double ssim_sum;
  unsigned long long sse;
};

struct SsimParams
{
  const unsigned char *a, *b;   /* packed samples of the reference, distorted */
  size_t pitch_a, pitch_b;
  int width, height;
  unsigned shift, mask;         /* 16-bit samples: (v >> shift) & mask */
  bool vec;                     /* rows aligned for 4-sample vector loads */
  double k1, k2;                /* box8: 4096 C1, 4032 C2; gauss11: C1, C2 */
  /* gauss11's FMA and tensor-core kernels (g2_windows4), whose sums are of
   * doubled samples: 2 C1, 4 C1, 2 C2, 4 C1 + 4 C2 (gauss_constants) */
  double g_a1, g_b1, g_a2, g_b2;
  long long c1, c2;             /* ffmpeg */
  int rows;                     /* rows (block rows for ffmpeg) a tile walks */
  int tile_y0;                  /* first tile row of this launch */
  unsigned total_blocks;        /* blocks of every launch of the frame */
  /* the frame's set of accumulators (cq-reduce.cuh, kFrameSets) */
  double *partials;             /* one per block */
  unsigned long long *sse_accum;        /* zero between frames */
  unsigned *counter;            /* zero between frames */
  unsigned *released;           /* the set's last frame (frame_set_claim) */
  unsigned claim, seq;          /* released's value to wait for; this frame */
  SsimPlaneOut *out;
  /* a second sum of the same windows (the fused gauss11 pass: SSIM in out,
   * MS-SSIM's scale-1 contrast-structure sum in out2), same counter */
  double *partials2;
  SsimPlaneOut *out2;
};

/* ---- loads ----
 * Four adjacent samples of a row as the raw words that hold them (one
 * 32-bit word of 8-bit samples, two of 16-bit ones): kept in registers as
 * is and unpacked when used. Samples right of the plane read as 0. */

template < typename T > struct Raw4;
template <> struct Raw4 <unsigned char>
{
  unsigned w;
};
template <> struct Raw4 <unsigned short>
{
  unsigned w0, w1;
};

__device__ __forceinline__ Raw4 < unsigned char >
load_raw4 (const unsigned char *row, int x, int width, const SsimParams & p)
{
  Raw4 < unsigned char >r;

  if (p.vec && x + 3 < width) {
    r.w = __ldg ((const unsigned *) (row + x));
  } else {
    r.w = 0;
#pragma unroll
    for (int j = 0; j < 4; j++)
      if (x + j < width)
        r.w |= (unsigned) __ldg (row + x + j) << (8 * j);
  }
  return r;
}

__device__ __forceinline__ Raw4 < unsigned short >
load_raw4 (const unsigned short *row, int x, int width, const SsimParams & p)
{
  Raw4 < unsigned short >r;

  if (p.vec && x + 3 < width) {
    uint2 w = __ldg ((const uint2 *) (row + x));
    r.w0 = w.x;
    r.w1 = w.y;
  } else {
    unsigned v[4];
#pragma unroll
    for (int j = 0; j < 4; j++)
      v[j] = x + j < width ? __ldg (row + x + j) : 0u;
    r.w0 = v[0] | v[1] << 16;
    r.w1 = v[2] | v[3] << 16;
  }
  return r;
}

__device__ __forceinline__ void
unpack4 (Raw4 < unsigned char >r, const SsimParams &, unsigned v[4])
{
  v[0] = r.w & 0xff;
  v[1] = (r.w >> 8) & 0xff;
  v[2] = (r.w >> 16) & 0xff;
  v[3] = r.w >> 24;
}

__device__ __forceinline__ void
unpack4 (Raw4 < unsigned short >r, const SsimParams & p, unsigned v[4])
{
  v[0] = ((r.w0 & 0xffff) >> p.shift) & p.mask;
  v[1] = ((r.w0 >> 16) >> p.shift) & p.mask;
  v[2] = ((r.w1 & 0xffff) >> p.shift) & p.mask;
  v[3] = ((r.w1 >> 16) >> p.shift) & p.mask;
}

template < typename T > __device__ __forceinline__ void
load4 (const T * row, int x, int width, const SsimParams & p, unsigned v[4])
{
  unpack4 (load_raw4 (row, x, width, p), p, v);
}

__device__ __forceinline__ unsigned
load1 (const unsigned char *row, int x, const SsimParams &)
{
  return __ldg (row + x);
}

__device__ __forceinline__ unsigned
load1 (const unsigned short *row, int x, const SsimParams & p)
{
  return (__ldg (row + x) >> p.shift) & p.mask;
}

/* MS-SSIM's integer scales (msssim_pyramid_kernel's sums) */
__device__ __forceinline__ unsigned
load1 (const unsigned int *row, int x, const SsimParams &)
{
  return __ldg (row + x);
}

template < typename T > __device__ __forceinline__ const T *
row_of (const unsigned char *base, size_t pitch, int y)
{
  return (const T *) (base + (size_t) y * pitch);
}

/* A sample as a double: a packed integer sample, or a value of one of
 * MS-SSIM's downsampled scales (T = double). */
template < typename T > __device__ __forceinline__ double
sample_at (const unsigned char *base, size_t pitch, int y, int x,
    const SsimParams & p)
{
  if constexpr (std::is_same < T, double >::value)
    return __ldg (row_of < double >(base, pitch, y) + x);
  else
    return (double) load1 (row_of < T > (base, pitch, y), x, p);
}

/* ---- reduction (cq-reduce.cuh) ---- */

/* This thread's share of the block sums, partials[tid], [tid + 128], ...
 * added in that order; the loads of eight go out together, so the last
 * block waits about one L2 round trip, not one a sum. */
template < int THREADS = kSsimThreads > __device__ __forceinline__ double
sum_partials (const double *partials, unsigned blocks)
{
  constexpr unsigned kBatch = 8;
  double acc = 0.0;
  unsigned i = threadIdx.x;

  for (; i + (kBatch - 1) * THREADS < blocks; i += kBatch * THREADS) {
    double v[kBatch];

#pragma unroll
    for (unsigned k = 0; k < kBatch; k++)
      v[k] = __ldcg (partials + i + k * THREADS);
#pragma unroll
    for (unsigned k = 0; k < kBatch; k++)
      acc += v[k];
  }
  for (; i < blocks; i += THREADS)
    acc += __ldcg (partials + i);
  return acc;
}

/* Every thread of the block (THREADS of them) calls this once with its NS
 * double sums (NS = 2: partials2 and out2 take the second) and its SSE,
 * which goes to out. */
template < int NS, int THREADS = kSsimThreads > __device__ void
block_finish_n (const SsimParams & p, const double (&v)[NS],
    unsigned long long sse, unsigned seen)
{
  __shared__ double s_sum[NS][THREADS / 32];
  __shared__ unsigned long long s_sse[THREADS / 32];
  __shared__ double s_final[NS][THREADS];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned blocks = p.total_blocks;
  const unsigned block = (p.tile_y0 + blockIdx.y) * gridDim.x + blockIdx.x;
  double *const partials[2] = { p.partials, p.partials2 };

  frame_set_claim (p.released, p.claim, seen);
#pragma unroll
  for (int k = 0; k < NS; k++) {
    double w = warp_sum (v[k]);
    if (lane == 0)
      s_sum[k][warp] = w;
  }
  sse = warp_sum (sse);
  if (lane == 0)
    s_sse[warp] = sse;
  __syncthreads ();
  if (threadIdx.x == 0) {
    unsigned long long b_sse = 0;

#pragma unroll
    for (int k = 0; k < NS; k++) {
      double b = 0.0;

      for (int w = 0; w < THREADS / 32; w++)
        b += s_sum[k][w];
      partials[k][block] = b;
    }
    for (int w = 0; w < THREADS / 32; w++)
      b_sse += s_sse[w];
    if (b_sse)
      atomicAdd (p.sse_accum, b_sse);
  }
  if (!last_block (p.counter, blocks))
    return;
  /* the last block: add the block sums in a fixed order, clear and release
   * the set, then write the results out */
  wait_for_previous_frame ();
#pragma unroll
  for (int k = 0; k < NS; k++)
    s_final[k][threadIdx.x] = sum_partials < THREADS > (partials[k], blocks);
  __syncthreads ();
  for (int n = THREADS / 2; n > 0; n >>= 1) {
    if (threadIdx.x < n) {
#pragma unroll
      for (int k = 0; k < NS; k++)
        s_final[k][threadIdx.x] += s_final[k][threadIdx.x + n];
    }
    __syncthreads ();
  }
  unsigned long long total_sse = 0;

  if (threadIdx.x == 0) {
    total_sse = atomicExch (p.sse_accum, 0ull);
    *p.counter = 0;
  }
  frame_set_release (p.released, p.seq);
  if (threadIdx.x == 0) {
    p.out->ssim_sum = s_final[0][0];
    if (NS > 1)
      p.out2->ssim_sum = s_final[NS - 1][0];
    p.out->sse = total_sse;
  }
}

/* The same for one sum, the SSIM. */
__device__ __forceinline__ void
block_finish (const SsimParams & p, double ssim, unsigned long long sse,
    unsigned seen)
{
  const double v[1] = { ssim };

  block_finish_n < 1 > (p, v, sse, seen);
}

/* ---- box8: every 8x8 window ----
 * A lane owns 4 adjacent columns and keeps their 8-row sums of a, b,
 * a²+b², ab; a warp spans 128 columns and owns the 120 windows starting in
 * its first 120 (the last 8 columns are the halo). The window starting at
 * column 4·lane+j adds the own columns j..3, lane+1's four and lane+2's
 * first j: from totals and prefix sums, 4 shuffles a quantity a row.
 * A block is 4 warps side by side and walks p.rows window rows. */

template < typename I > __device__ __forceinline__ void
box8_windows (const I v[4], I w[4])
{
  I p1 = v[0], p2 = v[0] + v[1], p3 = p2 + v[2], tot = p3 + v[3];
  I u = tot + __shfl_down_sync (kFullMask, tot, 1);

  w[0] = u;
  w[1] = u - p1 + __shfl_down_sync (kFullMask, p1, 2);
  w[2] = u - p2 + __shfl_down_sync (kFullMask, p2, 2);
  w[3] = u - p3 + __shfl_down_sync (kFullMask, p3, 2);
}

/* Σ (a - b)² of four samples. */
__device__ __forceinline__ unsigned
sse4 (Raw4 < unsigned char >ra, Raw4 < unsigned char >rb, const SsimParams &)
{
  const unsigned d = __vabsdiffu4 (ra.w, rb.w);

  return __dp4a (d, d, 0u);
}

__device__ __forceinline__ unsigned long long
sse4 (Raw4 < unsigned short >ra, Raw4 < unsigned short >rb,
    const SsimParams & p)
{
  unsigned a[4], b[4];
  unsigned long long e = 0;

  unpack4 (ra, p, a);
  unpack4 (rb, p, b);
#pragma unroll
  for (int j = 0; j < 4; j++) {
    long long d = (long long) a[j] - (long long) b[j];
    e += (unsigned long long) (d * d);
  }
  return e;
}

template < typename T, typename I > __device__ __forceinline__ void
box8_add (const Raw4 < T > &ra, const Raw4 < T > &rb, const SsimParams & p,
    I sign, I s1[4], I s2[4], I ss[4], I s12[4])
{
  unsigned a[4], b[4];

  unpack4 (ra, p, a);
  unpack4 (rb, p, b);
#pragma unroll
  for (int j = 0; j < 4; j++) {
    s1[j] += sign * (I) a[j];
    s2[j] += sign * (I) b[j];
    ss[j] += sign * ((I) a[j] * (I) a[j] + (I) b[j] * (I) b[j]);
    s12[j] += sign * ((I) a[j] * (I) b[j]);
  }
}

/* Where a box8 warp walks: kBox8Strip window columns from x0, a lane 4 of
 * them from cx (lanes past kBox8Strip / 4 only read), window rows
 * [y0, own_end), sample rows [y0, read_end) (7 more for the last windows). */
struct Box8Walk
{
  int lane, x0, cx, y0, own_end, read_end;
  bool own_lane;

  __device__ __forceinline__ explicit Box8Walk (const SsimParams & p)
  {
    lane = threadIdx.x & 31;
    x0 = (blockIdx.x * (kSsimThreads / 32) + (threadIdx.x >> 5)) *
        kBox8Strip;
    cx = x0 + 4 * lane;
    y0 = (p.tile_y0 + blockIdx.y) * p.rows;
    own_end = min (y0 + p.rows, p.height);
    read_end = min (y0 + p.rows + 7, p.height);
    own_lane = lane < kBox8Strip / 4;
  }
};

/* I: the integer type of the sums (int for 8-bit, long long above). The
 * walk is unrolled by 8 so that the last 8 rows stay in a register ring
 * with compile-time slots; the next row is loaded one step ahead. */
#ifndef CQ_SSIM_BOX8_MIN_BLOCKS
#define CQ_SSIM_BOX8_MIN_BLOCKS 1
#endif
template < typename T, typename I > __global__ void
__launch_bounds__ (kSsimThreads, CQ_SSIM_BOX8_MIN_BLOCKS)
ssim_box8_kernel (SsimParams p)
{
  const unsigned seen = frame_set_peek (p.released);
  const Box8Walk wk (p);
  I s1[4] = { 0, 0, 0, 0 }, s2[4] = { 0, 0, 0, 0 };
  I ss[4] = { 0, 0, 0, 0 }, s12[4] = { 0, 0, 0, 0 };
  Raw4 < T > ring_a[8], ring_b[8], next_a, next_b;
  double ssim = 0.0;
  unsigned long long sse = 0;

  if (wk.x0 < p.width) {
    next_a = load_raw4 (row_of < T > (p.a, p.pitch_a, wk.y0), wk.cx,
        p.width, p);
    next_b = load_raw4 (row_of < T > (p.b, p.pitch_b, wk.y0), wk.cx,
        p.width, p);
    for (int base = wk.y0; base < wk.read_end; base += 8) {
#pragma unroll
      for (int k = 0; k < 8; k++) {
        const int y = base + k;
        Raw4 < T > ra, rb;

        if (y >= wk.read_end)
          break;
        ra = next_a;
        rb = next_b;
        if (y + 1 < wk.read_end) {
          next_a = load_raw4 (row_of < T > (p.a, p.pitch_a, y + 1), wk.cx,
              p.width, p);
          next_b = load_raw4 (row_of < T > (p.b, p.pitch_b, y + 1), wk.cx,
              p.width, p);
        }
        if (y - wk.y0 >= 8)        /* slot k holds row y - 8 */
          box8_add < T, I > (ring_a[k], ring_b[k], p, (I) - 1, s1, s2, ss,
              s12);
        box8_add < T, I > (ra, rb, p, (I) 1, s1, s2, ss, s12);
        ring_a[k] = ra;
        ring_b[k] = rb;
        if (wk.own_lane && y < wk.own_end)
          sse += sse4 (ra, rb, p);
        if (y - wk.y0 >= 7) {
          I w1[4], w2[4], wss[4], w12[4];

          box8_windows (s1, w1);
          box8_windows (s2, w2);
          box8_windows (ss, wss);
          box8_windows (s12, w12);
          if (wk.own_lane) {
#pragma unroll
            for (int j = 0; j < 4; j++)
              if (wk.cx + j + 8 <= p.width)
                ssim += cq_ssim_box8_local < I > (w1[j], w2[j], wss[j],
                    w12[j], p.k1, p.k2);
          }
        }
      }
    }
  }
  block_finish (p, ssim, sse, seen);
}

/* ---- box8, second design for 8-bit samples (the default; CQ_SSIM_KERNEL=old
 * selects the one above) ----
 * The same windows and sums, with packed integer arithmetic for the sums:
 * a column's samples of a row as v = a | b << 16 (bytes a, 0, b, 0), so
 * that
 * - Σa and Σb of a column, and later of a window (at most 64·255 = 16320),
 *   are one 32-bit word (s1 | s2 << 16): one add a row, one set of shuffles;
 * - a² + b² = dp4a (v, v) and 2ab = dp4a (v, swapped v): the column sums of
 *   a² + b² and of 2ab take two dp4a a row each.
 * Σ 2ab instead of Σ ab gives the integer 2 (64 Σab − Σa Σb) of
 * cq_ssim_box8_local as 64 Σ2ab − 2 Σa Σb.
 * Each window's four factors n1, n2, d1, d2 are cq_ssim_box8_factors',
 * the CPU's, bit for bit; a lane's four windows of a row are then
 * added as one quotient (sum4_quotients), within a few units in the last place
 * of the CPU's sum of four quotients. */

/* bytes (a0, b0, a1, b1) and (a2, b2, a3, b3) of a row's raw words */
__device__ __forceinline__ void
box8p_interleave (unsigned ra, unsigned rb, unsigned &t0, unsigned &t1)
{
  t0 = __byte_perm (ra, rb, 0x5140);
  t1 = __byte_perm (ra, rb, 0x7362);
}

/* column j's a | b << 16, and b | a << 16, of an interleaved row */
__device__ __forceinline__ void
box8p_column (unsigned t0, unsigned t1, int j, unsigned &v, unsigned &w)
{
  const unsigned t = j < 2 ? t0 : t1;

  v = __byte_perm (t, 0, (j & 1) ? 0x4342 : 0x4140);
  w = __byte_perm (t, 0, (j & 1) ? 0x4243 : 0x4041);
}

/* Adds row t0, t1 to the column sums. */
__device__ __forceinline__ void
box8p_add (unsigned t0, unsigned t1, unsigned pk[4], unsigned ss[4],
    unsigned ab2[4])
{
#pragma unroll
  for (int j = 0; j < 4; j++) {
    unsigned v, w;

    box8p_column (t0, t1, j, v, w);
    pk[j] += v;
    ss[j] = __dp4a (v, v, ss[j]);
    ab2[j] = __dp4a (v, w, ab2[j]);
  }
}

/* Adds row t0, t1 and removes row o0, o1 (the one 8 rows up). */
__device__ __forceinline__ void
box8p_shift (unsigned t0, unsigned t1, unsigned o0, unsigned o1,
    unsigned pk[4], unsigned ss[4], unsigned ab2[4])
{
#pragma unroll
  for (int j = 0; j < 4; j++) {
    unsigned v, w, ov, ow;

    box8p_column (t0, t1, j, v, w);
    box8p_column (o0, o1, j, ov, ow);
    pk[j] = pk[j] + v - ov;
    ss[j] = __dp4a (v, v, ss[j]) - __dp4a (ov, ov, 0u);
    ab2[j] = __dp4a (v, w, ab2[j]) - __dp4a (ov, ow, 0u);
  }
}

/* IEEE division n / d, rounded to nearest: the operations of __ddiv_rn's
 * fast path without its range tests, which send zero, subnormal, infinite
 * and near-underflow operands and quotients to a slow path. sum4_quotients'
 * d lies between 1 and 2^1000 and its quotient between -4 and 4, far from
 * underflow. */
__device__ __forceinline__ double
div_rn_in_range (double n, double d)
{
  double r, e, q;

  asm ("rcp.approx.ftz.f64 %0, %1;" : "=d" (r) : "d" (d));
  e = __fma_rn (-d, r, 1.0);
  e = __fma_rn (e, e, e);
  r = __fma_rn (r, e, r);
  e = __fma_rn (-d, r, 1.0);
  r = __fma_rn (r, e, r);
  q = __dmul_rn (n, r);
  return __fma_rn (r, __fma_rn (-d, q, n), q);
}

/* n[0] / d[0] + ... + n[3] / d[3] as one fraction n4 / d4: pairs (n, d)
 * merged as (na db + nb da, da db). The SSIM kernels' d are at least 4 C2
 * (gauss11's cs term: 234 at 8 bits; box8's scaled d at least 6e9) and
 * below 2^250, so the products of four neither overflow nor underflow. */
__device__ __forceinline__ void
sum4_fraction (const double n[4], const double d[4], double &n4, double &d4)
{
  const double d01 = __dmul_rn (d[0], d[1]), d23 = __dmul_rn (d[2], d[3]);
  const double n01 = __fma_rn (n[0], d[1], __dmul_rn (n[1], d[0]));
  const double n23 = __fma_rn (n[2], d[3], __dmul_rn (n[3], d[2]));

  n4 = __fma_rn (n01, d23, __dmul_rn (n23, d01));
  d4 = __dmul_rn (d01, d23);
}

/* The same sum as one quotient: one division instead of four; the result
 * is within a few units in the last place of the sum of the four
 * correctly rounded quotients. */
__device__ __forceinline__ double
sum4_quotients (const double n[4], const double d[4])
{
  double n4, d4;

  sum4_fraction (n, d, n4, d4);
  return div_rn_in_range (n4, d4);
}

/* A row's four samples of a lane (its word at `at`, cx its column). Warps
 * inside the plane with aligned rows load the word; the warp at the right
 * edge (EDGE) reads samples right of the plane as 0. */
template < bool EDGE > __device__ __forceinline__ unsigned
box8p_load (const unsigned char *at, int cx, const SsimParams & p)
{
  if (!EDGE)
    return __ldg ((const unsigned *) at);
  return load_raw4 (at - cx, cx, p.width, p).w;
}

/* The lane's four windows whose last row was just added: their factors
 * (cq_ssim_box8_factors, the CPU's roundings), added to ssim. At the right edge
 * (EDGE) those from n_win on (right of the plane, or lanes that only read)
 * count 0; inside, every lane adds its four and the lanes that only read
 * drop their sum at the end. */
template < bool EDGE > __device__ __forceinline__ void
box8p_add_windows (const unsigned pk[4], const unsigned ss[4],
    const unsigned ab2[4], int n_win, const SsimParams & p, double &ssim)
{
  unsigned wpk[4], wss[4], wab2[4];
  double n[4], d[4];

  box8_windows (pk, wpk);
  box8_windows (ss, wss);
  box8_windows (ab2, wab2);
#pragma unroll
  for (int j = 0; j < 4; j++) {
    const int sa = (int) (wpk[j] & 0xffff), sb = (int) (wpk[j] >> 16);
    const int pr = sa * sb, q = sa * sa + sb * sb;
    double n1, n2, d1, d2;

    cq_ssim_box8_factors (2 * pr, 64 * (int) wab2[j] - 2 * pr, q,
        64 * (int) wss[j] - q, p.k1, p.k2, &n1, &n2, &d1, &d2);
    n[j] = !EDGE || j < n_win ? __dmul_rn (n1, n2) : 0.0;
    d[j] = __dmul_rn (d1, d2);
  }
  ssim += sum4_quotients (n, d);
}

/* One warp's tile: 7 rows that only enter the sums, then a row a step
 * with its windows. Each row comes in one step ahead; the row leaving the
 * sums (8 up) is read again, from L1, instead of kept in registers, which
 * leaves registers for a sixth block an SM. Loads do not branch: past the
 * tile the next row repeats the last, and the first leaving row is zero.
 * Row addresses are y · pitch + base (pitches below 2^32, launch_tiles). */
template < bool EDGE > __device__ __forceinline__ void
box8p_walk (const SsimParams & p, const Box8Walk & wk, double &ssim,
    unsigned long long &sse)
{
  /* windows of this lane inside the plane: those starting at cx + j,
   * j < n_win */
  const int n_win = wk.own_lane ? max (0, min (4, p.width - 7 - wk.cx)) : 0;
  const unsigned pitch_a = (unsigned) p.pitch_a, pitch_b = (unsigned) p.pitch_b;
  const unsigned char *const base_a = p.a + wk.cx, *const base_b = p.b + wk.cx;
  const int last = wk.read_end - 1;
  unsigned pk[4] = { 0, 0, 0, 0 }, ss[4] = { 0, 0, 0, 0 };
  unsigned ab2[4] = { 0, 0, 0, 0 };
  unsigned na, nb, noa = 0, nob = 0;
  int y = wk.y0;

#define CQ_BOX8P_ROW(base, pitch, row) \
  box8p_load < EDGE > ((base) + (size_t) (unsigned) (row) * (pitch), wk.cx, p)
  na = CQ_BOX8P_ROW (base_a, pitch_a, y);
  nb = CQ_BOX8P_ROW (base_b, pitch_b, y);
  for (; y < min (wk.y0 + 7, wk.read_end); y++) {
    const unsigned ra = na, rb = nb, d = __vabsdiffu4 (ra, rb);
    unsigned t0, t1;

    na = CQ_BOX8P_ROW (base_a, pitch_a, min (y + 1, last));
    nb = CQ_BOX8P_ROW (base_b, pitch_b, min (y + 1, last));
    sse += __dp4a (d, y < wk.own_end ? d : 0u, 0u);
    box8p_interleave (ra, rb, t0, t1);
    box8p_add (t0, t1, pk, ss, ab2);
  }
#pragma unroll 1
  for (; y < wk.read_end; y++) {
    const unsigned ra = na, rb = nb, oa = noa, ob = nob;
    const unsigned d = __vabsdiffu4 (ra, rb);
    unsigned t0, t1, o0, o1;

    na = CQ_BOX8P_ROW (base_a, pitch_a, min (y + 1, last));
    nb = CQ_BOX8P_ROW (base_b, pitch_b, min (y + 1, last));
    noa = CQ_BOX8P_ROW (base_a, pitch_a, y - 7);
    nob = CQ_BOX8P_ROW (base_b, pitch_b, y - 7);
    sse += __dp4a (d, y < wk.own_end ? d : 0u, 0u);
    box8p_interleave (ra, rb, t0, t1);
    box8p_interleave (oa, ob, o0, o1);
    box8p_shift (t0, t1, o0, o1, pk, ss, ab2);
    box8p_add_windows < EDGE > (pk, ss, ab2, n_win, p, ssim);
  }
#undef CQ_BOX8P_ROW
  /* lanes past the strip read columns the next warp owns */
  if (!wk.own_lane) {
    sse = 0;
    ssim = 0.0;
  }
}

static __global__ void
__launch_bounds__ (kSsimThreads, kBox8pBlocks)
ssim_box8p_kernel (SsimParams p)
{
  const Box8Walk wk (p);
  double ssim = 0.0;
  unsigned long long sse = 0;

  let_next_frame_start ();
  const unsigned seen = frame_set_peek (p.released);

  if (wk.x0 < p.width) {
    if (p.vec && wk.x0 + 128 <= p.width)
      box8p_walk < false > (p, wk, ssim, sse);
    else
      box8p_walk < true > (p, wk, ssim, sse);
  }
  block_finish (p, ssim, sse, seen);
}

/* ---- ffmpeg: 8x8 windows on the 4-sample grid ----
 * A lane owns one column of 4x4 blocks and walks block rows, keeping the
 * previous block row's sums; the window adds the lane's two blocks and the
 * next lane's two. A warp owns 31 window columns; a block is 4 warps side
 * by side and walks p.rows window rows. Samples outside the
 * 4-aligned area (at most 3 columns and 3 rows) enter only the SSE, added by
 * ssim_sse_rest_kernel. */

template < typename T > struct BlockRaw
{
  Raw4 < T > a[4], b[4];
};

/* The 4x4 block at (x, y) of both frames; it lies inside the plane. */
template < typename T > __device__ __forceinline__ BlockRaw < T >
load_block (const SsimParams & p, int x, int y)
{
  BlockRaw < T > r;

#pragma unroll
  for (int k = 0; k < 4; k++) {
    r.a[k] = load_raw4 (row_of < T > (p.a, p.pitch_a, y + k), x, x + 4, p);
    r.b[k] = load_raw4 (row_of < T > (p.b, p.pitch_b, y + k), x, x + 4, p);
  }
  return r;
}

/* 8-bit: four samples at once with byte dot products. */
__device__ __forceinline__ void
block_sums (const BlockRaw < unsigned char >&r, const SsimParams &,
    unsigned s[4], unsigned long long &sse)
{
  unsigned s1 = 0, s2 = 0, ss = 0, s12 = 0, e = 0;

#pragma unroll
  for (int k = 0; k < 4; k++) {
    const unsigned a = r.a[k].w, b = r.b[k].w, d = __vabsdiffu4 (a, b);

    s1 = __dp4a (a, 0x01010101u, s1);
    s2 = __dp4a (b, 0x01010101u, s2);
    ss = __dp4a (a, a, ss);
    ss = __dp4a (b, b, ss);
    s12 = __dp4a (a, b, s12);
    e = __dp4a (d, d, e);
  }
  s[0] = s1;
  s[1] = s2;
  s[2] = ss;
  s[3] = s12;
  sse = e;
}

__device__ __forceinline__ void
block_sums (const BlockRaw < unsigned short >&r, const SsimParams & p,
    long long s[4], unsigned long long &sse)
{
  long long s1 = 0, s2 = 0, ss = 0, s12 = 0;
  unsigned long long e = 0;

#pragma unroll
  for (int k = 0; k < 4; k++) {
    unsigned a[4], b[4];

    unpack4 (r.a[k], p, a);
    unpack4 (r.b[k], p, b);
#pragma unroll
    for (int j = 0; j < 4; j++) {
      long long d = (long long) a[j] - (long long) b[j];

      s1 += a[j];
      s2 += b[j];
      ss += (long long) a[j] * a[j] + (long long) b[j] * b[j];
      s12 += (long long) a[j] * b[j];
      e += (unsigned long long) (d * d);
    }
  }
  s[0] = s1;
  s[1] = s2;
  s[2] = ss;
  s[3] = s12;
  sse = e;
}

/* The sums' type: 8-bit window sums fit 32 bits (as in FFmpeg), so do
 * the expression's integers (at most 64 · 2 · 255² · 64 < 2^31). */
template < typename T > struct FfmpegSum
{
  typedef long long S;
};
template <> struct FfmpegSum <unsigned char >
{
  typedef unsigned S;
};

/* cq_ssim_ffmpeg_local in 32 bits: the same integers, converted to float
 * from the same values, so the same window value. */
__device__ __forceinline__ float
ffmpeg_local (unsigned s1, unsigned s2, unsigned ss, unsigned s12,
    long long c1, long long c2)
{
  const int a = (int) s1, b = (int) s2;
  const int vars = (int) ss * 64 - a * a - b * b;
  const int covar = (int) s12 * 64 - a * b;

  return (float) (2 * a * b + (int) c1) * (float) (2 * covar + (int) c2)
      / ((float) (a * a + b * b + (int) c1) * (float) (vars + (int) c2));
}

__device__ __forceinline__ float
ffmpeg_local (long long s1, long long s2, long long ss, long long s12,
    long long c1, long long c2)
{
  return cq_ssim_ffmpeg_local (s1, s2, ss, s12, c1, c2);
}

/* The next block row is loaded one step ahead (two or five steps
 * measured no faster: 4K 12.4 and 13.6 µs against 12.3). */
template < typename T > __global__ void
__launch_bounds__ (kSsimThreads)
ssim_ffmpeg_kernel (SsimParams p)
{
  typedef typename FfmpegSum < T >::S S;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int w4 = p.width / 4, h4 = p.height / 4;
  const int bx0 = (blockIdx.x * (kSsimThreads / 32) + warp) * kFfmpegStrip;
  const int bx = bx0 + lane;
  const int by0 = (p.tile_y0 + blockIdx.y) * p.rows;
  const int own_end = min (by0 + p.rows, h4);
  const int read_end = min (by0 + p.rows + 1, h4);
  const bool own_lane = lane < kFfmpegStrip && bx < w4;
  const bool in = bx < w4;
  S prev[4] = { 0, 0, 0, 0 };
  double ssim = 0.0;
  unsigned long long sse = 0;
  BlockRaw < T > next;

  let_next_frame_start ();
  const unsigned seen = frame_set_peek (p.released);
  if (bx0 < w4) {
    if (in)
      next = load_block < T > (p, 4 * bx, 4 * by0);
    for (int by = by0; by < read_end; by++) {
      S cur[4] = { 0, 0, 0, 0 }, pair[4], nb[4];
      unsigned long long e = 0;
      BlockRaw < T > r = next;

      if (in && by + 1 < read_end)
        next = load_block < T > (p, 4 * bx, 4 * (by + 1));
      if (in)
        block_sums (r, p, cur, e);
      if (own_lane && by < own_end)
        sse += e;
#pragma unroll
      for (int k = 0; k < 4; k++) {
        pair[k] = prev[k] + cur[k];
        nb[k] = __shfl_down_sync (kFullMask, pair[k], 1);
        prev[k] = cur[k];
      }
      if (by > by0 && own_lane && bx + 1 < w4)
        ssim += ffmpeg_local (pair[0] + nb[0], pair[1] + nb[1],
            pair[2] + nb[2], pair[3] + nb[3], p.c1, p.c2);
    }
  }
  block_finish (p, ssim, sse, seen);
}

/* The SSE of the samples right of and below the 4-aligned area. */
template < typename T > __global__ void
ssim_sse_rest_kernel (SsimParams p)
{
  const int w4x = p.width / 4 * 4, h4y = p.height / 4 * 4;
  const int right = p.width - w4x;
  const long long n_right = (long long) right * h4y;
  const long long n = n_right + (long long) (p.height - h4y) * p.width;
  unsigned long long sse = 0;

  for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x;
      i < n; i += (long long) gridDim.x * blockDim.x) {
    int x, y;

    if (i < n_right) {
      x = w4x + (int) (i % right);
      y = (int) (i / right);
    } else {
      x = (int) ((i - n_right) % p.width);
      y = h4y + (int) ((i - n_right) / p.width);
    }
    long long d = (long long) load1 (row_of < T > (p.a, p.pitch_a, y), x, p)
        - (long long) load1 (row_of < T > (p.b, p.pitch_b, y), x, p);
    sse += (unsigned long long) (d * d);
  }
  sse = warp_sum (sse);
  if ((threadIdx.x & 31) == 0 && sse)
    atomicAdd (p.sse_accum, sse);
}

/* ---- gauss11: 11x11 Gaussian windows ----
 * A thread owns a column and keeps the last 11 rows of a, b, a²+b², ab in
 * registers (a ring indexed by compile-time slots); each row it forms the
 * 11-tap vertical sums and puts them in shared memory. Every second row the
 * horizontal sums of both rows follow, a thread taking two adjacent windows
 * of one row (halving the shared-memory traffic a window). Weights are in constant memory, computed on the host by the
 * function the CPU backend uses.
 *
 * MS-SSIM runs the same kernel at every scale: T = double for the
 * downsampled scales (no squared differences summed there), and with CS
 * the windows' contrast-structure term is summed instead of their SSIM. */

/* The horizontal sums of two adjacent windows from 12 vertical sums: six
 * 16-byte shared loads a quantity instead of eleven 8-byte ones a window. */
__device__ __forceinline__ void
gauss_horizontal_pair (const double *v, double &h0, double &h1)
{
  double w[12];

#pragma unroll
  for (int j = 0; j < 6; j++) {
    double2 d = ((const double2 *) v)[j];
    w[2 * j] = d.x;
    w[2 * j + 1] = d.y;
  }
  h0 = 0.0;
  h1 = 0.0;
#pragma unroll
  for (int i = 0; i < 11; i++) {
    h0 += c_gauss[i] * w[i];
    h1 += c_gauss[i] * w[i + 1];
  }
}

/* A window's SSIM, or with CS its contrast-structure term. */
template < bool CS > __device__ __forceinline__ double
gauss_window (const double u[4], const SsimParams & p)
{
  if constexpr (CS)
    return cq_ssim_gauss_cs_local (u[0], u[1], u[2], u[3], p.k2);
  else
    return cq_ssim_gauss_local (u[0], u[1], u[2], u[3], p.k1, p.k2);
}

/* Where a gauss11 block walks: cols window columns from x0, thread t
 * column x, window rows [y0, own_end), sample rows [y0, read_end) (10 more
 * for the last windows); own_col: t has a window column, in: x is inside. */
struct GaussWalk
{
  int x0, x, y0, own_end, read_end;
  bool own_col, in;

  __device__ __forceinline__ GaussWalk (const SsimParams & p, int cols)
  {
    const int t = threadIdx.x;

    x0 = blockIdx.x * cols;
    x = x0 + t;
    y0 = (p.tile_y0 + blockIdx.y) * p.rows;
    own_end = min (y0 + p.rows, p.height);
    read_end = min (y0 + p.rows + 10, p.height);
    own_col = t < cols && x < p.width;
    in = x < p.width;
  }
};

/* The gauss11 kernels' walk down a tile through an 11-row ring: body (k,
 * y) for each frame row y the tile reads, k = (y - gw.y0) % 11 its slot
 * (a constant once the loop is unrolled, so the ring stays in registers;
 * gauss2ws walks a ring of 12 with gauss_ring_walk_split). */
template < typename F > __device__ __forceinline__ void
gauss_ring_walk (const GaussWalk & gw, F body)
{
  for (int base = gw.y0; base < gw.read_end; base += 11) {
#pragma unroll
    for (int k = 0; k < 11; k++) {
      const int y = base + k;

      if (y >= gw.read_end)
        break;
      body (k, y);
    }
  }
}

template < typename T, bool CS = false > __global__ void
__launch_bounds__ (kSsimThreads)
ssim_gauss_kernel (SsimParams p)
{
  const unsigned seen = frame_set_peek (p.released);
  /* [pair buffer][row of the pair][quantity][column] */
  __shared__ __align__ (16) double s_v[2][2][4][kSsimThreads];
  const int t = threadIdx.x;
  const GaussWalk gw (p, kGaussCols);
  /* horizontal pass: thread t takes columns 2c, 2c+1 of row r of a pair */
  const int hr = t >> 6, hc = 2 * (t & 63);
  double ring[11][4];
  double ssim = 0.0;
  unsigned long long sse = 0;

  gauss_ring_walk (gw,[&](int k, int y) {
      {
        double da, db;

        if constexpr (std::is_same < T, double >::value) {
          da = gw.in ? sample_at < T > (p.a, p.pitch_a, y, gw.x, p) : 0.0;
          db = gw.in ? sample_at < T > (p.b, p.pitch_b, y, gw.x, p) : 0.0;
        } else {
          unsigned a = gw.in ? load1 (row_of < T > (p.a, p.pitch_a, y), gw.x,
              p) : 0;
          unsigned b = gw.in ? load1 (row_of < T > (p.b, p.pitch_b, y), gw.x,
              p) : 0;
          long long d = (long long) a - (long long) b;

          da = (double) a;
          db = (double) b;
          if (gw.own_col && y < gw.own_end)
            sse += (unsigned long long) (d * d);
        }
        ring[k][0] = da;
        ring[k][1] = db;
        ring[k][2] = da * da + db * db;
        ring[k][3] = da * db;
      }
      if (y - gw.y0 >= 10) {
        const int n = y - gw.y0 - 10;      /* window row within the tile */
        const int row = n & 1, pb = (n >> 1) & 1;

#pragma unroll
        for (int q = 0; q < 4; q++) {
          double v = 0.0;
#pragma unroll
          for (int i = 0; i < 11; i++)
            v += c_gauss[i] * ring[(k + 1 + i) % 11][q];
          s_v[pb][row][q][t] = v;
        }
        /* after the second row of a pair, or a lone last row */
        if (row == 1 || y == gw.read_end - 1) {
          __syncthreads ();
          if ((hr <= row) && hc < kGaussCols) {
            const int wx = gw.x0 + hc;     /* the pair's first window */
            double u0[4], u1[4];

#pragma unroll
            for (int q = 0; q < 4; q++)
              gauss_horizontal_pair (&s_v[pb][hr][q][hc], u0[q], u1[q]);
            if (wx + 11 <= p.width)
              ssim += gauss_window < CS > (u0, p);
            if (wx + 12 <= p.width)
              ssim += gauss_window < CS > (u1, p);
          }
        }
      }
      });
  block_finish (p, ssim, sse, seen);
}

/* ---- gauss11, second design (the default; CQ_SSIM_KERNEL=old selects the
 * one above) ----
 * The same arithmetic (double vertical then horizontal 11-tap sums, then
 * the factors of cq-ssim-local.h, in fewer operations: g2_windows4),
 * scheduled so that the fp64 pipe, not latency, bounds it:
 * - every sample is loaded long before it is used, so no row waits for
 *   memory: 14 rows ahead into a ring in shared memory by asynchronous
 *   copies (ASYNC, the default), or 11 rows ahead into a register ring of
 *   raw samples beside the ring of quantities (devices without cp.async,
 *   rows not 4-byte aligned);
 * - the horizontal pass runs every 4 window rows, warp w taking row w, a
 *   lane 4 adjacent windows from 14 vertical sums a quantity (3.5 shared
 *   loads a window and quantity instead of 6), the columns swizzled
 *   (g2_col) so that those 16-byte loads and the column threads' 8-byte
 *   stores both hit distinct banks;
 * - MS-SSIM's scales carry integer sums (the 2x2 averages of scale s are
 *   exactly k / 4^s, k an integer: msssim_pyramid_kernel), read as
 *   T = unsigned int with C1, C2 scaled by 16^s;
 * - MODE picks the sum: SSIM, the contrast-structure term, or both (the
 *   gauss11 window with MS-SSIM: one pass gives the SSIM and MS-SSIM's first
 *   scale). */

constexpr int kG2Cols = 118;    /* window columns a block owns */
constexpr int kG2Group = 4;     /* window rows a horizontal pass takes */
constexpr int kG2Stride = 136;  /* doubles a (row, quantity) in shared:
                                 * the loads reach g2_col (129) */
/* blocks an SM: 168 registers a thread (8-bit instances spill 8-16
 * bytes, MS-SSIM's scales 72). Left free, the MS-SSIM instances took
 * 188-192 registers and 2 blocks; 4K with MS-SSIM measured 389 µs against
 * 301 at 3. */
#ifndef CQ_SSIM_G2_BLOCKS
#define CQ_SSIM_G2_BLOCKS 3
#endif
constexpr int kG2Blocks = CQ_SSIM_G2_BLOCKS;

enum
{
  kGaussSsim = 0,
  kGaussCs = 1,
  kGaussBoth = 2
};

/* Column c's place in a row of s_v: bit 4 of c flips bit 1. A lane's
 * 16-byte load of columns 4l + 2j, 4l + 2j + 1 stays whole, a quarter of
 * a warp's loads falls on 8 distinct 16-byte banks, and half a warp's
 * stores of 16 consecutive columns on 16 distinct 8-byte ones. (The
 * 2-double gap every 4 columns it replaces had the stores meet 2 ways:
 * ncu, gauss2ws at 4K, 2.34 M of its 13.3 M shared wavefronts. H200:
 * gauss2 4K 85.6 -> 84.6 µs; gauss2ws 4K 71.7-71.8 -> 71.7, 7680x4320
 * 288.3-289.1 -> 286.8-287.6, but 16-bit 75.7 -> 76.2.) */
__device__ __forceinline__ int
g2_col (int c)
{
  return c ^ ((c >> 3) & 2);
}

/* A row's samples of both frames at one column, as loaded: packed for 8-
 * and 16-bit samples, two words for MS-SSIM's integer sums. */
template < typename T > struct G2Raw
{
  unsigned v;
  __device__ __forceinline__ unsigned a () const { return v & 0xffff; }
  __device__ __forceinline__ unsigned b () const { return v >> 16; }
};
template <> struct G2Raw <unsigned int>
{
  unsigned va, vb;
  __device__ __forceinline__ unsigned a () const { return va; }
  __device__ __forceinline__ unsigned b () const { return vb; }
};

/* The samples of row y at column x as loaded: nothing is computed from
 * them until g2_pack, so the loads stay in flight until then. */
struct G2Load
{
  unsigned a, b;
};

template < typename T > __device__ __forceinline__ G2Load
g2_load_raw (const SsimParams & p, int y, int x, bool in)
{
  G2Load r;

  r.a = in ? (unsigned) __ldg (row_of < T > (p.a, p.pitch_a, y) + x) : 0u;
  r.b = in ? (unsigned) __ldg (row_of < T > (p.b, p.pitch_b, y) + x) : 0u;
  return r;
}

template < typename T > __device__ __forceinline__ G2Raw < T >
g2_pack (const G2Load & l, const SsimParams & p)
{
  G2Raw < T > r;

  if constexpr (sizeof (T) == 4) {
    r.va = l.a;
    r.vb = l.b;
  } else if constexpr (sizeof (T) == 2) {
    r.v = ((l.a >> p.shift) & p.mask) | ((l.b >> p.shift) & p.mask) << 16;
  } else {
    r.v = l.a | l.b << 16;
  }
  return r;
}

template < typename T > __device__ __forceinline__ G2Raw < T >
g2_load (const SsimParams & p, int y, int x, bool in)
{
  return g2_pack < T > (g2_load_raw < T > (p, y, x, in), p);
}

/* ---- gauss2's samples through shared memory (ASYNC) ----
 * Loaded into registers a row before use, the samples kept warps waiting
 * (ncu, 4K: a quarter of the stall samples on packing the row loaded one
 * row earlier), and loading further ahead cost registers the kernel does
 * not have. With ASYNC the block copies each row of both frames into a
 * ring of kG2RawRows rows in shared memory kG2Ahead rows before its use
 * (cp.async, no registers held), and a thread reads its column's two
 * samples a row ahead. A row is complete and visible to every thread after
 * the group barrier before its group: each thread waits for its own copies
 * of the rows up to the next group's last (cp.async.wait_group) before the
 * barrier. Rows start 4-byte aligned and pitches are below 2^32 (the
 * launcher checks); bytes right of the plane are zero-filled, never read. */
constexpr int kG2RawRows = 32;
/* Rows a copy starts ahead of its use, for a barrier every `sync` rows: the
 * first barrier comes after the takes of the tile's first 10 + sync rows,
 * which the priming copies; the ring holds the rows in flight and those
 * the slowest warp still reads. */
constexpr int
g2_ahead (int sync)
{
  return 10 + sync;
}
constexpr int kG2Ahead = g2_ahead (4);  /* gauss2: a barrier every group */

/* bytes a frame's row of a block takes in the ring: its words and the one
 * more a misaligned start needs, rounded to 8 bytes (to 16 the 36 rows of
 * gauss2ws's ring of 16-bit samples passed the 48 KB of static shared
 * memory; the takes read consecutive bytes, so no bank conflicts either
 * way) */
template < typename T > constexpr int kG2RawStride =
    (kSsimThreads * (int) sizeof (T) + 4 + 7) & ~7;

/* 4 bytes of global memory, of which the first n are read and the rest
 * zeroed, into shared memory at dst (a shared-window address), without
 * waiting. */
__device__ __forceinline__ void
g2_copy4_async (unsigned dst, const unsigned char *src, unsigned n)
{
#if __CUDA_ARCH__ >= 800
  asm volatile ("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"::"r" (dst),
      "l" (src), "r" (n):"memory");
#else
  unsigned v = 0;

  for (unsigned i = 0; i < n; i++)
    v |= (unsigned) src[i] << (8 * i);
  asm volatile ("st.shared.u32 [%0], %1;\n"::"r" (dst), "r" (v):"memory");
#endif
}

__device__ __forceinline__ void
g2_async_commit ()
{
#if __CUDA_ARCH__ >= 800
  asm volatile ("cp.async.commit_group;\n":::"memory");
#endif
}

/* Waits until at most N of this thread's latest copy groups are pending. */
template < int N > __device__ __forceinline__ void
g2_async_wait ()
{
#if __CUDA_ARCH__ >= 800
  asm volatile ("cp.async.wait_group %0;\n"::"n" (N):"memory");
#endif
}

/* A block's rows of both frames through the ring: the block's columns are
 * the 4-byte words from byte `from` of a row, `chunks` a frame (span);
 * thread c copies word c of the 2 chunks (frame a's, then b's), and the
 * threads from 2 chunks - kSsimThreads on (16-bit samples only) one word
 * more. A thread's samples are at byte `at` of each frame's row; rows are
 * copied AHEAD rows before their use. */
template < typename T, int AHEAD = kG2Ahead > struct G2Ring
{
  static_assert (AHEAD + AHEAD - 10 < kG2RawRows,
      "the ring holds the rows in flight and the rows still read");
  static constexpr int kSlot = 2 * kG2RawStride < T >;  /* bytes a row */

  /* a word to copy of every row: row 0's (row 0 itself if n = 0) */
  struct Word
  {
    const unsigned char *src;
    unsigned pitch, n, dst;     /* n: bytes of the word in the plane */
  };

  Word mine;
  unsigned base;                /* the ring's shared-window address */
  int at;
  bool copies;

  /* chunks a frame's row, and the byte `from` they start at */
  static __device__ __forceinline__ int span (int x0, size_t &from)
  {
    const size_t first = (size_t) x0 * sizeof (T);

    from = first & ~(size_t) 3;
    return ((int) (first & 3) + kSsimThreads * (int) sizeof (T) + 3) / 4;
  }

  __device__ __forceinline__ Word
  word (const SsimParams & p, int c, int chunks, size_t from) const
  {
    const int f = c >= chunks, w = c - f * chunks;
    const long long left = (long long) p.width * (long long) sizeof (T) -
        (long long) from - 4 * w;
    const unsigned char *const plane = f ? p.b : p.a;
    Word r;

    r.n = left >= 4 ? 4u : left > 0 ? (unsigned) left : 0u;
    r.src = r.n ? plane + from + 4 * w : plane;
    r.pitch = (unsigned) (f ? p.pitch_b : p.pitch_a);
    r.dst = base + f * kG2RawStride < T > + 4 * w;
    return r;
  }

  static __device__ __forceinline__ void
  copy_word (const Word & w, unsigned slot, int y)
  {
    g2_copy4_async (w.dst + slot, w.src + (size_t) (unsigned) y * w.pitch,
        w.n);
  }

  __device__ __forceinline__ G2Ring (const SsimParams & p, int x0,
      const unsigned char *ring)
  {
    size_t from;
    const int chunks = span (x0, from);

    base = (unsigned) __cvta_generic_to_shared (ring);
    at = (int) (((size_t) x0 * sizeof (T)) & 3) +
        (int) (threadIdx.x * sizeof (T));
    copies = (int) threadIdx.x < 2 * chunks;
    mine = word (p, threadIdx.x, chunks, from);
  }

  /* Starts the copies of row y into its slot. */
  __device__ __forceinline__ void copy (const SsimParams & p, int x0,
      int y) const
  {
    const unsigned slot = (unsigned) (y & (kG2RawRows - 1)) * kSlot;

    if (copies)
      copy_word (mine, slot, y);
    if constexpr (sizeof (T) == 2) {
      size_t from;
      const int chunks = span (x0, from);
      const int c = (int) threadIdx.x + kSsimThreads;

      if (c < 2 * chunks)
        copy_word (word (p, c, chunks, from), slot, y);
    }
  }

  /* Copies the tile's first AHEAD rows and waits for this thread's
   * copies (a barrier then makes them visible to the block). */
  __device__ __forceinline__ void prime (const SsimParams & p,
      const GaussWalk & gw) const
  {
    for (int y = gw.y0; y < min (gw.y0 + AHEAD, gw.read_end); y++)
      copy (p, gw.x0, y);
    g2_async_commit ();
    g2_async_wait < 0 > ();
  }

  /* At row y: starts the copies of row y + AHEAD, a group every row
   * (empty past the tile) so that waits count rows. */
  __device__ __forceinline__ void ahead (const SsimParams & p,
      const GaussWalk & gw, int y) const
  {
    if (y + AHEAD < gw.read_end)
      copy (p, gw.x0, y + AHEAD);
    g2_async_commit ();
  }

  /* This thread's samples of row y, as g2_pack gives them. */
  __device__ __forceinline__ void
  take (const SsimParams & p, const unsigned char *ring, int y,
      unsigned &a, unsigned &b) const
  {
    take_at (p, ring + (y & (kG2RawRows - 1)) * kSlot + at, a, b);
  }

  /* the samples of both frames at `row`, a thread's byte of a slot whose
   * frames are STRIDE bytes apart */
  template < int STRIDE = kG2RawStride < T > >
      static __device__ __forceinline__ void
  take_at (const SsimParams & p, const unsigned char *row, unsigned &a,
      unsigned &b)
  {
    if constexpr (sizeof (T) == 2) {
      a = (*(const unsigned short *) row >> p.shift) & p.mask;
      b = (*(const unsigned short *) (row + STRIDE) >> p.shift) & p.mask;
    } else {
      a = row[0];
      b = row[STRIDE];
    }
  }
};

struct G2Factors
{
  double a1, a2, b1, b2;
};

/* A window's factors from its sums u, the sums of doubled samples
 * (g2_quantities): 2 mu_a, 2 mu_b, 4 E[a^2 + b^2] + 4 C1 + 4 C2,
 * 4 E[ab] + 2 C2 (g2_row_sums adds the constants). With the constants
 * scaled to match (SsimParams::g_*), the factors of cq-ssim-local.h times
 * 2, 4, 2, 4 are
 *   A1 = 2 (2 mu_a mu_b + C1)          = Ua Ub + 2 C1
 *   B1 = 4 (mu_a^2 + mu_b^2 + C1)      = Ua^2 + Ub^2 + 4 C1
 *   A2 = 2 (2 cov + C2)                = (U_ab + 2 C2) - Ua Ub
 *   B2 = 4 (var_a + var_b + C2)        = (U_ss + 4 C1 + 4 C2) - B1
 * seven operations a window where the CPU's order takes fourteen; SSIM =
 * 4 A1 A2 / (B1 B2), cs = 2 A2 / B2. The roundings differ from the CPU's
 * by a few units in the last place of each factor (the GPU suite's 1e-9
 * against the CPU holds). A1 is unused for cs alone, and left out by the
 * compiler there. */
__device__ __forceinline__ G2Factors
g2_window_factors (const double (&u)[4], const SsimParams & p)
{
  const double ua = u[0], ub = u[1];
  G2Factors f;

  f.b1 = __fma_rn (ua, ua, __fma_rn (ub, ub, p.g_b1));
  f.a2 = __fma_rn (-ua, ub, u[3]);
  f.b2 = __dadd_rn (u[2], -f.b1);
  f.a1 = __fma_rn (ua, ub, p.g_a1);
  return f;
}

/* A lane's four windows u[n] (in[n]: the block owns it): their SSIM (or
 * cs) values into s0, with kGaussBoth the cs values into s1, each sum of
 * four as one quotient (sum4_quotients). */
template < int MODE > __device__ __forceinline__ void
g2_windows4 (const double (&u)[4][4], const bool (&in)[4],
    const SsimParams & p, double &s0, double &s1)
{
  double n0[4], d0[4], n1[4], d1[4];

#pragma unroll
  for (int n = 0; n < 4; n++) {
    const G2Factors w = g2_window_factors (u[n], p);

    /* a window the block does not own counts 0 / 1, whatever its sums */
    if constexpr (MODE == kGaussCs) {
      n0[n] = in[n] ? w.a2 : 0.0;
      d0[n] = in[n] ? w.b2 : 1.0;
    } else {
      n0[n] = in[n] ? __dmul_rn (w.a1, w.a2) : 0.0;
      d0[n] = in[n] ? __dmul_rn (w.b1, w.b2) : 1.0;
      n1[n] = in[n] ? w.a2 : 0.0;
      d1[n] = in[n] ? w.b2 : 1.0;
    }
  }
  s0 = __fma_rn (MODE == kGaussCs ? 2.0 : 4.0, sum4_quotients (n0, d0), s0);
  if constexpr (MODE == kGaussBoth)
    s1 = __fma_rn (2.0, sum4_quotients (n1, d1), s1);
}

/* The block's sums: the SSIM (or cs) sum, with kGaussBoth the cs sum too,
 * and the squared differences. */
template < int MODE > __device__ __forceinline__ void
g2_finish (const SsimParams & p, double s0, double s1, unsigned long long sse,
    unsigned seen)
{
  if constexpr (MODE == kGaussBoth) {
    const double v[2] = { s0, s1 };
    block_finish_n < 2 > (p, v, sse, seen);
  } else {
    const double v[1] = { s0 };
    block_finish_n < 1 > (p, v, sse, seen);
  }
}

/* Warp `row` of the group: lane l's windows 4l..4l+3 of the block, their
 * horizontal sums u[n][q] from the slot's vertical ones; the second
 * moments' chains start from the constants their factors add
 * (g2_window_factors), which saves the expression two additions a
 * window. */
__device__ __forceinline__ void
g2_row_sums (const double (*s_v)[4][kG2Stride], int row, int lane,
    const SsimParams & p, double (&u)[4][4])
{
#pragma unroll
  for (int q = 0; q < 4; q++) {
    const double *v_row = s_v[row][q];
    double v[14];

#pragma unroll
    for (int j = 0; j < 7; j++) {
      const double2 d = *(const double2 *) (v_row + g2_col (4 * lane + 2 * j));
      v[2 * j] = d.x;
      v[2 * j + 1] = d.y;
    }
#pragma unroll
    for (int n = 0; n < 4; n++) {
      double h = q == 2 ? p.g_b2 : q == 3 ? p.g_a2 : 0.0;
#pragma unroll
      for (int i = 0; i < 11; i++)
        h = fma (c_gauss[i], v[n + i], h);
      u[n][q] = h;
    }
  }
}

/* whether the block owns window n of lane `lane`'s four */
__device__ __forceinline__ bool
g2_owns (int lane, int n, int x0, const SsimParams & p)
{
  return 4 * lane + n < kG2Cols && x0 + 4 * lane + n + 11 <= p.width;
}

/* the same and whether the block owns them (in[n]) */
__device__ __forceinline__ void
g2_horizontal_sums (const double (*s_v)[4][kG2Stride], int row, int lane,
    int x0, const SsimParams & p, double (&u)[4][4], bool (&in)[4])
{
  g2_row_sums (s_v, row, lane, p, u);
#pragma unroll
  for (int n = 0; n < 4; n++)
    in[n] = g2_owns (lane, n, x0, p);
}

/* The same and the windows' expression into s0, s1. */
template < int MODE > __device__ __forceinline__ void
g2_horizontal (const double (*s_v)[4][kG2Stride], int row, int lane,
    int x0, const SsimParams & p, double &s0, double &s1)
{
  double u[4][4];
  bool in[4];

  g2_horizontal_sums (s_v, row, lane, x0, p, u, in);
  g2_windows4 < MODE > (u, in, p, s0, s1);
}

/* The four quantities gauss11's kernels sum, of doubled samples (exact
 * in double; g2_windows4 takes the factors of 2): 2a, 2b,
 * 4 (a^2 + b^2), 4ab. */
__device__ __forceinline__ void
g2_quantities (unsigned a, unsigned b, double (&x)[4])
{
  const double da = (double) (2 * a), db = (double) (2 * b);

  x[0] = da;
  x[1] = db;
  x[2] = __fma_rn (da, da, __dmul_rn (db, db));
  x[3] = __dmul_rn (da, db);
}

/* ---- 8-bit samples: the vertical pass's symmetric taps paired in
 * integers ----
 * The weights are symmetric (w[i] = w[10 - i] exactly), so a column's sum
 * is w[5] x5 + the sum over i < 5 of w[i] (x_i + x_{10-i}): 6 fp64 FMAs a
 * quantity instead of 11. The pairs add as integers, and the add makes
 * each a double without a conversion: the high word E:s with a low word
 * of 0 is the double 2^e + s for s < 2^e, s in units of 2^(e - 20) (the
 * exponent field E = 1023 + e). The FMA chain starts from c_g2_offset,
 * minus 2^e times the five pairs' weights and 1.5 times the centre's
 * (the half-biased centre, below), which takes the biases back out; the
 * sums are then those of g2_quantities within a few units in the last
 * place of 2^e (e = 10 for the means; 20 for the second moments, whose
 * pairs a^2 + b^2 and ab take the weights times 4 (c_g2_moment_w, exact)
 * so that the quantities need no shift: a sum of 4 (a^2 + b^2) has an
 * error below 4e-9, which the 1e-9 SSIM check against the CPU allows many
 * times over, the denominators being at least 4 C2 = 234; H200, 4K: 81.3
 * -> 80.6 µs). 16-bit samples and MS-SSIM's integer sums overflow the
 * high word's 20 bits and keep the doubles.
 * The ring holds the quantities with half the bias, E:s / 2 + s, so that
 * a pair is one add of two registers (with the bias added to one of them,
 * ptxas kept that sum for each row and added the other: 24 instructions
 * a row for 20 pairs). The centre tap reads its half-biased quantity as
 * it is, the double 2^(e') (1.5 + s 2^-20), e' = (E - 1) / 2 - 1023 (E is
 * odd), with its weight scaled by 2^(e - e') (c_g2_center_w) and 1.5 w[5]
 * 2^e in the offset (column loop 1,185 -> 1,129 instructions a round of
 * 12 rows; H200, 4K 65.9 -> 65.4 µs, 1080p 18.5 -> 18.4, 7680x4320
 * 264.5-264.8 -> 262.0-262.3). */
constexpr int kG2MeanExp = 10, kG2MomentExp = 20;
constexpr unsigned kG2MeanHigh = (1023u + kG2MeanExp) << 20;
constexpr unsigned kG2MomentHigh = (1023u + kG2MomentExp) << 20;
constexpr unsigned kG2MeanHalf = kG2MeanHigh / 2;
constexpr unsigned kG2MomentHalf = kG2MomentHigh / 2;

/* a gauss2ws ring row's quantity: integers in the units of the biased
 * doubles for 8-bit samples, doubles for 16-bit ones */
template < typename T > using G2Quantity =
    typename std::conditional < sizeof (T) == 1, unsigned, double >::type;

/* 8-bit samples' quantities in the biased doubles' units, half-biased:
 * 2a and 2b in units of 2^-10 (a pair's sum is below 2^10), a^2 + b^2 and
 * ab in units of 1 (below 2^18 a pair; their weights carry the factor
 * 4). */
__device__ __forceinline__ void
g2_quantities (unsigned a, unsigned b, unsigned (&x)[4])
{
  x[0] = (a << (21 - kG2MeanExp)) + kG2MeanHalf;
  x[1] = (b << (21 - kG2MeanExp)) + kG2MeanHalf;
  x[2] = a * a + b * b + kG2MomentHalf;
  x[3] = a * b + kG2MomentHalf;
}

/* Row y's samples a, b of this thread's column into its ring slot (the
 * four quantities) and, in the block's own windows, their squared
 * difference into sse (gauss2; gauss2ws sums its own between barriers). */
template < typename T > __device__ __forceinline__ void
g2_ring_row (double (&slot)[4], unsigned a, unsigned b, const GaussWalk & gw,
    int y, unsigned long long &sse)
{
  if constexpr (sizeof (T) < 4) {
    /* modulo 2^32 the square of a - b, which is below 2^32 */
    const unsigned d = a - b;

    if (gw.own_col && y < gw.own_end)
      sse += d * d;
  }
  g2_quantities (a, b, slot);
}

/* The four quantities' vertical sums of the row whose last sample row is
 * in slot k of the ring of N rows (row y - j in slot (k + N - j) % N),
 * into column t of s_row. */
template < int N > __device__ __forceinline__ void
g2_vertical (const double (&ring)[N][4], int k, double (*s_row)[kG2Stride],
    int t)
{
#pragma unroll
  for (int q = 0; q < 4; q++) {
    double v = 0.0;
#pragma unroll
    for (int i = 0; i < 11; i++)
      v = fma (c_gauss[i], ring[(k + N - 10 + i) % N][q], v);
    s_row[q][g2_col (t)] = v;
  }
}

/* gauss2ws's: the same sums into v, which the column warps compute before
 * they wait for the slot they store them in (H200, 4K 72.0 -> 71.7-71.8
 * µs, 7680x4320 290.9-291.6 -> 290.2-290.6; at 192 / 64 registers it had
 * changed nothing). gauss2 keeps g2_vertical, each sum stored as it is
 * done: built on these two its code changes, and it is not measured. */
template < int N > __device__ __forceinline__ void
g2_vertical_sums (const double (&ring)[N][4], int k, double (&v)[4])
{
#pragma unroll
  for (int q = 0; q < 4; q++) {
    v[q] = 0.0;
#pragma unroll
    for (int i = 0; i < 11; i++)
      v[q] = fma (c_gauss[i], ring[(k + N - 10 + i) % N][q], v[q]);
  }
}

/* The same from 8-bit samples' half-biased quantities, the taps paired. */
template < int N > __device__ __forceinline__ void
g2_vertical_sums (const unsigned (&ring)[N][4], int k, double (&v)[4])
{
#pragma unroll
  for (int q = 0; q < 4; q++) {
    v[q] = fma (c_g2_center_w[q < 2 ? 0 : 1],
        __hiloint2double ((int) ring[(k + N - 5) % N][q], 0),
        c_g2_offset[q < 2 ? 0 : 1]);
#pragma unroll
    for (int i = 0; i < 5; i++)
      v[q] = fma (q < 2 ? c_gauss[i] : c_g2_moment_w[i],
          __hiloint2double ((int) (ring[(k + N - 10 + i) % N][q] +
                  ring[(k + N - i) % N][q]), 0), v[q]);
  }
}

/* the sums v into column t of s_row */
__device__ __forceinline__ void
g2_vertical_store (const double (&v)[4], double (*s_row)[kG2Stride], int t)
{
#pragma unroll
  for (int q = 0; q < 4; q++)
    s_row[q][g2_col (t)] = v[q];
}

template < typename T, int MODE, bool ASYNC = false > __global__ void
__launch_bounds__ (kSsimThreads, kG2Blocks)
ssim_gauss2_kernel (SsimParams p)
{
  static_assert (!ASYNC || sizeof (T) <= 2, "ASYNC: 8- and 16-bit samples");
  __shared__ __align__ (16) double s_v[kG2Group][4][kG2Stride];
  __shared__ __align__ (16) unsigned char
      s_raw[ASYNC ? kG2RawRows : 1][2][kG2RawStride < T >];
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const GaussWalk gw (p, kG2Cols);
  const G2Ring < T > rg (p, gw.x0, &s_raw[0][0][0]);
  double ring[11][4];
  G2Raw < T > pre[ASYNC ? 1 : 11];
  G2Load next;                  /* row y + 11, loaded at row y, packed at y + 1 */
  unsigned na = 0, nb = 0;      /* ASYNC: row y + 1's samples */
  double s0 = 0.0, s1 = 0.0;
  unsigned long long sse = 0;

  let_next_frame_start ();
  const unsigned seen = frame_set_peek (p.released);

  if constexpr (ASYNC) {
    rg.prime (p, gw);
    __syncthreads ();
    rg.take (p, &s_raw[0][0][0], gw.y0, na, nb);
  } else {
#pragma unroll
    for (int k = 0; k < 11; k++)
      if (gw.y0 + k < gw.read_end)
        pre[k] = g2_load < T > (p, gw.y0 + k, gw.x, gw.in);
  }
  gauss_ring_walk (gw,[&](int k, int y) {
      {
        unsigned a, b;

        if constexpr (ASYNC) {
          a = na;
          b = nb;
          rg.ahead (p, gw, y);
        } else {
          a = pre[k].a ();
          b = pre[k].b ();
          /* the row loaded one row ago goes into the slot row y - 1 left;
           * packing it right after its loads had every warp wait for
           * memory (ncu: 3.2 of 8.1 cycles an instruction) */
          if (y > gw.y0 && y + 10 < gw.read_end)
            pre[(k + 10) % 11] = g2_pack < T > (next, p);
          if (y + 11 < gw.read_end)
            next = g2_load_raw < T > (p, y + 11, gw.x, gw.in);
        }
        g2_ring_row < T > (ring[k], a, b, gw, y, sse);
      }
      if (y - gw.y0 >= 10) {
        const int r = (y - gw.y0 - 10) & (kG2Group - 1);

        g2_vertical (ring, k, s_v[r], t);
        /* after the group's last row, or the tile's */
        if (r == kG2Group - 1 || y == gw.read_end - 1) {
          /* the next group's rows copied (ASYNC): those of the rows up to
           * y + 4, all but the last kG2Ahead - 4 rows' copies */
          if constexpr (ASYNC)
            g2_async_wait < kG2Ahead - kG2Group > ();
          __syncthreads ();
          if (warp <= r && lane < (kG2Cols + 3) / 4)
            g2_horizontal < MODE > (s_v, warp, lane, gw.x0, p, s0, s1);
          __syncthreads ();
        }
      }
      if constexpr (ASYNC) {
        if (y + 1 < gw.read_end)
          rg.take (p, &s_raw[0][0][0], y + 1, na, nb);
      }
      });
  g2_finish < MODE > (p, s0, s1, sse, seen);
}

/* ---- gauss11 on the fp64 tensor cores (compute capability 9.0 and up) ----
 * Both 11-tap passes are small matrix products of IEEE doubles, done by
 * mma.m16n8k4.f64 (512 fused multiply-adds in one warp instruction, where
 * a DFMA does 32; the 8x8x4 shape measured slower). Over 8 window rows r,
 * with G[r][k] = w[k - r] (8 x 20):
 * - vertical: the sums of 16 columns, transposed, V^T (16 x 8) = X^T
 *   (16 columns x 20 rows of a quantity) G^T, five products;
 * - windows: H^T (16 windows x 8 rows) = Gw (16 x 28, Gw[n][c] = w[c - n])
 *   V^T (28 columns x 8 rows), seven products.
 * G^T's fragments serve as the first product's B and, shifted, as the
 * second's A. A block owns the kG2Cols windows of gauss2's tile (128
 * threads, 4 warps): per 8 window rows, 9 vertical tiles of 16 columns
 * into shared memory, then 8 tiles of 16 x 8 windows, whose D fragments
 * give a lane four windows' four sums: the SSIM expression follows in
 * the lane, the four windows as one quotient (g2_windows4). The products
 * round differently from gauss2's sequential FMAs (each within an ulp or
 * so of the exact sum); the SSIM stays within 1e-9 of the CPU's.
 * On the H100 it was faster than gauss2 where gauss2 spilled (MS-SSIM's
 * passes) and on frames of many waves (8192²); since gauss2 reads its
 * samples through shared memory (ASYNC) it is slower everywhere measured,
 * and runs only on request (CQ_SSIM_GAUSS=mma). Half of its time the
 * warps wait on the tensor pipe's fixed latencies and on the barrier
 * between the two passes (ncu). */
constexpr int kGmWinTiles = (kG2Cols + 15) / 16;      /* windows: 8 */
/* vertical: 9, every column the window tiles' seven products read (their
 * zero weights still multiply what is there) */
constexpr int kGmTiles = (kGmWinTiles * 16 + 12 + 15) / 16;
constexpr int kGmStride = kGmTiles * 16 + 4;    /* 148: a warp's loads of
                                                 * B hit distinct banks */

/* D += A B, one 16x8x4 product of doubles: lane l (g = l / 4, t = l % 4)
 * holds A[g][t], A[g + 8][t], B[t][g], D[g][2t + 0, 1], D[g + 8][2t +
 * 0, 1]. */
__device__ __forceinline__ void
dmma_1684 (double (&d)[4], double a0, double a1, double b)
{
#if __CUDA_ARCH__ >= 900
  asm volatile ("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 "
      "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
      :"+d" (d[0]), "+d" (d[1]), "+d" (d[2]), "+d" (d[3])
      :"d" (a0), "d" (a1), "d" (b));
#endif
}

/* Vertical tile `tile` of the 8 window rows from y: the sums of rows
 * y + r .. y + r + 10 (r < 8) of the tile's 16 columns, each quantity into
 * s_v[q][r][column]; the pair's squared differences of rows y .. y + 7
 * that the block owns into sse. */
template < typename T > __device__ __forceinline__ void
gm_vertical (const SsimParams & p, const GaussWalk & gw, int y, int tile,
    const double (&g)[5], double (*s_v)[8][kGmStride],
    unsigned long long &sse)
{
  const int lane = threadIdx.x & 31, gi = lane >> 2, ti = lane & 3;
  const int col = tile * 16 + gi;       /* and col + 8 */
  unsigned a[5][2], b[5][2];
  double d[4][4] = { };

#pragma unroll
  for (int j = 0; j < 5; j++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int row = y + 4 * j + ti, x = gw.x0 + col + 8 * h;
      const bool ok = x < p.width && row < p.height;

      a[j][h] = ok ? load1 (row_of < T > (p.a, p.pitch_a, row), x, p) : 0u;
      b[j][h] = ok ? load1 (row_of < T > (p.b, p.pitch_b, row), x, p) : 0u;
    }
  /* mma.sync wants the whole warp there: the loads may have branched */
  __syncwarp ();
#pragma unroll
  for (int j = 0; j < 5; j++) {
    double x0[4], x1[4];

    g2_quantities (a[j][0], b[j][0], x0);
    g2_quantities (a[j][1], b[j][1], x1);
#pragma unroll
    for (int q = 0; q < 4; q++)
      dmma_1684 (d[q], x0[q], x1[q], g[j]);
  }
  if constexpr (sizeof (T) < 4) {
#pragma unroll
    for (int j = 0; j < 2; j++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int row = y + 4 * j + ti, c = col + 8 * h;
        const unsigned e = a[j][h] > b[j][h] ? a[j][h] - b[j][h] :
            b[j][h] - a[j][h];
        const bool own = c < kG2Cols && gw.x0 + c < p.width
            && row < gw.own_end;

        sse += own ? e * e : 0u;        /* < 2^32 for 16-bit samples */
      }
  }
#pragma unroll
  for (int q = 0; q < 4; q++) {
    s_v[q][2 * ti][col] = d[q][0];
    s_v[q][2 * ti + 1][col] = d[q][1];
    s_v[q][2 * ti][col + 8] = d[q][2];
    s_v[q][2 * ti + 1][col + 8] = d[q][3];
  }
}

/* Window tile `tile` of the 8 window rows from y: the windows' sums from
 * the vertical ones, and the expression of the lane's four windows. */
template < int MODE > __device__ __forceinline__ void
gm_windows (const SsimParams & p, const GaussWalk & gw, int y, int tile,
    const double (&g)[5], const double (*s_v)[8][kGmStride], double &s0,
    double &s1)
{
  const int lane = threadIdx.x & 31, gi = lane >> 2, ti = lane & 3;
  double d[4][4];

  /* the second moments' sums start from the constants their factors add
   * (g2_window_factors) */
#pragma unroll
  for (int i = 0; i < 4; i++) {
    d[0][i] = d[1][i] = 0.0;
    d[2][i] = p.g_b2;
    d[3][i] = p.g_a2;
  }
  __syncwarp ();                /* the previous tile's windows branched */
  /* Gw[n][4 j + t] = w[4 j + t - n]: g[j] for window n = gi (zero past
   * j = 4), g[j - 2] for window gi + 8 (zero before j = 2) */
#pragma unroll
  for (int j = 0; j < 7; j++)
#pragma unroll
    for (int q = 0; q < 4; q++)
      dmma_1684 (d[q], j < 5 ? g[j] : 0.0, j >= 2 ? g[j - 2] : 0.0,
          s_v[q][gi][tile * 16 + 4 * j + ti]);
  {
    double u[4][4];
    bool in[4];

#pragma unroll
    for (int i = 0; i < 4; i++) {
      const int wy = y + 2 * ti + (i & 1), wc = tile * 16 + gi + 8 * (i >> 1);

#pragma unroll
      for (int q = 0; q < 4; q++)
        u[i][q] = d[q][i];
      in[i] = wy < gw.own_end && wy + 11 <= p.height && wc < kG2Cols
          && gw.x0 + wc + 11 <= p.width;
    }
    g2_windows4 < MODE > (u, in, p, s0, s1);
  }
}

template < typename T, int MODE > __global__ void
__launch_bounds__ (kSsimThreads)
ssim_gauss_mma_kernel (SsimParams p)
{
  __shared__ __align__ (16) double s_v[4][8][kGmStride];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const GaussWalk gw (p, kG2Cols);
  /* G^T's fragments: lane l holds G^T[4 j + l % 4][l / 4] = w[4 j + l % 4
   * - l / 4] (zero off the 11 taps) */
  double g[5];
  double s0 = 0.0, s1 = 0.0;
  unsigned long long sse = 0;

  let_next_frame_start ();
  const unsigned seen = frame_set_peek (p.released);
#pragma unroll
  for (int j = 0; j < 5; j++) {
    const int k = 4 * j + (lane & 3) - (lane >> 2);

    g[j] = k >= 0 && k <= 10 ? c_gauss[k] : 0.0;
  }
  for (int y = gw.y0; y < gw.own_end; y += 8) {
    /* 9 vertical tiles and 8 of windows over 4 warps */
    for (int tile = kSsimThreads / 32 - 1 - warp; tile < kGmTiles;
        tile += kSsimThreads / 32)
      gm_vertical < T > (p, gw, y, tile, g, s_v, sse);
    __syncthreads ();
    if (y + 11 <= p.height)
      for (int tile = warp; tile < kGmWinTiles; tile += kSsimThreads / 32)
        gm_windows < MODE > (p, gw, y, tile, g, s_v, s0, s1);
    __syncthreads ();
  }
  g2_finish < MODE > (p, s0, s1, sse, seen);
}

/* MS-SSIM's scales 2 to 5 as integer sums: scale s (1..4 here) at (x, y)
 * is the sum k of the 2^s x 2^s samples of the plane from (2^s x, 2^s y);
 * the CPU's double 2x2 averages are exactly k / 4^s (no rounding: at most
 * 16 + 8 bits), and an odd size drops its last row or column the same way.
 * A block of 32x8 threads takes a 32x8 tile of scale 1, then 16x4, 8x2,
 * 4x1 of the next ones. */
struct PyrParams
{
  SsimParams in;                /* a, b, pitches, shift, mask, vec of scale 0 */
  unsigned *out[4][2];          /* [scale - 1][frame] */
  size_t pitch[4];              /* bytes */
  int w[4], h[4];
};

/* The sum of samples x and x + 1 of a row (both inside the plane). */
__device__ __forceinline__ unsigned
pyr_pair (const unsigned char *row, int x, const SsimParams & p)
{
  if (p.vec) {
    const unsigned v = __ldg ((const unsigned short *) (row + x));
    return (v & 0xff) + (v >> 8);
  }
  return (unsigned) __ldg (row + x) + __ldg (row + x + 1);
}

__device__ __forceinline__ unsigned
pyr_pair (const unsigned short *row, int x, const SsimParams & p)
{
  if (p.vec) {
    const unsigned v = __ldg ((const unsigned *) (row + x));
    return (((v & 0xffff) >> p.shift) & p.mask) + (((v >> 16) >> p.shift) &
        p.mask);
  }
  return load1 (row, x, p) + load1 (row, x + 1, p);
}

/* Stores k as sample (x, y) of frame f's level l. */
__device__ __forceinline__ void
pyr_store (const PyrParams & d, int l, int f, int x, int y, unsigned k)
{
  ((unsigned *) ((unsigned char *) d.out[l][f] + (size_t) y *
          d.pitch[l]))[x] = k;
}

/* Pyramid level l of an H × W tile from the 2H × 2W tile of the level
 * before (src, in shared memory): the 2x2 sums into dst for the next
 * level and out to the level's frames. */
template < int H, int W > __device__ __forceinline__ void
pyr_level (const PyrParams & d, int l, const unsigned (&src)[2][2 * H][2 * W],
    unsigned (&dst)[2][H][W], int tx, int ty)
{
  const int x = blockIdx.x * W + tx, y = blockIdx.y * H + ty;

#pragma unroll
  for (int f = 0; f < 2; f++) {
    const unsigned k = src[f][2 * ty][2 * tx] + src[f][2 * ty][2 * tx + 1] +
        src[f][2 * ty + 1][2 * tx] + src[f][2 * ty + 1][2 * tx + 1];

    dst[f][ty][tx] = k;
    if (x < d.w[l] && y < d.h[l])
      pyr_store (d, l, f, x, y, k);
  }
}

template < typename T > __global__ void
__launch_bounds__ (256)
msssim_pyramid_kernel (PyrParams d)
{
  __shared__ unsigned s1[2][8][32], s2[2][4][16], s3[2][2][8];
  const int tx = threadIdx.x, ty = threadIdx.y;

  {
    const int x = blockIdx.x * 32 + tx, y = blockIdx.y * 8 + ty;
    const bool ok = x < d.w[0] && y < d.h[0];

#pragma unroll
    for (int f = 0; f < 2; f++) {
      const unsigned char *base = f ? d.in.b : d.in.a;
      const size_t pitch = f ? d.in.pitch_b : d.in.pitch_a;
      unsigned k = 0;

      if (ok) {
        k = pyr_pair (row_of < T > (base, pitch, 2 * y), 2 * x, d.in) +
            pyr_pair (row_of < T > (base, pitch, 2 * y + 1), 2 * x, d.in);
        pyr_store (d, 0, f, x, y, k);
      }
      s1[f][ty][tx] = k;
    }
  }
  __syncthreads ();
  if (tx < 16 && ty < 4)
    pyr_level < 4, 16 > (d, 1, s1, s2, tx, ty);
  __syncthreads ();
  if (tx < 8 && ty < 2)
    pyr_level < 2, 8 > (d, 2, s2, s3, tx, ty);
  __syncthreads ();
  if (tx < 4 && ty < 1) {
    const int x = blockIdx.x * 4 + tx, y = blockIdx.y;

#pragma unroll
    for (int f = 0; f < 2; f++) {
      const unsigned k = s3[f][0][2 * tx] + s3[f][0][2 * tx + 1] +
          s3[f][1][2 * tx] + s3[f][1][2 * tx + 1];

      if (x < d.w[3] && y < d.h[3])
        pyr_store (d, 3, f, x, y, k);
    }
  }
}

/* ---- MS-SSIM's downsampling: the 2x2 averages of both frames of a scale
 * (packed samples T, or doubles) into the next scale's doubles ---- */

struct DownParams
{
  SsimParams in;                /* a, b, pitches, shift, mask of the scale */
  double *out_a, *out_b;
  size_t out_pitch;             /* bytes */
  int out_width, out_height;
};

template < typename T > __global__ void
msssim_down_kernel (DownParams d)
{
  int x, y;

  if (!grid_xy (d.out_width, d.out_height, x, y))
    return;
#pragma unroll
  for (int f = 0; f < 2; f++) {
    const unsigned char *base = f ? d.in.b : d.in.a;
    const size_t pitch = f ? d.in.pitch_b : d.in.pitch_a;
    double *out = (double *) ((unsigned char *) (f ? d.out_b : d.out_a) +
        (size_t) y * d.out_pitch);

    out[x] = cq_ssim_down2 (sample_at < T > (base, pitch, 2 * y, 2 * x, d.in),
        sample_at < T > (base, pitch, 2 * y, 2 * x + 1, d.in),
        sample_at < T > (base, pitch, 2 * y + 1, 2 * x, d.in),
        sample_at < T > (base, pitch, 2 * y + 1, 2 * x + 1, d.in));
  }
}

/* ---- unpacking: interleaved chroma, one channel of packed RGB, or the
 * gray value of packed RGB, into packed samples ---- */

struct UnpackParams
{
  const unsigned char *src;
  size_t src_pitch;
  unsigned char *dst;
  size_t dst_pitch;
  int width, height;
  CqLayoutKind kind;
  unsigned sample_stride, offset, shift, mask;
  unsigned r, g, b;
};

static __global__ void
ssim_unpack_kernel (UnpackParams u)
{
  int x, y;

  if (!grid_xy (u.width, u.height, x, y))
    return;
  const unsigned char *s = u.src + (size_t) y * u.src_pitch +
      (size_t) x * u.sample_stride;
  switch (u.kind) {
    case CQ_LAYOUT_GRAY8:
      u.dst[(size_t) y * u.dst_pitch + x] = s[u.offset];
      break;
    case CQ_LAYOUT_GRAY16:{
      unsigned v = s[u.offset] | (unsigned) s[u.offset + 1] << 8;
      ((unsigned short *) (u.dst + (size_t) y * u.dst_pitch))[x] =
          (unsigned short) ((v >> u.shift) & u.mask);
      break;
    }
    case CQ_LAYOUT_RGB8:
      u.dst[(size_t) y * u.dst_pitch + x] = (unsigned char)
          cq_gray_rgb8 (s[u.r], s[u.g], s[u.b]);
      break;
  }
}

}                               /* namespace cq */

#endif /* CQ_SSIM_KERNELS_CUH */
