/* cudaquality compute library: the detector noise, one cell at a time —
 * the code both backends compile (cq-sfnoise.c for the CPU,
 * cq-sfnoise-cuda.cu for the device). Private to the library.
 *
 * Bit-identical on CPU and GPU. The random words come from Philox4x32-10
 * (cq-philox.h on the host, cuRAND's curand_Philox4x32_10 on the device:
 * the same function). Everything after that uses only operations IEEE 754
 * rounds exactly and both sides implement alike in double precision: + − ×
 * ÷ and sqrt (round to nearest), floor, fabs, comparisons, exact integer
 * conversions and bit manipulation. exp and log are written here with those
 * operations (no libm: glibc's and CUDA's exp/log differ in the last bit
 * now and then); ln k! is a product of integers (exact below 16!) or
 * Stirling's series. The two compilers must not fuse a × b + c into one FMA
 * (that rounds once instead of twice): the library's C is built with
 * -ffp-contract=off and cq-sfnoise-cuda.cu with nvcc -fmad=false
 * (cuda/meson.build). Decimal constants are written with 17 significant
 * digits so that both parsers give the same double. The GPU suite checks
 * the equality on millions of cells (test-gpu-sfnoise).
 *
 * Generator key and counter: key = (seed, stream tag), counter = (block,
 * cell, view low, view high), view = the frame's index in the whole stream
 * (rotation × views + view), cell = v × nu + u. A cell's draw therefore
 * depends on (seed, view, cell) alone: not on batching, threads, devices
 * or backend.
 *
 * Sampler: Poisson by inversion (sequential search from e^−λ) below λ =
 * 10, Hörmann's PTRS (transformed rejection with squeeze, 1993, as numpy's
 * random_poisson_ptrs) from 10 on. Electronic noise: Marsaglia's polar
 * method. Uniforms u = (w + ½)·2⁻³² of a 32-bit word w: exact, in (0, 1).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_SFNOISE_IMPL_H
#define CQ_SFNOISE_IMPL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cq-philox.h"
#include "cq-sfnoise.h"

#ifdef __CUDACC__
#include <curand_kernel.h>
#define CQ_NZ __device__ __forceinline__
#else
#define CQ_NZ static inline
#endif

#define CQ_NZ_TAG_POISSON 0x506f6973u   /* "Pois" */
#define CQ_NZ_TAG_GAUSS 0x47617573u     /* "Gaus" */
/* no Poisson draw above this mean (the pixels saturate long before) */
#define CQ_NZ_MAX_LAMBDA 1e15

/* The bits of a double and back: memcpy, a register move on both sides */
CQ_NZ uint64_t
cq_nz_bits (double x)
{
  uint64_t b;

  memcpy (&b, &x, sizeof (b));
  return b;
}

CQ_NZ double
cq_nz_from_bits (uint64_t b)
{
  double x;

  memcpy (&x, &b, sizeof (x));
  return x;
}

/* Block `block` of the stream (tag) of a cell: four 32-bit words. */
CQ_NZ void
cq_nz_block (const CqSfNoise * nz, uint32_t tag, uint32_t cell,
    uint32_t block, uint32_t w[4])
{
#ifdef __CUDA_ARCH__
  uint4 r = curand_Philox4x32_10 (make_uint4 (block, cell,
          (uint32_t) nz->view, (uint32_t) (nz->view >> 32)),
      make_uint2 (nz->seed, tag));

  w[0] = r.x;
  w[1] = r.y;
  w[2] = r.z;
  w[3] = r.w;
#else
  const uint32_t ctr[4] = { block, cell, (uint32_t) nz->view,
    (uint32_t) (nz->view >> 32)
  };
  const uint32_t key[2] = { nz->seed, tag };

  cq_philox4x32_10 (ctr, key, w);
#endif
}

/* (w + ½)·2⁻³²: exact (33 significant bits at most), never 0 or 1. */
CQ_NZ double
cq_nz_uniform (uint32_t w)
{
  return ((double) w + 0.5) * 2.3283064365386963e-10;
}

/* c[0] x^(n-1) + c[1] x^(n-2) + ... + c[n-1], by Horner's rule (a
 * multiplication and an addition a step, each rounded). */
CQ_NZ double
cq_nz_horner (const double *c, int n, double x)
{
  double p = c[0];
  int i;

#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (i = 1; i < n; i++)
    p = p * x + c[i];
  return p;
}

/* 2^k for −1022 ≤ k ≤ 1023. */
CQ_NZ double
cq_nz_pow2 (int k)
{
  return cq_nz_from_bits ((uint64_t) (k + 1023) << 52);
}

/* e^x: x = k ln 2 + r (Cody-Waite, fdlibm's two-part ln 2, k·ln2_hi exact),
 * |r| ≤ 0.35, Taylor to r¹³ (truncation < 1e-17), times 2^k. 0 below
 * −745, +inf above 709.7. About 1 ulp; what matters is that both backends
 * compute the same. */
CQ_NZ double
cq_nz_exp (double x)
{
  /* 1/13!, 1/12!, ..., 1/2!, 1, 1 */
  const double coef[14] = { 1.6059043836821613e-10, 2.0876756987868099e-09,
    2.5052108385441720e-08, 2.7557319223985888e-07, 2.7557319223985893e-06,
    2.4801587301587302e-05, 1.9841269841269841e-04, 1.3888888888888889e-03,
    8.3333333333333332e-03, 4.1666666666666664e-02, 1.6666666666666666e-01,
    0.5, 1.0, 1.0
  };
  double kd, r, p;
  int k;

  if (!(x > -745.0))
    return 0.0;
  if (x > 709.7)
    return HUGE_VAL;
  kd = floor (x * 1.4426950408889634 + 0.5);
  k = (int) kd;
  r = (x - kd * 0.69314718036912382) - kd * 1.9082149292705877e-10;
  p = cq_nz_horner (coef, 14, r);
  if (k < -1021)                /* a subnormal result: two exact steps */
    return (p * cq_nz_pow2 (k + 1000)) * cq_nz_pow2 (-1000);
  if (k > 1023)
    return (p * cq_nz_pow2 (k - 1)) * 2.0;
  return p * cq_nz_pow2 (k);
}

/* ln x for a positive normal x: x = m·2^e, m in [√½, √2), ln m =
 * 2 atanh s, s = (m − 1)/(m + 1), |s| ≤ 0.172, series to s²³. */
CQ_NZ double
cq_nz_log (double x)
{
  /* 1/23, 1/21, ..., 1/3, 1 */
  const double coef[12] = { 4.3478260869565216e-02, 4.7619047619047616e-02,
    5.2631578947368418e-02, 5.8823529411764705e-02, 6.6666666666666666e-02,
    7.6923076923076927e-02, 9.0909090909090912e-02, 1.1111111111111110e-01,
    1.4285714285714285e-01, 2.0000000000000001e-01, 3.3333333333333331e-01,
    1.0
  };
  const uint64_t b = cq_nz_bits (x);
  int e = (int) (b >> 52) - 1023;
  double m = cq_nz_from_bits ((b & 0x000fffffffffffffull) |
      0x3ff0000000000000ull), s, s2, p;

  if (m > 1.4142135623730951) {
    m = 0.5 * m;
    e++;
  }
  s = (m - 1.0) / (m + 1.0);
  s2 = s * s;
  p = cq_nz_horner (coef, 12, s2);
  return (double) e * 0.69314718036912382 + ((2.0 * s) * p +
      (double) e * 1.9082149292705877e-10);
}

/* ln k! for a whole k ≥ 0: the exact product below 16 (15! < 2⁵³),
 * Stirling's series with four terms above (error < 1e-14). */
CQ_NZ double
cq_nz_log_factorial (double k)
{
  double x, ix, ix2;

  if (k < 16) {
    double f = 1.0, i;

    for (i = 2.0; i <= k; i += 1.0)
      f = f * i;
    return cq_nz_log (f);
  }
  x = k + 1.0;
  ix = 1.0 / x;
  ix2 = ix * ix;
  return (x - 0.5) * cq_nz_log (x) - x + 0.91893853320467274 +
      ix * (8.3333333333333329e-02 - ix2 * (2.7777777777777779e-03 -
          ix2 * (7.9365079365079365e-04 - ix2 * 5.9523809523809529e-04)));
}

/* A Poisson draw of mean lam (0 ≤ lam < CQ_NZ_MAX_LAMBDA). */
CQ_NZ double
cq_nz_poisson (const CqSfNoise * nz, uint32_t cell, double lam)
{
  double slam, loglam, a, b, invalpha, vr;
  uint32_t w[4], block;
  int h;

  if (!(lam > 0))
    return 0.0;
  if (lam < 10) {
    /* inversion: the smallest k with F(k) ≥ u */
    double u, p, F, k = 0.0;

    cq_nz_block (nz, CQ_NZ_TAG_POISSON, cell, 0, w);
    u = cq_nz_uniform (w[0]);
    p = cq_nz_exp (-lam);
    F = p;
    while (u > F && k < 100.0) {
      k = k + 1.0;
      p = p * lam / k;
      F = F + p;
    }
    return k;
  }
  slam = sqrt (lam);
  loglam = cq_nz_log (lam);
  b = 0.931 + 2.53 * slam;
  a = -0.059 + 0.02483 * b;
  invalpha = 1.1239 + 1.1328 / (b - 3.4);
  vr = 0.9277 - 3.6224 / (b - 2);
  for (block = 0;; block++) {
    cq_nz_block (nz, CQ_NZ_TAG_POISSON, cell, block, w);
    for (h = 0; h < 2; h++) {
      const double U = cq_nz_uniform (w[2 * h]) - 0.5;
      const double V = cq_nz_uniform (w[2 * h + 1]);
      const double us = 0.5 - fabs (U);
      const double k = floor ((2 * a / us + b) * U + lam + 0.43);

      if (us >= 0.07 && V <= vr)
        return k;
      if (k < 0 || (us < 0.013 && V > us))
        continue;
      if (cq_nz_log (V) + cq_nz_log (invalpha) - cq_nz_log (a / (us * us) +
              b) <= -lam + k * loglam - cq_nz_log_factorial (k))
        return k;
    }
  }
}

/* A standard normal draw (Marsaglia's polar method). s ≥ 2⁻⁶⁴ > 0 since
 * |2u − 1| ≥ 2⁻³². */
CQ_NZ double
cq_nz_gauss (const CqSfNoise * nz, uint32_t cell)
{
  uint32_t w[4], block;
  int h;

  for (block = 0;; block++) {
    cq_nz_block (nz, CQ_NZ_TAG_GAUSS, cell, block, w);
    for (h = 0; h < 2; h++) {
      const double u1 = 2.0 * cq_nz_uniform (w[2 * h]) - 1.0;
      const double u2 = 2.0 * cq_nz_uniform (w[2 * h + 1]) - 1.0;
      const double s = u1 * u1 + u2 * u2;

      if (s < 1.0)
        return u1 * sqrt (-2.0 * cq_nz_log (s) / s);
    }
  }
}

/* Noisy counts of a cell of mean lam: Poisson (if asked), then the
 * electronic noise's Gaussian (if σ > 0). Not rounded. */
CQ_NZ double
cq_nz_counts (const CqSfNoise * nz, uint32_t cell, double lam)
{
  double x = lam;

  if (nz->poisson && lam < CQ_NZ_MAX_LAMBDA)
    x = cq_nz_poisson (nz, cell, lam);
  if (nz->electronic > 0)
    x = x + nz->electronic * cq_nz_gauss (nz, cell);
  return x;
}

/* The mean counts photons·e^(−mu_scale·li), with the exp above. */
CQ_NZ double
cq_nz_mean (const CqSfPixels * px, float li)
{
  return px->photons * cq_nz_exp (-(px->mu_scale * (double) li));
}

/* A counts pixel with noise: the draw, ×255/photons for 8 bits, rounded,
 * clamped to [0, levels] (NaN to 0). */
CQ_NZ double
cq_nz_pixel (const CqSfPixels * px, const CqSfNoise * nz, uint32_t cell,
    float li)
{
  double x = cq_nz_counts (nz, cell, cq_nz_mean (px, li));

  if (px->bytes == 1)
    x = 255.0 * x / px->photons;
  x = floor (x + 0.5);
  if (!(x >= 0))
    return 0.0;
  return x > px->levels ? px->levels : x;
}

#endif /* CQ_SFNOISE_IMPL_H */
