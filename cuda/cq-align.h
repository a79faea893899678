/* cudaquality compute library: the search of frame alignment by content.
 *
 * Which reference frame a distorted frame shows is decided by comparing
 * thumbnails. The thumbnail of a plane (luma, or the first component) of
 * width x height samples is tw x th integer sums of factor x factor
 * blocks of its samples in 8-bit units, factor = ceil (width /
 * CQ_ALIGN_MAX_WIDTH) (at least 1), tw = width / factor, th = height /
 * factor (the right and bottom remainders are left out). An 8-bit sample
 * counts as it is; a 16-bit one as (word >> shift), masked to depth bits,
 * >> (depth - 8). The block means (sum / factor²) are the thumbnail
 * cudassim has always compared; sums keep every later step in integers.
 *
 * The distance of two thumbnails is Σ (a - b)² over their sums, exact
 * (64-bit integers) and so the same on both backends whatever the order of
 * the additions; distance / (factor⁴ tw th) is the mean squared difference
 * of the block means.
 *
 * An object holds `slots` thumbnails (a ring that the caller manages:
 * reference frames in some slots, the distorted frame in another) and
 * gives the distances of one slot's thumbnail to a list of others. The
 * decision (best match, margin over the second best) is the caller's.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_ALIGN_H
#define CQ_ALIGN_H

#include "cq-common.h"
#include "cq-frames.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Thumbnails are at most this wide. */
#define CQ_ALIGN_MAX_WIDTH 320
/* The most slots an object holds (cudassim's largest window, 250, needs
 * 2 x 250 + 1 reference frames and the distorted one). */
#define CQ_ALIGN_MAX_SLOTS 512
/* The largest plane side: sums and distances then fit their integers. */
#define CQ_ALIGN_MAX_SIDE 32768

/* The plane thumbnails are made of. layout.kind is GRAY8 or GRAY16 (depth
 * 8 to 16 and shift as CqLayout says); sample x of a row is at byte
 * x * sample_stride of it (1 or more for GRAY8, 2 or more for GRAY16:
 * packed formats such as YUY2 have luma every 2 bytes). */
typedef struct
{
  unsigned width, height;       /* in samples */
  CqLayout layout;
  unsigned sample_stride;
} CqAlignPlane;

/* Checks a plane (kind, depth, shift, stride, size up to
 * CQ_ALIGN_MAX_SIDE) and a slot count (1 to CQ_ALIGN_MAX_SLOTS). */
CqStatus cq_align_check (const CqAlignPlane * plane, unsigned slots,
    CqError * err);

/* The thumbnail's block side and size for plane. */
void cq_align_thumb_size (const CqAlignPlane * plane, unsigned *factor,
    unsigned *tw, unsigned *th);

/* ---- CPU backend ----
 * The thumbnail of a large frame is split into bands of rows, the
 * distances into candidates, over the worker pool (cq-pool.h). */

typedef struct CqAlignCpu CqAlignCpu;

CqAlignCpu *cq_align_cpu_new (const CqAlignPlane * plane, unsigned slots,
    CqError * err);
/* The thumbnail of the plane at data (sample 0 of row 0; rows stride bytes
 * apart) into slot. */
CqStatus cq_align_cpu_thumbnail (CqAlignCpu * cpu, unsigned slot,
    const void *data, size_t stride, CqError * err);
/* distances[i]: the distance of slot probe's thumbnail to that of
 * slots[i], i < n. */
CqStatus cq_align_cpu_distances (CqAlignCpu * cpu, unsigned probe,
    const unsigned *slots, unsigned n, uint64_t * distances, CqError * err);
/* The thumbnail in slot (tw x th sums, row by row), for tests. */
const uint32_t *cq_align_cpu_thumb (const CqAlignCpu * cpu, unsigned slot);
void cq_align_cpu_free (CqAlignCpu * cpu);

/* ---- CUDA backend ----
 * The thumbnails live in device memory. A thumbnail of a frame on the
 * device is one kernel, queued on the object's stream (the frame must stay
 * valid and unchanged until the next distances call returns); the
 * distances are one kernel over every candidate and one small copy to
 * pinned memory, and the call waits for that copy alone. */

typedef struct CqAlignCuda CqAlignCuda;

CqAlignCuda *cq_align_cuda_new_for (const CqCudaTarget * target,
    const CqAlignPlane * plane, unsigned slots, CqError * err);
/* data: device memory of the object's context, pitch bytes a row. */
CqStatus cq_align_cuda_thumbnail_device (CqAlignCuda * cuda, unsigned slot,
    const void *data, size_t pitch, CqError * err);
/* A device copy (cq-frames.h; the same context), the plane's samples at
 * offset bytes into each row of its plane `plane`: the kernel is queued after the frame's upload, nothing waits. The copy must
 * stay unchanged until the next distances call returns. */
CqStatus cq_align_cuda_thumbnail_frame (CqAlignCuda * cuda, unsigned slot,
    CqFramesCuda * frames, unsigned frame, unsigned plane, size_t offset,
    CqError * err);
/* A frame in host memory: the thumbnail computed on the CPU (as
 * cq_align_cpu_thumbnail) and uploaded; returns once it is. */
CqStatus cq_align_cuda_thumbnail_host (CqAlignCuda * cuda, unsigned slot,
    const void *data, size_t stride, CqError * err);
/* As cq_align_cpu_distances; blocks until the distances are on the host
 * (and every kernel queued before is done, n = 0 included). */
CqStatus cq_align_cuda_distances (CqAlignCuda * cuda, unsigned probe,
    const unsigned *slots, unsigned n, uint64_t * distances, CqError * err);
/* The same in two steps, so that the host works while the kernels run:
 * _launch queues the distances of slots[i], i < n, to probe and returns;
 * _collect waits for them (every kernel queued before included) and
 * writes them to distances (the n of the launch). One launch at a time:
 * its slots' thumbnails must stay until it is collected (later thumbnail
 * kernels are queued after it). */
CqStatus cq_align_cuda_distances_launch (CqAlignCuda * cuda, unsigned probe,
    const unsigned *slots, unsigned n, CqError * err);
CqStatus cq_align_cuda_distances_collect (CqAlignCuda * cuda,
    uint64_t * distances, CqError * err);
/* Copies slot's thumbnail (tw x th sums) to thumb, for tests. */
CqStatus cq_align_cuda_download (CqAlignCuda * cuda, unsigned slot,
    uint32_t * thumb, CqError * err);
void cq_align_cuda_free (CqAlignCuda * cuda);

#ifdef __cplusplus
}
#endif
#endif /* CQ_ALIGN_H */
