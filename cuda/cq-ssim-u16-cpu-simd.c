/* cudaquality compute library: box8 and ffmpeg windows of unpacked 16-bit
 * rows (10, 12 and 16-bit planes, interleaved chroma, RGB), vectorised.
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
 *  - the expression, and the row's running sums (cq_ssim_box8_row),
 *    carried from strip to strip.
 * ffmpeg's window is the same idea: the 4x4 block sums and a window's four
 * blocks as exact doubles, a lane a block; its integer terms (below 2^46)
 * converted to float exactly as the plain C converts its int64s, then
 * cq_ssim_ffmpeg_local's float operations lane by lane.
 * The 8-bit planes the frames give straight have their own kernels
 * (cq-ssim-cpu-simd.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-cpu-simd.h"
#include "cq-cpu-simd-vec.h"
#include "cq-ssim-local.h"

#define D (V / 2)
#define S CQ_CPU_SIMD_BOX8_STRIP
#if S % CQ_SSIM_BOX8_PHASES
#error "a strip must start at the first of box8's running sums"
#endif
/* doubles a row of the strip's sums: S + 7 columns, and what the last
 * block's loads reach past them */
#define CW (S + 4 * D + 8)

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

/* The strip's n windows of one row from its column sums, added to the
 * row's running sums phase (the strip starts at a multiple of their
 * number); pairs (rows of CW doubles) is scratch. */
static void
windows_row (const CqSimdPlaneBand * b, const double *cols, double *pairs,
    unsigned n, double *phase)
{
  const vd k1 = (vd) { } + b->c1, k2 = (vd) { } + b->c2;
  double loc[D];
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
    if (end == D) {
      double *ph = phase + x % CQ_SSIM_BOX8_PHASES;

      stdd (ph, ldd (ph) + (n1 * n2) / (d1 * d2));
    } else {
      stdd (loc, (n1 * n2) / (d1 * d2));
      for (l = 0; l < end; l++)
        phase[(x + l) % CQ_SSIM_BOX8_PHASES] += loc[l];
    }
  }
}

/* A band in strips of S windows, each walked down the band's rows with its
 * column sums in L1; each row's running sums carried from strip to strip,
 * so that its windows are added in the plain C's order. */
double
CQ_SIMD_FN (cq_simd_ssim_box8_u16) (const CqSimdPlaneBand * b)
{
  const unsigned n = b->width - 7, rows = b->t1 - b->t0;
  double *row = (double *) (((uintptr_t) b->scratch + 63) & ~(uintptr_t) 63);
  double *cols = row + (size_t) rows * CQ_SSIM_BOX8_PHASES;
  double *pairs = cols + 4 * CW;
  double sum = 0.0;
  unsigned x0, t, y;

  if (b->t0 >= b->t1)
    return 0.0;
  memset (row, 0, (size_t) rows * CQ_SSIM_BOX8_PHASES * sizeof (double));
  for (x0 = 0; x0 < n; x0 += S) {
    const unsigned ns = n - x0 < S ? n - x0 : S;

    memset (cols, 0, 4 * CW * sizeof (double));
    for (y = b->t0; y < b->t0 + 8; y++)
      cols_row (b, cols, x0, ns + 7, y, 1.0);
    for (t = b->t0; t < b->t1; t++) {
      windows_row (b, cols, pairs, ns,
          row + (size_t) (t - b->t0) * CQ_SSIM_BOX8_PHASES);
      if (t + 1 < b->t1) {
        cols_row (b, cols, x0, ns + 7, t, -1.0);
        cols_row (b, cols, x0, ns + 7, t + 8, 1.0);
      }
    }
  }
  for (t = 0; t < rows; t++)
    sum += cq_ssim_box8_row (row + (size_t) t * CQ_SSIM_BOX8_PHASES);
  return sum;
}

/* ---- ffmpeg: 8x8 windows on the 4-sample grid ---- */

/* floats, one a double of vd */
typedef float vfh __attribute__ ((vector_size (2 * V)));

/* The 4x4 block sums of block row by into blocks[q * bw + bx] (q: Σa, Σb,
 * Σa² + Σb², Σab), for the first n4 blocks and up to D - 1 more (zeros past
 * the plane); exact. */
static void
ffmpeg_blocks (const CqSimdPlaneBand * b, unsigned by, unsigned n4,
    double *blocks, size_t bw)
{
  unsigned bx, j, i, q;

  for (bx = 0; bx < n4; bx += D) {
    vd blk[4] = { };

    if (4 * (bx + D) <= b->width) {
      for (j = 0; j < 4; j++) {
        const size_t y = 4 * (size_t) by + j;
        const uint16_t *ra = (const uint16_t *) b->ref + y * b->ref_stride +
            4 * bx;
        const uint16_t *rb = (const uint16_t *) b->dist +
            y * b->dist_stride + 4 * bx;
        vd qv[4][4];

        /* 4 D columns: vectors of D, their quantities */
        for (i = 0; i < 4; i++) {
          vd a = ld16d (ra + i * D), bb = ld16d (rb + i * D);

          qv[0][i] = a;
          qv[1][i] = bb;
          qv[2][i] = a * a + bb * bb;
          qv[3][i] = a * bb;
        }
        /* columns in pairs, then pairs in pairs: D blocks' row sums */
        for (q = 0; q < 4; q++)
          blk[q] += pairs_d (pairs_d (qv[q][0], qv[q][1]),
              pairs_d (qv[q][2], qv[q][3]));
      }
    } else {
      double t[4][D];
      unsigned l;

      for (q = 0; q < 4; q++)
        for (l = 0; l < D; l++)
          t[q][l] = 0.0;
      for (l = 0; l < D && 4 * (bx + l) + 4 <= b->width; l++)
        for (j = 0; j < 4; j++) {
          const size_t y = 4 * (size_t) by + j;
          const uint16_t *ra = (const uint16_t *) b->ref +
              y * b->ref_stride + 4 * (bx + l);
          const uint16_t *rb = (const uint16_t *) b->dist +
              y * b->dist_stride + 4 * (bx + l);

          for (i = 0; i < 4; i++) {
            double a = ra[i], bb = rb[i];

            t[0][l] += a;
            t[1][l] += bb;
            t[2][l] += a * a + bb * bb;
            t[3][l] += a * bb;
          }
        }
      for (q = 0; q < 4; q++)
        blk[q] = ldd (t[q]);
    }
    for (q = 0; q < 4; q++)
      stdd (blocks + q * bw + bx, blk[q]);
  }
}

double
CQ_SIMD_FN (cq_simd_ssim_ffmpeg_u16) (const CqSimdPlaneBand * b)
{
  const unsigned w4 = b->width / 4, n = w4 - 1;
  const size_t bw = ((size_t) w4 + 2 * D + 7) & ~(size_t) 7;
  double *top = (double *) (((uintptr_t) b->scratch + 63) & ~(uintptr_t) 63);
  double *bottom = top + 4 * bw, *tmp;
  const vd c1 = (vd) { } + b->c1, c2 = (vd) { } + b->c2;
  double sum = 0.0;
  unsigned by, x, q, l;

  if (b->t0 >= b->t1)
    return 0.0;
  /* the last windows' lanes past the plane read zeros */
  memset (top, 0, 8 * bw * sizeof (double));
  ffmpeg_blocks (b, b->t0, w4, top, bw);
  for (by = b->t0; by < b->t1; by++) {
    double row = 0.0;

    ffmpeg_blocks (b, by + 1, w4, bottom, bw);
    for (x = 0; x < n; x += D) {
      const unsigned end = n - x < D ? n - x : D;
      vd s[4], vars, covar;
      vfh f1, f2, f3, f4, val;

      for (q = 0; q < 4; q++)
        s[q] = ldd (top + q * bw + x) + ldd (top + q * bw + x + 1) +
            ldd (bottom + q * bw + x) + ldd (bottom + q * bw + x + 1);
      /* cq_ssim_ffmpeg_local: its int64 terms (exact here), each converted
       * to float once, then its float operations */
      vars = s[2] * 64.0 - s[0] * s[0] - s[1] * s[1];
      covar = s[3] * 64.0 - s[0] * s[1];
      f1 = __builtin_convertvector (2.0 * s[0] * s[1] + c1, vfh);
      f2 = __builtin_convertvector (2.0 * covar + c2, vfh);
      f3 = __builtin_convertvector (s[0] * s[0] + s[1] * s[1] + c1, vfh);
      f4 = __builtin_convertvector (vars + c2, vfh);
      val = f1 * f2 / (f3 * f4);
      for (l = 0; l < end; l++)
        row += val[l];
    }
    sum += row;
    tmp = top;
    top = bottom;
    bottom = tmp;
  }
  return sum;
}
