/* cudaquality compute library: gauss11 with its two passes in separate
 * warps (gauss2ws), for the H100 class (compute capability 9.0).
 *
 * gauss2 (cq-ssim-kernels.cuh) has every warp do both passes: a thread
 * holds the ring of quantities (88 registers) through the horizontal pass
 * too, and the barriers between the passes stop all four warps. 168
 * registers, 3 blocks an SM, the fp64 pipe 57 % busy (ncu, 4K). Here a
 * block has eight warps:
 * - warps 0-3 walk the columns as gauss2 does (the samples through the
 *   ring in shared memory) and store each window row's vertical sums into
 *   slot i % 4 of s_v;
 * - warp 4 + j takes the rows i with i % 4 = j: the horizontal pass and
 *   the SSIM expression, gauss2's g2_horizontal;
 * - each slot has a pair of mbarriers: the vertical warps wait on empty[j]
 *   before they store over it and arrive on full[j]; warp 4 + j the
 *   reverse. (Named barriers with thread counts did the same about 3 %
 *   faster, 4K 82.5 µs against 85.4, but racecheck reported hazards
 *   across them, even across the __syncthreads of the block's reduction;
 *   it passes with mbarriers.)
 * - setmaxnreg (an sm_90a build, cq-ssim-ws-cuda.cu) gives the vertical
 *   warps 168 registers and the horizontal ones 88 (kWsVertRegs); at 128
 *   each the vertical warps' sums ran one quantity after the other and the
 *   kernel was slower than gauss2 (4K 106 µs against 88.6).
 * The arithmetic is gauss2's, except that with 8-bit samples the vertical
 * pass pairs its symmetric taps in integers (g2_vertical_sums): 6 fp64
 * FMAs a quantity and row instead of 11. That took 4K from 83.8 to 83.3
 * µs back to back and 95.9 to 93.8 alone, though it cut the fp64
 * operations by a fifth: the pairs' IADD3s and the zero low words' moves
 * add about as many issue slots, and both kinds of warp wait on latency,
 * not on the pipe (ncu: 60 % issue, 52 % fp64). In gauss2 the same
 * pairing was slower (86.4 -> 89.0 µs), so gauss2 keeps its doubles.
 * The row warps also divide once a lane instead of once a row
 * (ws_windows4).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_SSIM_WS_KERNELS_CUH
#define CQ_SSIM_WS_KERNELS_CUH

#include "cq-ssim-kernels.cuh"

namespace cq
{

constexpr int kWsThreads = 2 * kSsimThreads;
constexpr int kWsBlocks = 2;    /* blocks an SM */
constexpr int kWsRegs = 65536 / (kWsBlocks * kWsThreads);     /* 128 */
/* registers of the vertical and the horizontal warps, which average
 * kWsRegs (H100, 4K, named barriers: 160 / 96 93.5 µs, 184 / 72 83.7,
 * 200 / 56 82.6, 216 / 40 93.0, 232 / 24 376; H200 with the ring of 12:
 * 192 / 64 80.6, 16-bit 87.5, no instance spilling; 200 / 56 80.6 and
 * 87.9, the 16-bit SSIM-and-cs instance spilling 100 bytes; 208 / 48
 * spills in every instance. H200, the 8-bit column warps batched (4K
 * 8-bit / 16-bit): 192 / 64 74.3 / 78.6, 184 / 72 76.1 / 79.3, 176 / 80
 * 72.7 / 76.9, 168 / 88 71.8 / 76.4, 160 / 96 74.6 / 79.4: not a trend
 * but ptxas's schedules; at 88 the row warps start a row's 28 loads
 * before their first sums. 8-bit column warps spill at 128.) */
constexpr int kWsVertRegs = 168;
constexpr int kWsHorzRegs = 2 * kWsRegs - kWsVertRegs;
/* the column warps' ring of quantities: 12 rows (11 in use), so that a
 * row's slot of s_v, its barriers and the barriers on the ring of samples
 * fall on the same unrolled copy every time, their addresses constants
 * (ncu: with 11, 13 of the column warps' 121 instructions a row computed
 * them; H200, 4K: 83.6-83.7 -> 81.3-81.4 µs, 16-bit 88.9-89.0 -> 87.9) */
constexpr int kWsRing = 12;
/* rows between the column warps' barriers on the ring of samples (H100,
 * 4K, ring of 11: 8 rows 83.5-83.6 µs, 16-bit 88.7; every slot group, 4
 * rows, as gauss2 does: 83.4-84.1, 90.4) */
constexpr int kWsRawSync = 6;
static_assert (kWsRing % kG2Group == 0 && kWsRing % kWsRawSync == 0,
    "a ring slot's s_v slot and ring barrier are the same every round");

/* ---- the column warps' ring of samples, copied a batch at a time ----
 * gauss2's G2Ring copies a row each row (a copy group a row; ncu: about
 * 15 of the column warps' 121 instructions a row; H200, 4K: 78.4 µs
 * against 75.7 in batches, 16-bit 84.1 against 83.7, 1080p 21.9 against
 * 21.1; 8-bit batches of 12 rows, a ring of 48, were within 0.1-0.7 µs
 * and slower at 1080p). Here the copying threads start a batch of
 * kWsRawSync rows after each barrier on the ring, one group: batch m,
 * started at the barrier after the take of tile row 15 + 6m, holds tile
 * rows 30 + 6m .. 35 + 6m, and the wait before barrier n completes every
 * batch but the newest, so rows up to 23 + 6n are visible after it (the
 * takes before barrier n + 1 reach row 21 + 6n).
 * The priming copies rows 0-23 and then 24-29 (batch -1) in two groups.
 * With a ring of 36 rows a batch never wraps, the slots it overwrites
 * (rows 6m - 6 .. 6m - 1) were taken before barrier m, and the rows the
 * warps read between barriers are never those being copied. */
constexpr int kWsRawRows = 36;
constexpr int kWsRawFirst = 30;         /* batch 0's first tile row */
static_assert (kWsRawRows % kWsRing == 0 && kWsRawRows % kWsRawSync == 0
    && kWsRawFirst % kWsRawSync == 0 && kWsRawFirst + kWsRawSync <=
    kWsRawRows, "batches and the walk's rounds fall on whole slots");

/* A frame's row in gauss2ws's ring of samples: the block's kSsimThreads
 * columns from the 16-byte boundary at or before the first, in 16-byte
 * chunks. */
template < typename T > constexpr int kWsRawChunks =
    (15 + kSsimThreads * (int) sizeof (T) + 15) / 16;
template < typename T > constexpr int kWsRawStride = 16 * kWsRawChunks < T >;

/* 16 bytes from global memory to shared, n of them from src and the rest
 * zero (cp.async, L2 only) */
__device__ __forceinline__ void
ws_copy16_async (unsigned dst, const unsigned char *src, unsigned n)
{
#if __CUDA_ARCH__ >= 800
  asm volatile ("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"::"r" (dst),
      "l" (src), "r" (n):"memory");
#endif
}

template < typename T > struct WsRawRing
{
  static constexpr int kStride = kWsRawStride < T >;
  static constexpr int kSlot = 2 * kStride;     /* bytes a ring row */
  static constexpr int kChunks = kWsRawChunks < T >;
  /* a batch's 16-byte chunks, both frames */
  static constexpr int kBatchChunks = kWsRawSync * 2 * kChunks;
  static constexpr int kJobs = (kBatchChunks + kSsimThreads - 1) /
      kSsimThreads;
  static_assert (kJobs * kSsimThreads >= 2 * ((3 + kSsimThreads *
              (int) sizeof (T) + 3) / 4), "the 4-byte words fit the jobs too");

  /* A thread's copy in each batch: with 16-byte chunks, one chunk of the
   * batch's row `row` (-1: none); with 4-byte words, its word of each of
   * the batch's rows (row 0; -1: none). dst: in the batch's first slot. */
  struct Job
  {
    const unsigned char *src;
    unsigned pitch, n, dst;
    int row;
  };

  Job job[kJobs];
  /* both planes and pitches 16-byte aligned: a batch in 16-byte chunks,
   * one copy a thread (8-bit samples; two for 16-bit) instead of a word
   * of every row, whose address and source size ptxas built in 6-9
   * instructions a row in all four warps (column loop 97 -> 88
   * instructions a row, 16-bit 106 -> 77; H200, 4K 8-bit 68.5 -> 66.4 µs,
   * 16-bit 71.4-71.5 -> 67.9, 1080p 19.3 -> 18.8, 7680x4320 273.6-273.9
   * -> 267.0-267.1). Otherwise 4-byte words as before. */
  bool chunked;
  unsigned at;                  /* this thread's samples in a frame's row */
  unsigned next_slot;           /* batch's first slot, bytes */
  int next_row;                 /* batch's first frame row */

  __device__ __forceinline__ WsRawRing (const SsimParams & p, int x0,
      const unsigned char *ring)
  {
    const size_t first = (size_t) x0 * sizeof (T);
    const long long row_bytes = (long long) p.width * (long long) sizeof (T);
    const unsigned base = (unsigned) __cvta_generic_to_shared (ring);

    chunked = (((uintptr_t) p.a | (uintptr_t) p.b | p.pitch_a | p.pitch_b)
        & 15) == 0;
    const unsigned align = chunked ? 15u : 3u, size = align + 1;
    const size_t from = first & ~(size_t) align;
    /* words of a frame's row (4-byte copies) */
    const int words = ((int) (first & 3) + kSsimThreads * (int) sizeof (T) +
        3) / 4;

    at = (unsigned) (first & align) + threadIdx.x * (unsigned) sizeof (T);
#pragma unroll
    for (int k = 0; k < kJobs; k++) {
      const int c = (int) threadIdx.x + k * kSsimThreads;
      int row, f, w;

      if (chunked) {
        row = c < kBatchChunks ? c / (2 * kChunks) : -1;
        f = c / kChunks % 2;
        w = c % kChunks;
      } else {
        row = c < 2 * words ? 0 : -1;
        f = c >= words;
        w = c - f * words;
      }
      const long long left = row_bytes - (long long) from -
          (long long) (size * w);
      const unsigned char *const plane = f ? p.b : p.a;
      Job & j = job[k];

      j.row = row;
      j.n = left >= size ? size : left > 0 ? (unsigned) left : 0u;
      j.src = j.n ? plane + from + size * w : plane;
      j.pitch = (unsigned) (f ? p.pitch_b : p.pitch_a);
      j.dst = base + f * kStride + size * w + (row > 0 ? row * kSlot : 0);
    }
    next_slot = kWsRawFirst * kSlot;
  }

  /* the batch of kWsRawSync tile rows from y into slots from `slot` on */
  __device__ __forceinline__ void
  copy_batch (const GaussWalk & gw, int y, unsigned slot) const
  {
    if (chunked) {
#pragma unroll
      for (int k = 0; k < kJobs; k++) {
        const Job & j = job[k];
        const int yr = y + j.row;

        if (j.row >= 0 && yr < gw.read_end)
          ws_copy16_async (j.dst + slot, j.src + (size_t) (unsigned) yr *
              j.pitch, j.n);
      }
    } else {
#pragma unroll
      for (int k = 0; k < kJobs; k++) {
        const Job & j = job[k];

        if (j.row == 0) {
#pragma unroll
          for (int r = 0; r < kWsRawSync; r++)
            if (y + r < gw.read_end)
              g2_copy4_async (j.dst + slot + r * kSlot,
                  j.src + (size_t) (unsigned) (y + r) * j.pitch, j.n);
        }
      }
    }
  }

  /* the tile's rows 0-29 in two groups, waiting for the first */
  __device__ __forceinline__ void prime (const GaussWalk & gw)
  {
#pragma unroll
    for (int m = 0; m < kWsRawFirst / kWsRawSync - 1; m++)
      copy_batch (gw, gw.y0 + m * kWsRawSync, m * kWsRawSync * kSlot);
    g2_async_commit ();
    copy_batch (gw, gw.y0 + kWsRawFirst - kWsRawSync,
        (kWsRawFirst - kWsRawSync) * kSlot);
    g2_async_commit ();
    g2_async_wait < 1 > ();
    next_row = gw.y0 + kWsRawFirst;
  }

  /* the slot `rows` rows after `slot` (bytes), rows dividing the ring */
  static __device__ __forceinline__ unsigned
  advance (unsigned slot, int rows)
  {
    slot += rows * kSlot;
    return slot == kWsRawRows * kSlot ? 0 : slot;
  }

  /* after a barrier on the ring: the next batch, one group */
  __device__ __forceinline__ void batch (const GaussWalk & gw)
  {
    copy_batch (gw, next_row, next_slot);
    g2_async_commit ();
    next_row += kWsRawSync;
    next_slot = advance (next_slot, kWsRawSync);
  }

  /* this thread's samples of the row in slot `slot` (bytes) */
  __device__ __forceinline__ void
  take (const SsimParams & p, const unsigned char *ring, unsigned slot,
      unsigned &a, unsigned &b) const
  {
    G2Ring < T >::template take_at < kStride > (p, ring + slot + at, a, b);
  }
};

/* Shared-memory barrier objects (mbarrier, compute capability 9.0): an
 * arrival does not wait, a wait names the parity of the phase it waits
 * for. */
__device__ __forceinline__ void
mbar_init (unsigned long long *bar, unsigned count)
{
#if __CUDA_ARCH__ >= 900
  asm volatile ("mbarrier.init.shared::cta.b64 [%0], %1;"::"r" ((unsigned)
          __cvta_generic_to_shared (bar)), "r" (count):"memory");
#endif
}

/* The barrier's shared-window address: the column warps keep theirs so
 * that a row's barrier takes one add. */
__device__ __forceinline__ unsigned
mbar_at (unsigned long long *bar)
{
  return (unsigned) __cvta_generic_to_shared (bar);
}

__device__ __forceinline__ void
mbar_arrive (unsigned at)
{
#if __CUDA_ARCH__ >= 900
  asm volatile ("mbarrier.arrive.shared::cta.b64 _, [%0];"::"r" (at):"memory");
#endif
}

/* v as a value the compiler cannot see through: kept in a register, not
 * recomputed where used */
__device__ __forceinline__ unsigned
opaque (unsigned v)
{
  asm volatile ("":"+r" (v));
  return v;
}

/* Waits until the phase of the given parity has completed. */
__device__ __forceinline__ void
mbar_wait (unsigned at, unsigned parity)
{
#if __CUDA_ARCH__ >= 900
  asm volatile ("{\n"
      ".reg .pred done;\n"
      "mbar_wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra mbar_wait_%=;\n"
      "}"::"r" (at), "r" (parity):"memory");
#endif
}

/* gauss_ring_walk with the rounds between the first and the last
 * unchecked: body (k, y, checked), checked a std::bool_constant, false
 * where y - y0 >= 10, y + 1 < read_end and y < own_end are known (the
 * first round and the tail share one copy of the body, the rounds between
 * the other).
 * It drops about 5 of the column warps' 80 instructions a row (H200, 4K
 * 74.6 -> 74.2 µs, 16-bit 83.3 -> 78.6, 7680x4320 294.8 -> 293.0; 1080p,
 * whose tiles have more checked rows, 20.8 -> 20.9). */
template < int N, typename F > __device__ __forceinline__ void
gauss_ring_walk_split (const GaussWalk & gw, F body)
{
  static_assert (N >= 11, "a ring holds a window's 11 rows");
  int base = gw.y0;

  for (;;) {
#pragma unroll
    for (int k = 0; k < N; k++) {
      const int y = base + k;

      if (y >= gw.read_end)
        return;
      body (k, y, std::true_type ());
    }
    for (base += N; base + N < gw.read_end && base + N <= gw.own_end;
        base += N) {
#pragma unroll
      for (int k = 0; k < N; k++)
        body (k, base + k, std::false_type ());
    }
    if (base >= gw.read_end)
      return;
  }
}

/* ---- the row warps' windows as one running quotient ----
 * g2_windows4 divides once for its four windows, and that division's
 * chain (a reciprocal and seven dependent fp64 operations) ran at the end
 * of every row, the row warps' longest wait. Here a lane carries its
 * windows' sum as a fraction n / d, merged with each row's four as
 * (n d4 + n4 d, d d4), and divides once, after its last row. d is kept in
 * [1, 2) by moving its exponent into n's: exact, n / d being 0 or, as a
 * sum of windows' quarter SSIM values whose nonzero ones exceed about
 * 1e-21, far above underflow (n with a zero exponent field, 0, stays).
 * (H200, 4K 8-bit 71.7 -> 70.1 µs, 16-bit 76.2 -> 74.1, 1080p 20.0 ->
 * 19.8, 7680x4320 288.3-289.0 -> 280.9-281.3.) */
struct WsFrac
{
  double n, d;
};

__device__ __forceinline__ void
ws_frac_merge (WsFrac & f, double n4, double d4)
{
  const double n = __fma_rn (f.n, d4, __dmul_rn (n4, f.d));
  const double d = __dmul_rn (f.d, d4);
  const int dh = __double2hiint (d), nh = __double2hiint (n);
  /* d > 0: (its exponent - 1023) << 20 */
  const int shift = (dh & 0x7ff00000) - 0x3ff00000;

  f.d = __hiloint2double (dh - shift, __double2loint (d));
  f.n = (nh & 0x7ff00000) == 0 ? n : __hiloint2double (nh - shift,
      __double2loint (n));
}

/* x where the block owns the window (mask all ones), else the double of
 * high word other_high and low word 0 (0 or 1.0). The mask is opaque
 * so that the compiler selects after computing rather than predicating
 * each window's factors on it: predicated, ptxas reloaded the four
 * constants of p from the parameter bank for every window (16 LDC.64 of
 * the row warps' 304 instructions a row; 288 without). */
__device__ __forceinline__ double
ws_own (double x, unsigned mask, unsigned other_high)
{
  return mask ? x : __hiloint2double ((int) other_high, 0);
}

/* g2_windows4's factors, merged into the running fractions f[0] (SSIM,
 * or cs) and, with kGaussBoth, f[1] (cs); own[n]: the opaque mask of
 * window n (ws_own) */
template < int MODE > __device__ __forceinline__ void
ws_windows4 (const double (&u)[4][4], const unsigned (&own)[4],
    const SsimParams & p, WsFrac (&f)[2])
{
  double n0[4], d0[4], n1[4], d1[4];

#pragma unroll
  for (int n = 0; n < 4; n++) {
    const G2Factors w = g2_window_factors (u[n], p);

    /* a window the block does not own counts 0 / 1, whatever its sums */
    if constexpr (MODE == kGaussCs) {
      n0[n] = ws_own (w.a2, own[n], 0);
      d0[n] = ws_own (w.b2, own[n], 0x3ff00000u);
    } else {
      n0[n] = ws_own (__dmul_rn (w.a1, w.a2), own[n], 0);
      d0[n] = ws_own (__dmul_rn (w.b1, w.b2), own[n], 0x3ff00000u);
      n1[n] = ws_own (w.a2, own[n], 0);
      d1[n] = ws_own (w.b2, own[n], 0x3ff00000u);
    }
  }
  double n4, d4;

  sum4_fraction (n0, d0, n4, d4);
  ws_frac_merge (f[0], n4, d4);
  if constexpr (MODE == kGaussBoth) {
    sum4_fraction (n1, d1, n4, d4);
    ws_frac_merge (f[1], n4, d4);
  }
}

/* sum4_fraction with windows 2 and 3 counted only where own23 (an opaque
 * mask) is all ones: their pair's fraction replaced by 0 / 1, exactly the
 * pair (0, 1)'s fraction then */
__device__ __forceinline__ void
ws_sum4_fraction (const double n[4], const double d[4], unsigned own23,
    double &n4, double &d4)
{
  const double d01 = __dmul_rn (d[0], d[1]);
  const double d23 = ws_own (__dmul_rn (d[2], d[3]), own23, 0x3ff00000u);
  const double n01 = __fma_rn (n[0], d[1], __dmul_rn (n[1], d[0]));
  const double n23 = ws_own (__fma_rn (n[2], d[3], __dmul_rn (n[3], d[2])),
      own23, 0);

  n4 = __fma_rn (n01, d23, __dmul_rn (n23, d01));
  d4 = __dmul_rn (d01, d23);
}

/* ws_windows4 in a block that owns all its windows: a lane's windows 0
 * and 1 are always its own, 2 and 3 where own23 (all but the last lane
 * with windows, which has two), so that one select a fraction replaces
 * one a window and value */
template < int MODE > __device__ __forceinline__ void
ws_windows4_inner (const double (&u)[4][4], unsigned own23,
    const SsimParams & p, WsFrac (&f)[2])
{
  double n0[4], d0[4], n1[4], d1[4];

#pragma unroll
  for (int n = 0; n < 4; n++) {
    const G2Factors w = g2_window_factors (u[n], p);

    if constexpr (MODE == kGaussCs) {
      n0[n] = w.a2;
      d0[n] = w.b2;
    } else {
      n0[n] = __dmul_rn (w.a1, w.a2);
      d0[n] = __dmul_rn (w.b1, w.b2);
      n1[n] = w.a2;
      d1[n] = w.b2;
    }
  }
  double n4, d4;

  ws_sum4_fraction (n0, d0, own23, n4, d4);
  ws_frac_merge (f[0], n4, d4);
  if constexpr (MODE == kGaussBoth) {
    ws_sum4_fraction (n1, d1, own23, n4, d4);
    ws_frac_merge (f[1], n4, d4);
  }
}

/* lanes of a row warp with windows; lanes past them read the last one's
 * sums, so that the row loop has no divergent part, and drop their sums */
constexpr int kWsLanes = (kG2Cols + 3) / 4;

/* Row warp j's rows of the tile into f: INNER where the block owns all
 * its kG2Cols windows (every block but the last of a row of tiles). The
 * masks are the same every row, made once. */
template < int MODE, bool INNER > __device__ __forceinline__ void
ws_row_walk (const double (*s_v)[4][kG2Stride], unsigned full_at,
    unsigned empty_at, int j, int rows, int lane, int x0,
    const SsimParams & p, WsFrac (&f)[2])
{
  const int l = min (lane, kWsLanes - 1);
  unsigned own[4];

  if constexpr (INNER)
    own[0] = opaque (4 * l + 3 < kG2Cols ? 0xffffffffu : 0u);
  else {
#pragma unroll
    for (int n = 0; n < 4; n++)
      own[n] = opaque (g2_owns (lane, n, x0, p) ? 0xffffffffu : 0u);
  }
  for (int i = j; i < rows; i += kG2Group) {
    double u[4][4];

    mbar_wait (full_at, (i >> 2) & 1);
    g2_row_sums (s_v, j, l, p, u);
    /* the expression runs while the column warps store the next row */
    mbar_arrive (empty_at);
    if constexpr (INNER)
      ws_windows4_inner < MODE > (u, own[0], p, f);
    else
      ws_windows4 < MODE > (u, own, p, f);
  }
}

template < typename T, int MODE > __global__ void
__launch_bounds__ (kWsThreads, kWsBlocks)
ssim_gauss2ws_kernel (SsimParams p)
{
  static_assert (sizeof (T) <= 2, "gauss2ws: 8- and 16-bit samples");
  __shared__ __align__ (16) double s_v[kG2Group][4][kG2Stride];
  __shared__ __align__ (16) unsigned char
      s_raw[kWsRawRows][2][kWsRawStride < T >];
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const GaussWalk gw (p, kG2Cols);
  double s[2] = { 0.0, 0.0 };
  unsigned long long sse = 0;

  let_next_frame_start ();
  const unsigned seen = frame_set_peek (p.released);

  /* full[j]: slot j's row stored (the 128 vertical threads arrive); empty[j]:
   * read (the slot's 32 horizontal threads); raw: the vertical warps' own
   * barrier for the ring of samples. A row i's slot is i % 4, and it is
   * the slot's (i / 4)-th use: the phase whose parity waits name. */
  __shared__ unsigned long long s_full[kG2Group], s_empty[kG2Group], s_rawbar;

  if (t == 0) {
    for (int j = 0; j < kG2Group; j++) {
      mbar_init (&s_full[j], kSsimThreads);
      mbar_init (&s_empty[j], 32);
    }
    mbar_init (&s_rawbar, kSsimThreads);
  }
  __syncthreads ();
  /* after the block's last common code: what follows each branch is
   * compiled under its own count */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if (warp < kSsimThreads / 32)
    asm volatile ("setmaxnreg.inc.sync.aligned.u32 %0;\n"::"n" (kWsVertRegs));
  else
    asm volatile ("setmaxnreg.dec.sync.aligned.u32 %0;\n"::"n" (kWsHorzRegs));
#endif
  if (warp < kSsimThreads / 32) {
    WsRawRing < T > rg (p, gw.x0, &s_raw[0][0][0]);
    /* opaque: left as constants, the slot barriers' addresses were
     * recomputed from the CTA id every row (6 of about 85 instructions;
     * H200, 4K 75.8 -> 74.7 µs, 16-bit 85.0 -> 83.3, 1080p 21.1 -> 20.8,
     * 7680x4320 299.5 -> 296.2) */
    const unsigned full_at = opaque (mbar_at (s_full)),
        empty_at = opaque (mbar_at (s_empty)),
        raw_at = opaque (mbar_at (&s_rawbar));
    G2Quantity < T > ring[kWsRing][4];
    /* 8-bit: squared differences of at most 10 + kWsRawSync rows, moved
     * into sse at each barrier on the ring of samples (below 2^32) */
    typename std::conditional < sizeof (T) == 1, unsigned,
        unsigned long long >::type rows_sse = 0;
    unsigned na = 0, nb = 0;    /* row y + 1's samples */
    unsigned raw_phase = 0;
    /* the parity each use u = i / 4 of a slot waits on its empty barrier
     * for, (u + 1) & 1, flipped where a slot group starts: an mbarrier's
     * phase before its first counts as complete, so the first uses pass
     * (computed a row, with the first uses skipped: H200, 4K 80.6 µs
     * against 78.4, 16-bit 87.5 against 84.1) */
    unsigned empty_parity = 0;
    /* the walk's round's first slot in the ring of samples, bytes: row y's
     * slot is round_slot + k * kSlot, a constant offset */
    unsigned round_slot = 0;
    constexpr unsigned kSlot = WsRawRing < T >::kSlot;

    rg.prime (gw);
    mbar_arrive (raw_at);
    mbar_wait (raw_at, raw_phase++ & 1);
    rg.take (p, &s_raw[0][0][0], 0, na, nb);
    gauss_ring_walk_split < kWsRing > (gw,[&](int k, int y, auto checked) {
        constexpr bool kChecked = decltype (checked)::value;

        /* the squared difference: modulo 2^32 the square of a - b,
         * which is below 2^32; the window rows' own columns only, the
         * columns by a select at the end (checked rows cost two
         * instructions more, which the unchecked ones save: column
         * loop 88 -> 86.5 instructions a row, 16-bit 77.4 -> 74.5; H200,
         * 4K 66.4 -> 65.9 µs, 16-bit 67.9-68.3 -> 67.7-67.9, 1080p 18.8
         * -> 18.6, 7680x4320 267.6-268.7 -> 265.4-266.1) */
        {
          const unsigned d = na - nb;

          if (!kChecked || y < gw.own_end)
            rows_sse += d * d;
        }
        g2_quantities (na, nb, ring[k]);
        if (!kChecked || y - gw.y0 >= 10) {
          /* window row i = y - y0 - 10 is congruent to ik modulo the
           * ring: its slot r a constant */
          const int ik = k + kWsRing - 10, r = ik % kG2Group;
          double v[4];

          if (r == 0)
            empty_parity ^= 1;
          /* (tried, H200 4K, at 192 / 64 registers against 74.3 µs: the
           * samples taken two rows ahead, 75.4; rows in pairs, their 8
           * chains together, 75.3; at 168 / 88 against 72.0: 73.3 and
           * 73.2) */
          g2_vertical_sums (ring, k, v);
          mbar_wait (empty_at + 8 * r, empty_parity);
          g2_vertical_store (v, s_v[r], t);
          mbar_arrive (full_at + 8 * r);
          /* the rows of every batch but the newest copied and visible to
           * every vertical warp; then the next batch */
          if (ik % kWsRawSync == kWsRawSync - 1) {
            g2_async_wait < 1 > ();
            mbar_arrive (raw_at);
            mbar_wait (raw_at, raw_phase++ & 1);
            rg.batch (gw);
            sse += rows_sse;
            rows_sse = 0;
          }
        }
        if (k == kWsRing - 1)
          round_slot = WsRawRing < T >::advance (round_slot, kWsRing);
        if (!kChecked || y + 1 < gw.read_end)
          rg.take (p, &s_raw[0][0][0],
              round_slot + (k + 1) % kWsRing * kSlot, na, nb);
        });
    sse = gw.own_col ? sse + rows_sse : 0;
  } else {
    const int j = warp - kSsimThreads / 32;
    const int rows = gw.read_end - gw.y0 - 10;

    /* (the parity as a register flipped each use, as the column warps
     * do: 4K 76.1 µs against 75.7)
     * The slot is released once its sums are read, before the windows'
     * expression (H200 at 168 / 88, 4K 8-bit 71.8 -> 72.0 µs, 16-bit
     * 76.4 -> 75.6, 1080p 20.2 -> 20.1; it needs the 88 registers: at 64
     * the row warps spill 16-136 bytes). */
    WsFrac f[2] = { {0.0, 1.0}, {0.0, 1.0} };
    const unsigned full_at = mbar_at (&s_full[j]),
        empty_at = mbar_at (&s_empty[j]);

    if (gw.x0 + kG2Cols + 10 <= p.width)
      ws_row_walk < MODE, true > (s_v, full_at, empty_at, j, rows, lane,
          gw.x0, p, f);
    else
      ws_row_walk < MODE, false > (s_v, full_at, empty_at, j, rows, lane,
          gw.x0, p, f);
    if (lane < kWsLanes) {
      s[0] = __dmul_rn (MODE == kGaussCs ? 2.0 : 4.0, __ddiv_rn (f[0].n,
              f[0].d));
      if constexpr (MODE == kGaussBoth)
        s[1] = __dmul_rn (2.0, __ddiv_rn (f[1].n, f[1].d));
    }
  }
  if constexpr (MODE == kGaussBoth)
    block_finish_n < 2, kWsThreads > (p, s, sse, seen);
  else {
    const double v[1] = { s[0] };
    block_finish_n < 1, kWsThreads > (p, v, sse, seen);
  }
}

}                               /* namespace cq */

#endif /* CQ_SSIM_WS_KERNELS_CUH */
