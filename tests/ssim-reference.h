/* Naive double-precision SSIM, MSE and the x264/FFmpeg SSIM, written from
 * the definitions in ../shared/docs/references.md and independent of the
 * library: every window is summed from scratch. For tests only (slow).
 *
 * Images are int arrays, row-major, of w x h samples with peak value L.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef SSIM_REFERENCE_H
#define SSIM_REFERENCE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* box8: mean over every 8x8 window of the local SSIM, means over 64 samples,
 * (co)variances over 63 (seed 004, eq. 1, 3, 4). */
static inline double
ref_ssim_box8 (const int *a, const int *b, unsigned w, unsigned h, int L)
{
  const double c1 = (0.01 * L) * (0.01 * L), c2 = (0.03 * L) * (0.03 * L);
  double total = 0.0;
  unsigned x, y, i, j;

  for (y = 0; y + 8 <= h; y++)
    for (x = 0; x + 8 <= w; x++) {
      double ma = 0, mb = 0, va = 0, vb = 0, cov = 0;

      for (j = 0; j < 8; j++)
        for (i = 0; i < 8; i++) {
          ma += a[(y + j) * w + x + i];
          mb += b[(y + j) * w + x + i];
        }
      ma /= 64.0;
      mb /= 64.0;
      for (j = 0; j < 8; j++)
        for (i = 0; i < 8; i++) {
          double da = a[(y + j) * w + x + i] - ma;
          double db = b[(y + j) * w + x + i] - mb;

          va += da * da;
          vb += db * db;
          cov += da * db;
        }
      va /= 63.0;
      vb /= 63.0;
      cov /= 63.0;
      total += ((2 * ma * mb + c1) * (2 * cov + c2)) /
          ((ma * ma + mb * mb + c1) * (va + vb + c2));
    }
  return total / ((double) (w - 7) * (h - 7));
}

/* The normalised 1-D Gaussian, sigma 1.5, radius 5. */
static inline void
ref_gauss11_weights (double g[11])
{
  double gs = 0;
  unsigned i;

  for (i = 0; i < 11; i++) {
    double d = (double) i - 5.0;
    g[i] = exp (-d * d / (2 * 1.5 * 1.5));
    gs += g[i];
  }
  for (i = 0; i < 11; i++)
    g[i] /= gs;
}

/* The mean over every 11x11 window of double images of the local SSIM, or
 * with cs_only of its contrast-structure term (2 cov + C2) / (va + vb + C2);
 * two-pass window statistics. */
static inline double
ref_gauss11_mean (const double *a, const double *b, unsigned w, unsigned h,
    int L, int cs_only)
{
  const double c1 = (0.01 * L) * (0.01 * L), c2 = (0.03 * L) * (0.03 * L);
  double g[11], total = 0.0;
  unsigned x, y, i, j;

  ref_gauss11_weights (g);
  for (y = 0; y + 11 <= h; y++)
    for (x = 0; x + 11 <= w; x++) {
      double ma = 0, mb = 0, va = 0, vb = 0, cov = 0;

      for (j = 0; j < 11; j++)
        for (i = 0; i < 11; i++) {
          ma += g[i] * g[j] * a[(y + j) * w + x + i];
          mb += g[i] * g[j] * b[(y + j) * w + x + i];
        }
      for (j = 0; j < 11; j++)
        for (i = 0; i < 11; i++) {
          double da = a[(y + j) * w + x + i] - ma;
          double db = b[(y + j) * w + x + i] - mb;

          va += g[i] * g[j] * da * da;
          vb += g[i] * g[j] * db * db;
          cov += g[i] * g[j] * da * db;
        }
      if (cs_only)
        total += (2 * cov + c2) / (va + vb + c2);
      else
        total += ((2 * ma * mb + c1) * (2 * cov + c2)) /
            ((ma * ma + mb * mb + c1) * (va + vb + c2));
    }
  return total / ((double) (w - 10) * (h - 10));
}

/* gauss11: 11x11 window of weights g(i)g(j), g the normalised Gaussian of
 * sigma 1.5 (population statistics, scikit-image's gaussian_weights). */
static inline double
ref_ssim_gauss11 (const int *a, const int *b, unsigned w, unsigned h, int L)
{
  double *fa = (double *) malloc (sizeof (double) * w * h);
  double *fb = (double *) malloc (sizeof (double) * w * h);
  double v;
  unsigned i;

  for (i = 0; i < w * h; i++) {
    fa[i] = a[i];
    fb[i] = b[i];
  }
  v = ref_gauss11_mean (fa, fb, w, h, L, 0);
  free (fa);
  free (fb);
  return v;
}

/* MS-SSIM (Wang, Simoncelli, Bovik 2003), as torchmetrics computes it:
 * at scales 1-4 the mean over the 11x11 Gaussian windows of the
 * contrast-structure term (2 cov + C2) / (var_a + var_b + C2), at scale 5
 * the mean SSIM; negative means count as 0; between scales the 2x2 average
 * (odd sizes lose their last row or column). Product of the means raised to
 * 0.0448, 0.2856, 0.3001, 0.2363, 0.1333. Two-pass window statistics. */
static inline double
ref_msssim (const int *a, const int *b, unsigned w, unsigned h, int L)
{
  static const double beta[5] = { 0.0448, 0.2856, 0.3001, 0.2363, 0.1333 };
  double *fa = (double *) malloc (sizeof (double) * w * h);
  double *fb = (double *) malloc (sizeof (double) * w * h);
  double result = 1.0;
  unsigned x, y, i, s;

  for (i = 0; i < w * h; i++) {
    fa[i] = a[i];
    fb[i] = b[i];
  }
  for (s = 0; s < 5; s++) {
    double mean = ref_gauss11_mean (fa, fb, w, h, L, s < 4);
    double *f[2] = { fa, fb };

    result *= pow (mean > 0 ? mean : 0, beta[s]);
    for (i = 0; i < 2; i++)
      for (y = 0; y < h / 2; y++)
        for (x = 0; x < w / 2; x++)
          f[i][y * (w / 2) + x] = (f[i][2 * y * w + 2 * x] +
              f[i][2 * y * w + 2 * x + 1] + f[i][(2 * y + 1) * w + 2 * x] +
              f[i][(2 * y + 1) * w + 2 * x + 1]) / 4;
    w /= 2;
    h /= 2;
  }
  free (fa);
  free (fb);
  return result;
}

/* x264's integer window value, as FFmpeg's vf_ssim evaluates it in float. */
static inline float
ref_x264_window (int64_t s1, int64_t s2, int64_t ss, int64_t s12, int L)
{
  int64_t c1 = (int64_t) (.01 * .01 * L * L * 64 + .5);
  int64_t c2 = (int64_t) (.03 * .03 * L * L * 64 * 63 + .5);
  int64_t vars = ss * 64 - s1 * s1 - s2 * s2;
  int64_t covar = s12 * 64 - s1 * s2;
  float num1 = (float) (2 * s1 * s2 + c1), num2 = (float) (2 * covar + c2);
  float den1 = (float) (s1 * s1 + s2 * s2 + c1), den2 = (float) (vars + c2);
  float num = num1 * num2, den = den1 * den2;

  return num / den;
}

/* The x264 value of the window whose top-left 4x4 block is (bx, by). */
static inline float
ref_x264_at (const int *a, const int *b, unsigned w, unsigned bx,
    unsigned by, int L)
{
  int64_t s1 = 0, s2 = 0, ss = 0, s12 = 0;
  unsigned i, j;

  for (j = 0; j < 8; j++)
    for (i = 0; i < 8; i++) {
      int64_t va = a[(4 * by + j) * w + 4 * bx + i];
      int64_t vb = b[(4 * by + j) * w + 4 * bx + i];

      s1 += va;
      s2 += vb;
      ss += va * va + vb * vb;
      s12 += va * vb;
    }
  return ref_x264_window (s1, s2, ss, s12, L);
}

/* The sum of the x264 window values, row by row: FFmpeg adds a row in
 * float (float_rows), the CPU backend on one thread in double. */
static inline double
ref_x264_sum (const int *a, const int *b, unsigned w, unsigned h, int L,
    int float_rows)
{
  unsigned w4 = w / 4, h4 = h / 4, bx, by;
  double total = 0.0;

  for (by = 0; by + 1 < h4; by++) {
    float frow = 0.0f;
    double drow = 0.0;

    for (bx = 0; bx + 1 < w4; bx++) {
      float v = ref_x264_at (a, b, w, bx, by, L);

      frow += v;
      drow += v;
    }
    total += float_rows ? (double) frow : drow;
  }
  return total;
}

/* FFmpeg's frame value: the float row sums, divided by the window count. */
static inline double
ref_ffmpeg_frame (const int *a, const int *b, unsigned w, unsigned h, int L)
{
  return ref_x264_sum (a, b, w, h, L, 1) / ((double) (w / 4 - 1) * (h / 4 -
          1));
}

/* The x264 window values added in double as the CPU backend adds them on
 * one thread: equal to its sum only if every window value is. */
static inline double
ref_ffmpeg_sum_exact_order (const int *a, const int *b, unsigned w,
    unsigned h, int L)
{
  return ref_x264_sum (a, b, w, h, L, 0);
}

static inline uint64_t
ref_sse (const int *a, const int *b, unsigned n)
{
  uint64_t s = 0;
  unsigned i;

  for (i = 0; i < n; i++)
    s += (uint64_t) ((int64_t) (a[i] - b[i]) * (a[i] - b[i]));
  return s;
}

static inline double
ref_mse (const int *a, const int *b, unsigned n)
{
  double s = 0;
  unsigned i;

  for (i = 0; i < n; i++)
    s += (double) (a[i] - b[i]) * (a[i] - b[i]);
  return s / n;
}

#endif /* SSIM_REFERENCE_H */
