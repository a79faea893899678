/* cudaquality compute library: box8 windows of unpacked 16-bit rows (10, 12
 * and 16-bit planes, interleaved chroma, RGB), vectorised.
 *
 * Compiled once per instruction set (see cq-cpu-simd-vec.h). band_box8 of
 * cq-ssim-cpu.c sums in int64; every sum and integer term of a window stays
 * below 2^53 (Σa ≤ 64 · 65535, 64 (Σa² + Σb²) < 2^46), so doubles hold them
 * exactly, in any order of addition: a lane is a window (D = V / 2 doubles a
 * vector), its sums and terms exact doubles, then cq_ssim_box8_factors'
 * roundings lane by lane. A band goes in strips of S windows; down each
 * strip, for every window row:
 *  - the 8-row column sums of a, b, a² + b², ab slide down (the row leaving
 *    subtracted, the row entering added), kept in L1 for the strip;
 *  - sums of 2 neighbouring columns, then a window's 8 columns as 4 of
 *    those;
 *  - the expression, and the row's sum, carried from strip to strip.
 * The 8-bit planes the frames give straight have their own kernel
 * (cq-ssim-cpu-simd.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-cpu-simd.h"
#include "cq-cpu-simd-vec.h"
#include "cq-ssim-local.h"

#define D (V / 2)
#define S CQ_CPU_SIMD_BOX8_STRIP
/* doubles a row of the strip's sums: S + 7 columns, and what the last
 * block's loads reach past them */
#define CW (S + 4 * D + 8)

/* D samples of a 16-bit row from x, as doubles */
static inline vd
ld16d (const uint16_t * p)
{
#if V == 8
  return (vd) _mm256_cvtepi32_pd (_mm_cvtepu16_epi32 (_mm_loadl_epi64
          ((const __m128i *) p)));
#else
  return (vd) _mm512_cvtepi32_pd (_mm256_cvtepu16_epi32 (_mm_loadu_si128
          ((const __m128i *) p)));
#endif
}

/* Adds (sign 1) or subtracts (-1) row y's four quantities at columns
 * x0 ... x0 + nc - 1 to the strip's column sums cols[0 ... 3][0 ... nc - 1]
 * (rows of CW doubles). */
static void
cols_row (const CqSimdPlaneBand * b, double *cols, unsigned x0, unsigned nc,
    unsigned y, double sign)
{
  const uint16_t *ra = (const uint16_t *) b->ref + (size_t) y * b->ref_stride
      + x0;
  const uint16_t *rb = (const uint16_t *) b->dist +
      (size_t) y * b->dist_stride + x0;
  const vd s = (vd) { } + sign;
  unsigned x;

  for (x = 0; x + D <= nc; x += D) {
    vd a = ld16d (ra + x), bb = ld16d (rb + x);

    stdd (cols + x, ldd (cols + x) + s * a);
    stdd (cols + CW + x, ldd (cols + CW + x) + s * bb);
    stdd (cols + 2 * CW + x, ldd (cols + 2 * CW + x) + s * (a * a + bb * bb));
    stdd (cols + 3 * CW + x, ldd (cols + 3 * CW + x) + s * (a * bb));
  }
  for (; x < nc; x++) {
    double a = ra[x], bb = rb[x];

    cols[x] += sign * a;
    cols[CW + x] += sign * bb;
    cols[2 * CW + x] += sign * (a * a + bb * bb);
    cols[3 * CW + x] += sign * (a * bb);
  }
}

/* The strip's n windows of one row from its column sums, added left to
 * right to *row; pairs (rows of CW doubles) is scratch. */
static void
windows_row (const CqSimdPlaneBand * b, const double *cols, double *pairs,
    unsigned n, double *row)
{
  const vd k1 = (vd) { } + b->c1, k2 = (vd) { } + b->c2;
  double loc[D], sum = *row;
  unsigned x, q, l;

  /* sums of 2 neighbouring columns, as far as the last block reads */
  for (q = 0; q < 4; q++)
    for (x = 0; x < n + D + 6; x += D)
      stdd (pairs + q * CW + x, ldd (cols + q * CW + x) +
          ldd (cols + q * CW + x + 1));
  for (x = 0; x < n; x += D) {
    vd s[4], p, sq, two_p, two_cov, var, n1, n2, d1, d2;
    unsigned end = n - x < D ? n - x : D;

    for (q = 0; q < 4; q++) {
      const double *r = pairs + q * CW + x;

      s[q] = (ldd (r) + ldd (r + 2)) + (ldd (r + 4) + ldd (r + 6));
    }
    /* cq_ssim_box8_local's integers (exact), then its factors */
    p = s[0] * s[1];
    sq = s[0] * s[0] + s[1] * s[1];
    two_p = 2.0 * p;
    two_cov = 2.0 * (64.0 * s[3] - p);
    var = 64.0 * s[2] - sq;
    n1 = two_p + k1;
    n2 = two_cov + k2;
    d1 = sq + k1;
    d2 = var + k2;
    stdd (loc, (n1 * n2) / (d1 * d2));
    for (l = 0; l < end; l++)
      sum += loc[l];
  }
  *row = sum;
}

/* A band in strips of S windows, each walked down the band's rows with its
 * column sums in L1; each row's sum carried from strip to strip, so its
 * windows are still added left to right. */
double
CQ_SIMD_FN (cq_simd_ssim_box8_u16) (const CqSimdPlaneBand * b)
{
  const unsigned n = b->width - 7, rows = b->t1 - b->t0;
  double *row = (double *) (((uintptr_t) b->scratch + 63) & ~(uintptr_t) 63);
  double *cols = row + ((rows + 7) & ~7u);
  double *pairs = cols + 4 * CW;
  double sum = 0.0;
  unsigned x0, t, y;

  if (b->t0 >= b->t1)
    return 0.0;
  memset (row, 0, rows * sizeof (double));
  for (x0 = 0; x0 < n; x0 += S) {
    const unsigned ns = n - x0 < S ? n - x0 : S;

    memset (cols, 0, 4 * CW * sizeof (double));
    for (y = b->t0; y < b->t0 + 8; y++)
      cols_row (b, cols, x0, ns + 7, y, 1.0);
    for (t = b->t0; t < b->t1; t++) {
      windows_row (b, cols, pairs, ns, &row[t - b->t0]);
      if (t + 1 < b->t1) {
        cols_row (b, cols, x0, ns + 7, t, -1.0);
        cols_row (b, cols, x0, ns + 7, t + 8, 1.0);
      }
    }
  }
  for (t = 0; t < rows; t++)
    sum += row[t];
  return sum;
}
