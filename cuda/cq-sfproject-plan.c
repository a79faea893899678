/* cudaquality compute library: the CUDA SF pair's streaming plans
 * (cq-sfproject-plan.h).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-sfproject-plan.h"

#include <math.h>

void
cq_sf_magnifications (const CqSfGeometry * g, double *least, double *most)
{
  const double hx = fmax (fabs (cq_sf_voxel_x (g, 0)),
      fabs (cq_sf_voxel_x (g, g->nx - 1))) + g->dx / 2;
  const double hy = fmax (fabs (cq_sf_voxel_y (g, 0)),
      fabs (cq_sf_voxel_y (g, g->ny - 1))) + g->dx / 2;
  const double corner = sqrt (hx * hx + hy * hy);

  *least = g->sdd / (g->sod + corner);
  *most = g->sdd / (g->sod - corner);
}

void
cq_sf_slab_rows (const CqSfGeometry * g, unsigned k0, unsigned k1,
    double zs_lo, double zs_hi, unsigned *r0, unsigned *r1)
{
  /* the slab as the views see it: lowered by their source's z */
  const double zlo = cq_sf_voxel_z (g, k0) - g->dz / 2 - zs_hi;
  const double zhi = cq_sf_voxel_z (g, k1 - 1) + g->dz / 2 - zs_lo;
  const double edge = cq_sf_cell_t (g, 0) - g->dv / 2;
  double least, most, tlo, thi, a, b;

  cq_sf_magnifications (g, &least, &most);
  /* t = m·z is monotonic in m for a fixed z: the extremes are at the
   * extreme magnifications and slab edges */
  tlo = fmin (fmin (least * zlo, most * zlo), fmin (least * zhi, most * zhi));
  thi = fmax (fmax (least * zlo, most * zlo), fmax (least * zhi, most * zhi));
  a = floor ((tlo - edge) / g->dv) - CQ_SF_ROW_MARGIN;
  b = ceil ((thi - edge) / g->dv) + CQ_SF_ROW_MARGIN;
  a = fmin (fmax (a, 0.0), (double) g->nv);
  b = fmin (fmax (b, 0.0), (double) g->nv);
  *r0 = (unsigned) a;
  *r1 = (unsigned) fmax (a, b);
}

unsigned
cq_sf_max_band_rows (const CqSfGeometry * g, unsigned za, unsigned zb,
    unsigned slab)
{
  unsigned k0, r0, r1, most = 0;

  if (g->helical_pitch > 0)
    return g->nv;
  for (k0 = za; k0 < zb; k0 += slab) {
    cq_sf_slab_rows (g, k0, k0 + slab < zb ? k0 + slab : zb, 0, 0, &r0, &r1);
    if (r1 - r0 > most)
      most = r1 - r0;
  }
  return most;
}

void
cq_sf_zone (unsigned nz, unsigned w, unsigned n, unsigned *za, unsigned *zb)
{
  unsigned a = nz * w / n, b = nz * (w + 1) / n;

  if (nz >= 64 * n) {
    a = w == 0 ? 0 : (a + 16) / 32 * 32;
    b = w + 1 == n ? nz : (b + 16) / 32 * 32;
  }
  *za = a;
  *zb = b;
}

/* the device's arrays of views: (cos, sin), the axial offset, the slot */
#define VIEW_ARRAYS (2048 * (3 * sizeof (float) + sizeof (int)))

/* floats a padded row of the scaled projections */
static size_t
padded_row (const CqSfGeometry * g)
{
  return ((size_t) g->nu + CQ_SF_BACK_PAD) * sizeof (float);
}

size_t
cq_sf_resident_bytes (const CqSfGeometry * g, unsigned views_max)
{
  return 2 * cq_sf_slice_bytes (g) * g->nz + (cq_sf_view_bytes (g) +
      padded_row (g) * g->nv) * views_max + cq_sf_stream_fixed_bytes (g);
}

size_t
cq_sf_stream_fixed_bytes (const CqSfGeometry * g)
{
  /* the column groups: at most a run of 16 columns more than nx / 16 a
   * row, two ints each */
  return VIEW_ARRAYS + ((size_t) g->nu * 2 + 512) * g->nv
      + ((size_t) g->nx / 16 + 2) * g->ny * 2 * sizeof (int);
}

/* Slabs of about `slab` slices that cover n slices evenly. */
static unsigned
even_slab (unsigned n, unsigned slab)
{
  unsigned count = (n + slab - 1) / slab;

  return (n + count - 1) / count;
}

int
cq_sf_plan_project (const CqSfGeometry * g, size_t avail, unsigned views_max,
    CqSfProjPlan * pp)
{
  const size_t ps = cq_sf_slice_bytes (g), pv = cq_sf_view_bytes (g);
  /* a row of columns: what a band holds for each of its rows */
  const size_t pr = (size_t) g->nx * g->nz * sizeof (float);
  const size_t whole = ps * g->nz;
  size_t batch, band;

  if (avail >= whole + ps + pv) {
    batch = (avail - whole - ps) / pv;
    if (batch >= views_max || batch >= 8) {
      size_t stage;

      pp->batch = (unsigned) (batch < views_max ? batch : views_max);
      pp->band = g->ny;
      stage = (avail - whole - pp->batch * pv) / ps;
      if (stage > CQ_SF_STAGE_SLICES)
        stage = CQ_SF_STAGE_SLICES;
      pp->stage = (unsigned) (stage < g->nz ? stage : g->nz);
      return 1;
    }
  }
  batch = views_max < CQ_SF_STREAM_VIEWS ? views_max : CQ_SF_STREAM_VIEWS;
  if (batch * pv > avail / 2)
    batch = avail / 2 / pv;
  if (batch == 0)
    batch = 1;
  if (avail < batch * pv + 2 * pr)
    return 0;
  band = (avail - batch * pv) / (2 * pr);
  if (band >= g->ny)
    band = g->ny;
  pp->batch = (unsigned) batch;
  pp->band = even_slab (g->ny, (unsigned) band);
  pp->stage = g->nz;
  return 1;
}

size_t
cq_sf_plan_project_bytes (const CqSfGeometry * g, const CqSfProjPlan * pp)
{
  /* the band (z fastest) and its stage (x fastest), rows of columns */
  return (size_t) pp->band * g->nx * ((size_t) g->nz + pp->stage) *
      sizeof (float)
      + (size_t) pp->batch * cq_sf_view_bytes (g);
}

static size_t
back_bytes (const CqSfGeometry * g, unsigned slab, unsigned rows,
    unsigned views, unsigned views_max, int dbl)
{
  const size_t bufs = dbl ? 2 : 1;

  return bufs * rows * (size_t) views * padded_row (g)
      + bufs * slab * cq_sf_slice_bytes (g)
      + (views < views_max ? slab * cq_sf_slice_bytes (g) : 0);
}

size_t
cq_sf_plan_back_bytes (const CqSfGeometry * g, unsigned views_max,
    const CqSfBackPlan * bp)
{
  return back_bytes (g, bp->slab, bp->rows, bp->views, views_max, bp->dbl);
}

static void
set_back (CqSfBackPlan * bp, unsigned slab, unsigned views, unsigned rows,
    int dbl)
{
  bp->slab = slab;
  bp->views = views;
  bp->rows = rows;
  bp->dbl = dbl;
}

int
cq_sf_plan_backproject (const CqSfGeometry * g, size_t avail,
    unsigned views_max, unsigned za, unsigned zb, CqSfBackPlan * bp)
{
  const unsigned zone = zb - za;
  unsigned slab, rows, lo = 0, hi = zone;
  int dbl;

  if (zone == 0) {
    set_back (bp, 0, 0, 0, 0);
    return 1;
  }
  rows = cq_sf_max_band_rows (g, za, zb, zone);
  if (back_bytes (g, zone, rows, views_max, views_max, 0) <= avail) {
    set_back (bp, zone, views_max, rows, 0);
    return 1;
  }
  /* the thickest slab that fits (a band grows with its slab), then
   * evened out over the zone, in 32s from 64 on (the kernel's blocks) */
  while (lo < hi) {
    unsigned mid = lo + (hi - lo + 1) / 2;

    if (back_bytes (g, mid, cq_sf_max_band_rows (g, za, zb, mid), views_max,
            views_max, 1) <= avail)
      lo = mid;
    else
      hi = mid - 1;
  }
  for (slab = lo; slab >= 1 && lo - slab < 64; slab--) {
    unsigned even = even_slab (zone, slab);

    if (even >= 64)
      even = even / 32 * 32;
    rows = cq_sf_max_band_rows (g, za, zb, even);
    if (back_bytes (g, even, rows, views_max, views_max, 1) <= avail) {
      set_back (bp, even, views_max, rows, 1);
      return 1;
    }
  }
  /* view batches: thin slabs, as many views a launch as fit */
  for (slab = zone < 64 ? zone : 64; slab >= 1; slab /= 2) {
    rows = cq_sf_max_band_rows (g, za, zb, slab);
    for (dbl = 1; dbl >= 0; dbl--) {
      const size_t bufs = dbl ? 2 : 1;
      const size_t per_view = bufs * (size_t) rows * padded_row (g);
      const size_t slabs = (bufs + 1) * slab * cq_sf_slice_bytes (g);
      size_t views;

      if (avail <= slabs || per_view == 0)
        continue;
      views = (avail - slabs) / per_view;
      if (views >= 1) {
        set_back (bp, slab, (unsigned) (views < views_max ? views :
                views_max), rows, dbl);
        return 1;
      }
    }
  }
  return 0;
}
