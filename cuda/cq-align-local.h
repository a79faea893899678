/* cudaquality compute library: what the alignment search's backends share
 * (the CUDA one makes thumbnails of host frames with the CPU code).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_ALIGN_LOCAL_H
#define CQ_ALIGN_LOCAL_H

#include "cq-align.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a plane is reduced, worked out once. */
typedef struct
{
  CqAlignPlane plane;
  unsigned factor, tw, th;
  unsigned bands;               /* thumbnail rows are split into this many */
} CqAlignShape;

void cq_align_shape_init (CqAlignShape * shape, const CqAlignPlane * plane);

/* Scratch a thumbnail needs: bands x tw x factor 16-bit column sums. */
size_t cq_align_scratch_bytes (const CqAlignShape * shape);

/* The thumbnail of the plane at data into thumb (tw x th), over the
 * worker pool. */
void cq_align_thumbnail_cpu (const CqAlignShape * shape, const void *data,
    size_t stride, uint32_t * thumb, uint16_t * scratch);

#ifdef __cplusplus
}
#endif
#endif /* CQ_ALIGN_LOCAL_H */
