/* cudaquality compute library: analytic test objects voxelised for the SF
 * projector.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_PHANTOM_H
#define CQ_PHANTOM_H

#include "cq-sfproject.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum
{
  CQ_PHANTOM_SHEPP_LOGAN,       /* 3D Shepp-Logan, Yu-Ye-Wang values */
  CQ_PHANTOM_SHEPP_LOGAN_KAK,   /* 3D Shepp-Logan, Kak-Slaney values */
  CQ_PHANTOM_SPHERE,            /* value 1, radius 0.75 of the half extent */
  CQ_PHANTOM_CYLINDER           /* value 1, along z, radius and half height 0.75 */
} CqPhantom;

/* Fills vol (nx·ny·nz floats, x fastest) with the phantom, coordinates
 * normalised so that the volume spans [−1, 1] on each axis; a voxel takes
 * the value at its centre. */
void cq_phantom_fill (CqPhantom phantom, const CqSfGeometry * g, float *vol);

/* The largest value of the phantom (for scaling line integrals). */
double cq_phantom_max (CqPhantom phantom);

#ifdef __cplusplus
}
#endif
#endif /* CQ_PHANTOM_H */
