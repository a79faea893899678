/* cudasfproject-sirt: a rotation of the 3D Shepp-Logan phantom through
 * the SF projector (noise optional), reconstructed by SIRT with the
 * matched backprojector; per iteration the NRMSE and the SSIM of the
 * central slices against the phantom; the central axial slice as a PNG.
 *
 *   cudasfproject-sirt [--size N] [--views V] [--iterations K]
 *       [--backend cpu|cuda] [--noise] [--photons I0] [--seed S]
 *       [--relaxation L] [--window LO:HI] [-o slice.png]
 *
 * stdout: one line per iteration, "iteration K nrmse X ssim Y";
 * stderr: the set-up and the time taken. Exit status 3: --backend cuda and
 * no usable CUDA device; 2: bad arguments; 1: a failure.
 *
 * Geometry: the seed's scaled to N (N³ voxels of 1 mm, N² detector cells
 * of 2 mm, source 4N mm from the axis, detector 8N mm from the source),
 * V views over 360°. The phantom is the Yu-Ye-Wang 3D Shepp-Logan
 * (values 0 to 1).
 * Noise (--noise): counts I0·e^(−μ L) with μ chosen so that the densest
 * ray keeps e^−2 of the photons, Poisson draws from the library's
 * generator keyed by (seed, view, cell) as cudasfproject's, back to line
 * integrals −ln (max (n, ½) / I0) / μ.
 * NRMSE = ‖x − f‖₂ / ‖f‖₂ over the three central slices (axial z = N/2,
 * coronal y = N/2, sagittal x = N/2); SSIM: the gauss11 window of
 * cq-ssim.h (Wang et al. 2004) on the slices quantised to 16 bits over
 * [0, phantom maximum], the mean over all windows of the three slices.
 * SIRT: relaxation 1 (default), non-negativity on, starts at 0.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cq-common.h"
#include "cq-phantom.h"
#include "cq-sfnoise.h"
#include "cq-sfproject.h"
#include "cq-sirt.h"
#include "cq-ssim.h"

typedef struct
{
  unsigned size, views, iterations;
  int cuda, noise;
  double photons, relaxation, lo, hi;
  unsigned seed;
  const char *png;
} Options;

static double
now (void)
{
  struct timespec t;

  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int
usage (const char *why)
{
  fprintf (stderr, "cudasfproject-sirt: %s\nusage: cudasfproject-sirt "
      "[--size N] [--views V] [--iterations K] [--backend cpu|cuda] "
      "[--noise] [--photons I0] [--seed S] [--relaxation L] "
      "[--window LO:HI] [-o slice.png]\n", why);
  return 2;
}

/* The three central slices of vol, one after the other (axial nx·ny,
 * coronal nx·nz, sagittal ny·nz). */
static void
central_slices (const CqSfGeometry * g, const float *vol, float *out)
{
  const unsigned nx = g->nx, ny = g->ny, nz = g->nz;
  unsigned i, j, k;
  size_t n = 0;

  for (j = 0; j < ny; j++)
    for (i = 0; i < nx; i++)
      out[n++] = vol[((size_t) (nz / 2) * ny + j) * nx + i];
  for (k = 0; k < nz; k++)
    for (i = 0; i < nx; i++)
      out[n++] = vol[((size_t) k * ny + ny / 2) * nx + i];
  for (k = 0; k < nz; k++)
    for (j = 0; j < ny; j++)
      out[n++] = vol[((size_t) k * ny + j) * nx + nx / 2];
}

/* 16-bit little-endian samples of v over [0, peak]. */
static void
quantise (const float *v, size_t n, double peak, unsigned char *out)
{
  size_t i;

  for (i = 0; i < n; i++) {
    double x = floor (v[i] / peak * 65535.0 + 0.5);
    unsigned w = x <= 0 ? 0 : x >= 65535 ? 65535 : (unsigned) x;

    out[2 * i] = (unsigned char) (w & 0xff);
    out[2 * i + 1] = (unsigned char) (w >> 8);
  }
}

typedef struct
{
  CqSsimCpu *ssim[3];
  CqSsimPlane plane[3];
  float *ref, *got;             /* central slices */
  unsigned char *ref16, *got16;
  size_t n;                     /* samples of the three slices */
  double peak;
} Scores;

static int
scores_init (Scores * s, const CqSfGeometry * g, const float *phantom,
    double peak, CqError * err)
{
  const unsigned w[3] = { g->nx, g->nx, g->ny }, h[3] = { g->ny, g->nz,
    g->nz
  };
  unsigned i;

  memset (s, 0, sizeof (*s));
  s->peak = peak;
  s->n = (size_t) g->nx * g->ny + (size_t) g->nx * g->nz +
      (size_t) g->ny * g->nz;
  s->ref = malloc (sizeof (float) * s->n);
  s->got = malloc (sizeof (float) * s->n);
  s->ref16 = malloc (2 * s->n);
  s->got16 = malloc (2 * s->n);
  if (!s->ref || !s->got || !s->ref16 || !s->got16) {
    cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY, "out of memory");
    return -1;
  }
  central_slices (g, phantom, s->ref);
  quantise (s->ref, s->n, peak, s->ref16);
  for (i = 0; i < 3; i++) {
    CqSsimPlane *p = &s->plane[i];

    memset (p, 0, sizeof (*p));
    p->width = w[i];
    p->height = h[i];
    p->layout.kind = CQ_LAYOUT_GRAY16;
    p->layout.depth = 16;
    p->sample_stride = 2;
    s->ssim[i] = cq_ssim_cpu_new (CQ_SSIM_GAUSS11, p, 1, 0, err);
    if (!s->ssim[i])
      return -1;
  }
  return 0;
}

static int
scores_measure (Scores * s, const CqSfGeometry * g, const float *vol,
    double *nrmse, double *ssim, CqError * err)
{
  double e = 0, r = 0, sum = 0;
  uint64_t windows = 0;
  size_t i, at = 0;

  central_slices (g, vol, s->got);
  for (i = 0; i < s->n; i++) {
    double d = (double) s->got[i] - s->ref[i];

    e += d * d;
    r += (double) s->ref[i] * s->ref[i];
  }
  *nrmse = sqrt (e / r);
  quantise (s->got, s->n, s->peak, s->got16);
  for (i = 0; i < 3; i++) {
    const void *a = s->ref16 + 2 * at, *b = s->got16 + 2 * at;
    const size_t stride = 2 * (size_t) s->plane[i].width;
    CqSsimPlaneSums sums;

    if (cq_ssim_cpu_measure (s->ssim[i], &a, &stride, &b, &stride, &sums,
            err) != CQ_OK)
      return -1;
    sum += sums.ssim_sum;
    windows += sums.windows;
    at += (size_t) s->plane[i].width * s->plane[i].height;
  }
  *ssim = sum / windows;
  return 0;
}

static void
scores_clear (Scores * s)
{
  unsigned i;

  for (i = 0; i < 3; i++)
    if (s->ssim[i])
      cq_ssim_cpu_free (s->ssim[i]);
  free (s->ref);
  free (s->got);
  free (s->ref16);
  free (s->got16);
}

/* The central axial slice, +y up, gray over [lo, hi]. */
static int
write_png (const char *path, const CqSfGeometry * g, const float *vol,
    double lo, double hi)
{
  png_image img;
  unsigned char *pix = malloc ((size_t) g->nx * g->ny);
  unsigned i, j;
  int ok;

  if (!pix)
    return 0;
  for (j = 0; j < g->ny; j++)
    for (i = 0; i < g->nx; i++) {
      double v = vol[((size_t) (g->nz / 2) * g->ny + j) * g->nx + i];
      double x = floor ((v - lo) / (hi - lo) * 255.0 + 0.5);

      pix[(size_t) (g->ny - 1 - j) * g->nx + i] =
          (unsigned char) (x <= 0 ? 0 : x >= 255 ? 255 : x);
    }
  memset (&img, 0, sizeof (img));
  img.version = PNG_IMAGE_VERSION;
  img.width = g->nx;
  img.height = g->ny;
  img.format = PNG_FORMAT_GRAY;
  ok = png_image_write_to_file (&img, path, 0, pix, (png_int_32) g->nx, NULL);
  if (!ok)
    fprintf (stderr, "cudasfproject-sirt: cannot write %s: %s\n", path,
        img.message);
  free (pix);
  return ok;
}

/* Line integrals of every view into proj (floats). */
static int
simulate (const Options * o, const CqSfGeometry * g, const float *phantom,
    float *proj, CqError * err)
{
  const size_t cells = (size_t) g->nu * g->nv * g->n_views;
  const size_t voxels = (size_t) g->nx * g->ny * g->nz;
  size_t i;

  if (o->cuda) {
    CqSfCuda *cu = cq_sf_cuda_new (0, g, err);
    int ok = cu && cq_sf_cuda_set_volume (cu, phantom, err) == CQ_OK
        && cq_sf_cuda_project (cu, 0, g->n_views, proj, err) == CQ_OK;

    cq_sf_cuda_free (cu);
    if (!ok)
      return -1;
  } else {
    double *vol = malloc (sizeof (double) * voxels);
    double *p = malloc (sizeof (double) * cells);

    if (!vol || !p) {
      free (vol);
      free (p);
      cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY, "out of memory");
      return -1;
    }
    for (i = 0; i < voxels; i++)
      vol[i] = phantom[i];
    if (cq_sf_project_cpu (g, vol, 0, g->n_views, p, 0, err) != CQ_OK) {
      free (vol);
      free (p);
      return -1;
    }
    for (i = 0; i < cells; i++)
      proj[i] = (float) p[i];
    free (vol);
    free (p);
  }
  if (o->noise) {
    const size_t per_view = (size_t) g->nu * g->nv;
    double max = 0, mu;

    for (i = 0; i < cells; i++)
      max = proj[i] > max ? proj[i] : max;
    mu = max > 0 ? 2.0 / max : 1.0;
    for (i = 0; i < cells; i++) {
      CqSfNoise nz = { 1, 0, o->seed, i / per_view };
      double n = cq_sf_noise_counts (&nz, (uint32_t) (i % per_view),
          o->photons * exp (-mu * proj[i]));

      proj[i] = (float) (-log ((n > 0.5 ? n : 0.5) / o->photons) / mu);
    }
    fprintf (stderr, "noise: Poisson, %g photons a cell, mu %.4g per unit "
        "per mm (densest ray e^-2), seed %u\n", o->photons, mu, o->seed);
  }
  return 0;
}

static int
parse (int argc, char **argv, Options * o)
{
  int i;

  o->size = 64;
  o->views = 0;
  o->iterations = 20;
  o->cuda = -1;
  o->noise = 0;
  o->photons = 1e4;
  o->relaxation = 1.0;
  o->lo = 0.0;
  o->hi = 0.5;
  o->seed = 1;
  o->png = NULL;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

    if (!strcmp (a, "--noise")) {
      o->noise = 1;
      continue;
    }
    if (!v)
      return usage ("an option without its value, or an unknown option");
    if (!strcmp (a, "--size"))
      o->size = (unsigned) atoi (v);
    else if (!strcmp (a, "--views"))
      o->views = (unsigned) atoi (v);
    else if (!strcmp (a, "--iterations"))
      o->iterations = (unsigned) atoi (v);
    else if (!strcmp (a, "--photons"))
      o->photons = atof (v);
    else if (!strcmp (a, "--seed"))
      o->seed = (unsigned) strtoul (v, NULL, 0);
    else if (!strcmp (a, "--relaxation"))
      o->relaxation = atof (v);
    else if (!strcmp (a, "--window")) {
      if (sscanf (v, "%lf:%lf", &o->lo, &o->hi) != 2 || !(o->hi > o->lo))
        return usage ("--window LO:HI with LO < HI");
    } else if (!strcmp (a, "-o"))
      o->png = v;
    else if (!strcmp (a, "--backend")) {
      if (!strcmp (v, "cpu"))
        o->cuda = 0;
      else if (!strcmp (v, "cuda"))
        o->cuda = 1;
      else
        return usage ("--backend cpu or cuda");
    } else
      return usage ("unknown option");
    i++;
  }
  if (o->size < 16 || o->size > 1024)
    return usage ("--size from 16 to 1024 (SSIM needs 11x11 windows)");
  if (o->views == 0)
    o->views = o->size;
  if (!(o->photons >= 1))
    return usage ("--photons of at least 1");
  return 0;
}

int
main (int argc, char **argv)
{
  Options o;
  CqSfGeometry g;
  CqSirtParams params;
  CqError err = { CQ_OK, "" };
  CqSirtCpu *cpu = NULL;
  CqSirtCuda *cuda = NULL;
  Scores scores;
  float *phantom, *proj, *vol;
  double t0, t_iter = 0;
  unsigned k;
  int rc = 1;

  if (parse (argc, argv, &o))
    return 2;
  if (o.cuda < 0)
    o.cuda = cq_cuda_device_count (&err) > 0;
  else if (o.cuda && cq_cuda_device_count (&err) < 1) {
    fprintf (stderr, "cudasfproject-sirt: no usable CUDA device: %s\n",
        err.message);
    return 3;
  }
  memset (&g, 0, sizeof (g));
  g.nx = g.ny = g.nz = o.size;
  g.dx = g.dz = 1.0;
  g.nu = g.nv = o.size;
  g.du = g.dv = 2.0;
  g.sod = 4.0 * o.size;
  g.sdd = 8.0 * o.size;
  g.n_views = o.views;
  g.direction = 1;
  params.relaxation = o.relaxation;
  params.nonnegative = 1;

  phantom = malloc (sizeof (float) * o.size * o.size * o.size);
  vol = malloc (sizeof (float) * o.size * o.size * o.size);
  proj = malloc (sizeof (float) * o.size * o.size * o.views);
  if (!phantom || !vol || !proj) {
    fprintf (stderr, "cudasfproject-sirt: out of memory\n");
    return 1;
  }
  cq_phantom_fill (CQ_PHANTOM_SHEPP_LOGAN, &g, phantom);
  if (scores_init (&scores, &g, phantom,
          cq_phantom_max (CQ_PHANTOM_SHEPP_LOGAN), &err))
    goto failed;
  fprintf (stderr, "SIRT on %s: %u^3 voxels of 1 mm, %u views of %u^2 "
      "cells of 2 mm, R %u mm, D %u mm, relaxation %g, non-negative\n",
      o.cuda ? "CUDA (float32)" : "the CPU (double)", o.size, o.views,
      o.size, 4 * o.size, 8 * o.size, o.relaxation);
  t0 = now ();
  if (simulate (&o, &g, phantom, proj, &err))
    goto failed;
  fprintf (stderr, "projected in %.2f s\n", now () - t0);
  t0 = now ();
  if (o.cuda)
    cuda = cq_sirt_cuda_new (0, &g, proj, &params, &err);
  else
    cpu = cq_sirt_cpu_new (&g, proj, &params, 0, &err);
  if (!cuda && !cpu)
    goto failed;
  fprintf (stderr, "set up (R = 1/A1, C = 1/At1) in %.2f s\n", now () - t0);
  for (k = 1; k <= o.iterations; k++) {
    double nrmse, ssim;

    t0 = now ();
    if (cuda) {
      if (cq_sirt_cuda_iterate (cuda, 1, &err) != CQ_OK
          || cq_sirt_cuda_volume (cuda, vol, &err) != CQ_OK)
        goto failed;
    } else {
      if (cq_sirt_cpu_iterate (cpu, 1, &err) != CQ_OK)
        goto failed;
      cq_sirt_cpu_volume (cpu, vol);
    }
    t_iter += now () - t0;
    if (scores_measure (&scores, &g, vol, &nrmse, &ssim, &err))
      goto failed;
    printf ("iteration %u nrmse %.6f ssim %.6f\n", k, nrmse, ssim);
    fflush (stdout);
  }
  if (o.iterations)
    fprintf (stderr, "%.3f s an iteration (wall, volume download "
        "included)\n", t_iter / o.iterations);
  if (o.png && !write_png (o.png, &g, vol, o.lo, o.hi))
    goto out;
  rc = 0;
  goto out;

failed:
  fprintf (stderr, "cudasfproject-sirt: %s\n", err.message);
out:
  cq_sirt_cpu_free (cpu);
  cq_sirt_cuda_free (cuda);
  scores_clear (&scores);
  free (phantom);
  free (vol);
  free (proj);
  return rc;
}
