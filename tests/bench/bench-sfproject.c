/* SF projector benchmark: prints figures, asserts nothing.
 *
 * GPU time of the projector and the backprojector for all views with the
 * data on the GPU (CUDA events), in ms and voxel-views per second, with the
 * field-of-view mask off and on, and the coupling <Ax, y> / <x, Aᵀy> of
 * the GPU pair for data uniform in [0, 1) and in [-1, 1) (double sums).
 * Case A: 256³ (1 mm), 64 views of 256² (2 mm); case B: 512³ (0.5 mm),
 * 360 views of 512² (1 mm); R 1024, D 2048 (../shared/peers/leap_bench.py
 * times LLNL LEAP on the same geometry). The double CPU implementation
 * runs on case A for scale.
 *
 *   bench-sfproject [--iterations N] [--cases A,B] [--no-cpu]
 *                   [--no-coupling] [--json]
 *
 * The mask-off rows keep the format leap_bench.py --ours reads.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-sfproject.h"
#include "../cq-test.h"

typedef struct
{
  const char *name;
  unsigned n, views, det;
  int run;
  double proj_ms, back_ms, proj_fov_ms, back_fov_ms;
  double coupling, coupling_signed;
  double cpu_proj_s, cpu_back_s;
} Case;

static void
geometry (const Case * c, CqSfGeometry * g)
{
  memset (g, 0, sizeof (*g));
  g->nx = g->ny = g->nz = c->n;
  g->dx = g->dz = 256.0 / c->n;
  g->nu = g->nv = c->det;
  g->du = g->dv = 512.0 / c->det;
  g->sod = 1024;
  g->sdd = 2048;
  g->n_views = c->views;
  g->direction = 1;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static float
uniform (int is_signed)
{
  double u;

  u = (cq_test_xorshift (&rng_state) >> 11) * (1.0 / 9007199254740992.0);
  return (float) (is_signed ? 2 * u - 1 : u);
}

/* <A x, y> / <x, Aᵀ y> for x, y uniform in [0, 1) or [-1, 1). */
static int
coupling (CqSfCuda * cu, const CqSfGeometry * g, int is_signed,
    double *ratio, CqError * err)
{
  const size_t nvox = (size_t) g->nx * g->ny * g->nz;
  const size_t ncell = (size_t) g->nu * g->nv * g->n_views;
  float *x = malloc (nvox * sizeof (float)), *aty =
      malloc (nvox * sizeof (float));
  float *y = malloc (ncell * sizeof (float)), *ax =
      malloc (ncell * sizeof (float));
  double lhs = 0, rhs = 0;
  size_t k;
  int ok = x && aty && y && ax;

  if (ok) {
    for (k = 0; k < nvox; k++)
      x[k] = uniform (is_signed);
    for (k = 0; k < ncell; k++)
      y[k] = uniform (is_signed);
    ok = cq_sf_cuda_set_volume (cu, x, err) == CQ_OK
        && cq_sf_cuda_project (cu, 0, g->n_views, ax, err) == CQ_OK
        && cq_sf_cuda_backproject (cu, y, 0, g->n_views, aty, err) == CQ_OK;
  }
  if (ok) {
    for (k = 0; k < ncell; k++)
      lhs += (double) ax[k] * y[k];
    for (k = 0; k < nvox; k++)
      rhs += (double) x[k] * aty[k];
    *ratio = lhs / rhs;
  }
  free (x);
  free (aty);
  free (y);
  free (ax);
  return ok;
}

static int
time_pair (const CqSfGeometry * g, const float *vol, unsigned iterations,
    double *proj_ms, double *back_ms, CqError * err)
{
  CqSfCuda *cu = cq_sf_cuda_new (0, g, err);
  int ok = cu && cq_sf_cuda_set_volume (cu, vol, err) == CQ_OK
      && cq_sf_cuda_time (cu, 0, iterations, proj_ms, err) == CQ_OK
      && cq_sf_cuda_time (cu, 1, iterations, back_ms, err) == CQ_OK;

  cq_sf_cuda_free (cu);
  return ok;
}

static int
run_case (Case * c, unsigned iterations, int cpu, int with_coupling,
    CqError * err)
{
  const size_t nvox = (size_t) c->n * c->n * c->n;
  CqSfGeometry g;
  float *vol = malloc (nvox * sizeof (float));
  size_t k;
  int ok;

  geometry (c, &g);
  for (k = 0; k < nvox; k++)
    vol[k] = (float) ((k * 2654435761u) % 1000) / 1000.0f;
  ok = time_pair (&g, vol, iterations, &c->proj_ms, &c->back_ms, err);
  g.fov_mask = 1;
  ok = ok && time_pair (&g, vol, iterations, &c->proj_fov_ms,
      &c->back_fov_ms, err);
  g.fov_mask = 0;
  if (ok && with_coupling) {
    CqSfCuda *cu = cq_sf_cuda_new (0, &g, err);

    ok = cu && coupling (cu, &g, 0, &c->coupling, err)
        && coupling (cu, &g, 1, &c->coupling_signed, err);
    cq_sf_cuda_free (cu);
  }
  if (ok && cpu) {
    double *dv = malloc (nvox * sizeof (double));
    double *dp = malloc ((size_t) c->det * c->det * c->views *
        sizeof (double));
    double t0;

    for (k = 0; k < nvox; k++)
      dv[k] = vol[k];
    t0 = cq_test_now_s ();
    cq_sf_project_cpu (&g, dv, 0, c->views, dp, 0, err);
    c->cpu_proj_s = cq_test_now_s () - t0;
    t0 = cq_test_now_s ();
    cq_sf_backproject_cpu (&g, dp, 0, c->views, dv, 0, err);
    c->cpu_back_s = cq_test_now_s () - t0;
    free (dv);
    free (dp);
  }
  free (vol);
  return ok;
}

int
main (int argc, char **argv)
{
  Case cases[] = {
    {.name = "A",.n = 256,.views = 64,.det = 256,.run = 1},
    {.name = "B",.n = 512,.views = 360,.det = 512,.run = 1},
  };
  unsigned iterations = 5, c;
  int cpu = 1, with_coupling = 1, json = 0, i;
  char device[256] = "";
  CqError err;

  for (i = 1; i < argc; i++)
    if (strcmp (argv[i], "--iterations") == 0 && i + 1 < argc)
      iterations = atoi (argv[++i]);
    else if (strcmp (argv[i], "--cases") == 0 && i + 1 < argc) {
      const char *list = argv[++i];

      for (c = 0; c < 2; c++)
        cases[c].run = strstr (list, cases[c].name) != NULL;
    } else if (strcmp (argv[i], "--no-cpu") == 0)
      cpu = 0;
    else if (strcmp (argv[i], "--no-coupling") == 0)
      with_coupling = 0;
    else if (strcmp (argv[i], "--json") == 0)
      json = 1;
    else {
      fprintf (stderr, "usage: bench-sfproject [--iterations N] "
          "[--cases A,B] [--no-cpu] [--no-coupling] [--json]\n");
      return 2;
    }
  if (iterations == 0)
    iterations = 1;
  if (cq_cuda_device_describe (0, device, sizeof (device), &err) != CQ_OK) {
    printf ("no CUDA: %s\n", err.message);
    return 0;
  }
  printf ("%s, mean of %u runs after a warm-up\n\n", device,
      iterations);
  printf ("| volume | views x detector | projector ms | backprojector ms | "
      "Gvoxel-views/s (proj / back) | coupling [0,1) | coupling [-1,1) | "
      "CPU proj s | CPU back s |\n");
  printf ("|---|---|---|---|---|---|---|---|---|\n");
  for (c = 0; c < 2; c++) {
    Case *k = &cases[c];
    double vv = (double) k->n * k->n * k->n * k->views;

    if (!k->run)
      continue;
    if (!run_case (k, iterations, cpu && c == 0, with_coupling, &err)) {
      printf ("failed: %s\n", err.message);
      return 1;
    }
    printf ("| %u^3 | %u x %u^2 | %.3f | %.3f | %.1f / %.1f | %.9f | "
        "%.9f | %.2f | %.2f |\n", k->n, k->views, k->det, k->proj_ms,
        k->back_ms, vv / (k->proj_ms * 1e6), vv / (k->back_ms * 1e6),
        k->coupling, k->coupling_signed, k->cpu_proj_s, k->cpu_back_s);
    printf ("| %u^3 fov-mask | %u x %u^2 | %.3f | %.3f | %.1f / %.1f | | | "
        "| |\n", k->n, k->views, k->det, k->proj_fov_ms, k->back_fov_ms,
        vv / (k->proj_fov_ms * 1e6), vv / (k->back_fov_ms * 1e6));
    fflush (stdout);
  }
  if (json) {
    printf ("{\"device\": \"%s\", \"iterations\": %u, \"cases\": {", device,
        iterations);
    for (c = 0, i = 0; c < 2; c++) {
      Case *k = &cases[c];

      if (!k->run)
        continue;
      printf ("%s\"%s\": {\"n\": %u, \"views\": %u, \"det\": %u, "
          "\"project_ms\": %.4f, \"backproject_ms\": %.4f, "
          "\"project_fov_ms\": %.4f, \"backproject_fov_ms\": %.4f, "
          "\"coupling\": %.12f, \"coupling_signed\": %.12f}",
          i++ ? ", " : "", k->name, k->n, k->views, k->det, k->proj_ms,
          k->back_ms, k->proj_fov_ms, k->back_fov_ms, k->coupling,
          k->coupling_signed);
    }
    printf ("}}\n");
  }
  return 0;
}
