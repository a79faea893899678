/* Independent double-precision reference for the sharpness measures, written
 * straight from docs/elements/cudasharpness.md, for the tests. Deliberately
 * naive: one loop per measure, a get() with explicit borders, two-pass
 * variances.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef SHARPNESS_REFERENCE_H
#define SHARPNESS_REFERENCE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

enum
{
  REF_VARIANCE, REF_ROBERTS, REF_TENENGRAD, REF_LAPLACIAN, REF_SMD, REF_SMD2,
  REF_MAXMIN, REF_ENTROPY, REF_LAPVAR, REF_BRENNER, REF_COUNT
};

static inline int
ref_reflect101 (int i, int n)
{
  if (n == 1)
    return 0;
  if (i < 0)
    return -i;
  if (i >= n)
    return 2 * n - 2 - i;
  return i;
}

/* g: M rows of N values (row-major), bins: number of gray levels. */
static inline void
ref_sharpness (const int *g, int N, int M, int bins, double out[REF_COUNT])
{
#define G(i, j) ((double) g[(size_t) (i) * N + (j)])
  double mn = (double) M * N, mean = 0, acc;
  double *lap = malloc (sizeof (double) * M * N);
  double *hist = calloc (bins, sizeof (double));
  int i, j, di, dj;

  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++)
      mean += G (i, j);
  mean /= mn;
  acc = 0;
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++)
      acc += (G (i, j) - mean) * (G (i, j) - mean);
  out[REF_VARIANCE] = acc / mn;

  acc = 0;
  for (i = 0; i < M - 1; i++)
    for (j = 0; j < N - 1; j++)
      acc += fabs (G (i + 1, j + 1) - G (i, j)) +
          fabs (G (i + 1, j) - G (i, j + 1));
  out[REF_ROBERTS] = acc / mn;

  acc = 0;
  for (i = 1; i < M - 1; i++)
    for (j = 1; j < N - 1; j++) {
      double gx = G (i - 1, j + 1) + 2 * G (i, j + 1) + G (i + 1, j + 1)
          - G (i - 1, j - 1) - 2 * G (i, j - 1) - G (i + 1, j - 1);
      double gy = G (i + 1, j - 1) + 2 * G (i + 1, j) + G (i + 1, j + 1)
          - G (i - 1, j - 1) - 2 * G (i - 1, j) - G (i - 1, j + 1);
      acc += gx * gx + gy * gy;
    }
  out[REF_TENENGRAD] = acc / mn;

  acc = 0;
  for (i = 1; i < M - 1; i++)
    for (j = 1; j < N - 1; j++)
      acc += fabs (G (i, j + 1) + G (i, j - 1) - 2 * G (i, j)) +
          fabs (G (i + 1, j) + G (i - 1, j) - 2 * G (i, j));
  out[REF_LAPLACIAN] = acc / mn;

  acc = 0;
  for (i = 0; i < M - 1; i++)
    for (j = 0; j < N - 1; j++)
      acc += fabs (G (i, j) - G (i, j + 1)) + fabs (G (i, j) - G (i + 1, j));
  out[REF_SMD] = acc / mn;

  acc = 0;
  for (i = 0; i < M - 1; i++)
    for (j = 0; j < N - 1; j++)
      acc += fabs (G (i, j) - G (i, j + 1)) * fabs (G (i, j) - G (i + 1, j));
  out[REF_SMD2] = acc / mn;

  acc = 0;
  for (i = 1; i < M - 1; i++)
    for (j = 1; j < N - 1; j++) {
      double hi = G (i, j), lo = G (i, j);
      for (di = -1; di <= 1; di++)
        for (dj = -1; dj <= 1; dj++) {
          hi = fmax (hi, G (i + di, j + dj));
          lo = fmin (lo, G (i + di, j + dj));
        }
      acc += hi - lo;
    }
  out[REF_MAXMIN] = acc / mn;

  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++)
      hist[g[(size_t) i * N + j]] += 1;
  acc = 0;
  for (i = 0; i < bins; i++)
    if (hist[i] > 0)
      acc -= hist[i] / mn * log2 (hist[i] / mn);
  out[REF_ENTROPY] = acc;

  /* OpenCV: Laplacian (ksize 1) with BORDER_REFLECT_101, population var */
  mean = 0;
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) {
      double l = G (ref_reflect101 (i - 1, M), j) + G (ref_reflect101 (i + 1,
              M), j) + G (i, ref_reflect101 (j - 1, N)) + G (i,
          ref_reflect101 (j + 1, N)) - 4 * G (i, j);
      lap[(size_t) i * N + j] = l;
      mean += l;
    }
  mean /= mn;
  acc = 0;
  for (i = 0; i < M * N; i++)
    acc += (lap[i] - mean) * (lap[i] - mean);
  out[REF_LAPVAR] = acc / mn;

  acc = 0;
  for (i = 0; i < M; i++)
    for (j = 0; j < N - 2; j++)
      acc += (G (i, j + 2) - G (i, j)) * (G (i, j + 2) - G (i, j));
  out[REF_BRENNER] = acc / mn;

  free (lap);
  free (hist);
#undef G
}

/* Relative difference, with an absolute floor for values near zero. */
static inline int
ref_close (double a, double b, double rel)
{
  double scale = fmax (fabs (a), fabs (b));
  return fabs (a - b) <= rel * fmax (scale, 1.0);
}

#endif /* SHARPNESS_REFERENCE_H */
