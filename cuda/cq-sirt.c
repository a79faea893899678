/* cudaquality compute library: SIRT on the CPU (double precision, the
 * projector pair of cq-sfproject-cpu.c, multi-threaded there; the
 * elementwise steps are cheap beside it).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cq-sirt.h"

struct CqSirtCpu
{
  CqSfGeometry g;
  CqSirtParams p;
  unsigned n_threads;
  size_t cells, voxels;
  double *b;                    /* measured line integrals */
  double *r;                    /* 1 / (A 1) */
  double *c;                    /* 1 / (Aᵀ 1) */
  double *x;                    /* the reconstruction */
  double *proj;                 /* scratch: A x, then R (b − A x) */
  double *back;                 /* scratch: Aᵀ R (b − A x) */
};

/* The CUDA SIRT on a device: the same in every build. */
CqSirtCuda *
cq_sirt_cuda_new (int device, const CqSfGeometry * g, const float *proj,
    const CqSirtParams * p, CqError * err)
{
  const CqCudaTarget target = CQ_CUDA_TARGET_DEVICE (device);

  return cq_sirt_cuda_new_for (&target, g, proj, p, err);
}

CqStatus
cq_sirt_params_check (const CqSirtParams * p, CqError * err)
{
  if (!(p->relaxation > 0 && p->relaxation < 2))
    return cq_error_set (err, CQ_ERROR_INVALID, "SIRT relaxation %g: "
        "0 < relaxation < 2 converges", p->relaxation);
  return CQ_OK;
}

void
cq_sirt_cpu_free (CqSirtCpu * s)
{
  if (!s)
    return;
  free (s->b);
  free (s->r);
  free (s->c);
  free (s->x);
  free (s->proj);
  free (s->back);
  free (s);
}

/* 1/v where v > 0, else 0. */
static void
invert (double *v, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++)
    v[i] = v[i] > 0 ? 1.0 / v[i] : 0.0;
}

CqSirtCpu *
cq_sirt_cpu_new (const CqSfGeometry * g, const float *proj,
    const CqSirtParams * p, unsigned n_threads, CqError * err)
{
  CqSirtCpu *s;
  size_t i;

  if (cq_sf_geometry_check (g, err) != CQ_OK
      || cq_sirt_params_check (p, err) != CQ_OK)
    return NULL;
  s = calloc (1, sizeof (*s));
  if (!s)
    goto oom;
  s->g = *g;
  s->p = *p;
  s->n_threads = n_threads;
  s->cells = (size_t) g->nu * g->nv * g->n_views;
  s->voxels = (size_t) g->nx * g->ny * g->nz;
  s->b = malloc (sizeof (double) * s->cells);
  s->r = malloc (sizeof (double) * s->cells);
  s->proj = malloc (sizeof (double) * s->cells);
  s->c = malloc (sizeof (double) * s->voxels);
  s->x = malloc (sizeof (double) * s->voxels);
  s->back = malloc (sizeof (double) * s->voxels);
  if (!s->b || !s->r || !s->proj || !s->c || !s->x || !s->back)
    goto oom;
  for (i = 0; i < s->cells; i++) {
    s->b[i] = proj[i];
    s->proj[i] = 1.0;
  }
  for (i = 0; i < s->voxels; i++)
    s->x[i] = 1.0;
  /* R = 1 / (A 1), C = 1 / (Aᵀ 1) */
  if (cq_sf_project_cpu (g, s->x, 0, g->n_views, s->r, n_threads,
          err) != CQ_OK
      || cq_sf_backproject_cpu (g, s->proj, 0, g->n_views, s->c, n_threads,
          err) != CQ_OK) {
    cq_sirt_cpu_free (s);
    return NULL;
  }
  invert (s->r, s->cells);
  invert (s->c, s->voxels);
  memset (s->x, 0, sizeof (double) * s->voxels);
  return s;

oom:
  cq_sirt_cpu_free (s);
  cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY, "out of host memory for SIRT "
      "on %ux%ux%u voxels and %u views of %ux%u", g->nx, g->ny, g->nz,
      g->n_views, g->nu, g->nv);
  return NULL;
}

CqStatus
cq_sirt_cpu_iterate (CqSirtCpu * s, unsigned iterations, CqError * err)
{
  const double lambda = s->p.relaxation;
  CqStatus ret;
  unsigned k;
  size_t i;

  for (k = 0; k < iterations; k++) {
    ret = cq_sf_project_cpu (&s->g, s->x, 0, s->g.n_views, s->proj,
        s->n_threads, err);
    if (ret != CQ_OK)
      return ret;
    for (i = 0; i < s->cells; i++)
      s->proj[i] = (s->b[i] - s->proj[i]) * s->r[i];
    ret = cq_sf_backproject_cpu (&s->g, s->proj, 0, s->g.n_views, s->back,
        s->n_threads, err);
    if (ret != CQ_OK)
      return ret;
    for (i = 0; i < s->voxels; i++) {
      double v = s->x[i] + lambda * s->c[i] * s->back[i];

      s->x[i] = s->p.nonnegative && v < 0 ? 0.0 : v;
    }
  }
  return CQ_OK;
}

void
cq_sirt_cpu_volume (const CqSirtCpu * s, float *volume)
{
  size_t i;

  for (i = 0; i < s->voxels; i++)
    volume[i] = (float) s->x[i];
}
