/* Whether fp64 FMAs (DFMA) and fp64 tensor-core products (DMMA,
 * mma.sync m16n8k4 f64) run side by side on one SM, or take turns on one
 * pipe: two warp roles in one kernel, each alone and both together. If
 * they overlapped, both together would take as long as the slower alone;
 * if they share a pipe, as long as both alone added up.
 *
 * Not built by meson (a device program for compute capability 9.0):
 *   nvcc -O3 -arch=sm_90 -o fp64-pipes tests/bench/fp64-pipes.cu
 *   ./fp64-pipes
 * Rates are fused multiply-adds a clock an SM at the device's clock.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cstdio>
#include <cuda_runtime.h>

enum
{
  kIdle = 0,
  kDfma = 1,
  kDmma = 2
};

constexpr int kThreads = 256;
constexpr int kChains = 8;      /* independent accumulators a warp */

__device__ __forceinline__ void
dmma_1684 (double (&d)[4], double a0, double a1, double b)
{
  asm volatile ("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 "
      "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
      :"+d" (d[0]), "+d" (d[1]), "+d" (d[2]), "+d" (d[3])
      :"d" (a0), "d" (a1), "d" (b));
}

/* Warp w takes role_a or role_b: by its parity (halves = 0) or by which
 * half of the block it is in (halves = 1), so that either way each kind
 * of warp shares sub-partitions with the other kind in one of the two. */
__global__ void __launch_bounds__ (kThreads, 2)
fp64_pipes_kernel (int halves, int role_a, int role_b, int iters,
    double *sink)
{
  const int warp = threadIdx.x >> 5;
  const int side = halves ? warp >= kThreads / 64 : warp & 1;
  const int role = side ? role_b : role_a;
  const double x = threadIdx.x * 1e-9 + 1.0, y = 0.999999;
  double r = 0.0;

  if (role == kDfma) {
    double c[kChains];

    for (int i = 0; i < kChains; i++)
      c[i] = x + i;
    for (int it = 0; it < iters; it++)
#pragma unroll
      for (int u = 0; u < 8; u++)
#pragma unroll
        for (int i = 0; i < kChains; i++)
          c[i] = fma (c[i], y, x);
    for (int i = 0; i < kChains; i++)
      r += c[i];
  } else if (role == kDmma) {
    double d[kChains][4];

    for (int i = 0; i < kChains; i++)
      d[i][0] = d[i][1] = d[i][2] = d[i][3] = x + i;
    for (int it = 0; it < iters; it++)
#pragma unroll
      for (int i = 0; i < kChains; i++)
        dmma_1684 (d[i], y, x, y);
    for (int i = 0; i < kChains; i++)
      r += d[i][0] + d[i][1] + d[i][2] + d[i][3];
  }
  if (r == 12345.0)             /* never: keeps the chains */
    sink[0] = r;
}

int
main (void)
{
  static const char *names[] = { "idle", "DFMA", "DMMA" };
  static const int roles[][2] = {
    {kDfma, kIdle}, {kIdle, kDmma}, {kDfma, kDmma}, {kDfma, kDfma},
    {kDmma, kDmma}
  };
  const int iters = 4000;
  int sms, khz, blocks;
  double *sink;

  if (cudaDeviceGetAttribute (&sms, cudaDevAttrMultiProcessorCount, 0)
      != cudaSuccess
      || cudaDeviceGetAttribute (&khz, cudaDevAttrClockRate, 0) != cudaSuccess
      || cudaOccupancyMaxActiveBlocksPerMultiprocessor (&blocks,
          fp64_pipes_kernel, kThreads, 0) != cudaSuccess
      || cudaMalloc (&sink, sizeof (double)) != cudaSuccess) {
    fprintf (stderr, "no usable CUDA device\n");
    return 77;
  }
  printf ("%d SMs, %d blocks of %d threads an SM, %.0f MHz\n", sms, blocks,
      kThreads, khz / 1e3);
  for (int halves = 0; halves < 2; halves++)
    for (const auto & rr:roles) {
      cudaEvent_t start, end;
      float ms;
      double dfma = 0.0, dmma = 0.0;

      cudaEventCreate (&start);
      cudaEventCreate (&end);
      fp64_pipes_kernel <<< sms * blocks, kThreads >>> (halves, rr[0], rr[1],
          iters, sink);
      cudaEventRecord (start);
      fp64_pipes_kernel <<< sms * blocks, kThreads >>> (halves, rr[0], rr[1],
          iters, sink);
      cudaEventRecord (end);
      cudaEventSynchronize (end);
      cudaEventElapsedTime (&ms, start, end);
      /* half the block's warps take each role */
      for (int s = 0; s < 2; s++) {
        const double warps = (double) sms * blocks * kThreads / 64;

        if (rr[s] == kDfma)
          dfma += warps * 32 * iters * 8 * kChains;
        else if (rr[s] == kDmma)
          dmma += warps * iters * kChains * 512.0;
      }
      {
        const double clocks = ms * 1e-3 * khz * 1e3 * sms;

        printf ("%-6s A %-4s B %-4s %7.3f ms  DFMA %6.1f  DMMA %6.1f\n",
            halves ? "halves" : "parity", names[rr[0]], names[rr[1]], ms,
            dfma / clocks, dmma / clocks);
      }
      cudaEventDestroy (start);
      cudaEventDestroy (end);
    }
  {
    /* cudaGetLastError clears the error: asked once */
    const cudaError_t e = cudaGetLastError ();

    if (e != cudaSuccess) {
      fprintf (stderr, "%s\n", cudaGetErrorString (e));
      return 1;
    }
  }
  return 0;
}
