/* GPU suite: the device's detector noise equals the CPU's bit for bit.
 *   1. our C Philox4x32-10 = cuRAND's curand_Philox4x32_10 on the device
 *      (random counters and keys, and the counters the noise uses);
 *   2. noisy counts (doubles, not rounded) of means from 0 to 1e12 across
 *      the sampler's switch at 10, with and without electronic noise;
 *   3. noisy pixels (8 and 16 bit) of the same line integrals, through the
 *      device kernel and cq_sf_pixels_cpu;
 *   4. the element's path: a CqSfCuda projects (keep) and converts with
 *      noise on the device = its projections downloaded and converted on
 *      the CPU, with batches of 16 and of 5 views giving the same frames.
 * Exits 77 where no CUDA device is usable. `--quick`: fewer draws.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-philox.h"
#include "cq-phantom.h"
#include "cq-sfnoise.h"
#include "cq-sfproject.h"
#include "cq-test.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t
next32 (void)
{
  return (uint32_t) (cq_test_xorshift (&rng) >> 32);
}

static int
check_philox (unsigned n)
{
  uint32_t *ctr = malloc (16 * n), *key = malloc (8 * n);
  uint32_t *got = malloc (16 * n), *want = malloc (16 * n);
  CqError err;
  unsigned i, bad = 0;

  for (i = 0; i < n; i++) {
    int j;

    for (j = 0; j < 4; j++)
      ctr[4 * i + j] = next32 ();
    key[2 * i] = next32 ();
    key[2 * i + 1] = next32 ();
    if (i % 2) {
      /* as the noise counts: (block, cell, view lo, view hi), (seed, tag) */
      ctr[4 * i] = i % 7;
      ctr[4 * i + 3] = 0;
      key[2 * i + 1] = i % 4 ? 0x506f6973u : 0x47617573u;
    }
    cq_philox4x32_10 (ctr + 4 * i, key + 2 * i, want + 4 * i);
  }
  if (cq_philox_cuda_curand (0, ctr, key, n, got, &err) != CQ_OK) {
    printf ("FAIL philox: %s\n", err.message);
    return 1;
  }
  for (i = 0; i < 4 * n; i++)
    bad += got[i] != want[i];
  printf ("%s Philox4x32-10: C = curand_Philox4x32_10 on %u blocks (%u "
      "words differ)\n", bad ? "FAIL" : "ok", n, bad);
  free (ctr);
  free (key);
  free (got);
  free (want);
  return bad != 0;
}

static int
check_counts (unsigned n)
{
  static const struct
  {
    int poisson;
    double sigma;
  } kinds[] = { {1, 0}, {1, 3.25}, {0, 7}, };
  double *lambda = malloc (8 * n), *got = malloc (8 * n),
      *want = malloc (8 * n);
  CqError err;
  unsigned i, k, fails = 0;

  for (i = 0; i < n; i++) {
    /* log-uniform 1e-3 .. 1e12, with values at and around 10 */
    double u = next32 () / 4294967296.0;

    lambda[i] = i % 16 == 0 ? 10.0 : i % 16 == 1 ? nextafter (10.0, 0) :
        i % 16 == 2 ? 0.0 : pow (10.0, -3 + 15 * u);
  }
  for (k = 0; k < sizeof (kinds) / sizeof (kinds[0]); k++) {
    CqSfNoise nz = { kinds[k].poisson, kinds[k].sigma, 2024 + k,
      ((uint64_t) 3 << 32) + 11
    };
    unsigned bad = 0, first_bad = 0;

    if (cq_sf_noise_cuda_counts (0, &nz, 1000, lambda, n, got, &err) != CQ_OK) {
      printf ("FAIL counts: %s\n", err.message);
      return 1;
    }
    for (i = 0; i < n; i++) {
      want[i] = cq_sf_noise_counts (&nz, 1000 + i, lambda[i]);
      if (memcmp (&got[i], &want[i], sizeof (double)) != 0 && !bad++)
        first_bad = i;
    }
    printf ("%s noisy counts, poisson %d, sigma %g: %u means, %u differ",
        bad ? "FAIL" : "ok", kinds[k].poisson, kinds[k].sigma, n, bad);
    if (bad)
      printf (" (first: mean %.17g, GPU %.17g, CPU %.17g)",
          lambda[first_bad], got[first_bad], want[first_bad]);
    printf ("\n");
    fails += bad != 0;
  }
  free (lambda);
  free (got);
  free (want);
  return fails;
}

/* The seed's geometry, with a rectangular detector to catch a swapped
 * u/v. */
static CqSfGeometry
geometry (unsigned n, unsigned views)
{
  CqSfGeometry g = cq_test_seed_geometry (n, views);

  g.nu = n + 13;
  g.nv = n - 7;
  return g;
}

static int
check_pixels (void)
{
  CqSfGeometry g = geometry (48, 8);
  const size_t cells = (size_t) g.nu * g.nv;
  const size_t voxels = (size_t) g.nx * g.ny * g.nz;
  float *volf = malloc (4 * voxels), *li = malloc (4 * cells * g.n_views);
  double *vol = malloc (8 * voxels), *proj = malloc (8 * cells * g.n_views);
  unsigned char *a = malloc (2 * cells), *b = malloc (2 * cells);
  CqError err;
  int fails = 0;
  unsigned bytes, view;
  size_t i;

  cq_phantom_fill (CQ_PHANTOM_SHEPP_LOGAN, &g, volf);
  for (i = 0; i < voxels; i++)
    vol[i] = volf[i];
  if (cq_sf_project_cpu (&g, vol, 0, g.n_views, proj, 0, &err) != CQ_OK) {
    printf ("FAIL projection: %s\n", err.message);
    return 1;
  }
  for (i = 0; i < cells * g.n_views; i++)
    li[i] = (float) proj[i];
  for (bytes = 1; bytes <= 2; bytes++)
    for (view = 0; view < g.n_views; view++) {
      /* low counts behind the phantom (inversion) and high (PTRS) */
      CqSfPixels px = { 1, view % 2 ? 200 : 40000, view % 2 ? 0.1 : 0.02,
        1, bytes == 1 ? 255 : 65535, bytes
      };
      /* view 3: electronic noise alone */
      CqSfNoise nz = { view != 3, view == 3 ? 1.5 : view % 3 ? 2.5 : 0, 7,
        1000003 + view
      };

      if (cq_sf_noise_cuda_pixels_host (0, li + view * cells, g.nu, g.nv,
              &px, &nz, a, g.nu * bytes, &err) != CQ_OK
          || cq_sf_pixels_cpu (li + view * cells, g.nu, g.nv, &px, &nz, b,
              g.nu * bytes, &err) != CQ_OK) {
        printf ("FAIL pixels: %s\n", err.message);
        return 1;
      }
      if (memcmp (a, b, cells * bytes) != 0) {
        printf ("FAIL noisy pixels, %u bytes, view %u: GPU != CPU\n", bytes,
            view);
        fails++;
      }
    }
  if (!fails)
    printf ("ok noisy pixels of %ux%u Shepp-Logan views, 8 and 16 bit: GPU "
        "= CPU\n", g.nu, g.nv);
  free (volf);
  free (li);
  free (vol);
  free (proj);
  free (a);
  free (b);
  return fails;
}

/* Frames f of a stream of 2 rotations, views projected in batches of
 * `batch` by a CqSfCuda, converted with noise on the device (pixels) and,
 * from the same projections downloaded, on the CPU (cpu). */
static int
element_path (CqSfCuda * cu, const CqSfGeometry * g, unsigned batch,
    unsigned char *pixels, unsigned char *cpu)
{
  const size_t cells = (size_t) g->nu * g->nv;
  const unsigned frames = 2 * g->n_views;
  float *li = malloc (4 * cells * batch);
  CqSfPixels px = { 1, 30000, 0.03, 1, 65535, 2 };
  CqError err;
  unsigned first, n, f;

  for (first = 0; first < frames; first += n) {
    unsigned view = first % g->n_views;

    n = batch < g->n_views - view ? batch : g->n_views - view;
    if (cq_sf_cuda_project_keep (cu, view, n, &err) != CQ_OK)
      goto failed;
    for (f = 0; f < n; f++) {
      CqSfNoise nz = { 1, 1.5, 99, first + f };

      if (cq_sf_cuda_pixels_noise (cu, f, &px, &nz,
              pixels + (first + f) * cells * 2, g->nu * 2, 0, &err) != CQ_OK)
        goto failed;
    }
    if (cq_sf_cuda_project (cu, view, n, li, &err) != CQ_OK)
      goto failed;
    for (f = 0; f < n; f++) {
      CqSfNoise nz = { 1, 1.5, 99, first + f };

      if (cq_sf_pixels_cpu (li + f * cells, g->nu, g->nv, &px, &nz,
              cpu + (first + f) * cells * 2, g->nu * 2, &err) != CQ_OK)
        goto failed;
    }
  }
  free (li);
  return 0;

failed:
  printf ("FAIL element path: %s\n", err.message);
  free (li);
  return 1;
}

static int
check_element_path (void)
{
  CqSfGeometry g = geometry (40, 24);
  const size_t frame = (size_t) g.nu * g.nv * 2, n = 2 * g.n_views * frame;
  const size_t voxels = (size_t) 40 * 40 * 40;
  float *vol = malloc (4 * voxels);
  unsigned char *a16 = malloc (n), *c16 = malloc (n), *a5 = malloc (n),
      *c5 = malloc (n);
  CqError err;
  CqSfCuda *cu = cq_sf_cuda_new (0, &g, &err);
  int fails = 0;

  if (!cu) {
    printf ("FAIL projector: %s\n", err.message);
    return 1;
  }
  cq_phantom_fill (CQ_PHANTOM_SHEPP_LOGAN, &g, vol);
  if (cq_sf_cuda_set_volume (cu, vol, &err) != CQ_OK
      || element_path (cu, &g, 16, a16, c16)
      || element_path (cu, &g, 5, a5, c5)) {
    cq_sf_cuda_free (cu);
    return 1;
  }
  if (memcmp (a16, c16, n) || memcmp (a5, c5, n)) {
    printf ("FAIL element path: device noise != CPU noise of the same "
        "projections\n");
    fails++;
  }
  if (memcmp (a16, a5, n)) {
    printf ("FAIL element path: batches of 16 and of 5 views differ\n");
    fails++;
  }
  if (!memcmp (a16, a16 + g.n_views * frame, frame)) {
    printf ("FAIL element path: rotation 2 repeats rotation 1's noise\n");
    fails++;
  }
  if (!fails)
    printf ("ok element path: %u frames, device = CPU, batches of 16 = "
        "batches of 5\n", 2 * g.n_views);
  cq_sf_cuda_free (cu);
  free (vol);
  free (a16);
  free (c16);
  free (a5);
  free (c5);
  return fails;
}

int
main (int argc, char **argv)
{
  const int quick = argc > 1 && strcmp (argv[1], "--quick") == 0;
  int fails = cq_test_skip_without_cuda ();

  if (fails)
    return fails;
  fails += check_philox (quick ? 4096 : 1 << 20);
  fails += check_counts (quick ? 4096 : 1 << 21);
  fails += check_pixels ();
  fails += check_element_path ();
  return fails ? 1 : 0;
}
