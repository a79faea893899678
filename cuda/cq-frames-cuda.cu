/* cudaquality compute library: device copies of host frames (cq-frames.h).
 *
 * Each device frame is one allocation holding the kept planes at pitches
 * rounded up to 256 bytes (every kernel's vector loads stay aligned), with
 * an event recorded after its upload. Frames are allocated on first use
 * and recycled through a free list. Pageable planes are staged in one of
 * two pinned buffers of a frame's size, band by band, so that the host's
 * copy of a band overlaps the DMA of the one before; a buffer is reused
 * once the upload that filled it two uploads ago is done.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <atomic>
#include <pthread.h>
#include <string.h>

#include "cq-copy.h"
#include "cq-cuda-private.h"
#include "cq-frames.h"

/* A staged band: each is one cq_copy_rows (a round trip of the copy
 * helpers) and one DMA call, and nothing reads an upload before the next
 * pair, so few large bands: 4 MiB as the SSIM's own pageable uploads
 * (cq-ssim-cuda.cu), a 4K luma plane in 2 bands, 1080p in 1. At 1 MiB
 * (8 bands a 4K plane) cudassim align=continuous from pageable 4K frames
 * took 1345-1445 µs a pair on the H100, at 4 MiB 970-1010. */
#define BAND_BYTES (4u << 20)

struct CqFramesCuda
{
  CqCudaTarget target;
  cudaStream_t stream;
  std::atomic < int >refs;
  CqFramesShape shape;
  size_t pitch[CQ_FRAMES_MAX_PLANES], offset[CQ_FRAMES_MAX_PLANES];
  size_t frame_bytes;
  unsigned max_frames, n_frames;
  unsigned char **data;         /* device, max_frames (n_frames made) */
  cudaEvent_t *uploaded;        /* max_frames */
  pthread_mutex_t lock;         /* the free list */
  unsigned *free_frames, n_free;
  unsigned char *staging[2];    /* pinned, frame_bytes each */
  cudaEvent_t staged[2];
  unsigned next_staging;
};

cudaEvent_t
cq_frames_cuda_event (const CqFramesCuda * frames, unsigned frame)
{
  return frames->uploaded[frame];
}

/* The device and pinned memory, then the struct and its arrays. */
static void
cq_frames_cuda_free (CqFramesCuda * fr)
{
  unsigned char **data;
  unsigned *free_frames;

  if (!fr)
    return;
  data = fr->data;
  free_frames = fr->free_frames;
  pthread_mutex_destroy (&fr->lock);
  cq_cuda_object_free (fr,[fr]() {
        for (unsigned i = 0; i < fr->n_frames; i++) {
          cudaFree (fr->data[i]);
          cudaEventDestroy (fr->uploaded[i]);
        }
        for (int i = 0; i < 2; i++) {
          cudaFreeHost (fr->staging[i]);
          if (fr->staged[i])
            cudaEventDestroy (fr->staged[i]);
        }
      });
  free (data);
  free (free_frames);
}

extern "C" CqFramesCuda *
cq_frames_cuda_new_for (const CqCudaTarget * target,
    const CqFramesShape * shape, unsigned max_frames, CqError * err)
{
  CqFramesCuda *fr;
  cudaError_t e;
  const char *what = "cannot select the CUDA device";

  if (shape->n_planes < 1 || shape->n_planes > CQ_FRAMES_MAX_PLANES
      || max_frames < 1) {
    cq_error_set (err, CQ_ERROR_INVALID, "device frames of %u planes, at "
        "most %u of them: 1 to %d planes and at least one frame",
        shape->n_planes, max_frames, CQ_FRAMES_MAX_PLANES);
    return NULL;
  }
  if (!(fr = cq_cuda_object_new < CqFramesCuda > (target, err)))
    return NULL;
  fr->refs = 1;
  fr->shape = *shape;
  for (unsigned i = 0; i < shape->n_planes; i++) {
    fr->pitch[i] = (shape->row_bytes[i] + 255) / 256 * 256;
    fr->offset[i] = fr->frame_bytes;
    fr->frame_bytes += fr->pitch[i] * shape->rows[i];
  }
  fr->max_frames = max_frames;
  pthread_mutex_init (&fr->lock, NULL);
  /* one block: data, events and the free list, all of max_frames */
  fr->data = (unsigned char **) calloc (max_frames, sizeof (*fr->data) +
      sizeof (*fr->uploaded));
  fr->uploaded = (cudaEvent_t *) (fr->data + max_frames);
  fr->free_frames = (unsigned *) calloc (max_frames, sizeof (unsigned));
  if (fr->frame_bytes == 0) {
    cq_frames_cuda_free (fr);
    cq_error_set (err, CQ_ERROR_INVALID, "device frames with no plane kept");
    return NULL;
  }
  if (!fr->data || !fr->free_frames) {
    cq_frames_cuda_free (fr);
    cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY, "out of host memory");
    return NULL;
  }
  {
    CqCudaScope scope (fr->target);

    e = scope.enter ();
    if (e == cudaSuccess) {
      what = "cannot create a CUDA stream";
      e = cudaStreamCreateWithFlags (&fr->stream, cudaStreamNonBlocking);
    }
    for (int i = 0; i < 2 && e == cudaSuccess; i++) {
      what = "cannot allocate pinned staging";
      e = cudaHostAlloc ((void **) &fr->staging[i], fr->frame_bytes,
          cudaHostAllocDefault);
      if (e == cudaSuccess)
        e = cudaEventCreateWithFlags (&fr->staged[i], cudaEventDisableTiming);
    }
  }
  if (e != cudaSuccess) {
    cq_cuda_error_for (err, e, what, "device frames of %zu bytes",
        fr->frame_bytes);
    cq_frames_cuda_free (fr);
    return NULL;
  }
  return fr;
}

extern "C" CqFramesCuda *
cq_frames_cuda_ref (CqFramesCuda * frames)
{
  frames->refs.fetch_add (1);
  return frames;
}

extern "C" void
cq_frames_cuda_unref (CqFramesCuda * frames)
{
  if (frames && frames->refs.fetch_sub (1) == 1)
    cq_frames_cuda_free (frames);
}

/* A free frame, allocating one more while there are fewer than the most;
 * the caller is in the object's context. */
static CqStatus
cq_frames_cuda_take (CqFramesCuda * fr, unsigned *frame, CqError * err)
{
  cudaError_t e;
  unsigned i;

  pthread_mutex_lock (&fr->lock);
  i = fr->n_free > 0 ? fr->free_frames[--fr->n_free] : fr->max_frames;
  pthread_mutex_unlock (&fr->lock);
  if (i < fr->max_frames) {
    *frame = i;
    return CQ_OK;
  }
  /* only the uploading thread makes frames */
  if (fr->n_frames == fr->max_frames)
    return cq_error_set (err, CQ_ERROR_OUT_OF_MEMORY, "all %u device frames "
        "are taken", fr->max_frames);
  i = fr->n_frames;
  e = cudaMalloc ((void **) &fr->data[i], fr->frame_bytes);
  if (e == cudaSuccess) {
    e = cudaEventCreateWithFlags (&fr->uploaded[i], cudaEventDisableTiming);
    if (e != cudaSuccess)
      cudaFree (fr->data[i]);
  }
  if (e != cudaSuccess)
    return cq_cuda_error_for (err, e, "cannot allocate a device frame",
        "%zu bytes, frame %u", fr->frame_bytes, i + 1);
  fr->n_frames++;
  *frame = i;
  return CQ_OK;
}

extern "C" CqStatus
cq_frames_cuda_upload (CqFramesCuda * fr, const void *const *src,
    const size_t * strides, unsigned *frame, CqError * err)
{
  unsigned char *stage = NULL;
  unsigned f;
  CqStatus st;

  for (unsigned i = 0; i < fr->shape.n_planes; i++)
    if (fr->shape.row_bytes[i] > 0 && (!src[i]
            || strides[i] < fr->shape.row_bytes[i]))
      return cq_error_set (err, CQ_ERROR_INVALID, "plane %u: no data or a "
          "row stride of %zu bytes, shorter than a row of %zu", i,
          strides[i], fr->shape.row_bytes[i]);
  CQ_CUDA_ENTER (fr->target, err);
  if ((st = cq_frames_cuda_take (fr, &f, err)) != CQ_OK)
    return st;
  for (unsigned i = 0; i < fr->shape.n_planes; i++) {
    const unsigned char *s = (const unsigned char *) src[i];
    unsigned char *d = fr->data[f] + fr->offset[i];
    const size_t row_bytes = fr->shape.row_bytes[i];
    const unsigned rows = fr->shape.rows[i];
    const unsigned band = (unsigned) (row_bytes >= BAND_BYTES ? 1 :
        BAND_BYTES / row_bytes);
    cudaError_t e = cudaSuccess;

    if (row_bytes == 0)
      continue;
    if (cq_cuda_is_pinned (s)) {
      e = cudaMemcpy2DAsync (d, fr->pitch[i], s, strides[i], row_bytes, rows,
          cudaMemcpyHostToDevice, fr->stream);
    } else {
      if (!stage) {
        /* filled two uploads ago: long done unless uploads outrun PCIe */
        e = cudaEventSynchronize (fr->staged[fr->next_staging]);
        stage = fr->staging[fr->next_staging];
      }
      for (unsigned r = 0; r < rows && e == cudaSuccess; r += band) {
        unsigned n = rows - r < band ? rows - r : band;

        cq_copy_rows (stage, row_bytes, s + (size_t) r * strides[i],
            strides[i], row_bytes, n);
        e = cudaMemcpy2DAsync (d + (size_t) r * fr->pitch[i], fr->pitch[i],
            stage, row_bytes, row_bytes, n, cudaMemcpyHostToDevice,
            fr->stream);
        stage += (size_t) n * row_bytes;
      }
    }
    if (e != cudaSuccess) {
      /* nothing queued may still read the staging buffer or the frame */
      cudaStreamSynchronize (fr->stream);
      cq_frames_cuda_release (fr, f);
      return cq_cuda_error (err, e, "cannot upload a frame");
    }
  }
  if (stage) {
    CQ_CUDA_TRY (cudaEventRecord (fr->staged[fr->next_staging], fr->stream),
        err, "cannot record an upload event");
    fr->next_staging ^= 1;
  }
  CQ_CUDA_TRY (cudaEventRecord (fr->uploaded[f], fr->stream), err,
      "cannot record an upload event");
  *frame = f;
  return CQ_OK;
}

extern "C" void
cq_frames_cuda_plane (const CqFramesCuda * fr, unsigned frame,
    unsigned plane, void **data, size_t * pitch)
{
  *data = fr->data[frame] + fr->offset[plane];
  *pitch = fr->pitch[plane];
}

extern "C" CqStatus
cq_frames_cuda_wait (CqFramesCuda * fr, unsigned frame, CqError * err)
{
  CQ_CUDA_ENTER (fr->target, err);
  CQ_CUDA_TRY (cudaEventSynchronize (fr->uploaded[frame]), err,
      "the upload of a frame failed");
  return CQ_OK;
}

extern "C" void
cq_frames_cuda_release (CqFramesCuda * fr, unsigned frame)
{
  pthread_mutex_lock (&fr->lock);
  fr->free_frames[fr->n_free++] = frame;
  pthread_mutex_unlock (&fr->lock);
}
