/* cudaquality compute library: analytic test objects.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cq-phantom.h"

#include <math.h>

/* a, b, c, x0, y0, z0, φ (degrees), Kak-Slaney value, Yu-Ye-Wang value */
static const double shepp_logan[10][9] = {
  {.69, .92, .90, 0, 0, 0, 0, 2, 1},
  {.6624, .874, .88, 0, 0, 0, 0, -.98, -.8},
  {.41, .16, .21, -.22, 0, -.25, 108, -.02, -.2},
  {.31, .11, .22, .22, 0, -.25, 72, -.02, -.2},
  {.21, .25, .50, 0, .35, -.25, 0, .02, .2},
  {.046, .046, .046, 0, .10, -.25, 0, .02, .2},
  {.046, .023, .02, -.08, -.65, -.25, 0, .01, .1},
  {.046, .023, .02, .06, -.65, -.25, 90, .01, .1},
  {.056, .04, .10, .06, -.105, .625, 90, .02, .2},
  {.056, .056, .10, 0, .10, .625, 0, -.02, -.2},
};

static double
phantom_at (CqPhantom phantom, double x, double y, double z)
{
  double v = 0.0;
  int e;

  switch (phantom) {
    case CQ_PHANTOM_SPHERE:
      return x * x + y * y + z * z <= 0.75 * 0.75 ? 1.0 : 0.0;
    case CQ_PHANTOM_CYLINDER:
      return x * x + y * y <= 0.75 * 0.75 && fabs (z) <= 0.75 ? 1.0 : 0.0;
    case CQ_PHANTOM_SHEPP_LOGAN:
    case CQ_PHANTOM_SHEPP_LOGAN_KAK:
      for (e = 0; e < 10; e++) {
        const double *p = shepp_logan[e];
        double phi = p[6] * M_PI / 180, c = cos (phi), s = sin (phi);
        double dx = x - p[3], dy = y - p[4], dz = z - p[5];
        double u = (dx * c + dy * s) / p[0], w = (-dx * s + dy * c) / p[1];

        if (u * u + w * w + (dz / p[2]) * (dz / p[2]) <= 1.0)
          v += phantom == CQ_PHANTOM_SHEPP_LOGAN ? p[8] : p[7];
      }
      return v;
  }
  return 0.0;
}

void
cq_phantom_fill (CqPhantom phantom, const CqSfGeometry * g, float *vol)
{
  const double hx = g->nx * g->dx / 2, hy = g->ny * g->dx / 2;
  const double hz = g->nz * g->dz / 2;
  unsigned i, j, k;

  for (k = 0; k < g->nz; k++)
    for (j = 0; j < g->ny; j++)
      for (i = 0; i < g->nx; i++)
        vol[((size_t) k * g->ny + j) * g->nx + i] = (float)
            phantom_at (phantom, (cq_sf_voxel_x (g, i) - g->offset_x) / hx,
            (cq_sf_voxel_y (g, j) - g->offset_y) / hy,
            (cq_sf_voxel_z (g, k) - g->offset_z) / hz);
}

double
cq_phantom_max (CqPhantom phantom)
{
  switch (phantom) {
    case CQ_PHANTOM_SHEPP_LOGAN:
      return 1.0;
    case CQ_PHANTOM_SHEPP_LOGAN_KAK:
      return 2.0;
    default:
      return 1.0;
  }
}
