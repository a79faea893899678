/* cudaquality compute library: device copies of host frames.
 *
 * A frame that several CUDA objects read (the alignment search's
 * thumbnail, then the SSIM of the pair it decides) goes up once: the
 * object keeps device frames of a fixed shape, each uploaded from host
 * memory (pinned planes by DMA straight from the frame, pageable ones
 * through pinned staging on the copy helpers, cq-copy.h) on the object's
 * own stream, and read in place by the others. An upload is asynchronous:
 * readers on other streams wait for its event (the library's entry points
 * that take a frame do so), the host with cq_frames_cuda_wait.
 *
 * A frame is taken by an upload and given back with
 * cq_frames_cuda_release once nothing reads it any more, from any thread.
 * The object is reference counted, so that frames still held can outlive
 * their owner's use of it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_FRAMES_H
#define CQ_FRAMES_H

#include "cq-common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CQ_FRAMES_MAX_PLANES 4

/* The planes of a frame: row_bytes[i] x rows[i] bytes (row_bytes 0: plane
 * i is not kept). */
typedef struct
{
  unsigned n_planes;
  size_t row_bytes[CQ_FRAMES_MAX_PLANES];
  unsigned rows[CQ_FRAMES_MAX_PLANES];
} CqFramesShape;

typedef struct CqFramesCuda CqFramesCuda;

/* At most max_frames device frames, allocated as they are first needed. */
CqFramesCuda *cq_frames_cuda_new_for (const CqCudaTarget * target,
    const CqFramesShape * shape, unsigned max_frames, CqError * err);
CqFramesCuda *cq_frames_cuda_ref (CqFramesCuda * frames);
/* The last reference frees the device memory (every frame must have been
 * released or be no longer read). */
void cq_frames_cuda_unref (CqFramesCuda * frames);

/* Queues the upload of a host frame (src[i], rows strides[i] bytes apart,
 * for every kept plane) into a free device frame, *frame. Returns once
 * the host may reuse nothing of its own: pinned planes are read by the
 * DMA later, so they must stay unchanged until the upload is done;
 * pageable ones have been staged. CQ_ERROR_OUT_OF_MEMORY when every frame
 * is taken. */
CqStatus cq_frames_cuda_upload (CqFramesCuda * frames,
    const void *const *src, const size_t * strides, unsigned *frame,
    CqError * err);

/* Device address and pitch of plane of frame. */
void cq_frames_cuda_plane (const CqFramesCuda * frames, unsigned frame,
    unsigned plane, void **data, size_t * pitch);

/* Blocks until frame's upload is done. */
CqStatus cq_frames_cuda_wait (CqFramesCuda * frames, unsigned frame,
    CqError * err);

/* frame is free again; its readers must be done. Any thread. */
void cq_frames_cuda_release (CqFramesCuda * frames, unsigned frame);

#ifdef __cplusplus
}
#endif
#endif /* CQ_FRAMES_H */
