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

/* cos and sin of each ellipsoid's angle, computed once a fill */
typedef struct
{
  double c[10], s[10];
} Rotations;

static double
phantom_at (CqPhantom phantom, const Rotations * rot, double x, double y,
    double z)
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
        const double c = rot->c[e], s = rot->s[e];
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
  Rotations rot;
  unsigned i, j, k;
  int e;

  for (e = 0; e < 10; e++) {
    rot.c[e] = cos (shepp_logan[e][6] * M_PI / 180);
    rot.s[e] = sin (shepp_logan[e][6] * M_PI / 180);
  }
  for (k = 0; k < g->nz; k++)
    for (j = 0; j < g->ny; j++)
      for (i = 0; i < g->nx; i++)
        vol[((size_t) k * g->ny + j) * g->nx + i] = (float)
            phantom_at (phantom, &rot, (cq_sf_voxel_x (g,
                    i) - g->offset_x) / hx, (cq_sf_voxel_y (g,
                    j) - g->offset_y) / hy, (cq_sf_voxel_z (g,
                    k) - g->offset_z) / hz);
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
