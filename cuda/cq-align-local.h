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
  unsigned factor, rows, tw, th;
  unsigned bands;               /* thumbnail rows are split into this many
                                 * parts over the pool (1: none) */
} CqAlignShape;

void cq_align_shape_init (CqAlignShape * shape, const CqAlignPlane * plane);

/* Scratch a thumbnail needs: bands x tw x factor 16-bit column sums. */
size_t cq_align_scratch_bytes (const CqAlignShape * shape);

/* The thumbnail of the plane at data into thumb (tw x th), in
 * shape->bands parts over the worker pool. */
void cq_align_thumbnail_cpu (const CqAlignShape * shape, const void *data,
    size_t stride, uint32_t * thumb, uint16_t * scratch);

/* The parts that n distances of elems terms each are split into. */
unsigned cq_align_distance_parts (size_t elems, unsigned n);

/* distances[i] = Σ (probe - thumbs[slots[i] x slot_elems])² over elems
 * terms, i < n, in `parts` groups of candidates over the worker pool. */
void cq_align_distances_cpu (const uint32_t * probe, const uint32_t * thumbs,
    size_t slot_elems, size_t elems, const unsigned *slots, unsigned n,
    unsigned parts, uint64_t * distances);

#ifdef __cplusplus
}
#endif
#endif /* CQ_ALIGN_LOCAL_H */
