/* GPU suite: SIRT on CUDA (float32) against SIRT on the CPU (double) from
 * the same line integrals: after each of 8 iterations the two volumes
 * agree to a relative L2 difference ≤ 1e-4 (the projector pair's float32
 * NRMSE is ~1e-6 a pass, test-gpu-sfproject; SIRT's update is a
 * contraction in the C⁻¹ norm, so the difference grows at most by about
 * one pass's error an iteration: 8 × 2 × 1e-6 ≪ 1e-4), with and without
 * the non-negativity clamp, on the seed's geometry scaled to 40³ and an
 * asymmetric one. Exits 77 where no CUDA device is usable.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-phantom.h"
#include "cq-sfproject.h"
#include "cq-sirt.h"
#include "cq-test.h"

static int
check (const char *name, const CqSfGeometry * g, int nonnegative)
{
  const size_t voxels = (size_t) g->nx * g->ny * g->nz;
  const size_t cells = (size_t) g->nu * g->nv * g->n_views;
  CqSirtParams p = { 1.0, nonnegative };
  float *phantom = malloc (4 * voxels), *a = malloc (4 * voxels),
      *b = malloc (4 * voxels), *proj = malloc (4 * cells);
  double *vol = malloc (8 * voxels), *pd = malloc (8 * cells), worst = 0;
  CqSirtCpu *cpu = NULL;
  CqSirtCuda *cuda = NULL;
  CqError err;
  unsigned k;
  size_t i;
  int fails = 0;

  cq_phantom_fill (CQ_PHANTOM_SHEPP_LOGAN, g, phantom);
  for (i = 0; i < voxels; i++)
    vol[i] = phantom[i];
  if (cq_sf_project_cpu (g, vol, 0, g->n_views, pd, 0, &err) != CQ_OK)
    goto failed;
  for (i = 0; i < cells; i++)
    proj[i] = (float) pd[i];
  cpu = cq_sirt_cpu_new (g, proj, &p, 0, &err);
  if (!cpu)
    goto failed;
  cuda = cq_sirt_cuda_new (0, g, proj, &p, &err);
  if (!cuda)
    goto failed;
  for (k = 1; k <= 8; k++) {
    double e = 0, r = 0, ep = 0, rp = 0, d;

    if (cq_sirt_cpu_iterate (cpu, 1, &err) != CQ_OK
        || cq_sirt_cuda_iterate (cuda, 1, &err) != CQ_OK
        || cq_sirt_cuda_volume (cuda, b, &err) != CQ_OK)
      goto failed;
    cq_sirt_cpu_volume (cpu, a);
    for (i = 0; i < voxels; i++) {
      e += ((double) b[i] - a[i]) * ((double) b[i] - a[i]);
      r += (double) a[i] * a[i];
      ep += ((double) a[i] - phantom[i]) * ((double) a[i] - phantom[i]);
      rp += (double) phantom[i] * phantom[i];
    }
    d = sqrt (e / r);
    worst = d > worst ? d : worst;
    if (k == 8)
      printf ("%s %s%s: CUDA vs CPU relative L2 %.2e (worst of 8 "
          "iterations %.2e), CPU vs phantom %.4f\n", d <= 1e-4 &&
          worst <= 1e-4 ? "ok" : "FAIL", name, nonnegative ?
          ", non-negative" : "", d, worst, sqrt (ep / rp));
  }
  fails = worst > 1e-4;
  goto out;

failed:
  printf ("FAIL %s: %s\n", name, err.message);
  fails = 1;
out:
  cq_sirt_cpu_free (cpu);
  cq_sirt_cuda_free (cuda);
  free (phantom);
  free (a);
  free (b);
  free (proj);
  free (vol);
  free (pd);
  return fails;
}

int
main (void)
{
  CqSfGeometry g;
  int fails = cq_test_skip_without_cuda ();

  if (fails)
    return fails;
  g = cq_test_seed_geometry (40, 32);
  fails += check ("seed geometry 40^3, 32 views of 40^2", &g, 1);
  fails += check ("seed geometry 40^3, 32 views of 40^2", &g, 0);
  /* the seed's R and D at 40³ */
  g = cq_test_cone_geometry (36, 30, 20, 1.0, 1.5, 60, 28, 1.7, 2.3, 160, 320,
      27);
  g.offset_u = 1.3;
  g.start_angle = 0.4;
  g.direction = -1;
  fails += check ("asymmetric 36x30x20, 27 views of 60x28", &g, 1);
  return fails ? 1 : 0;
}
