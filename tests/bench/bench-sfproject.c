/* SF projector benchmark: prints figures, asserts nothing.
 *
 * GPU time of the projector and the backprojector for all views with the
 * data on the GPU (CUDA events), in ms and voxel-views per second: the
 * seed's case (256³, 64 views of 256² over 2π) and 512³ with 360 views of
 * 512²; the double CPU implementation on the seed's case for scale.
 *
 *   bench-sfproject [--iterations N] [--no-cpu]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cq-sfproject.h"

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
main (int argc, char **argv)
{
  static const unsigned cases[][3] = { {256, 64, 256}, {512, 360, 512} };
  unsigned iterations = 5, c;
  int no_cpu = 0, i;

  for (i = 1; i < argc; i++)
    if (strcmp (argv[i], "--iterations") == 0 && i + 1 < argc)
      iterations = atoi (argv[++i]);
    else if (strcmp (argv[i], "--no-cpu") == 0)
      no_cpu = 1;
  printf ("| volume | views x detector | projector ms | backprojector ms | "
      "Gvoxel-views/s (proj / back) | CPU proj s | CPU back s |\n");
  printf ("|---|---|---|---|---|---|---|\n");
  for (c = 0; c < 2; c++) {
    const unsigned n = cases[c][0], views = cases[c][1], det = cases[c][2];
    CqSfGeometry g;
    CqSfCuda *cu;
    CqError err;
    float *vol;
    double ms_p = 0, ms_b = 0, cpu_p = 0, cpu_b = 0, vv;
    size_t k, nvox = (size_t) n * n * n;

    memset (&g, 0, sizeof (g));
    g.nx = g.ny = g.nz = n;
    g.dx = g.dz = 256.0 / n;
    g.nu = g.nv = det;
    g.du = g.dv = 512.0 / det;
    g.sod = 1024;
    g.sdd = 2048;
    g.n_views = views;
    g.direction = 1;
    vol = malloc (nvox * sizeof (float));
    for (k = 0; k < nvox; k++)
      vol[k] = (float) ((k * 2654435761u) % 1000) / 1000.0f;
    cu = cq_sf_cuda_new (0, &g, &err);
    if (!cu) {
      printf ("no CUDA: %s\n", err.message);
      free (vol);
      return 0;
    }
    cq_sf_cuda_set_volume (cu, vol, &err);
    if (cq_sf_cuda_time (cu, 0, iterations, &ms_p, &err) != CQ_OK
        || cq_sf_cuda_time (cu, 1, iterations, &ms_b, &err) != CQ_OK) {
      printf ("failed: %s\n", err.message);
      return 1;
    }
    cq_sf_cuda_free (cu);
    if (!no_cpu && c == 0) {
      double *dv = malloc (nvox * sizeof (double));
      double *dp = malloc ((size_t) det * det * views * sizeof (double));
      double t0;

      for (k = 0; k < nvox; k++)
        dv[k] = vol[k];
      t0 = now_s ();
      cq_sf_project_cpu (&g, dv, 0, views, dp, 0, &err);
      cpu_p = now_s () - t0;
      t0 = now_s ();
      cq_sf_backproject_cpu (&g, dp, 0, views, dv, 0, &err);
      cpu_b = now_s () - t0;
      free (dv);
      free (dp);
    }
    vv = (double) nvox *views;
    printf ("| %u^3 | %u x %u^2 | %.2f | %.2f | %.0f / %.0f | %.2f | %.2f |\n",
        n, views, det, ms_p, ms_b, vv / (ms_p * 1e6), vv / (ms_b * 1e6),
        cpu_p, cpu_b);
    fflush (stdout);
    free (vol);
  }
  return 0;
}
