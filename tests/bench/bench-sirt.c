/* SIRT benchmark: prints figures, asserts nothing.
 *
 * One SIRT iteration (x → texture, A x, residual, Aᵀ, update; everything
 * on the GPU) at 256³ with 256 views of 256² (the seed's geometry: voxels
 * of 1 mm, cells of 2 mm, R 1024 mm, D 2048 mm), relaxation 0.9 and
 * non-negativity as LEAP's SIRT, timed with CUDA events: the mean of
 * --iterations updates after a warm-up, and the set-up (R = 1/A1,
 * C = 1/Aᵀ1) apart. Data: the Shepp-Logan phantom's line integrals
 * (projected on the GPU). tests/bench/sirt_leap.py runs LEAP's SIRT on the
 * same problem and puts both side by side.
 *
 *   bench-sirt [--size N] [--views V] [--iterations K] [--cpu]
 *     --cpu: the double CPU version instead (wall clock; small sizes only)
 *
 * Last line: "| N^3 | V x N^2 | setup ms | iteration ms |".
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-phantom.h"
#include "cq-sfproject.h"
#include "cq-sirt.h"
#include "../cq-test.h"

int
main (int argc, char **argv)
{
  unsigned n = 256, views = 256, iterations = 5;
  int cpu = 0, i;
  CqSfGeometry g;
  CqSirtParams p = { 0.9, 1 };
  CqError err;
  float *vol, *proj;
  double setup_ms = 0, ms = 0;
  char dev[128] = "the CPU";

  for (i = 1; i < argc; i++)
    if (strcmp (argv[i], "--size") == 0 && i + 1 < argc)
      n = (unsigned) atoi (argv[++i]);
    else if (strcmp (argv[i], "--views") == 0 && i + 1 < argc)
      views = (unsigned) atoi (argv[++i]);
    else if (strcmp (argv[i], "--iterations") == 0 && i + 1 < argc)
      iterations = (unsigned) atoi (argv[++i]);
    else if (strcmp (argv[i], "--cpu") == 0)
      cpu = 1;
  if (iterations < 1)
    iterations = 1;
  g = cq_test_seed_geometry (n, views);
  vol = malloc (sizeof (float) * n * n * n);
  proj = malloc (sizeof (float) * n * n * views);
  if (!vol || !proj) {
    fprintf (stderr, "out of memory\n");
    return 1;
  }
  cq_phantom_fill (CQ_PHANTOM_SHEPP_LOGAN, &g, vol);
  if (!cpu) {
    CqSfCuda *cu = cq_sf_cuda_new (0, &g, &err);
    CqSirtCuda *s;

    if (!cu || cq_sf_cuda_set_volume (cu, vol, &err) != CQ_OK
        || cq_sf_cuda_project (cu, 0, views, proj, &err) != CQ_OK) {
      fprintf (stderr, "bench-sirt: %s\n", err.message);
      return 1;
    }
    cq_sf_cuda_free (cu);
    cq_cuda_device_describe (0, dev, sizeof (dev), &err);
    s = cq_sirt_cuda_new (0, &g, proj, &p, &err);
    if (!s || cq_sirt_cuda_time (s, iterations, &setup_ms, &ms, &err) != CQ_OK) {
      fprintf (stderr, "bench-sirt: %s\n", err.message);
      return 1;
    }
    cq_sirt_cuda_free (s);
  } else {
    double *v = malloc (sizeof (double) * n * n * n);
    double *pd = malloc (sizeof (double) * n * n * views), t0;
    size_t k;
    CqSirtCpu *s;

    for (k = 0; k < (size_t) n * n * n; k++)
      v[k] = vol[k];
    if (cq_sf_project_cpu (&g, v, 0, views, pd, 0, &err) != CQ_OK) {
      fprintf (stderr, "bench-sirt: %s\n", err.message);
      return 1;
    }
    for (k = 0; k < (size_t) n * n * views; k++)
      proj[k] = (float) pd[k];
    t0 = cq_test_now_s ();
    s = cq_sirt_cpu_new (&g, proj, &p, 0, &err);
    setup_ms = (cq_test_now_s () - t0) * 1e3;
    t0 = cq_test_now_s ();
    if (!s || cq_sirt_cpu_iterate (s, iterations, &err) != CQ_OK) {
      fprintf (stderr, "bench-sirt: %s\n", err.message);
      return 1;
    }
    ms = (cq_test_now_s () - t0) * 1e3 / iterations;
    cq_sirt_cpu_free (s);
    free (v);
    free (pd);
  }
  printf ("SIRT (relaxation 0.9, non-negative) on %s, mean of %u "
      "iterations\n", dev, iterations);
  printf ("| volume | views x detector | setup ms | iteration ms |\n");
  printf ("| %u^3 | %u x %u^2 | %.2f | %.2f |\n", n, views, n, setup_ms, ms);
  free (vol);
  free (proj);
  return 0;
}
