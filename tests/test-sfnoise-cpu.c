/* CPU suite: cudasfproject's detector noise in the compute library
 * (cq-sfnoise.h): Philox4x32-10 against the Random123 known answers, the
 * statistics of the draws (mean and variance of Poisson + Gaussian, the
 * Poisson probabilities on both sides of the sampler's switch at λ = 10),
 * the key (seed, view, cell) and nothing else: the same frames whatever the
 * batching.
 *
 * Bounds: n independent draws of X = Poisson (λ) + σ·N(0, 1) have
 * E X = λ, Var X = λ + σ² =: V, and cumulants κ2 = V, κ4 = λ (Poisson's
 * cumulants are all λ, a Gaussian's above the second are 0), so the 4th
 * central moment is μ4 = κ4 + 3 κ2². The sample mean has standard error
 * √(V/n); the sample variance s² has Var s² = (μ4 − V²)/n + O(1/n²) =
 * (λ + 2V²)/n. Each check allows 5 standard errors (a two-sided 5.7e-7
 * chance for a correct sampler; the draws are fixed by the seed, so a pass
 * is a pass for good). A count of draws equal to k is binomial (n, p_k):
 * 5·√(n p_k (1 − p_k)) + 1 around n p_k.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <math.h>
#include <string.h>

#include "cq-philox.h"
#include "cq-sfnoise.h"
#include "cq-sfproject.h"
#include "cq-phantom.h"
#include "cq-test.h"

GST_START_TEST (test_philox_known_answers)
{
  /* Random123 1.09, kat_vectors: philox4x32 10 */
  static const uint32_t ctr[3][4] = { {0, 0, 0, 0},
  {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
  {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}
  };
  static const uint32_t key[3][2] = { {0, 0}, {0xffffffff, 0xffffffff},
  {0xa4093822, 0x299f31d0}
  };
  static const uint32_t want[3][4] = {
    {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
    {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
    {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}
  };
  unsigned i;

  for (i = 0; i < 3; i++) {
    uint32_t out[4];

    cq_philox4x32_10 (ctr[i], key[i], out);
    fail_unless (memcmp (out, want[i], sizeof (out)) == 0,
        "vector %u: %08x %08x %08x %08x", i, out[0], out[1], out[2], out[3]);
  }
}

GST_END_TEST;

#define N_DRAWS (1u << 19)

static void
check_moments (double lambda, int poisson, double sigma)
{
  CqSfNoise nz = { poisson, sigma, 1234, 77 };
  const double V = (poisson ? lambda : 0) + sigma * sigma;
  const double k4 = poisson ? lambda : 0;
  double sum = 0, sum2 = 0, mean, var;
  unsigned i;

  for (i = 0; i < N_DRAWS; i++) {
    double x = cq_sf_noise_counts (&nz, i, lambda) - lambda;

    sum += x;
    sum2 += x * x;
  }
  mean = sum / N_DRAWS;
  var = (sum2 - N_DRAWS * mean * mean) / (N_DRAWS - 1);
  fail_unless (fabs (mean) <= 5 * sqrt (V / N_DRAWS),
      "lambda %g poisson %d sigma %g: mean off by %g (5 SE %g)", lambda,
      poisson, sigma, mean, 5 * sqrt (V / N_DRAWS));
  fail_unless (fabs (var - V) <= 5 * sqrt ((k4 + 2 * V * V) / N_DRAWS),
      "lambda %g poisson %d sigma %g: variance %g, want %g +- %g", lambda,
      poisson, sigma, var, V, 5 * sqrt ((k4 + 2 * V * V) / N_DRAWS));
}

GST_START_TEST (test_moments)
{
  static const double lambdas[] = { 0.05, 0.7, 3, 9.99, 10, 10.5, 37, 400,
    5e4, 3e7
  };
  unsigned i;

  for (i = 0; i < G_N_ELEMENTS (lambdas); i++) {
    check_moments (lambdas[i], 1, 0);
    check_moments (lambdas[i], 1, 4.5);
  }
  check_moments (100, 0, 2);    /* electronic noise alone */
  check_moments (0, 0, 0.3);
}

GST_END_TEST;

/* P(X = k) of Poisson (λ), by logs. */
static double
pmf (double lambda, unsigned k)
{
  return exp (-lambda + k * log (lambda) - lgamma (k + 1.0));
}

static void
check_pmf (double lambda)
{
  CqSfNoise nz = { 1, 0, 99, 5 };
  unsigned hist[200], i, k;

  memset (hist, 0, sizeof (hist));
  for (i = 0; i < N_DRAWS; i++) {
    double x = cq_sf_noise_counts (&nz, i, lambda);

    fail_unless (x >= 0 && x == floor (x), "draw %g", x);
    hist[x < 199 ? (unsigned) x : 199]++;
  }
  for (k = 0; k < 199; k++) {
    double p = pmf (lambda, k), np = N_DRAWS * p;

    fail_unless (fabs (hist[k] - np) <= 5 * sqrt (np * (1 - p)) + 1,
        "lambda %g: %u draws of %u, expected %.1f", lambda, hist[k], k, np);
  }
}

GST_START_TEST (test_poisson_probabilities)
{
  check_pmf (0.4);
  check_pmf (6);                /* inversion */
  check_pmf (10);               /* PTRS from here */
  check_pmf (24);
}

GST_END_TEST;

GST_START_TEST (test_key)
{
  CqSfNoise a = { 1, 2.0, 5, 1000 }, b;
  double x = cq_sf_noise_counts (&a, 17, 800);
  unsigned same = 0, i;

  /* the key alone decides */
  fail_unless (cq_sf_noise_counts (&a, 17, 800) == x);
  /* another seed, view or cell draws anew (equal now and then: a draw
   * takes one of ~100 likely values; count the coincidences) */
  for (i = 0; i < 1000; i++) {
    b = a;
    b.seed = a.seed + 1 + i;
    same += cq_sf_noise_counts (&b, 17, 800) == x;
    b = a;
    b.view = a.view + 1 + i;
    same += cq_sf_noise_counts (&b, 17, 800) == x;
    /* the view's high word is in the key too */
    b = a;
    b.view = a.view + ((uint64_t) (i + 1) << 32);
    same += cq_sf_noise_counts (&b, 17, 800) == x;
    same += cq_sf_noise_counts (&a, 18 + i, 800) == x;
  }
  fail_unless (same < 4000 / 20, "%u of 4000 equal", same);
}

GST_END_TEST;

/* The mean the noisy path uses: the library's own exp within a few ulp of
 * libm's. */
GST_START_TEST (test_mean)
{
  CqSfPixels px = { 1, 50000, 0.02, 1, 65535, 2 };
  double worst = 0;
  float li;

  for (li = -20.0f; li < 40000.0f; li = li * 1.01f + 0.37f) {
    double want = 50000 * exp (-0.02 * (double) li);
    double got = cq_sf_noise_mean (&px, li);

    if (want > 1e-300)
      worst = MAX (worst, fabs (got - want) / want);
    else
      fail_unless (got < 1e-290);
  }
  fail_unless (worst < 1e-14, "relative error %g", worst);
}

GST_END_TEST;


/* Noisy frames of views [0, 2·views) (two rotations) projected in
 * batches of `batch` views: as the element does it. */
static guint8 *
noisy_frames (const CqSfGeometry * g, const double *vol, unsigned batch,
    unsigned bytes)
{
  const size_t cells = (size_t) g->nu * g->nv;
  const unsigned frames = 2 * g->n_views;
  CqSfPixels px = { 1, 20000, 0.05, 1, bytes == 1 ? 255 : 65535, bytes };
  CqSfNoise nz = { 1, 3.0, 42, 0 };
  double *proj = g_new (double, cells * batch);
  float *li = g_new (float, cells);
  guint8 *out = g_new0 (guint8, cells * bytes * frames);
  CqError err;
  unsigned f, first, n;
  size_t i;

  for (first = 0; first < frames; first += batch) {
    n = MIN (batch, frames - first);
    fail_unless (cq_sf_project_cpu (g, vol, first % g->n_views, n, proj, 0,
            &err) == CQ_OK, "%s", err.message);
    for (f = 0; f < n; f++) {
      for (i = 0; i < cells; i++)
        li[i] = (float) proj[f * cells + i];
      nz.view = first + f;
      fail_unless (cq_sf_pixels_cpu (li, g->nu, g->nv, &px, &nz,
              out + (first + f) * cells * bytes, g->nu * bytes,
              &err) == CQ_OK, "%s", err.message);
    }
  }
  g_free (proj);
  g_free (li);
  return out;
}

GST_START_TEST (test_batching)
{
  CqSfGeometry g = cq_test_seed_geometry (24, 12);
  const size_t n = (size_t) g.nx * g.ny * g.nz, frame = g.nu * g.nv;
  float *volf = g_new (float, n);
  double *vol = g_new (double, n);
  unsigned bytes, b;
  size_t i;

  cq_phantom_fill (CQ_PHANTOM_SHEPP_LOGAN, &g, volf);
  for (i = 0; i < n; i++)
    vol[i] = volf[i];
  for (bytes = 1; bytes <= 2; bytes++) {
    guint8 *ref = noisy_frames (&g, vol, 12, bytes);
    static const unsigned batches[] = { 1, 5, 16 };

    for (b = 0; b < G_N_ELEMENTS (batches); b++) {
      guint8 *got = noisy_frames (&g, vol, batches[b], bytes);

      fail_unless (memcmp (ref, got, 2 * g.n_views * frame * bytes) == 0,
          "%u bytes: batches of %u differ from batches of 12", bytes,
          batches[b]);
      g_free (got);
    }
    /* the second rotation's frames have noise of their own */
    fail_if (memcmp (ref, ref + g.n_views * frame * bytes, frame * bytes) == 0);
    g_free (ref);
  }
  g_free (vol);
  g_free (volf);
}

GST_END_TEST;

/* Noiseless: exactly the conversion of old (libm's exp), and a pitch
 * wider than the row is honoured. */
GST_START_TEST (test_pixels_noiseless)
{
  CqSfPixels px = { 1, 60000, 0.05, 1, 65535, 2 };
  float li[6] = { 0, 1, 10, 100, 1000, -5 };
  guint8 out[2 * 16];
  CqError err;
  unsigned u, v;

  memset (out, 0xab, sizeof (out));
  fail_unless (cq_sf_pixels_cpu (li, 3, 2, &px, NULL, out, 16, &err) == CQ_OK);
  for (v = 0; v < 2; v++)
    for (u = 0; u < 3; u++) {
      double want = MIN (floor (60000 * exp (-0.05 * li[v * 3 + u]) + 0.5),
          65535);

      fail_unless (out[v * 16 + 2 * u] + 256 * out[v * 16 + 2 * u + 1] == want);
    }
  fail_unless (out[6] == 0xab && out[15] == 0xab);
  /* bad layouts */
  px.bytes = 3;
  fail_unless (cq_sf_pixels_cpu (li, 3, 2, &px, NULL, out, 16,
          &err) == CQ_ERROR_INVALID);
  px.bytes = 2;
  fail_unless (cq_sf_pixels_cpu (li, 3, 2, &px, NULL, out, 5,
          &err) == CQ_ERROR_INVALID);
}

GST_END_TEST;

static Suite *
sfnoise_suite (void)
{
  TCase *tc;
  Suite *s = cq_test_suite ("sfnoise-cpu", &tc);

  tcase_add_test (tc, test_philox_known_answers);
  tcase_add_test (tc, test_moments);
  tcase_add_test (tc, test_poisson_probabilities);
  tcase_add_test (tc, test_key);
  tcase_add_test (tc, test_mean);
  tcase_add_test (tc, test_batching);
  tcase_add_test (tc, test_pixels_noiseless);
  return s;
}

GST_CHECK_MAIN (sfnoise);
