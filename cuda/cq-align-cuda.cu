/* cudaquality compute library: the alignment search on CUDA, the
 * launchers.
 *
 * Everything is allocated in cq_align_cuda_new_for (): the ring of
 * thumbnails, the distances on the device and their pinned copy. A
 * reference frame on the device costs one kernel queued on the object's
 * stream (nothing waits for it); a search costs the distorted frame's
 * thumbnail kernel, the distance kernel (a few blocks a candidate, their
 * partial sums written into mapped pinned memory and added on the host)
 * and a wait for its event.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "cq-align-kernels.cuh"
#include "cq-align-local.h"
#include "cq-cuda-private.h"

struct CqAlignCuda
{
  CqCudaTarget target;
  cudaStream_t stream;
  CqAlignShape shape;
  unsigned slots;
  size_t slot_elems;            /* tw x th rounded up to 4 (uint4 loads) */
  unsigned *thumbs;             /* device, slots x slot_elems */
  unsigned long long *out_host; /* pinned and mapped: parts x
                                 * CQ_ALIGN_MAX_SLOTS partial sums */
  unsigned long long *out_map;  /* ... as the kernel writes them */
  unsigned parts, part_vecs;    /* a candidate's blocks, uint4 each */
  unsigned launched;            /* distances launched: candidates + 1 */
  uint32_t *staging;            /* pinned: a thumbnail made on the CPU */
  uint16_t *scratch;            /* the CPU thumbnail's column sums */
  cudaEvent_t done;             /* the distances are on the host */
  dim3 thumb_grid, thumb_block;
};

extern "C" void
cq_align_cuda_free (CqAlignCuda * cu)
{
  if (cu)
    free (cu->scratch);
  cq_cuda_object_free (cu,[cu]() {
        cudaFree (cu->thumbs);
        cudaFreeHost (cu->out_host);
        cudaFreeHost (cu->staging);
        if (cu->done)
          cudaEventDestroy (cu->done);
      });
}

extern "C" CqAlignCuda *
cq_align_cuda_new_for (const CqCudaTarget * target,
    const CqAlignPlane * plane, unsigned slots, CqError * err)
{
  CqAlignCuda *cu;
  cudaError_t e;
  const char *what = "cannot select the CUDA device";
  size_t elems;

  if (cq_align_check (plane, slots, err) != CQ_OK
      || !(cu = cq_cuda_object_new < CqAlignCuda > (target, err)))
    return NULL;
  cq_align_shape_init (&cu->shape, plane);
  cu->slots = slots;
  elems = (size_t) cu->shape.tw * cu->shape.th;
  cu->slot_elems = (elems + 3) / 4 * 4;
  cu->parts = (unsigned) ((elems / 4 + cq::kAlignDistPartVecs - 1) /
      cq::kAlignDistPartVecs);
  cu->parts = cu->parts < 1 ? 1 : cu->parts > cq::kAlignDistParts ?
      cq::kAlignDistParts : cu->parts;
  cu->part_vecs = (unsigned) ((elems / 4 + cu->parts - 1) / cu->parts);
  cu->thumb_block = dim3 (cq::kAlignThumbX, cq::kAlignThumbY);
  cu->thumb_grid = dim3 ((cu->shape.tw + cq::kAlignThumbX - 1) /
      cq::kAlignThumbX, (cu->shape.th + cq::kAlignThumbY - 1) /
      cq::kAlignThumbY);
  cu->scratch = (uint16_t *) malloc (cq_align_scratch_bytes (&cu->shape));
  if (!cu->scratch) {
    cq_align_cuda_free (cu);
    cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY, "out of host memory");
    return NULL;
  }
  {
    CqCudaScope scope (cu->target);

    e = scope.enter ();
    if (e == cudaSuccess) {
      what = "cannot create a CUDA stream";
      e = cudaStreamCreateWithFlags (&cu->stream, cudaStreamNonBlocking);
    }
    if (e == cudaSuccess) {
      what = "cannot create a CUDA event";
      e = cudaEventCreateWithFlags (&cu->done, cudaEventDisableTiming);
    }
    if (e == cudaSuccess) {
      what = "cannot allocate the thumbnails";
      /* zeroed: a slot never filled is a black frame, not garbage */
      e = cudaMalloc ((void **) &cu->thumbs, slots * cu->slot_elems *
          sizeof (unsigned) + 16);
      if (e == cudaSuccess)
        e = cudaMemset (cu->thumbs, 0, slots * cu->slot_elems *
            sizeof (unsigned) + 16);
    }
    if (e == cudaSuccess) {
      what = "cannot allocate the distances";
      e = cq_slot_results_alloc ((void **) &cu->out_host,
          (void **) &cu->out_map, cu->parts * CQ_ALIGN_MAX_SLOTS *
          sizeof (unsigned long long));
    }
    if (e == cudaSuccess) {
      what = "cannot allocate pinned staging";
      e = cudaHostAlloc ((void **) &cu->staging, cu->slot_elems *
          sizeof (uint32_t) + 16, cudaHostAllocDefault);
    }
  }
  if (e != cudaSuccess) {
    cq_cuda_error_for (err, e, what, "%u alignment thumbnails of a %ux%u "
        "plane", slots, plane->width, plane->height);
    cq_align_cuda_free (cu);
    return NULL;
  }
  return cu;
}

static CqStatus
cq_align_cuda_check_slot (const CqAlignCuda * cu, unsigned slot,
    CqError * err)
{
  if (slot >= cu->slots)
    return cq_error_set (err, CQ_ERROR_INVALID, "thumbnail slot %u of %u",
        slot, cu->slots);
  return CQ_OK;
}

/* An entry point on a slot: returns unless the slot exists, then enters
 * the object's context until it returns (two statements: the scope of
 * CQ_CUDA_ENTER must be the function's). */
#define CQ_ALIGN_SLOT_ENTER(cu, slot, err)                              \
  if (cq_align_cuda_check_slot ((cu), (slot), (err)) != CQ_OK)          \
    return CQ_ERROR_INVALID;                                            \
  CQ_CUDA_ENTER ((cu)->target, (err))

/* The thumbnail kernel of a device plane into slot, queued on the
 * object's stream; the caller entered the context and checked the slot. */
static CqStatus
cq_align_cuda_launch_thumbnail (CqAlignCuda * cu, unsigned slot,
    const void *data, size_t pitch, CqError * err)
{
  const CqAlignPlane *pl = &cu->shape.plane;
  cq::AlignThumbParams p;

  if (cu->shape.tw == 0 || cu->shape.th == 0)
    return CQ_OK;
  p.data = (const unsigned char *) data;
  p.pitch = pitch;
  p.sample_stride = pl->sample_stride;
  p.factor = cu->shape.factor;
  p.tw = cu->shape.tw;
  p.th = cu->shape.th;
  p.shift = pl->layout.shift;
  p.mask = (1u << pl->layout.depth) - 1;
  p.down = pl->layout.depth - 8;
  p.thumb = cu->thumbs + slot * cu->slot_elems;
  if (pl->layout.kind == CQ_LAYOUT_GRAY16)
    cq::align_thumb_kernel < true > <<<cu->thumb_grid, cu->thumb_block, 0,
        cu->stream>>> (p);
  else
    cq::align_thumb_kernel < false > <<<cu->thumb_grid, cu->thumb_block, 0,
        cu->stream>>> (p);
  CQ_CUDA_TRY (cudaGetLastError (), err, "cannot launch the thumbnail "
      "kernel");
  return CQ_OK;
}

extern "C" CqStatus
cq_align_cuda_thumbnail_device (CqAlignCuda * cu, unsigned slot,
    const void *data, size_t pitch, CqError * err)
{
  CQ_ALIGN_SLOT_ENTER (cu, slot, err);
  return cq_align_cuda_launch_thumbnail (cu, slot, data, pitch, err);
}

extern "C" CqStatus
cq_align_cuda_thumbnail_frame (CqAlignCuda * cu, unsigned slot,
    CqFramesCuda * frames, unsigned frame, unsigned plane, size_t offset,
    CqError * err)
{
  void *data;
  size_t pitch;

  CQ_ALIGN_SLOT_ENTER (cu, slot, err);
  /* the kernel starts once the upload is done; the host does not wait */
  CQ_CUDA_TRY (cudaStreamWaitEvent (cu->stream, cq_frames_cuda_event (frames,
              frame), 0), err, "cannot order the thumbnail after the upload");
  cq_frames_cuda_plane (frames, frame, plane, &data, &pitch);
  return cq_align_cuda_launch_thumbnail (cu, slot, (char *) data + offset,
      pitch, err);
}

extern "C" CqStatus
cq_align_cuda_thumbnail_host (CqAlignCuda * cu, unsigned slot,
    const void *data, size_t stride, CqError * err)
{
  CQ_ALIGN_SLOT_ENTER (cu, slot, err);
  /* the staging buffer is free: every upload below is waited for */
  cq_align_thumbnail_cpu (&cu->shape, data, stride, cu->staging,
      cu->scratch);
  CQ_CUDA_TRY (cudaMemcpyAsync (cu->thumbs + slot * cu->slot_elems,
          cu->staging, (size_t) cu->shape.tw * cu->shape.th *
          sizeof (uint32_t), cudaMemcpyHostToDevice, cu->stream), err,
      "cannot upload a thumbnail");
  CQ_CUDA_TRY (cudaStreamSynchronize (cu->stream), err,
      "cannot upload a thumbnail");
  return CQ_OK;
}

extern "C" CqStatus
cq_align_cuda_distances (CqAlignCuda * cu, unsigned probe,
    const unsigned *slots, unsigned n, uint64_t * distances, CqError * err)
{
  CqStatus st = cq_align_cuda_distances_launch (cu, probe, slots, n, err);

  return st == CQ_OK ? cq_align_cuda_distances_collect (cu, distances,
      err) : st;
}

extern "C" CqStatus
cq_align_cuda_distances_launch (CqAlignCuda * cu, unsigned probe,
    const unsigned *slots, unsigned n, CqError * err)
{
  cq::AlignDistanceParams p;
  CqStatus st = cq_align_cuda_check_slot (cu, probe, err);

  cu->launched = 0;
  if (st != CQ_OK)
    return st;
  if (n > CQ_ALIGN_MAX_SLOTS)
    return cq_error_set (err, CQ_ERROR_INVALID, "%u candidates: at most %u",
        n, CQ_ALIGN_MAX_SLOTS);
  for (unsigned i = 0; i < n; i++) {
    if ((st = cq_align_cuda_check_slot (cu, slots[i], err)) != CQ_OK)
      return st;
    p.slots[i] = (unsigned short) slots[i];
  }
  CQ_CUDA_ENTER (cu->target, err);
  /* no candidate: the collect still waits for the thumbnail kernels */
  if (n > 0) {
    p.thumbs = cu->thumbs;
    p.slot_elems = cu->slot_elems;
    p.elems = cu->shape.tw * cu->shape.th;
    p.probe = probe;
    p.part_vecs = cu->part_vecs;
    p.out = cu->out_map;
    cq::align_distance_kernel <<<dim3 (cu->parts, n), cq::kAlignDistThreads,
        0, cu->stream>>> (p);
    CQ_CUDA_TRY (cudaGetLastError (), err, "cannot launch the distance "
        "kernel");
  }
  /* no copy: the kernel writes the sums where the host reads them */
  CQ_CUDA_TRY (cudaEventRecord (cu->done, cu->stream), err,
      "cannot record the distances' event");
  cu->launched = n + 1;
  return CQ_OK;
}

extern "C" CqStatus
cq_align_cuda_distances_collect (CqAlignCuda * cu, uint64_t * distances,
    CqError * err)
{
  const unsigned n = cu->launched - 1;

  if (cu->launched == 0)
    return cq_error_set (err, CQ_ERROR_INVALID, "no distances launched");
  cu->launched = 0;
  CQ_CUDA_ENTER (cu->target, err);
  CQ_CUDA_TRY (cudaEventSynchronize (cu->done), err,
      "the alignment kernels failed");
  for (unsigned i = 0; i < n; i++) {
    distances[i] = 0;
    for (unsigned k = 0; k < cu->parts; k++)
      distances[i] += cu->out_host[i * cu->parts + k];
  }
  return CQ_OK;
}

extern "C" CqStatus
cq_align_cuda_download (CqAlignCuda * cu, unsigned slot, uint32_t * thumb,
    CqError * err)
{
  CQ_ALIGN_SLOT_ENTER (cu, slot, err);
  CQ_CUDA_TRY (cudaStreamSynchronize (cu->stream), err,
      "the thumbnail kernels failed");
  CQ_CUDA_TRY (cudaMemcpy (thumb, cu->thumbs + slot * cu->slot_elems,
          (size_t) cu->shape.tw * cu->shape.th * sizeof (uint32_t),
          cudaMemcpyDeviceToHost), err, "cannot download a thumbnail");
  return CQ_OK;
}
