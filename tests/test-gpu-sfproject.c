/* GPU suite: the CUDA SF-TR/A2 projector and backprojector (float32)
 * against the double CPU implementation (NRMSE <= 1e-5 each) and the dot
 * tests of the GPU pair (coupling within 1 +- 1e-6 for data in [0, 1);
 * for data in [-1, 1) the discrepancy within 1e-6 of the dot product's
 * spread, cq_test_signed_dot), on an asymmetric geometry and on the
 * seed's case (256³, 64 views of 256²), with the field-of-view mask off and on (masked columns
 * exactly zero in both directions), and on helical orbits (a later
 * rotation's views, the volume leaving the rows). Exits 77 where no CUDA
 * device is usable. `--quick` runs the small geometry only.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-sfproject.h"
#include "cq-test.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double
uniform (void)
{
  return cq_test_uniform (&rng);
}

static double
signed_uniform (void)
{
  return 2 * uniform () - 1;
}

static double
nrmse (const float *got, const double *want, size_t n)
{
  double e = 0, r = 0;
  size_t i;

  for (i = 0; i < n; i++) {
    double d = got[i] - want[i];
    e += d * d;
    r += want[i] * want[i];
  }
  return sqrt (e / r);
}

/* The phantom (cq_test_ellipsoid) over the whole volume. */
static void
phantom (const CqSfGeometry * g, double *vol)
{
  unsigned i, j, k;

  for (k = 0; k < g->nz; k++)
    for (j = 0; j < g->ny; j++)
      for (i = 0; i < g->nx; i++)
        vol[((size_t) k * g->ny + j) * g->nx + i] =
            cq_test_ellipsoid (g, i, j, k, &rng);
}

/* Views [first, first + n_views) of the geometry (first past n_views: a
 * helical orbit's later views). */
static int
check (const char *name, const CqSfGeometry * g, unsigned first)
{
  const size_t nvox = (size_t) g->nx * g->ny * g->nz;
  const size_t ncell = (size_t) g->nu * g->nv * g->n_views;
  double *vol = malloc (nvox * sizeof (double));
  double *cpu_proj = malloc (ncell * sizeof (double));
  double *cpu_back = malloc (nvox * sizeof (double));
  double *pd = malloc (ncell * sizeof (double));
  float *fvol = malloc (nvox * sizeof (float));
  float *gpu_proj = malloc (ncell * sizeof (float));
  float *gpu_back = malloc (nvox * sizeof (float));
  float *pf = malloc (ncell * sizeof (float));
  double e_proj, e_back, lhs = 0, rhs = 0, coupling, coupling_signed = 0;
  double signed_sigmas = 0;
  CqSfCuda *cu;
  CqError err;
  size_t n;
  unsigned i, j, k, masked = 0, leaks = 0;
  int fail = 0;

  phantom (g, vol);
  for (n = 0; n < nvox; n++)
    fvol[n] = (float) vol[n];
  for (n = 0; n < nvox; n++)
    vol[n] = fvol[n];           /* both sides see the same values */
  for (n = 0; n < ncell; n++)
    pf[n] = (float) uniform ();
  for (n = 0; n < ncell; n++)
    pd[n] = pf[n];

  cu = cq_sf_cuda_new (0, g, &err);
  if (!cu || cq_sf_cuda_set_volume (cu, fvol, &err) != CQ_OK
      || cq_sf_cuda_project (cu, first, g->n_views, gpu_proj, &err) != CQ_OK
      || cq_sf_cuda_backproject (cu, pf, first, g->n_views, gpu_back,
          &err) != CQ_OK
      || cq_sf_project_cpu (g, vol, first, g->n_views, cpu_proj, 0,
          &err) != CQ_OK
      || cq_sf_backproject_cpu (g, pd, first, g->n_views, cpu_back, 0,
          &err) != CQ_OK) {
    printf ("FAIL %s: %s\n", name, err.message);
    fail = 1;
    goto out;
  }
  e_proj = nrmse (gpu_proj, cpu_proj, ncell);
  e_back = nrmse (gpu_back, cpu_back, nvox);
  for (n = 0; n < ncell; n++)
    lhs += (double) gpu_proj[n] * pf[n];
  for (n = 0; n < nvox; n++)
    rhs += (double) fvol[n] * gpu_back[n];
  coupling = lhs / rhs;
  /* masked columns: nothing backprojected into them */
  for (k = 0; k < g->nz; k++)
    for (j = 0; j < g->ny; j++)
      for (i = 0; i < g->nx; i++)
        if (!cq_sf_column_in_fov (g, i, j)) {
          masked++;
          leaks += gpu_back[((size_t) k * g->ny + j) * g->nx + i] != 0.0f;
        }
  /* the dot test again with signed data: x, y uniform in [-1, 1) */
  for (n = 0; n < nvox; n++)
    fvol[n] = (float) signed_uniform ();
  for (n = 0; n < ncell; n++)
    pf[n] = (float) signed_uniform ();
  if (cq_sf_cuda_set_volume (cu, fvol, &err) != CQ_OK
      || cq_sf_cuda_project (cu, first, g->n_views, gpu_proj, &err) != CQ_OK
      || cq_sf_cuda_backproject (cu, pf, first, g->n_views, gpu_back,
          &err) != CQ_OK) {
    printf ("FAIL %s: %s\n", name, err.message);
    fail = 1;
    goto out;
  }
  signed_sigmas = cq_test_signed_dot (gpu_proj, pf, ncell, fvol, gpu_back,
      nvox, &coupling_signed);
  fail = !(e_proj <= 1e-5 && e_back <= 1e-5 && fabs (coupling - 1) <= 1e-6
      && fabs (signed_sigmas) <= 1e-6 && leaks == 0);
  printf ("%s %s%s: projector NRMSE %.3g, backprojector NRMSE %.3g, "
      "coupling %.9f, signed %.9f (discrepancy %.2g sigma)",
      fail ? "FAIL" : "ok", name, g->fov_mask ? " (fov mask)" : "", e_proj,
      e_back, coupling, coupling_signed, signed_sigmas);
  if (g->helical_pitch > 0)
    printf (", helical %g mm a rotation, views %u to %u (z %g to %g mm)",
        g->helical_pitch, first, first + g->n_views - 1,
        cq_sf_source_z (g, first), cq_sf_source_z (g, first + g->n_views - 1));
  if (g->fov_mask)
    printf (", radius %.3f mm, %u masked voxels, %u non-zero", 
        cq_sf_fov_radius (g), masked, leaks);
  printf ("\n");
out:
  cq_sf_cuda_free (cu);
  free (vol);
  free (cpu_proj);
  free (cpu_back);
  free (pd);
  free (fvol);
  free (gpu_proj);
  free (gpu_back);
  free (pf);
  return fail;
}

/* check () of the first views with the field-of-view mask off, then on. */
static int
check_both_masks (const char *name, const CqSfGeometry * g)
{
  CqSfGeometry masked = *g;
  int fails = check (name, g, 0);

  masked.fov_mask = 1;
  return fails + check (name, &masked, 0);
}

/* Two contexts of different geometries used in turn give each its own
 * projections: neither sees the other's geometry or views. */
static int
check_two_contexts (const CqSfGeometry * a)
{
  CqSfGeometry b = *a;
  const size_t na = (size_t) a->nx * a->ny * a->nz;
  const size_t ca = (size_t) a->nu * a->nv * a->n_views;
  float *vol = malloc (na * sizeof (float));
  float *first = malloc (ca * sizeof (float));
  float *again = malloc (ca * sizeof (float));
  float *other = malloc ((size_t) b.nu * b.nv * 9 * sizeof (float));
  CqSfCuda *ca_ctx, *cb_ctx;
  CqError err;
  size_t n;
  int fail = 0;

  b.n_views = 9;
  b.sod = 150;
  b.start_angle = 1.1;
  for (n = 0; n < na; n++)
    vol[n] = (float) uniform ();
  ca_ctx = cq_sf_cuda_new (0, a, &err);
  fail |= !ca_ctx || cq_sf_cuda_set_volume (ca_ctx, vol, &err) != CQ_OK
      || cq_sf_cuda_project (ca_ctx, 0, a->n_views, first, &err) != CQ_OK;
  cb_ctx = fail ? NULL : cq_sf_cuda_new (0, &b, &err);
  fail |= !cb_ctx || cq_sf_cuda_set_volume (cb_ctx, vol, &err) != CQ_OK
      || cq_sf_cuda_project (cb_ctx, 0, 9, other, &err) != CQ_OK
      || cq_sf_cuda_project (ca_ctx, 0, a->n_views, again, &err) != CQ_OK;
  if (fail)
    printf ("FAIL two contexts: %s\n", err.message);
  else if (memcmp (first, again, ca * sizeof (float)) != 0) {
    printf ("FAIL two contexts: the first context's projections changed\n");
    fail = 1;
  } else {
    printf ("ok two contexts of different geometries\n");
  }
  cq_sf_cuda_free (ca_ctx);
  cq_sf_cuda_free (cb_ctx);
  free (vol);
  free (first);
  free (again);
  free (other);
  return fail;
}

int
main (int argc, char **argv)
{
  int quick = argc > 1 && strcmp (argv[1], "--quick") == 0;
  CqSfGeometry g;
  CqError err;
  int fails = 0;

  g = cq_test_asymmetric_geometry ();
  if (cq_sf_geometry_check (&g, &err) != CQ_OK) {
    printf ("FAIL geometry: %s\n", err.message);
    return 1;
  }
  {
    CqSfCuda *probe = cq_sf_cuda_new (0, &g, &err);

    if (!probe) {
      printf ("SKIP: %s\n", err.message);
      return err.status == CQ_ERROR_NO_CUDA ? 77 : 1;
    }
    cq_sf_cuda_free (probe);
  }
  fails += check_both_masks ("asymmetric 40x36x28, 45 views of 72x50", &g);
  /* helical: 12 mm a rotation, the second rotation's views (z 10.7 to
   * 22.4 mm): the rows climb past the volume's top (z 18.8 mm), from 39
   * to 21 of the 50 seeing it */
  g.helical_pitch = 12;
  fails += check ("asymmetric 40x36x28, helical, views 40 to 84", &g, 40);
  g.helical_pitch = 0;
  fails += check_two_contexts (&g);
  if (!quick) {
    g = cq_test_seed_geometry (256, 64);
    fails += check_both_masks ("seed 256^3, 64 views of 256^2", &g);
    /* helical, 160 mm a rotation: views 64 to 127, z 160 to 317.5 mm: the
     * volume (z up to 128 mm) in 100 of the 256 rows at first, in none
     * from about view 110 on */
    g.helical_pitch = 160;
    fails += check ("seed 256^3, helical, views 64 to 127", &g, 64);
    /* 3 cells a footprint and more: voxels larger than the cells */
    g = cq_test_wide_geometry ();
    fails += check ("wide footprints 48x40x36 (4 mm), 30 views of 150x130 "
        "(1.5 mm)", &g, 0);
    /* many voxel columns a projector strip (several staging passes) */
    g = cq_test_narrow_geometry ();
    fails += check ("narrow voxels 160x160x20 (0.25 mm), 24 views of 24x16 "
        "(4 mm)", &g, 0);
  }
  return fails ? 1 : 0;
}
