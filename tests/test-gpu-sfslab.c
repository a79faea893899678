/* GPU suite: the CUDA SF pair split over devices and streamed (issue 12:
 * the projector through bands of columns, the backprojector through
 * z-slabs), against the same pair holding everything on one device.
 *
 * - Streamed (a device-memory limit below what the resident layout takes),
 *   with limits chosen for each plan of cq-sfproject-plan.h: the projector
 *   holding the whole volume (identical to resident, same kernel) or in
 *   bands (their shares summed in float: NRMSE <= 1e-6 and every cell
 *   within 2e-5 of the largest, docs/sf-projector.md derives the bound);
 *   the backprojector in one slab or double-buffered slabs with all views
 *   (identical, voxel for voxel) or in view batches (within float
 *   summation: NRMSE <= 1e-6); a call on a part of the views equal to the
 *   same views of a whole call; the kept batch's pixels within one level;
 *   the dot test of the streamed pair with signed data (discrepancy
 *   within 1e-6 of the dot product's spread, cq_test_signed_dot).
 *   Geometries: asymmetric with offsets (window kernels), the seed's, wide
 *   footprints (four F1 registers), tall slices on fine rows (the walking
 *   backprojector, four rows a projector lane), narrow voxels (the walking
 *   projector), field-of-view mask, helical orbit.
 * - Two workers on one device ("0,0": the multi-device code on one GPU)
 *   and, where two GPUs are usable, on devices 0,1 and 1,0 (else it says
 *   it skipped them): projections and backprojections identical to one
 *   device's, resident and streamed; kept views' pixels into host and
 *   device memory identical; the same with copies between devices
 *   turned off (CQ_SF_PEER_COPIES=0: each uploads whole arrays).
 * - Errors: a limit that fits nothing is CQ_ERROR_OUT_OF_MEMORY naming
 *   the sizes; timing and device-resident access refuse a streaming
 *   projector.
 *
 * Exits 77 where no CUDA device is usable. `--quick` runs the small
 * geometries only.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq-cuda.h"
#include "cq-sfproject.h"
#include "cq-sfproject-device.h"
#include "cq-sfproject-plan.h"
#include "cq-test.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static double
uniform (void)
{
  return cq_test_uniform (&rng);
}

/* The phantom (cq_test_ellipsoid: non-negative), or signed noise. */
static void
fill_volume (const CqSfGeometry * g, float *vol, int is_signed)
{
  unsigned i, j, k;

  for (k = 0; k < g->nz; k++)
    for (j = 0; j < g->ny; j++)
      for (i = 0; i < g->nx; i++) {
        size_t at = ((size_t) k * g->ny + j) * g->nx + i;

        if (is_signed)
          vol[at] = (float) (2 * uniform () - 1);
        else
          vol[at] = (float) cq_test_ellipsoid (g, i, j, k, &rng);
      }
}

typedef struct
{
  size_t differing;             /* cells whose floats differ (==) */
  double nrmse, worst;          /* worst: max |a − b| / max |b| */
} Diff;

static Diff
diff (const float *a, const float *b, size_t n)
{
  Diff d = { 0, 0, 0 };
  double e = 0, r = 0, most = 0, worst = 0;
  size_t i;

  for (i = 0; i < n; i++) {
    double x = (double) a[i] - b[i];

    d.differing += a[i] != b[i];
    e += x * x;
    r += (double) b[i] * b[i];
    most = fmax (most, fabs (b[i]));
    worst = fmax (worst, fabs (x));
  }
  d.nrmse = r > 0 ? sqrt (e / r) : sqrt (e);
  d.worst = most > 0 ? worst / most : worst;
  return d;
}

/* A group of the first n_dev of ids. */
static CqSfCuda *
open_devices (const CqSfGeometry * g, const int *ids, unsigned n_dev,
    size_t limit, CqError * err)
{
  CqCudaTarget t[2] = { CQ_CUDA_TARGET_DEVICE (ids[0]),
    CQ_CUDA_TARGET_DEVICE (ids[1])
  };
  CqSfCudaOptions o = { limit };

  return cq_sf_cuda_new_multi (t, n_dev, g, &o, err);
}

/* Device 0 alone. */
static CqSfCuda *
open_group (const CqSfGeometry * g, size_t limit, CqError * err)
{
  static const int zero[2] = { 0, 0 };

  return open_devices (g, zero, 1, limit, err);
}

static unsigned
views_max (const CqSfGeometry * g)
{
  return g->n_views < 2048 ? g->n_views : 2048;
}

/* The plans a streamed device makes with `limit` (what the test expects
 * to exercise; the library's own choice, from the same functions). */
static void
plans (const CqSfGeometry * g, size_t limit, CqSfProjPlan * pp,
    CqSfBackPlan * bp, int *back_ok)
{
  const size_t fixed = cq_sf_stream_fixed_bytes (g);
  const size_t avail = limit > fixed ? limit - fixed : 0;

  memset (pp, 0, sizeof (*pp));
  memset (bp, 0, sizeof (*bp));
  cq_sf_plan_project (g, avail, views_max (g), pp);
  *back_ok = cq_sf_plan_backproject (g, avail, views_max (g), 0, g->nz, bp);
}

/* Streamed (limit) against resident, both directions, one device. */
static int
check_streamed (const char *name, const CqSfGeometry * g, size_t limit)
{
  const size_t nvox = (size_t) g->nx * g->ny * g->nz;
  const size_t nview = (size_t) g->nu * g->nv;
  const unsigned nv = views_max (g);
  const size_t ncell = nview * nv;
  float *vol = malloc (nvox * 4), *pr = malloc (ncell * 4),
      *ps = malloc (ncell * 4), *part = malloc (ncell * 4),
      *y = malloc (ncell * 4), *br = malloc (nvox * 4), *bs = malloc (nvox * 4);
  unsigned short *pix_r = malloc (nview * 2), *pix_s = malloc (nview * 2);
  CqSfCuda *res = NULL, *str = NULL;
  CqSfProjPlan pp;
  CqSfBackPlan bp;
  CqSfPixels px = { 1, 50000.0, 0.02, 1.0, 65535.0, 2 };
  Diff dp, db;
  CqError err;
  double coupling, signed_sigmas = 0;
  char plan[1024];
  unsigned first, count, keep, v, worst_level = 0;
  size_t i;
  int back_ok, fail = 0, proj_exact, back_exact;

  plans (g, limit, &pp, &bp, &back_ok);
  proj_exact = pp.band == g->ny;
  back_exact = back_ok && bp.views == nv;
  fill_volume (g, vol, 0);
  for (i = 0; i < ncell; i++)
    y[i] = (float) uniform ();
  res = cq_sf_cuda_new (0, g, &err);
  str = res ? open_group (g, limit, &err) : NULL;
  if (!str || cq_sf_cuda_set_volume (res, vol, &err) != CQ_OK
      || cq_sf_cuda_set_volume (str, vol, &err) != CQ_OK
      || cq_sf_cuda_project (res, 0, nv, pr, &err) != CQ_OK
      || cq_sf_cuda_project (str, 0, nv, ps, &err) != CQ_OK
      || cq_sf_cuda_backproject (res, y, 0, nv, br, &err) != CQ_OK
      || (back_ok && cq_sf_cuda_backproject (str, y, 0, nv, bs,
              &err) != CQ_OK)) {
    printf ("FAIL %s: %s\n", name, err.message);
    fail = 1;
    goto out;
  }
  cq_sf_cuda_describe (str, plan, sizeof (plan));
  if (!strstr (plan, "streamed")) {
    printf ("FAIL %s: a limit of %zu bytes did not stream: %s\n", name,
        limit, plan);
    fail = 1;
    goto out;
  }
  dp = diff (ps, pr, ncell);
  memset (&db, 0, sizeof (db));
  if (back_ok)
    db = diff (bs, br, nvox);
  /* a part of the views: the same floats as in the whole call */
  first = nv / 3;
  count = nv - first < 7 ? nv - first : 7;
  if (cq_sf_cuda_project (str, first, count, part, &err) != CQ_OK) {
    printf ("FAIL %s: %s\n", name, err.message);
    fail = 1;
    goto out;
  }
  if (memcmp (part, ps + first * nview, count * nview * 4) != 0) {
    printf ("FAIL %s: views %u.. alone differ from the whole call's\n",
        name, first);
    fail = 1;
  }
  /* the kept batch's pixels (what the element shows) */
  keep = cq_sf_cuda_keep_views (str);
  keep = keep < nv ? keep : nv;
  if (cq_sf_cuda_project_keep (res, 0, keep, &err) != CQ_OK
      || cq_sf_cuda_project_keep (str, 0, keep, &err) != CQ_OK) {
    printf ("FAIL %s: keep: %s\n", name, err.message);
    fail = 1;
    goto out;
  }
  for (v = 0; v < keep; v++) {
    if (cq_sf_cuda_pixels (res, v, &px, pix_r, g->nu * 2, 0, &err) != CQ_OK
        || cq_sf_cuda_pixels (str, v, &px, pix_s, g->nu * 2, 0,
            &err) != CQ_OK) {
      printf ("FAIL %s: pixels: %s\n", name, err.message);
      fail = 1;
      goto out;
    }
    for (i = 0; i < nview; i++) {
      int d = (int) pix_r[i] - (int) pix_s[i];
      unsigned a = (unsigned) (d < 0 ? -d : d);

      worst_level = a > worst_level ? a : worst_level;
    }
  }
  /* the streamed pair's dot test, signed data */
  fill_volume (g, vol, 1);
  for (i = 0; i < ncell; i++)
    y[i] = (float) (2 * uniform () - 1);
  coupling = 1;
  if (back_ok) {
    if (cq_sf_cuda_set_volume (str, vol, &err) != CQ_OK
        || cq_sf_cuda_project (str, 0, nv, ps, &err) != CQ_OK
        || cq_sf_cuda_backproject (str, y, 0, nv, bs, &err) != CQ_OK) {
      printf ("FAIL %s: %s\n", name, err.message);
      fail = 1;
      goto out;
    }
    signed_sigmas = cq_test_signed_dot (ps, y, ncell, vol, bs, nvox,
        &coupling);
  }
  fail |= proj_exact ? dp.differing != 0 : !(dp.nrmse <= 1e-6
      && dp.worst <= 2e-5);
  fail |= back_exact ? db.differing != 0 : !(db.nrmse <= 1e-6
      && db.worst <= 2e-5);
  fail |= worst_level > (proj_exact ? 0u : 1u);
  fail |= fabs (signed_sigmas) > 1e-6;
  printf ("%s %s, limit %zu: projector bands of %u (%u views a pass): %zu "
      "cells differ, NRMSE %.3g, worst %.3g; backprojector %s: %zu voxels "
      "differ, NRMSE %.3g, worst %.3g; kept pixels within %u; coupling "
      "[-1,1) %.9f (discrepancy %.2g sigma)\n", fail ? "FAIL" : "ok", name,
      limit, pp.band, pp.batch, dp.differing, dp.nrmse, dp.worst,
      back_ok ? (bp.views < nv ? "view batches" : bp.dbl ?
          "double-buffered slabs" : "one slab") : "none fits", db.differing,
      db.nrmse, db.worst, worst_level, coupling, signed_sigmas);
  if (back_ok)
    printf ("   (backprojector slabs of %u, bands of %u rows, %u views a "
        "launch)\n", bp.slab, bp.rows, bp.views);
out:
  cq_sf_cuda_free (res);
  cq_sf_cuda_free (str);
  free (vol);
  free (pr);
  free (ps);
  free (part);
  free (y);
  free (br);
  free (bs);
  free (pix_r);
  free (pix_s);
  return fail;
}

/* Whether every streamed backprojector plan of one device and of two
 * (their zones) takes all views a launch: then all compute each voxel
 * as the resident one does, and agree bit for bit. */
static int
back_plans_exact (const CqSfGeometry * g, size_t limit)
{
  const size_t fixed = cq_sf_stream_fixed_bytes (g);
  const size_t avail = limit > fixed ? limit - fixed : 0;
  CqSfBackPlan bp;
  unsigned w, za, zb;

  if (!cq_sf_plan_backproject (g, avail, views_max (g), 0, g->nz, &bp)
      || bp.views < views_max (g))
    return 0;
  for (w = 0; w < 2; w++) {
    cq_sf_zone (g->nz, w, 2, &za, &zb);
    if (!cq_sf_plan_backproject (g, avail, views_max (g), za, zb, &bp)
        || (zb > za && bp.views < views_max (g)))
      return 0;
  }
  return 1;
}

/* Two workers, ids[0] and ids[1] ("0,0": the multi-device code on one
 * GPU; "0,1", "1,0": two GPUs), against ids[0] alone: the same floats
 * both ways (the backprojections within float summation where a zone's
 * plan takes view batches), the same pixels into host and device memory
 * (a device frame is on the group's first device; the second worker's
 * frames reach it through pinned host memory). limit 0: resident. */
static int
check_two_workers (const char *name, const CqSfGeometry * g, size_t limit,
    const int *ids)
{
  const size_t nvox = (size_t) g->nx * g->ny * g->nz;
  const size_t nview = (size_t) g->nu * g->nv;
  const unsigned nv = views_max (g);
  const size_t ncell = nview * nv;
  float *vol = malloc (nvox * 4), *p1 = malloc (ncell * 4),
      *p2 = malloc (ncell * 4), *y = malloc (ncell * 4),
      *b1 = malloc (nvox * 4), *b2 = malloc (nvox * 4);
  unsigned char *h1 = malloc (nview * 2), *h2 = malloc (nview * 2),
      *h3 = malloc (nview * 2);
  CqSfPixels px = { 1, 40000.0, 0.02, 1.0, 65535.0, 2 };
  CqSfCuda *one = NULL, *two = NULL;
  void *dev = NULL;
  CqError err;
  unsigned keep, v, pixel_diff = 0;
  size_t i;
  int fail = 0, back = 1, exact = !limit || back_plans_exact (g, limit);
  Diff db;

  fill_volume (g, vol, 0);
  for (i = 0; i < ncell; i++)
    y[i] = (float) uniform ();
  one = open_devices (g, ids, 1, limit, &err);
  two = one ? open_devices (g, ids, 2, limit, &err) : NULL;
  dev = two ? cq_cuda_malloc (ids[0], nview * 2, &err) : NULL;
  if (limit) {
    CqSfProjPlan pp;
    CqSfBackPlan bp;

    plans (g, limit, &pp, &bp, &back);
  }
  if (!dev || cq_sf_cuda_n_devices (two) != 2
      || cq_sf_cuda_set_volume (one, vol, &err) != CQ_OK
      || cq_sf_cuda_set_volume (two, vol, &err) != CQ_OK
      || cq_sf_cuda_project (one, 0, nv, p1, &err) != CQ_OK
      || cq_sf_cuda_project (two, 0, nv, p2, &err) != CQ_OK
      || (back && (cq_sf_cuda_backproject (one, y, 0, nv, b1, &err) != CQ_OK
              || cq_sf_cuda_backproject (two, y, 0, nv, b2,
                  &err) != CQ_OK))) {
    printf ("FAIL %s: %s\n", name, err.message);
    fail = 1;
    goto out;
  }
  fail |= memcmp (p1, p2, ncell * 4) != 0;
  memset (&db, 0, sizeof (db));
  if (back)
    db = diff (b2, b1, nvox);
  fail |= exact ? db.differing != 0 : !(db.nrmse <= 1e-6 && db.worst <= 2e-5);
  /* what both can keep: two streaming workers hold twice one's batch */
  keep = cq_sf_cuda_keep_views (two);
  keep = keep < cq_sf_cuda_keep_views (one) ? keep :
      cq_sf_cuda_keep_views (one);
  keep = keep < nv ? keep : nv;
  if (cq_sf_cuda_project_keep (one, 0, keep, &err) != CQ_OK
      || cq_sf_cuda_project_keep (two, 0, keep, &err) != CQ_OK) {
    printf ("FAIL %s: keep: %s\n", name, err.message);
    fail = 1;
    goto out;
  }
  for (v = 0; v < keep; v++) {
    if (cq_sf_cuda_pixels (one, v, &px, h1, g->nu * 2, 0, &err) != CQ_OK
        || cq_sf_cuda_pixels (two, v, &px, h2, g->nu * 2, 0, &err) != CQ_OK
        || cq_sf_cuda_pixels (two, v, &px, dev, g->nu * 2, 1,
            &err) != CQ_OK) {
      printf ("FAIL %s: pixels of view %u: %s\n", name, v, err.message);
      fail = 1;
      goto out;
    }
    /* the device frame back */
    if (cq_cuda_download (ids[0], h3, dev, nview * 2, &err) != CQ_OK) {
      printf ("FAIL %s: %s\n", name, err.message);
      fail = 1;
      goto out;
    }
    pixel_diff += memcmp (h1, h2, nview * 2) != 0;
    pixel_diff += memcmp (h1, h3, nview * 2) != 0;
  }
  fail |= pixel_diff != 0;
  printf ("%s %s, devices %d,%d against %d alone (%s): projections %s, "
      "backprojections: %zu voxels differ (%s), NRMSE %.3g, %u kept "
      "views' pixels (host and device) %s\n", fail ? "FAIL" : "ok", name,
      ids[0], ids[1], ids[0], limit ? "streamed" : "resident",
      memcmp (p1, p2, ncell * 4) ? "differ" : "identical", db.differing,
      !back ? "no plan fits" : exact ? "identical expected" :
      "view batches: within float summation", db.nrmse, keep,
      pixel_diff ? "differ" : "identical");
out:
  cq_cuda_free (ids[0], dev);
  cq_sf_cuda_free (one);
  cq_sf_cuda_free (two);
  free (vol);
  free (p1);
  free (p2);
  free (y);
  free (b1);
  free (b2);
  free (h1);
  free (h2);
  free (h3);
  return fail;
}

/* What a streaming projector refuses, and a limit nothing fits. */
static int
check_errors (const CqSfGeometry * g)
{
  CqSfCuda *cu;
  CqError err;
  double ms;
  int fail = 0;

  cu = open_group (g, 1000, &err);
  if (cu || err.status != CQ_ERROR_OUT_OF_MEMORY
      || !strstr (err.message, "needs") || !strstr (err.message, "KiB")) {
    printf ("FAIL a 1000-byte limit: %s\n", cu ? "opened" : err.message);
    fail = 1;
  } else {
    printf ("ok a 1000-byte limit: %s\n", err.message);
  }
  cq_sf_cuda_free (cu);
  cu = open_group (g, 200000, &err);
  if (!cu) {
    printf ("FAIL a 200000-byte limit: %s\n", err.message);
    return 1;
  }
  if (cq_sf_cuda_time (cu, 0, 1, &ms, &err) != CQ_ERROR_INVALID
      || cq_sf_cuda_set_volume_device (cu, NULL, &err) != CQ_ERROR_INVALID
      || cq_sf_cuda_backproject_keep (cu, 0, 1, &err) != CQ_ERROR_INVALID) {
    printf ("FAIL streaming: timing or device access not refused\n");
    fail = 1;
  } else {
    printf ("ok streaming refuses timing and device access: %s\n",
        err.message);
  }
  cq_sf_cuda_free (cu);
  return fail;
}

/* A limit that fits the projector's whole volume and all views (plan A)
 * but not the resident layout. */
static size_t
limit_whole (const CqSfGeometry * g)
{
  return cq_sf_stream_fixed_bytes (g) + (size_t) g->nx * g->ny * 4 *
      (g->nz + 1) + (size_t) g->nu * g->nv * 4 * views_max (g);
}

int
main (int argc, char **argv)
{
  int quick = argc > 1 && strcmp (argv[1], "--quick") == 0;
  static const int on_zero[2] = { 0, 0 }, pair[2] = { 0, 1 },
      swapped[2] = { 1, 0 };
  CqSfGeometry g = cq_test_asymmetric_geometry ();
  CqError err;
  int fails = 0, skip, two_gpus;

  if ((skip = cq_test_skip_without_cuda ()) != 0)
    return skip;
  two_gpus = cq_cuda_device_count (&err) >= 2;
  /* the asymmetric case: the whole volume held (identical), slabs and
   * double-buffered slabs, view batches */
  fails += check_streamed ("asymmetric 40x36x28, 45 views of 72x50", &g,
      limit_whole (&g));
  fails += check_streamed ("asymmetric", &g, 200000);
  fails += check_streamed ("asymmetric", &g, 400000);
  g.fov_mask = 1;
  fails += check_streamed ("asymmetric, fov mask", &g, 200000);
  g.fov_mask = 0;
  fails += check_two_workers ("asymmetric", &g, 0, on_zero);
  fails += check_two_workers ("asymmetric", &g, 200000, on_zero);
  /* without copies between devices: each uploads whole arrays */
  setenv ("CQ_SF_PEER_COPIES", "0", 1);
  fails += check_two_workers ("asymmetric, no peer copies", &g, 0, on_zero);
  if (two_gpus)
    fails += check_two_workers ("asymmetric, no peer copies", &g, 0, pair);
  unsetenv ("CQ_SF_PEER_COPIES");
  if (two_gpus) {
    fails += check_two_workers ("asymmetric", &g, 0, pair);
    fails += check_two_workers ("asymmetric", &g, 0, swapped);
    fails += check_two_workers ("asymmetric", &g, 200000, pair);
  } else {
    printf ("SKIP two GPUs: %d usable CUDA device (the checks on devices "
        "0,1 and 1,0 need two)\n", cq_cuda_device_count (&err));
  }
  fails += check_errors (&g);
  /* helical */
  g = cq_test_seed_geometry (48, 36);
  g.helical_pitch = 30;
  fails += check_streamed ("helical 48^3, pitch 30, 36 views of 48^2", &g,
      250000);
  if (!quick) {
    g = cq_test_seed_geometry (128, 64);
    fails += check_streamed ("seed 128^3, 64 views of 128^2", &g,
        (size_t) 6 << 20);
    fails += check_streamed ("seed 128^3", &g, (size_t) 2 << 20);
    fails += check_two_workers ("seed 128^3", &g, 0, on_zero);
    fails += check_two_workers ("seed 128^3", &g, (size_t) 6 << 20, on_zero);
    if (two_gpus) {
      fails += check_two_workers ("seed 128^3", &g, 0, pair);
      fails += check_two_workers ("seed 128^3", &g, (size_t) 6 << 20, pair);
    }
    /* wide footprints: four F1 registers */
    g = cq_test_wide_geometry ();
    fails += check_streamed ("wide footprints 48x40x36 (4 mm), 30 views of "
        "150x130", &g, 1000000);
    /* tall slices on fine rows (the walking backprojector), four rows a
     * projector lane */
    g = cq_test_cone_geometry (64, 64, 96, 1.0, 0.5, 96, 300, 2.0, 0.4, 256,
        512, 40);
    fails += check_streamed ("tall slices 64x64x96, 40 views of 96x300", &g,
        (size_t) 3 << 20);
    fails += check_streamed ("tall slices", &g, (size_t) 3 << 19);
    /* narrow voxels: the walking projector */
    g = cq_test_narrow_geometry ();
    fails += check_streamed ("narrow voxels 160x160x20, 24 views of 24x16",
        &g, 600000);
    /* the seed's case, 256³: slabs of a realistic size */
    g = cq_test_seed_geometry (256, 64);
    fails += check_streamed ("seed 256^3, 64 views of 256^2", &g,
        (size_t) 64 << 20);
    /* z-zones of whole 32-slice blocks, 128 slices a GPU */
    if (two_gpus)
      fails += check_two_workers ("seed 256^3", &g, 0, pair);
  }
  return fails ? 1 : 0;
}
