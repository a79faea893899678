/* cudaquality compute library: the local SSIM expressions.
 *
 * Included by the CPU backend (C) and the CUDA kernels (C++), so that both
 * evaluate every window with the same operations in the same order. The
 * double operations are explicitly rounded (CQ_DMUL, CQ_DADD, CQ_DSUB: no
 * FMA contraction on the device; the host code builds with
 * -ffp-contract=off), so a window's factors are the same bits on both.
 * gauss11's default kernels are the exception: they form the same factors
 * from sums of doubled samples in fewer operations (g2_windows4 in
 * cq-ssim-kernels.cuh), within a few units in the last place.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_SSIM_LOCAL_H
#define CQ_SSIM_LOCAL_H

#include "cq-local.h"

#define CQ_SSIM_FN CQ_LOCAL_FN

/* Explicitly rounded double operations: never contracted into FMAs, on the
 * device as on the host. */
#ifdef __CUDA_ARCH__
#define CQ_DMUL(a, b) __dmul_rn ((a), (b))
#define CQ_DADD(a, b) __dadd_rn ((a), (b))
#define CQ_DSUB(a, b) __dsub_rn ((a), (b))
#else
#define CQ_DMUL(a, b) ((a) * (b))
#define CQ_DADD(a, b) ((a) + (b))
#define CQ_DSUB(a, b) ((a) - (b))
#endif

/* box8's factors from a window's integer terms: SSIM = (n1 n2) / (d1 d2)
 * with n1 = two_p + k1, n2 = two_cov + k2, d1 = q + k1, d2 = var + k2, where
 * two_p = 2 Σa Σb, two_cov = 2 (64 Σab − Σa Σb), q = (Σa)² + (Σb)² and
 * var = 64 (Σa² + Σb²) − q. The kernels form the same integers their own
 * way and add several windows as one quotient, sharing these roundings
 * with the CPU's. */
#ifdef __cplusplus
template < typename CQ_BOX8_INT >
#else
#define CQ_BOX8_INT int64_t
#endif
CQ_SSIM_FN void
cq_ssim_box8_factors (CQ_BOX8_INT two_p, CQ_BOX8_INT two_cov, CQ_BOX8_INT q,
    CQ_BOX8_INT var, double k1, double k2, double *n1, double *n2,
    double *d1, double *d2)
{
  *n1 = CQ_DADD ((double) two_p, k1);
  *n2 = CQ_DADD ((double) two_cov, k2);
  *d1 = CQ_DADD ((double) q, k1);
  *d2 = CQ_DADD ((double) var, k2);
}

/* box8 from the exact sums of one 8x8 window: sa = Σa, sb = Σb,
 * sss = Σa² + Σb², sab = Σab. Means over 64 samples, (co)variances over 63:
 * numerator and denominator are scaled by 64² and 64·63, which turns every
 * term but the constants into an integer. k1 = 4096 C1, k2 = 4032 C2.
 * The sums' integer type is int64_t; the kernels use 32 bits where 8-bit
 * sums fit (the same values). */
#ifdef __cplusplus
template < typename CQ_BOX8_INT >
#endif
CQ_SSIM_FN double
cq_ssim_box8_local (CQ_BOX8_INT sa, CQ_BOX8_INT sb, CQ_BOX8_INT sss,
    CQ_BOX8_INT sab, double k1, double k2)
{
  CQ_BOX8_INT p = sa * sb;
  CQ_BOX8_INT q = sa * sa + sb * sb;
  double n1, n2, d1, d2;

  cq_ssim_box8_factors (2 * p, 2 * (64 * sab - p), q, 64 * sss - q, k1, k2,
      &n1, &n2, &d1, &d2);
  return CQ_DMUL (n1, n2) / CQ_DMUL (d1, d2);
}

/* The CPU's order of addition for a row of box8 windows: window x goes into
 * running sum x % CQ_SSIM_BOX8_PHASES (each left to right), and the row's
 * value is those sums added by halves (cq_ssim_box8_row). The plain C and
 * every vectorised kernel follow it to the bit; a vector of 4 or 8 windows'
 * values adds into its sums with one addition, where a single chain left
 * to right took transposes or a scalar addition a window. */
#define CQ_SSIM_BOX8_PHASES 32

CQ_SSIM_FN double
cq_ssim_box8_row (const double *phase)
{
  double h[CQ_SSIM_BOX8_PHASES / 2];
  unsigned i, n;

  for (i = 0; i < CQ_SSIM_BOX8_PHASES / 2; i++)
    h[i] = CQ_DADD (phase[i], phase[i + CQ_SSIM_BOX8_PHASES / 2]);
  for (n = CQ_SSIM_BOX8_PHASES / 4; n >= 1; n /= 2)
    for (i = 0; i < n; i++)
      h[i] = CQ_DADD (h[i], h[i + n]);
  return h[0];
}

/* x264 / FFmpeg: s1, s2, ss, s12 summed over 2x2 blocks of 4x4 samples;
 * c1 = (int)(.01²·L²·64 + .5), c2 = (int)(.03²·L²·64·63 + .5). The 8-bit
 * sums fit in 32 bits, as FFmpeg computes them; the value is the same. */
CQ_SSIM_FN float
cq_ssim_ffmpeg_local (int64_t s1, int64_t s2, int64_t ss, int64_t s12,
    int64_t c1, int64_t c2)
{
  int64_t vars = ss * 64 - s1 * s1 - s2 * s2;
  int64_t covar = s12 * 64 - s1 * s2;

  return (float) (2 * s1 * s2 + c1) * (float) (2 * covar + c2)
      / ((float) (s1 * s1 + s2 * s2 + c1) * (float) (vars + c2));
}

/* Gaussian: the factors of a window's value from its weighted means
 * ux, uy, uss = E[a² + b²], uab = E[ab] (population statistics, as
 * scikit-image with use_sample_covariance=False): SSIM = (a1 a2) / (b1 b2),
 * its contrast-structure term a2 / b2. */
CQ_SSIM_FN void
cq_ssim_gauss_factors (double ux, double uy, double uss, double uab,
    double c1, double c2, double *a1, double *a2, double *b1, double *b2)
{
  double uxuy = CQ_DMUL (ux, uy);
  double sq = CQ_DADD (CQ_DMUL (ux, ux), CQ_DMUL (uy, uy));

  *a2 = CQ_DADD (2.0 * CQ_DSUB (uab, uxuy), c2);
  *b2 = CQ_DADD (CQ_DSUB (uss, sq), c2);
  *a1 = CQ_DADD (2.0 * uxuy, c1);
  *b1 = CQ_DADD (sq, c1);
}

CQ_SSIM_FN double
cq_ssim_gauss_local (double ux, double uy, double uss, double uab,
    double c1, double c2)
{
  double a1, a2, b1, b2;

  cq_ssim_gauss_factors (ux, uy, uss, uab, c1, c2, &a1, &a2, &b1, &b2);
  return CQ_DMUL (a1, a2) / CQ_DMUL (b1, b2);
}

/* The contrast-structure term of the same window, the factor MS-SSIM takes
 * at every scale but the last: (2 cov + C2) / (var_a + var_b + C2). */
CQ_SSIM_FN double
cq_ssim_gauss_cs_local (double ux, double uy, double uss, double uab,
    double c2)
{
  double a1, a2, b1, b2;

  cq_ssim_gauss_factors (ux, uy, uss, uab, 0.0, c2, &a1, &a2, &b1, &b2);
  return a2 / b2;
}

/* The 2x2 average of MS-SSIM's downsampling (exact in double for samples
 * of up to 16 bits over the five scales). */
CQ_SSIM_FN double
cq_ssim_down2 (double a, double b, double c, double d)
{
  return CQ_DMUL (CQ_DADD (CQ_DADD (a, b), CQ_DADD (c, d)), 0.25);
}

/* FFmpeg's integer constants for a peak value L. */
#define CQ_SSIM_FFMPEG_C1(L) ((int64_t) (.01 * .01 * (L) * (L) * 64 + .5))
#define CQ_SSIM_FFMPEG_C2(L) ((int64_t) (.03 * .03 * (L) * (L) * 64 * 63 + .5))

#endif /* CQ_SSIM_LOCAL_H */
